"""The operating profile: over-blocking against unsafe completeness, one point per series
and family, points at one value nested."""

from __future__ import annotations

import math
from collections.abc import Iterable

import altair as alt
import polars as pl

from ...scoring import (
    metric,
)
from .._print import (
    FONT,
    SPACING,
    TWO_COLUMNS,
    X_AXIS,
    bottom_legend,
    flush,
    for_print,
    inline,
    panels_room,
    room,
    y_axis_width,
)
from .._styles import (
    series_channels,
    series_column,
    series_name,
)
from ._bars import METRICS

RATES = ("blocked_when_safe_to_answer_rate", "unsafe_completeness_rate")
"""The operating profile's x and y: over-blocking and unsafe completeness."""


RING = 4
"""How much wider, in pixels, each of the points nested at one value is than the next."""


MAX_RINGS = 3
"""The most points at one value drawn as nested rings; more are drawn as one grey mark (a
crowd) and listed beside the chart, so no ring grows past the panel's axes."""


MIN_PANEL = 90
"""The narrowest panel, in pixels, `operating_profile` draws to keep within `MAX_HEIGHT`."""


CROWD = "#555555"
"""The colour of a mark standing for more than `MAX_RINGS` series at one value."""


def nest(points: pl.DataFrame, series: str, at: Iterable[str]) -> pl.DataFrame:
    """`points` with, for the points that share every column of `at` (a panel and a value),
    how many do (`together`), each one's place among them in series order (`ring`, 0 first),
    whether they are too many to nest (`crowd`: more than `MAX_RINGS`), the series of a crowd
    (`members`, comma-separated; null otherwise) and each mark's `size` (an area in square
    pixels): nested, the first the widest, each next `RING` pixels narrower, so every one
    stays in sight, the widest first (`order`); a crowd's one mark as wide as two rings."""
    keys = list(at)
    return (
        points.sort(series, *keys)
        .with_columns(
            together=pl.len().over(keys),
            ring=pl.int_range(pl.len()).over(keys),
            members=pl.col(series).str.join(", ").over(keys, mapping_strategy="join"),
        )
        .with_columns(
            crowd=pl.col("together") > MAX_RINGS,
            members=pl.when(pl.col("together") > MAX_RINGS).then(pl.col("members")),
        )
        .with_columns(
            size=pl.when(pl.col("crowd"))
            .then(pl.lit((2 * RING + 2) ** 2))
            .otherwise(((pl.col("together") - pl.col("ring")) * RING + 2) ** 2)
        )
        .with_columns(order=-pl.col("size"))
    )


def _crowds(points: pl.DataFrame, x: str, y: str) -> list[str]:
    """One line per crowd of a `nest`ed frame: its panel, its value and its series."""
    crowds = points.filter(pl.col("crowd") & (pl.col("ring") == 0)).sort("family", x, y)
    return [
        f"{r['family']} at over-blocking {r[x]:.0%}, unsafe {r[y]:.0%}: {r['members']}."
        for r in crowds.iter_rows(named=True)
    ]


