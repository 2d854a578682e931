"""Frames of per-task scores and scorecards that the notebooks show: the per-task table, a
selection of runs, families and seeds, the tasks where runs disagree, per-metric differences."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ._compare import decimals
from ._frames import ROW_KEYS
from ._metrics import BY_NAME, COMPARED, HEADLINE, METRICS, SURFACES, Metric
from ._verdicts import verdict


def glance(
    card: pl.DataFrame, *, intervals: bool = False, keys: Sequence[str] | None = None
) -> pl.DataFrame:
    """A scorecard as shown at a glance: its key columns (or `keys`), its `status`, and every
    metric of the registry under its short label. With `intervals`, each rate and mean is a
    string `0.450 [0.258, 0.658]` (value and 95% interval, 3 decimals; `-` when undefined),
    and the columns are reordered for a screen: the error and missing counts right after the
    status (a row that is not a finished number says so before its metrics), then the headline,
    its worst case, the other surfaces, completeness awareness and format compliance."""
    keys = [k for k in (ROW_KEYS if keys is None else keys) if k in card.columns]
    if not intervals:
        return card.select(*keys, "status", *(pl.col(m.name).alias(m.label) for m in METRICS))
    first = [BY_NAME[n] for n in ("n_errors", "n_missing")]
    first += [*HEADLINE[:2], *SURFACES[1:], BY_NAME["completeness_accuracy"], HEADLINE[2]]
    shown = [*first, *(m for m in METRICS if m not in first)]
    return card.select(*keys, "status", *(with_interval(m).alias(m.label) for m in shown))


def with_interval(m: Metric) -> pl.Expr:
    """Metric `m`'s column as text with its 95% interval, `0.583 [0.375, 0.792]` (`-` when
    undefined); a count as it is."""
    if m.kind == "count":
        return pl.col(m.name)
    text = pl.format("{} [{}, {}]", *map(decimals, (m.name, *m.interval_columns)))
    return text.fill_null("-").alias(m.name)


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
        tier = pl.col("tier") if "tier" in scores.columns else pl.lit("paper")
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
    names = [m.name for m in COMPARED]
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
