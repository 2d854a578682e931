"""Paired comparison of two runs over the tasks both ran (`peb compare`, notebooks/compare.py).

Per family and over all families ("all"), each rate and mean of the metric registry
(`_metrics.MEASURES`) is compared pair by pair (difference = B - A) by a test and the 95%
interval that inverts it, so the interval excludes 0 exactly when p < ALPHA (`significant`):
- a rate (its event, over the tasks it is computed over): McNemar's score test on the discordant
  pairs (`only_a`: the event in A only; `only_b`: in B only) with Tango's score interval
  (`_stats.paired_rates`);
- a mean: a sign-flip permutation test with the interval of the shifts it does not reject
  (`_stats.paired_means`), over the pairs where both scores are defined.
The trace metrics (`_metrics.TRACE`) are compared only when a run is an agent's, the handoff
metrics (`_metrics.HANDOFF`) only when a sub-agent reported a gap in one, the repeat metrics
(`_metrics.REPEATS`) only when both runs have repeats (a run without has none to pair, and
must not read as 0).

Runs with repeats (`peb run --repeats K`, K rows per task) are paired task by task, never
repeat by repeat: each task's rows are first taken together (a rate's event as the share of
the task's repeats where it holds, a mean's score as the mean over its repeats), and the rates
are then compared as means of those shares (the sign-flip test), but the repeat metrics
(`_metrics.REPEATS`), one 0/1 event per task, which keep McNemar's test.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ._frames import with_repeats
from ._metrics import HANDOFF, MEASURES, METRICS, REPEATS, TRACE
from ._stats import ALPHA, PairedTest, format_p, paired_means, paired_rates

KEY = ["family", "task_id"]

COMPARE_KEYS = [
    "run_a",
    "run_b",
    "family",
    "metric",
    "test",
    "n_pairs",
    "value_a",
    "value_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "significant",
    "only_a",
    "only_b",
]
"""The columns of `compare_scores`, in order (`only_a`, `only_b` are null for means)."""

TESTS = {"rate": "mcnemar_score", "mean": "sign_flip"}
"""The `test` of a row, by the kind of its metric."""

COMPARE_NOTE = (
    f"Difference = B - A with its {1 - ALPHA:.0%} interval. p: McNemar score test for rates "
    "(interval: Tango score), sign-flip permutation test for means (interval: the shifts it "
    "does not reject). Each interval inverts its own test, so it excludes 0 exactly when "
    f"p < {ALPHA}: such rows are significant, marked *."
)
"""How to read a comparison table, printed under every one."""

_SCHEMA = pl.Schema(
    {
        "run_a": pl.String(),
        "run_b": pl.String(),
        "family": pl.String(),
        "metric": pl.String(),
        "test": pl.String(),
        "n_pairs": pl.Int64(),
        "value_a": pl.Float64(),
        "value_b": pl.Float64(),
        "difference": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "p_value": pl.Float64(),
        "significant": pl.Boolean(),
        "only_a": pl.Int64(),
        "only_b": pl.Int64(),
    }
)


class CompareError(ValueError):
    """Two score frames that cannot be compared; one line."""


def _run_name(scores: pl.DataFrame, label: str) -> str:
    runs = scores["run"].unique().to_list() if "run" in scores.columns else [label]
    if len(runs) > 1:
        raise CompareError(f"run {label}: expected the scores of one run, got {len(runs)}")
    return str(runs[0]) if runs else label


def _test_columns(result: PairedTest) -> dict[str, Any]:
    p = result.p_value
    return {
        "n_pairs": result.n_pairs,
        "value_a": result.value_a,
        "value_b": result.value_b,
        "difference": result.difference,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": p,
        "significant": None if p is None else p < ALPHA,
    }


def _rate_row(pairs: pl.DataFrame, event: str) -> dict[str, Any]:
    a, b = pairs[event].fill_null(False), pairs[f"{event}_b"].fill_null(False)
    both = int((a & b).sum())
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    neither = pairs.height - both - only_a - only_b
    result = paired_rates(both, only_a, only_b, neither)
    return _test_columns(result) | {"only_a": only_a, "only_b": only_b}


def _mean_row(pairs: pl.DataFrame, score: str, bounded: bool) -> dict[str, Any]:
    """The paired test of a mean over the pairs where both scores are defined (a trace score
    is null on a one-shot run and where it does not apply)."""
    pairs = pairs.drop_nulls([score, f"{score}_b"])
    a, b = pairs[score].to_numpy(), pairs[f"{score}_b"].to_numpy()
    return _test_columns(paired_means(a, b, bound=1.0 if bounded else None))


def compare_scores(scores_a: pl.DataFrame, scores_b: pl.DataFrame) -> pl.DataFrame:
    """Paired comparison (COMPARE_KEYS) of two runs' per-task scores (as from `score_run` or
    `results.score_run_dirs`), over the (family, task_id) pairs both hold: one row per family and
    metric, then the same over all families (`family` = "all"). Raises CompareError when a
    frame holds several runs or the runs share no task."""
    run_a, run_b = _run_name(scores_a, "A"), _run_name(scores_b, "B")
    scores_a, scores_b = with_repeats(scores_a), with_repeats(scores_b)
    for label, frame in (("A", scores_a), ("B", scores_b)):
        if frame.select(*KEY, "repeat").is_duplicated().any():
            raise CompareError(f"run {label}: a task is scored more than once")
    agents = any(s["episode"].any() for s in (scores_a, scores_b) if "episode" in s.columns)
    handoffs = any(
        (s["handoff_gaps"] > 0).any() for s in (scores_a, scores_b) if "handoff_gaps" in s.columns
    )
    has_repeats = [(s["task_repeats"].max() or 0) > 1 for s in (scores_a, scores_b)]  # type: ignore[operator]
    repeated = any(has_repeats)
    compared = [
        m
        for m in MEASURES
        if (agents or m not in TRACE)
        and (handoffs or m not in HANDOFF)
        and (all(has_repeats) or m not in REPEATS)
    ]

    def values(scores: pl.DataFrame) -> pl.DataFrame:
        columns: dict[str, pl.Expr] = {}
        for m in compared:
            if m.kind == "rate":
                assert m.event is not None
                columns[f"{m.name}__event"] = m.event.fill_null(False)
            else:
                assert m.score is not None
                columns[f"{m.name}__event"] = pl.col(m.score)
            columns[f"{m.name}__within"] = m.tasks
        frame = scores.select(*KEY, **columns)
        return _per_task(frame, compared) if repeated else frame

    b = values(scores_b)
    pairs = values(scores_a).join(
        b.drop(c for c in b.columns if c.endswith("__within")), on=KEY, how="inner", suffix="_b"
    )
    if pairs.is_empty():
        raise CompareError(f"runs {run_a} and {run_b} have no task in common")
    rows = []
    families = sorted(pairs["family"].unique().to_list())
    for family in [*families, "all"]:
        subset = pairs if family == "all" else pairs.filter(pl.col("family") == family)
        for m in compared:
            within = subset.filter(pl.col(f"{m.name}__within"))
            shares = repeated and m.kind == "rate" and m not in REPEATS
            if m.kind == "rate" and not shares:
                row = _rate_row(within, f"{m.name}__event")
            else:
                row = _mean_row(within, f"{m.name}__event", m.bounded)
            test = TESTS["mean" if shares else m.kind]
            rows.append({"metric": m.name, "family": family, "test": test} | row)
    frame = pl.DataFrame(rows, schema=_SCHEMA)
    return frame.with_columns(run_a=pl.lit(run_a), run_b=pl.lit(run_b)).select(COMPARE_KEYS)


def _per_task(frame: pl.DataFrame, compared: list[Any]) -> pl.DataFrame:
    """`frame` (one row per task and repeat, each metric's `__event` and `__within`) as one row
    per task: each event over the repeats it is counted on, as a mean (a rate's share; summed in
    sorted order, so in any row order the same), null where none is, and each `__within`
    whether any repeat is counted. A repeat metric's event, counted on one row per task, stays
    0/1 and boolean."""
    aggs: dict[str, pl.Expr] = {}
    for m in compared:
        event, within = pl.col(f"{m.name}__event"), pl.col(f"{m.name}__within")
        values = event.cast(pl.Float64).filter(within).drop_nulls().sort()
        share = pl.when(values.count() > 0).then(values.sum() / values.count())
        aggs[f"{m.name}__event"] = share.cast(pl.Boolean) if m in REPEATS else share
        aggs[f"{m.name}__within"] = within.any()
    return frame.group_by(KEY).agg(**aggs)


def compare_to_reference(scores: pl.DataFrame, reference: str) -> pl.DataFrame:
    """`compare_scores` of run `reference` (as A) against every other run in `scores` (as B), in
    order of run name; runs sharing no task with it are left out."""
    base = scores.filter(pl.col("run") == reference)
    frames = []
    for run in sorted(scores["run"].unique().to_list()):
        if run == reference:
            continue
        try:
            frames.append(compare_scores(base, scores.filter(pl.col("run") == run)))
        except CompareError:
            continue
    if not frames:
        return pl.DataFrame(schema=_SCHEMA).select(COMPARE_KEYS)
    return pl.concat(frames)


def decimals(column: str) -> pl.Expr:
    """A float column as text to 3 decimals, null kept: the tables of comparisons and of
    `peb score --ci`."""
    return pl.col(column).map_elements(lambda v: f"{v:.3f}", return_dtype=pl.String)


def compare_table(frame: pl.DataFrame) -> pl.DataFrame:
    """A `compare_scores` frame as text, one row per row, for the CLI and the notebook: run B
    (only when there are several), family, metric label, pairs, the two values, the difference
    and its interval to 3 decimals, p (`format_p`), `sig` (`*` when significant) and the
    discordant counts (`-` for means). Read it with COMPARE_NOTE."""
    several = frame["run_b"].n_unique() > 1
    return frame.select(
        *(["run_b"] if several else []),
        "family",
        pl.col("metric").replace({m.name: m.label for m in METRICS}),
        "n_pairs",
        a=decimals("value_a").fill_null("-"),
        b=decimals("value_b").fill_null("-"),
        diff=decimals("difference").fill_null("-"),
        ci=pl.format("[{}, {}]", decimals("ci_low"), decimals("ci_high")).fill_null("-"),
        p=pl.col("p_value").map_elements(format_p, return_dtype=pl.String).fill_null("-"),
        sig=pl.when(pl.col("significant")).then(pl.lit("*")).otherwise(pl.lit("")),
        only_a=pl.col("only_a").cast(pl.String).fill_null("-"),
        only_b=pl.col("only_b").cast(pl.String).fill_null("-"),
    )


SETTING = ("system", "protocol", "tier", "interface", "disclosure", "contract", "followup",
           "max_steps")  # fmt: skip
"""What a run is besides its intervention (the row keys of run folders, and the system): two
runs that agree on these, one with an intervention and one without, are its paired test."""


def compare_interventions(scores: pl.DataFrame, reference: str = "none") -> pl.DataFrame:
    """Each intervention's run against the run of the same setting (`SETTING`) with the
    intervention `reference` (`none`: the system as it is), paired on the tasks both ran
    (`compare_scores`: A the reference's run, B the intervention's): a `compare_scores` frame
    with the setting's keys and the `intervention` of B before its columns, in order of setting
    and intervention. A run with no reference run beside it, or none in common task, is left
    out; scores without an `intervention` column compare nothing (an empty frame)."""
    keys = [k for k in SETTING if k in scores.columns]
    columns = [*keys, "intervention", *COMPARE_KEYS]
    schema = {**{k: scores.schema[k] for k in keys}, "intervention": pl.String(), **_SCHEMA}
    empty = pl.DataFrame(schema=schema).select(columns)
    if "intervention" not in scores.columns:
        return empty
    runs = scores.select("run", *keys, "intervention").unique(maintain_order=True).sort("run")
    frames = []
    for row in runs.filter(pl.col("intervention") != reference).iter_rows(named=True):
        same = pl.all_horizontal(
            *(pl.col(k).eq_missing(pl.lit(row[k], dtype=scores.schema[k])) for k in keys)
        )
        base = runs.filter(same & (pl.col("intervention") == reference))
        if base.is_empty():
            continue
        a = scores.filter(pl.col("run") == base["run"][0])
        b = scores.filter(pl.col("run") == row["run"])
        try:
            compared = compare_scores(a, b)
        except CompareError:
            continue
        frames.append(
            compared.with_columns(
                *(pl.lit(row[k], dtype=scores.schema[k]).alias(k) for k in keys),
                intervention=pl.lit(row["intervention"]),
            ).select(columns)
        )
    if not frames:
        return empty
    return pl.concat(frames).sort([*keys, "intervention"], maintain_order=True)