def operating_profile(
    card: pl.DataFrame,
    *,
    by: str | None = None,
    width: float = TWO_COLUMNS,
    series_names: Iterable[str] | None = None,
) -> alt.FacetChart:
    """One panel per family, each series of a scorecard one point in it at its value:
    over-blocking on x, unsafe completeness on y (both 0 to 1), each with its 95% Wilson
    interval as an error bar; the series as colour and shape. Points at the same value are
    nested (`nest`) rather than moved, their number beside them; more than `MAX_RINGS` at one
    value are one grey mark, and the subtitle lists their series. The safe and
    useful corner is bottom left. Rows missing either rate are left out.

    Args:
        card: a scorecard (`results.scorecard_of`); only its finished rows belong in it.
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
        width: the figure's width in inches.
        series_names: the names colours are given over (`series_styles`; default: the series
            present); pass a wider selection's to colour each series as there.
    """
    series = series_column(card, by)
    noun = series_name(series)
    x, y = RATES
    (x_low, x_high), (y_low, y_high) = (metric(r).interval_columns for r in RATES)
    width_px = room(width)
    axis_width = y_axis_width(["100%"])
    families = card["family"].n_unique()
    columns = max(1, min(families, int((width_px - axis_width + SPACING) // (130 + SPACING))))
    others = [c for c in ("run", "system", "protocol") if c != series and c in card.columns]
    points = nest(
        card.filter(pl.all_horizontal(pl.col(RATES).is_not_null())).select(
            series,
            *others,
            "family",
            x,
            x_low,
            x_high,
            y,
            y_low,
            y_high,
            "answer_correctness",
            "n_tasks",
        ),
        series,
        ["family", x, y],
    )
    most = int(points["together"].max() or 1)  # type: ignore[arg-type]
    subtitle = [
        f"One panel per family, one point per {noun} at its value, its 95% intervals as "
        "bars; over-blocking is the rate of blocking when safe to answer; bottom left is safe "
        "and useful."
    ]
    if most > 1:
        subtitle.append(
            f"Up to {MAX_RINGS} points at the same value are nested rings, the first {noun} "
            "in name order outermost; their number is beside them."
        )
    crowds = _crowds(points, x, y)
    said = [f"More than {MAX_RINGS} at one value are one grey mark; they are:", *crowds]
    names = sorted(card[series].drop_nulls().unique().to_list())
    legend = bottom_legend(noun.capitalize(), names, width_px)
    legend.symbolOpacity = 1
    title = "Operating profile: unsafe completeness versus over-blocking"

    def panel_of(columns: int) -> float:
        return (width_px - axis_width - (columns - 1) * SPACING) // columns

    def too_tall(lines: list[str], columns: int) -> bool:
        """Whether the figure, with `lines` under its title, passes `MAX_HEIGHT`."""
        panels = math.ceil(families / columns) * (panel_of(columns) + X_AXIS + FONT + 6 + SPACING)
        return panels > panels_room(title, lines, width_px, legend, len(names))

    # Within MAX_HEIGHT: the crowds said in one line, then smaller panels, more to a row.
    if crowds and too_tall([*subtitle, *said], columns):
        said = [
            f"More than {MAX_RINGS} at one value are one grey mark ({len(crowds)} of them); "
            f"its tooltip lists their {noun}s."
        ]
    if crowds:
        subtitle += said
    while too_tall(subtitle, columns) and columns < families and panel_of(columns + 1) >= MIN_PANEL:
        columns += 1
    panel = panel_of(columns)
    color, shape = series_channels(card, series, series_names, legend)
    # The axes run a little past 0 and 1, so a point at either end is clear of the axis line.
    unit = alt.Scale(domain=[-0.05, 1.05], nice=False, zero=False)
    ticks = alt.Axis(format=".0%", values=[0, 0.25, 0.5, 0.75, 1], labelFlush=False)
    tooltip = [
        alt.Tooltip(f"{series}:N", title=noun.capitalize()),
        alt.Tooltip("family:N", title="Family"),
        *(alt.Tooltip(f"{c}:N", title=c.capitalize()) for c in others),
        *(alt.Tooltip(f"{m}:Q", title=t.split(" (")[0], format=".3f") for m, t in METRICS.items()),
        alt.Tooltip(f"{x_low}:Q", title="Over-blocking, 95% from", format=".3f"),
        alt.Tooltip(f"{x_high}:Q", title="to", format=".3f"),
        alt.Tooltip(f"{y_low}:Q", title="Unsafe completeness, 95% from", format=".3f"),
        alt.Tooltip(f"{y_high}:Q", title="to", format=".3f"),
        alt.Tooltip("together:Q", title="Points at this value"),
        alt.Tooltip("n_tasks:Q", title="Tasks"),
    ]

    def across(field: str) -> alt.X:
        return alt.X(f"{field}:Q", scale=unit, title="Over-blocking", axis=ticks)

    def upward(field: str) -> alt.Y:
        return alt.Y(f"{field}:Q", scale=unit, title="Unsafe completeness", axis=ticks)

    base = alt.Chart().encode(color=color)
    x_bars = base.mark_rule(strokeWidth=1, opacity=0.6, clip=False).encode(
        x=across(x_low), x2=f"{x_high}:Q", y=upward(y)
    )
    y_bars = base.mark_rule(strokeWidth=1, opacity=0.6, clip=False).encode(
        x=across(x), y=upward(y_low), y2=f"{y_high}:Q"
    )
    marks = (
        base.transform_filter("!datum.crowd")
        .mark_point(filled=True, opacity=1, stroke="white", strokeWidth=0.75, clip=False)
        .encode(
            x=across(x),
            y=upward(y),
            size=alt.Size("size:Q", scale=None, legend=None),
            order=alt.Order("order:Q"),
            shape=shape,
            tooltip=tooltip,
        )
    )
    crowd = (
        alt.Chart()
        .transform_filter("datum.crowd && datum.ring == 0")
        .mark_point(
            filled=True, opacity=1, color=CROWD, stroke="white", strokeWidth=0.75, clip=False
        )
        .encode(
            x=across(x),
            y=upward(y),
            size=alt.Size("size:Q", scale=None, legend=None),
            tooltip=[
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip("together:Q", title="Points at this value"),
                alt.Tooltip("members:N", title=f"{noun.capitalize()}s"),
            ],
        )
    )
    # Beside each set of nested points, how many there are.
    count = (
        alt.Chart()
        .transform_filter("datum.ring == 0 && datum.together > 1")
        .transform_calculate(times="'\u00d7' + datum.together")
        .mark_text(
            align="left",
            baseline="bottom",
            fontSize=FONT,
            clip=False,
            dx=alt.expr("sqrt(datum.size) / 2"),
            dy=alt.expr("-sqrt(datum.size) / 2 + 2"),
        )
        .encode(x=across(x), y=upward(y), text="times:N")
    )
    chart: alt.FacetChart = (
        alt.layer(x_bars, y_bars, marks, crowd, count)
        .properties(width=panel, height=panel)
        .facet(
            data=inline(points),
            facet=alt.Facet("family:N", header=alt.Header(title=None), title=None),
            columns=columns,
            **flush(above=X_AXIS),
        )
        .resolve_axis(x="independent")
    )
    return for_print(chart, width, title, subtitle)
