"""The scored surfaces per series and family, as bars with their intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import altair as alt
import polars as pl

from ...scoring import (
    SURFACES,
    Metric,
)
from .._print import (
    FONT,
    SPACING,
    TWO_COLUMNS,
    X_AXIS,
    bottom_legend,
    for_print,
    inline,
    panels_room,
    room,
    text_width,
    y_axis_width,
)
from .._styles import (
    interval_tooltip,
    series_channels,
    series_column,
    series_name,
)


def titles(metrics: Sequence[Metric]) -> dict[str, str]:
    """Each metric's column name -> its title as a reader of the paper knows it, with the
    direction that is better (if it has one)."""
    return {m.name: m.title + (f" ({m.better} is better)" if m.better else "") for m in metrics}


METRICS: dict[str, str] = titles(SURFACES)
"""The four scored surfaces (`peb_core.scoring.SURFACES`), titled as a reader of the paper
knows them."""


MIN_BAR = 3
"""The narrowest bar `metric_bars` draws, in pixels (2.25 pt printed)."""

PANEL, MIN_PANEL = 64, 24
"""How tall, in pixels, a panel of `metric_bars` is: PANEL, or less to keep the figure within
`MAX_HEIGHT` with many panels and series, never below MIN_PANEL."""

MIN_MARK, MAX_MARK = 4, 10
"""How wide, in pixels, the series' shape on a bar is: 0.8 of the bar, within these."""


def metric_long(
    card: pl.DataFrame, *, by: str | None = None, metrics: Sequence[Metric] = SURFACES
) -> pl.DataFrame:
    """A scorecard's `metrics` (default: the four surfaces) as rows: series, family, metric,
    label, value and the bounds of its 95% interval (`ci_low`, `ci_high`)."""
    series = series_column(card, by)
    named = titles(metrics)
    return pl.concat(
        card.select(
            series,
            "family",
            metric=pl.lit(m.name),
            label=pl.lit(named[m.name]),
            value=pl.col(m.name).cast(pl.Float64),
            ci_low=pl.col(m.interval_columns[0]).cast(pl.Float64),
            ci_high=pl.col(m.interval_columns[1]).cast(pl.Float64),
        )
        for m in metrics
    )


