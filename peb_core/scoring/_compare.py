"""Paired comparison of two runs over the tasks both ran (`peb compare`).

Per family and over all families ("all"), each rate and mean of the metric registry
(`_metrics.COMPARED`) is compared pair by pair (difference = B - A):
- a rate (its event, over the tasks it is computed over): exact McNemar p-value on the
  discordant pairs (`only_a`: the event in A only; `only_b`: in B only), Newcombe's (1998,
  method 10) interval for the difference;
- a mean: paired percentile bootstrap interval of the mean difference and a sign-flip
  permutation p-value (`_stats.paired_means`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ._metrics import COMPARED
from ._stats import mcnemar_exact, newcombe_paired_interval, paired_means

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
    "only_a",
    "only_b",
]
"""The columns of `compare_scores`, in order (`only_a`, `only_b` are null for means)."""

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


def _rate_row(pairs: pl.DataFrame, event: str) -> dict[str, Any]:
    a, b = pairs[event].fill_null(False), pairs[f"{event}_b"].fill_null(False)
    both = int((a & b).sum())
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    n = pairs.height
    low, high = newcombe_paired_interval(both, only_a, only_b, n - both - only_a - only_b)
    value_a = (both + only_a) / n if n else None
    value_b = (both + only_b) / n if n else None
    return {
        "test": "mcnemar_exact",
        "value_a": value_a,
        "value_b": value_b,
        "difference": (only_b - only_a) / n if n else None,
        "ci_low": low,
        "ci_high": high,
        "p_value": mcnemar_exact(only_a, only_b) if n else None,
        "only_a": only_a,
        "only_b": only_b,
    }


def _mean_row(pairs: pl.DataFrame, score: str) -> dict[str, Any]:
    result = paired_means(pairs[score].to_numpy(), pairs[f"{score}_b"].to_numpy())
    return {
        "test": "sign_flip",
        "value_a": result.mean_a,
        "value_b": result.mean_b,
        "difference": result.difference,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": result.p_value,
    }


def compare_scores(scores_a: pl.DataFrame, scores_b: pl.DataFrame) -> pl.DataFrame:
    """Paired comparison (COMPARE_KEYS) of two runs' per-task scores (as from `score_run` or
    `runs.score_run_dirs`), over the (family, task_id) pairs both hold: one row per family and
    metric, then the same over all families (`family` = "all"). Raises CompareError when a
    frame holds several runs or the runs share no task."""
    run_a, run_b = _run_name(scores_a, "A"), _run_name(scores_b, "B")
    for label, frame in (("A", scores_a), ("B", scores_b)):
        if frame.select(KEY).is_duplicated().any():
            raise CompareError(f"run {label}: a task is scored more than once")

    def values(scores: pl.DataFrame) -> pl.DataFrame:
        columns: dict[str, pl.Expr] = {}
        for m in COMPARED:
            if m.kind == "rate":
                assert m.event is not None and m.within is not None
                columns[f"{m.name}__event"] = m.event.fill_null(False)
                columns[f"{m.name}__within"] = m.within
            else:
                assert m.score is not None
                columns[m.name] = pl.col(m.score)
        return scores.select(*KEY, **columns)

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
        for m in COMPARED:
            if m.kind == "rate":
                counted = subset.filter(pl.col(f"{m.name}__within"))
                row = _rate_row(counted, f"{m.name}__event")
                n = counted.height
            else:
                row = _mean_row(subset, m.name)
                n = subset.height
            rows.append({"metric": m.name, "family": family, "n_pairs": n} | row)
    frame = pl.DataFrame(rows, schema=_SCHEMA)
    return frame.with_columns(run_a=pl.lit(run_a), run_b=pl.lit(run_b)).select(COMPARE_KEYS)


def compare_to_reference(scores: pl.DataFrame, reference: str) -> pl.DataFrame:
    """`compare_scores` of run `reference` (as A) against every other run in `scores` (as B),
    over all families (`family` = "all"); runs sharing no task with it are left out."""
    base = scores.filter(pl.col("run") == reference)
    frames = []
    for run in scores["run"].unique(maintain_order=True).to_list():
        if run == reference:
            continue
        try:
            frames.append(compare_scores(base, scores.filter(pl.col("run") == run)))
        except CompareError:
            continue
    if not frames:
        return pl.DataFrame(schema=_SCHEMA).select(COMPARE_KEYS)
    return pl.concat(frames).filter(pl.col("family") == "all")
