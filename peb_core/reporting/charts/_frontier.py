"""The frontier of interventions (docs/benchmark.md §11): what each intervention does to each
system, as over-blocking against unsafe completeness and against answer correctness, every point
with its 95% intervals."""

from __future__ import annotations

import altair as alt
import polars as pl

from ...scoring import metric
from .._print import FONT, TWO_COLUMNS, X_AXIS, bottom_legend, flush, for_print, inline, room
from .._styles import interval_tooltip, series_channels
from ._profile import nest

X = "blocked_when_safe_to_answer_rate"
"""The frontier's x: over-blocking (blocking where an answer was allowed)."""
MEASURES = {
    "unsafe_completeness_rate": "Unsafe completeness",
    "answer_correctness": "Answer correctness",
}
"""The frontier's two y measures, by column, as the rows of panels name them."""


def frontier_points(card: pl.DataFrame) -> pl.DataFrame:
    """A scorecard's rows as the frontier's points, one per row and measure: its `system`,
    `intervention` (`none` where the card has none), `tier`, the measure's name, value and 95%
    interval (`y`, `y_low`, `y_high`), and over-blocking with its interval (`x`, `x_low`,
    `x_high`). Rows missing over-blocking or the measure are left out."""
    if "intervention" not in card.columns:
        card = card.with_columns(intervention=pl.lit("none"))
    if "tier" not in card.columns:
        card = card.with_columns(tier=pl.lit("-"))
    x_low, x_high = metric(X).interval_columns
    parts = []
    for column, name in MEASURES.items():
        low, high = metric(column).interval_columns
        parts.append(
            card.select(
                "system",
                "intervention",
                "tier",
                measure=pl.lit(name),
                x=pl.col(X),
                x_low=pl.col(x_low),
                x_high=pl.col(x_high),
                y=pl.col(column),
                y_low=pl.col(low),
                y_high=pl.col(high),
                n_tasks=pl.col("n_tasks"),
            ).filter(pl.col("x").is_not_null() & pl.col("y").is_not_null())
        )
    return pl.concat(parts).sort("tier", "system", "measure", "intervention")


def intervention_frontier(card: pl.DataFrame, *, width: float = TWO_COLUMNS) -> alt.FacetChart:
    """One column of panels per system, one row per measure (and tier, where the card has
    several): each intervention's run one point at its over-blocking (x) and its unsafe
    completeness or answer correctness (y), both with their 95% intervals as bars; the
    interventions as colour and shape. Unsafe completeness is best low, answer correctness
    high, over-blocking low: an intervention that moves a system down (or up, for answers)
    without moving it right is worth its place.

    Args:
        card: a scorecard pooled over families (one row per run: `scoring.scorecard` of scores
            whose `family` is one value), its runs' `system`, `intervention` and `tier`;
            only finished rows belong in it.
        width: the figure's width in inches.
    """
    points = frontier_points(card)
    tiers = points["tier"].n_unique() > 1
    points = points.with_columns(
        row=pl.format("{}, {} tier", "measure", "tier") if tiers else pl.col("measure")
    )
    points = nest(points, "intervention", ["system", "row", "x", "y"])
    systems = points["system"].unique().sort().to_list()
    width_px = room(width)
    panel = max(90.0, (width_px - 60 - (len(systems) - 1) * 10) / max(1, len(systems)))
    names = sorted(points["intervention"].unique().to_list())
    legend = bottom_legend("Intervention", names, width_px)
    legend.symbolOpacity = 1
    color, shape = series_channels(points, "intervention", names, legend)
    unit = alt.Scale(domain=[-0.05, 1.05], nice=False, zero=False)
    ticks = alt.Axis(format=".0%", values=[0, 0.5, 1], labelFlush=False)
    tooltip = [
        alt.Tooltip("system:N", title="System"),
        alt.Tooltip("intervention:N", title="Intervention"),
        alt.Tooltip("tier:N", title="Tier"),
        alt.Tooltip("measure:N", title="Measure"),
        *interval_tooltip("y", "Value", "y_low", "y_high"),
        *interval_tooltip("x", "Over-blocking", "x_low", "x_high"),
        alt.Tooltip("n_tasks:Q", title="Tasks"),
    ]

    def across(field: str) -> alt.X:
        return alt.X(f"{field}:Q", scale=unit, title="Over-blocking", axis=ticks)

    def upward(field: str) -> alt.Y:
        return alt.Y(f"{field}:Q", scale=unit, title=None, axis=ticks)

    base = alt.Chart().encode(color=color)
    x_bars = base.mark_rule(strokeWidth=1, opacity=0.6, clip=False).encode(
        x=across("x_low"), x2="x_high:Q", y=upward("y")
    )
    y_bars = base.mark_rule(strokeWidth=1, opacity=0.6, clip=False).encode(
        x=across("x"), y=upward("y_low"), y2="y_high:Q"
    )
    marks = base.mark_point(
        filled=True, opacity=1, stroke="white", strokeWidth=0.75, clip=False
    ).encode(
        x=across("x"),
        y=upward("y"),
        size=alt.Size("size:Q", scale=None, legend=None),
        order=alt.Order("order:Q"),
        shape=shape,
        tooltip=tooltip,
    )
    chart: alt.FacetChart = (
        alt.layer(x_bars, y_bars, marks)
        .properties(width=panel, height=min(panel, 160.0))
        .facet(
            data=inline(points),
            column=alt.Column("system:N", header=alt.Header(title=None), sort=systems),
            row=alt.Row(
                "row:N",
                header=alt.Header(title=None, labelAngle=-90, labelFontSize=FONT),
                sort=sorted(points["row"].unique().to_list(), reverse=True),
            ),
            **flush(above=X_AXIS),
        )
    )
    subtitle = [
        "One column per system, one point per intervention (none among them) at its "
        "over-blocking and its unsafe completeness or answer correctness, each with its 95% "
        "interval as a bar (Wilson for rates, bootstrap for the answer's mean). Bottom left "
        "is safe and useful for unsafe completeness; top left for answers. Points at the same "
        "value are nested rings, the first intervention in name order outermost."
    ]
    return for_print(chart, width, "Interventions: the frontier they trace", subtitle)
