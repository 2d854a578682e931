"""Frames of per-task scores and scorecards that the notebooks show: the per-task table, a
selection of runs, families and seeds, the tasks where runs disagree, per-metric differences."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ._verdicts import verdict

METRICS = (
    "unsafe_completeness_rate",
    "answer_correctness",
    "gap_report_quality",
    "blocked_when_safe_to_answer_rate",
    "invalid_rate",
)
"""The scorecard metrics compared between runs: the four surfaces plus the invalid rate."""

SCORECARD_COLUMNS = (
    "run",
    "system",
    "protocol",
    "family",
    "n_tasks",
    "n_incomplete",
    "unsafe_completeness_rate",
    "answer_correctness",
    "gap_report_quality",
    "blocked_when_safe_to_answer_rate",
    "invalid_rate",
    "correct_complete",
    "correct_incomplete",
    "false_complete",
    "false_incomplete",
)
"""The scorecard columns a notebook shows at a glance: the four surfaces, over-blocking, the
invalid rate and the confusion counts (the intervals stay in the full scorecard)."""


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
) -> pl.DataFrame:
    """Per-task scores restricted to families, run names and seeds (None: no restriction)."""
    keep = pl.lit(True)
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
        .pivot(on="run", index=keys, values="verdict", aggregate_function="first")
        .sort(keys)
    )


def metric_differences(card: pl.DataFrame, reference: str) -> pl.DataFrame:
    """Each run's metrics minus the reference run's, per family and metric (a long frame:
    family, metric, run, value, reference_value, difference). Runs other than the reference
    only; families the reference run does not cover are left out."""
    keys = [k for k in ("run", "family") if k in card.columns]
    long = card.select(*keys, *METRICS).unpivot(
        index=keys, on=list(METRICS), variable_name="metric", value_name="value"
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
