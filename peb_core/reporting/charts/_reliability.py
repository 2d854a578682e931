"""The reliability diagram of the runs that state a confidence (docs/benchmark.md §3.2)."""

from __future__ import annotations

from collections.abc import Iterable

import altair as alt
import numpy as np
import polars as pl

from ...scoring import BINS, wilson_intervals
from .._print import ONE_COLUMN, bottom_legend, for_print, inline, room, y_axis_width
from .._styles import interval_tooltip, series_channels, series_column


def reliability_bins(scores: pl.DataFrame, *, by: str | None = None) -> pl.DataFrame:
    """Per series and bin of confidence (`scoring.BINS` equal-width bins, as the expected
    calibration error bins them), over the replies of runs that ask for a confidence (a reply
    without one at its worst case, `judged_confidence`): the bin, its tasks (`n`), their mean
    confidence, the share complete with its Wilson 95% interval. Empty when no run asks for
    one."""
    asked = (
        scores.filter(pl.col("asks_confidence"))
        if "asks_confidence" in scores.columns
        else scores.clear()
    )
    series = series_column(scores, by) if scores.height else "system"
    if asked.is_empty():
        return pl.DataFrame(
            schema={
                series: pl.String(),
                "bin": pl.Int64(),
                "n": pl.Int64(),
                "confidence": pl.Float64(),
                "complete": pl.Float64(),
                "ci_low": pl.Float64(),
                "ci_high": pl.Float64(),
            }
        )
    binned = (
        asked.with_columns(
            bin=(pl.col("judged_confidence") * BINS).floor().cast(pl.Int64).clip(0, BINS - 1)
        )
        .group_by(series, "bin")
        .agg(
            n=pl.len().cast(pl.Int64),
            confidence=pl.col("judged_confidence").sort().sum() / pl.len(),
            k=pl.col("complete_label").sum(),
        )
        .sort(series, "bin")
    )
    low, high = wilson_intervals(binned["k"].to_numpy(), binned["n"].to_numpy())
    return binned.with_columns(
        complete=pl.col("k") / pl.col("n"),
        ci_low=pl.Series(np.asarray(low, dtype=np.float64)),
        ci_high=pl.Series(np.asarray(high, dtype=np.float64)),
    ).drop("k")


def reliability_diagram(
    scores: pl.DataFrame,
    *,
    by: str | None = None,
    width: float = ONE_COLUMN,
    series_names: Iterable[str] | None = None,
) -> alt.LayerChart:
    """Stated confidence against how often the evidence was complete: per series, a point per
    bin of confidence (`reliability_bins`) at its mean confidence and share complete, sized by
    its tasks, with the share's 95% interval as an error bar, joined by a line; the diagonal is
    perfect calibration. Over every family of the runs that ask for a confidence.

    Args:
        scores: per-task scores (`results.score_run_dirs`).
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
        width: the figure's width in inches (the plot is square).
        series_names: the names colours are given over (default: the series present).
    """
    bins = reliability_bins(scores, by=by)
    series = series_column(scores, by) if scores.height else "system"
    names = sorted(bins[series].unique().to_list())
    width_px = room(width)
    side = max(120.0, width_px - y_axis_width(["0.0"]))
    legend = bottom_legend(series.capitalize(), names, width_px)
    color, shape = series_channels(bins, series, series_names, legend)
    unit = alt.Scale(domain=[0, 1])
    x = alt.X("confidence:Q", scale=unit, title="Stated confidence (bin mean)")
    y = alt.Y("complete:Q", scale=unit, title="Share complete")
    ends = pl.DataFrame({"confidence": [0.0, 1.0], "complete": [0.0, 1.0]})
    diagonal = (
        alt.Chart(inline(ends))
        .mark_line(color="#888888", strokeDash=[4, 3], strokeWidth=0.75)
        .encode(x=x, y=y)
    )
    base = alt.Chart(inline(bins))
    lines = base.mark_line(strokeWidth=1).encode(x=x, y=y, color=color, detail=f"{series}:N")
    errors = base.mark_rule(strokeWidth=0.75).encode(
        x=x, y=alt.Y("ci_low:Q", scale=unit), y2="ci_high:Q", color=color
    )
    points = base.mark_point(filled=True, opacity=1).encode(
        x=x,
        y=y,
        color=color,
        shape=shape,
        size=alt.Size("n:Q", title="Tasks", scale=alt.Scale(range=[12, 120])),
        tooltip=[
            alt.Tooltip(f"{series}:N", title=series.capitalize()),
            alt.Tooltip("bin:Q", title="Bin"),
            alt.Tooltip("n:Q", title="Tasks"),
            alt.Tooltip("confidence:Q", title="Mean confidence", format=".3f"),
            *interval_tooltip("complete", "Share complete", "ci_low", "ci_high"),
        ],
    )
    chart = alt.LayerChart(layer=[diagonal, lines, errors, points], width=side, height=side)
    note = (
        f"Confidences in {BINS} equal-width bins; a point per bin at its mean confidence and "
        "share complete, sized by its tasks, a bar over the share's 95% interval. On the dashed "
        "diagonal a series is calibrated. A reply without a confidence is placed at its worst "
        "(certain and wrong), an escalation at 0."
    )
    if bins.is_empty():
        note += " No run here asks for a confidence."
    return for_print(chart, width, f"Reliability of the stated confidence per {series}", [note])
