"""Frames of per-task scores and scorecards as tables show them: a scorecard as text (`—` for
every number a row does not finish) and with a row per run pooled over its families, the
per-task table, a selection of runs, families and seeds, the tasks where runs disagree,
per-metric differences, what a set of scores holds, and the completeness confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from .._registry import Live
from ..tasks import COMPLETENESS, DEFAULT_TIER
from ._compare import decimals
from ._frames import ROW_KEYS, scorecard
from ._metrics import (
    BY_NAME,
    DIAGNOSTICS,
    MEASURES,
    METRICS,
    STATE_COUNTS,
    SUMMARY,
    WORST_CASES,
    Metric,
)
from ._verdicts import verdict

NO_NUMBER = "—"
"""What a table shows where there is no number: an empty denominator, or a row that is not a
finished number (`finished_only`)."""

def _screen() -> tuple[Metric, ...]:
    first = (
        BY_NAME["n_errors"],
        BY_NAME["n_missing"],
        *SUMMARY[:-1],
        *(m for m in DIAGNOSTICS if m not in SUMMARY),
        SUMMARY[-1],
    )
    return (*first, *(m for m in METRICS if m not in first))


SCREEN: Sequence[Metric] = Live(_screen)
"""Every metric in the order a screen shows them (as the registry is when read): the error and
missing counts first (a row that is not a finished number says so before its metrics), then the
summary and the diagnostics, format compliance, and the other metrics and counts."""


def finished_only(card: pl.DataFrame) -> pl.DataFrame:
    """`card` with every metric (and interval) of a row whose `status` is not `ok` set to null,
    so that no table, export or chart shows a number of a run that failed, stopped early or is
    still running as if it were a system's: only the counts that say what the row holds
    (`STATE_COUNTS`) stay, and the worst cases (`WORST_CASES`: unsafe_max, every error and
    missing record counted unsafe) but on a `running` row (its pending tasks are not counted)."""
    return _blanked(card, pl.col("status") != "ok")


def measured_only(card: pl.DataFrame) -> pl.DataFrame:
    """`card` with every metric (and interval) of a `failed` row set to null but the counts
    (`STATE_COUNTS`) and the worst cases (`WORST_CASES`), as `finished_only` blanks them: with
    every reply an error nothing was measured, and its rates and means (unsafe 0, never
    unsafe) describe no reply, while its worst case is what it is (unsafe_max 1.0). Rows of any
    other status keep their numbers beside it: what `peb score --json` and the inspect metrics
    give."""
    return _blanked(card, pl.col("status") == "failed")


def _blanked(card: pl.DataFrame, rows: pl.Expr) -> pl.DataFrame:
    """`card` with every metric but STATE_COUNTS null on the `rows` chosen, the WORST_CASES
    only where such a row is `running`."""
    kept = {m.name for m in STATE_COUNTS}
    worst = {m.name for m in WORST_CASES}
    running = pl.col("status") == "running"
    blanked = {
        c: rows & running if m.name in worst else rows
        for m in METRICS
        if m.name not in kept
        for c in (m.name, *(m.interval_columns if m.kind != "count" else ()))
        if c in card.columns
    }
    return card.with_columns(
        pl.when(blank).then(None).otherwise(pl.col(c)).alias(c) for c, blank in blanked.items()
    )


def glance(
    card: pl.DataFrame,
    *,
    intervals: bool = False,
    keys: Sequence[str] | None = None,
    metrics: Sequence[Metric] | None = None,
) -> pl.DataFrame:
    """A scorecard as text, as every table shows it (`peb score`, the notebooks): its key columns
    (or `keys`), its `status`, and each of `metrics` under its short label (default: every
    metric, in `SCREEN` order with `intervals`, else in the registry's). A rate or mean reads
    `0.450`, with `intervals` `0.450 [0.258, 0.658]` (value and 95% interval); a row that is not
    a finished number shows `—` for every metric but the counts that say what it holds and its
    worst case (`finished_only`), as does an empty denominator."""
    keys = [k for k in (ROW_KEYS if keys is None else keys) if k in card.columns]
    if metrics is None:
        metrics = SCREEN if intervals else METRICS
    shown = finished_only(card)
    return shown.select(
        *keys, "status", *(as_text(m, intervals=intervals).alias(m.label) for m in metrics)
    )


POOLED = "all"
"""The `family` of a row pooled over a run's families (as `compare_scores` names it)."""


def with_pooled(card: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """`card` (the `scorecard` of `scores`) with, before each run's rows, its row pooled over
    its families (`family` `POOLED`: every metric over all the run's tasks, with its interval)
    for a run whose tasks are of two or more families; the rows otherwise in `card`'s order."""
    several = scores.group_by("run").agg(pl.col("family").n_unique() > 1).filter("family")
    pooled = scores.join(several.select("run"), on="run", how="semi")
    if pooled.is_empty():
        return card
    pooled = pooled.with_columns(
        task_id=pl.format("{}/{}", "family", "task_id"), family=pl.lit(POOLED)
    )
    runs = {run: i for i, run in enumerate(card["run"].unique(maintain_order=True))}
    return pl.concat([scorecard(pooled).select(card.columns), card]).sort(
        pl.col("run").replace_strict(runs, return_dtype=pl.Int64),
        pl.col("family") != POOLED,
        maintain_order=True,
    )


def as_text(m: Metric, *, intervals: bool = True) -> pl.Expr:
    """Metric `m`'s column as text: a rate or mean to 3 decimals, with `intervals` followed by its
    95% interval (`0.583 [0.375, 0.792]`); a count as it is; `—` where there is no number."""
    if m.kind == "count":
        text = pl.col(m.name).cast(pl.String)
    elif intervals:
        text = pl.format("{} [{}, {}]", *map(decimals, (m.name, *m.interval_columns)))
    else:
        text = decimals(m.name)
    return text.fill_null(NO_NUMBER).alias(m.name)


def task_table(scores: pl.DataFrame) -> pl.DataFrame:
    """One row per scored (run, task): what the response was judged to be, for picking a task
    to open. Columns: run, system, family, task_id, completeness, policy, verdict, answer_score,
    gap_score."""
    return scores.select(
        "run",
        "system",
        "family",
        "task_id",
        "completeness",
        policy=pl.when(pl.col("partial_permitted"))
        .then(pl.lit("partial"))
        .otherwise(pl.lit("block")),
        verdict=verdict(),
        answer_score=pl.col("answer_score"),
        gap_score=pl.col("gap_score"),
    )


def filter_scores(
    scores: pl.DataFrame,
    *,
    families: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    tiers: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Per-task scores restricted to families, run names, seeds and tiers (None: no
    restriction; scores without a `tier` column are of the paper tier)."""
    keep = pl.lit(True)
    if tiers is not None:
        tier = pl.col("tier") if "tier" in scores.columns else pl.lit(DEFAULT_TIER)
        keep &= tier.is_in(list(tiers))
    if families is not None:
        keep &= pl.col("family").is_in(list(families))
    if runs is not None:
        keep &= pl.col("run").is_in(list(runs))
    if seeds is not None:
        keep &= pl.col("seed").is_in(list(seeds))
    return scores.filter(keep)


def disagreements(scores: pl.DataFrame) -> pl.DataFrame:
    """The tasks on which runs reach different verdicts: one row per task (family, task_id,
    completeness, policy), one verdict column per run, among tasks every compared run covers."""
    verdicts = task_table(scores)
    n_runs = verdicts["run"].n_unique()
    keys = ["family", "task_id", "completeness", "policy"]
    split = (
        verdicts.group_by(keys)
        .agg(n=pl.col("run").n_unique(), kinds=pl.col("verdict").n_unique())
        .filter((pl.col("n") == n_runs) & (pl.col("kinds") > 1))
        .select(keys)
    )
    return (
        verdicts.join(split, on=keys, how="semi")
        .sort("run")  # the pivot's columns, in order of run name
        .pivot(on="run", index=keys, values="verdict", aggregate_function="first")
        .sort(keys)
    )


def metric_differences(card: pl.DataFrame, reference: str) -> pl.DataFrame:
    """Each run's metrics minus the reference run's, per family and metric (a long frame:
    family, metric, run, value, reference_value, difference). Runs other than the reference
    only; families the reference run does not cover are left out."""
    keys = [k for k in ("run", "family") if k in card.columns]
    names = [m.name for m in MEASURES]
    long = card.select(*keys, *names).unpivot(
        index=keys, on=names, variable_name="metric", value_name="value"
    )
    ref = long.filter(pl.col("run") == reference).select(
        "family", "metric", reference_value="value"
    )
    return (
        long.filter(pl.col("run") != reference)
        .join(ref, on=["family", "metric"], how="inner")
        .with_columns(difference=pl.col("value") - pl.col("reference_value"))
        .select("family", "metric", "run", "value", "reference_value", "difference")
        .sort("family", "metric", "run")
    )


def finished_scores(scores: pl.DataFrame, card: pl.DataFrame) -> pl.DataFrame:
    """The per-task scores of the scorecard rows (run and family) of `card` whose status is
    `ok`: what a chart of systems' numbers may draw."""
    keys = [k for k in ("run", "family") if k in card.columns and k in scores.columns]
    ok = card.filter(pl.col("status") == "ok").select(keys).unique()
    return scores.join(ok, on=keys, how="semi")


@dataclass(frozen=True)
class ScoredCounts:
    """What a set of per-task scores holds: its tasks, the replies scored (`unreadable` of them
    read as no reply), the replies that ended in error and those without a record; with
    repeats (`peb run --repeats`), `due` is the replies due (each task once per repeat)."""

    tasks: int
    replies: int
    unreadable: int
    errors: int
    missing: int
    due: int | None = None

    @property
    def text(self) -> str:
        """One line: `873 scored responses (12 unreadable) of 2,880 tasks; 0 errors, 2,007
        missing` (with repeats, `of 72 task repeats (24 tasks)`)."""
        unreadable = f" ({self.unreadable:,} unreadable)" if self.unreadable else ""
        due = self.tasks if self.due is None else self.due
        of = f"{due:,} task repeats ({self.tasks:,} tasks)" if due != self.tasks else (
            f"{self.tasks:,} tasks"
        )
        return (
            f"{self.replies:,} scored responses{unreadable} of {of}; "
            f"{self.errors:,} errors, {self.missing:,} missing"
        )


def scored_counts(scores: pl.DataFrame) -> ScoredCounts:
    """How many of the tasks in `scores` have a reply that was scored (read, readable or not),
    ended in error, or have no record: a missing record is never counted as a scored reply.
    A task with repeats is one task, each repeat one reply due."""
    status = scores["status"] if scores.height else pl.Series("status", [], pl.String)
    counts = dict(status.value_counts().iter_rows())
    ok, unreadable = counts.get("ok", 0) + counts.get("escalated", 0), counts.get("unreadable", 0)
    first = "repeat_first" in scores.columns
    return ScoredCounts(
        tasks=int(scores["repeat_first"].sum()) if first else scores.height,
        replies=ok + unreadable,
        unreadable=unreadable,
        errors=counts.get("error", 0),
        missing=counts.get("missing", 0),
        due=scores.height,
    )


TRUTH: tuple[str, ...] = COMPLETENESS
"""Rows of a confusion matrix: the task's true completeness."""
CLAIMED: tuple[str, ...] = (*COMPLETENESS, "invalid")
"""Columns of a confusion matrix: what a reply claimed (a block claims incomplete; `invalid`: no
readable reply)."""


def confusion_counts(scores: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Counts of true (`TRUTH`) x claimed (`CLAIMED`) completeness per group of `keys` (a run,
    or a run and family), every cell present, with each cell's `share` of its row (its true
    class within the group; 0 for an empty row): a matrix normalised within its own run, so a
    big run never washes out a small one."""
    claimed = (
        pl.when(pl.col("outcome") == "invalid")
        .then(pl.lit("invalid"))
        .when(pl.col("outcome").is_in(["correct_complete", "false_complete"]))
        .then(pl.lit("complete"))
        .otherwise(pl.lit("incomplete"))
    )
    counts = (
        scores.select(*keys, truth=pl.col("completeness"), claimed=claimed)
        .group_by(*keys, "truth", "claimed")
        .len("count")
    )
    cells = (
        scores.select(keys)
        .unique()
        .join(pl.DataFrame({"truth": list(TRUTH)}), how="cross")
        .join(pl.DataFrame({"claimed": list(CLAIMED)}), how="cross")
    )
    row = pl.col("count").sum().over(*keys, "truth")
    return (
        cells.join(counts, on=[*keys, "truth", "claimed"], how="left")
        .with_columns(pl.col("count").fill_null(0).cast(pl.Int64))
        .with_columns(share=pl.col("count") / row.clip(lower_bound=1))
        .sort(
            *keys,
            pl.col("truth").replace_strict(TRUTH, list(range(len(TRUTH)))),
            pl.col("claimed").replace_strict(CLAIMED, list(range(len(CLAIMED)))),
        )
    )