def metric_bars(
    card: pl.DataFrame,
    *,
    by: str | None = None,
    width: float = TWO_COLUMNS,
    series_names: Iterable[str] | None = None,
    metrics: Sequence[Metric] = SURFACES,
    title: str | None = None,
) -> alt.FacetChart:
    """The four scored surfaces (unsafe completeness, answer correctness, gap-report quality,
    over-blocking), or other `metrics` of the registry (an agent's trace metrics: `TRACE`), one
    panel each, stacked: bars per family (x) and series (colour), each with its 95% interval as
    an error bar, and a point in the series' shape on each bar so a value of 0 shows too. A
    missing bar is a metric with an empty denominator (no incomplete task, no task where
    answering is allowed, a one-shot run's trace metric); a metric no row has a number for gets
    no panel, and the subtitle says so. Every axis runs from 0 to at least 1, so a rate or a
    mean in [0, 1] is read on its whole range; a mean of counts (steps) reaches past it.

    Args:
        card: a scorecard (`results.scorecard_of`).
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
        width: the figure's width in inches; bars are at least `MIN_BAR` pixels wide, so the
            figure grows wider with many series.
        series_names: the names colours are given over (`series_styles`; default: the series
            present); pass a wider selection's to colour each series as there.
        metrics: the metrics shown, in order.
        title: the figure's title, `... per <series> and family` (default: what `metrics` are).
    """
    series = series_column(card, by)
    noun = series_name(series)
    asked = list(metrics)
    numbered = set(metric_long(card, by=by, metrics=asked).drop_nulls("value")["metric"])
    metrics = [m for m in asked if m.name in numbered] or asked
    empty = [m for m in asked if m not in metrics]
    long = metric_long(card, by=by, metrics=metrics)
    unit = all(m.kind == "rate" or m.bounded for m in metrics)
    names = sorted(long[series].drop_nulls().unique().to_list())
    width_px = room(width)
    axis_width = y_axis_width(["0.0"])
    families = long["family"].unique().to_list()
    padding = 0.2  # between families, as a share of a family's band
    n_bars = len(families) * max(len(names), 1)
    panel = max(width_px - axis_width, n_bars * MIN_BAR / (1 - padding))
    fits = text_width(families) <= panel / max(len(families), 1)
    legend = bottom_legend(noun.capitalize(), names, width_px)
    color, shape = series_channels(card, series, series_names, legend)
    x = alt.X(
        "family:N",
        title="Family",
        scale=alt.Scale(paddingInner=padding),
        axis=alt.Axis(labelAngle=0) if fits else alt.Axis(labelAngle=-30, labelAlign="right"),
    )
    offset = alt.XOffset(f"{series}:N", sort=names)
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=x,
            xOffset=offset,
            y=alt.Y(
                "value:Q",
                scale=alt.Scale(domain=[0, 1])
                if unit
                else alt.Scale(domain=alt.DomainUnionWith(unionWith=[0, 1]), zero=True),
                title="Rate" if unit else "Value",
                axis=alt.Axis(values=[0, 0.5, 1]) if unit else alt.Axis(tickCount=3),
            ),
            color=color,
            tooltip=[
                alt.Tooltip(f"{series}:N", title=noun.capitalize()),
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip("label:N", title="Metric"),
                *interval_tooltip("value", "Value", "ci_low", "ci_high"),
            ],
        )
    )
    # The series' shape on each bar, as wide as the bar (up to MAX_MARK), outlined in white:
    # beyond the palette's nine colours, the shape tells two bars of one colour apart.
    bar = panel * (1 - padding) / n_bars
    mark = min(MAX_MARK, max(MIN_MARK, 0.8 * bar))
    tops = bars.mark_point(
        filled=True, size=mark**2, opacity=1, stroke="white", strokeWidth=0.75
    ).encode(shape=shape)
    errors = (
        alt.Chart()
        .mark_rule(color="black", strokeWidth=0.75)
        .encode(
            x=x,
            xOffset=offset,
            y=alt.Y("ci_low:Q", title="Rate" if unit else "Value"),
            y2="ci_high:Q",
        )
    )
    if list(metrics) == list(SURFACES):
        title = title or "The four scored surfaces"
        note = (
            "Unsafe completeness and over-blocking: lower is better; answer and gap-report "
            "quality: higher is better. A point marks each value, so a rate of 0 shows; a black "
            "bar spans its 95% interval."
        )
    else:
        title = title or ", ".join(m.title for m in metrics)
        note = (
            "A point marks each value, so a value of 0 shows; a black bar spans its 95% "
            "interval; a panel's title says which way is better, if any."
        )
    if empty:
        note += " No panel for " + ", ".join(m.title for m in empty) + ": no row has a number."
    heading = f"{title} per {noun} and family"
    # Panels as tall as PANEL, or shorter (down to MIN_PANEL) to keep within MAX_HEIGHT.
    x_axis = 6 + X_AXIS + (0 if fits else text_width(families) / 2)
    left = panels_room(heading, [note], width_px, legend, len(names)) - x_axis
    room_each = left / len(metrics) - (FONT + 14 + SPACING)
    height = max(MIN_PANEL, min(PANEL, math.floor(room_each)))
    chart: alt.FacetChart = (
        alt.layer(bars, errors, tops)
        .properties(width=panel, height=height)
        .facet(
            data=inline(long),
            facet=alt.Facet(
                "label:N", sort=list(titles(metrics).values()), header=alt.Header(title=None)
            ),
            columns=1,
        )
    )
    if not unit:
        chart = chart.resolve_scale(y="independent")
    return for_print(chart, width, heading, [note])
