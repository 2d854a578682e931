"""The charts of score frames and scorecards, shared by the notebooks, the paper and the CLI. Each
is laid out for print (`_print`), its series and verdicts styled alike in every chart
(`_styles`), its data aggregated in polars and carried inline; nothing here touches altair's
global settings.

- `confusion_heatmap(scores)`: true x claimed completeness of each series, each matrix coloured
  by the share of its row (normalised within its run), the counts printed;
- `operating_profile(card)`: over-blocking against unsafe completeness, one panel per family,
  every point at its value with its 95% intervals as error bars; up to `MAX_RINGS` points at
  the same value are nested rings, so each stays in sight, and more are one grey mark whose
  series the subtitle lists;
- `outcome_grid(scores)`: one cell per task and series, coloured by verdict, one panel per
  family, series named on every panel, at most `MAX_HEIGHT` tall;
- `metric_bars(card)`: the four scored surfaces per series and family, with 95% intervals.

A faceted chart gives each panel its own x axis, so a short last row leaves empty space, never
an axis under no panel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import altair as alt
import polars as pl

from ..scoring import (
    CLAIMED,
    SURFACES,
    TRUTH,
    VERDICT_LABELS,
    VERDICTS,
    Metric,
    confusion_counts,
    metric,
    with_verdict,
)
from ._print import (
    FONT,
    MAX_HEIGHT,
    ONE_COLUMN,
    PX_PER_INCH,
    SPACING,
    TITLE_FONT,
    TWO_COLUMNS,
    bottom_legend,
    flush,
    for_print,
    inline,
    print_width,
    room,
    text_width,
    wrap,
    y_axis_width,
)
from ._styles import (
    PALETTE,
    SHAPES,
    series_channels,
    series_column,
    series_scales,
    series_styles,
    verdict_legend,
    verdict_scale,
)

__all__ = [
    "CLAIMED",
    "FONT",
    "MAX_GRID_CELLS",
    "MAX_HEIGHT",
    "MAX_RINGS",
    "METRICS",
    "MIN_BAR",
    "ONE_COLUMN",
    "PALETTE",
    "PX_PER_INCH",
    "RATES",
    "SHAPES",
    "TRUTH",
    "TWO_COLUMNS",
    "confusion_heatmap",
    "metric_bars",
    "metric_long",
    "nest",
    "operating_profile",
    "outcome_grid",
    "print_width",
    "series_column",
    "series_styles",
    "titles",
]


def titles(metrics: Sequence[Metric]) -> dict[str, str]:
    """Each metric's column name -> its title as a reader of the paper knows it, with the
    direction that is better (if it has one)."""
    return {m.name: m.title + (f" ({m.better} is better)" if m.better else "") for m in metrics}


METRICS: dict[str, str] = titles(SURFACES)
"""The four scored surfaces (`peb_core.scoring.SURFACES`), titled as a reader of the paper
knows them."""

RATES = ("blocked_when_safe_to_answer_rate", "unsafe_completeness_rate")
"""The operating profile's x and y: over-blocking and unsafe completeness."""

BAND = 4
"""The height in pixels of the band in a series' colour over each confusion matrix."""

INK = 0.5
"""A confusion matrix prints its counts in white on cells at least this share of their row
(the darker half of the blues), in black on the paler ones."""

X_AXIS = 5 + 2 + FONT + 4 + FONT + 2
"""The height in pixels of an x axis below a panel: tick, padding, labels, padding, title."""

MAX_GRID_CELLS = 20_000
"""`outcome_grid` draws at most this many cells by default (tasks x series); past that it draws
the first tasks and says so in its title."""

MIN_BAR = 3
"""The narrowest bar `metric_bars` draws, in pixels (2.25 pt printed)."""

RING = 4
"""How much wider, in pixels, each of the points nested at one value is than the next."""

MAX_RINGS = 3
"""The most points at one value drawn as nested rings; more are drawn as one grey mark (a
crowd) and listed beside the chart, so no ring grows past the panel's axes."""

CROWD = "#555555"
"""The colour of a mark standing for more than `MAX_RINGS` series at one value."""


def confusion_heatmap(
    scores: pl.DataFrame,
    *,
    by_family: bool = False,
    columns: int | None = None,
    width: float = TWO_COLUMNS,
    series_names: Iterable[str] | None = None,
) -> alt.FacetChart:
    """The completeness confusion matrix of each series: rows are the task's true
    completeness, columns what the response claimed (a block claims incomplete; an unparsable
    or missing response is `invalid`), the count in each cell, each cell coloured by its share
    of its row (`scoring.confusion_counts`: normalised within the series, so a big run never
    washes out a small one), over a band in the series' colour.

    Args:
        scores: per-task scores (`scoring.score_frames` or `results.score_run_dirs`).
        by_family: one matrix per series and family (families as rows, series as columns)
            instead of per series; wider than `width` when the series do not fit.
        columns: matrices per row when faceting by series only (default: as many as fit).
        width: the figure's width in inches.
        series_names: the names colours are given over (`series_styles`; default: the series
            present); pass a wider selection's to colour each series as there.
    """
    series = series_column(scores)
    keys = [series, "family"] if by_family else [series]
    counts = confusion_counts(scores, keys)
    names = counts[series].unique().to_list()
    width_px = room(width)
    inside = width_px - y_axis_width(TRUTH, title_lines=2)
    # A matrix is at least as wide as its series' name (so no header runs into the next) and
    # its column labels; the matrices of a row share the width, up to 70 pixels a column.
    least = max(len(CLAIMED) * (text_width(CLAIMED) + 6), text_width(names, bold=True) + 4)
    per_row = columns or max(1, min(len(names), int((inside + SPACING) // (least + SPACING))))
    fill = (inside - (per_row - 1) * SPACING) / per_row
    matrix = least if by_family else max(least, min(fill, len(CLAIMED) * 70))
    colours, _ = series_scales(counts, series, series_names)
    base = alt.Chart().encode(
        x=alt.X(
            "claimed:N",
            sort=list(CLAIMED),
            title="Claimed by the response",
            axis=alt.Axis(labelAngle=0),
        ),
        y=alt.Y("truth:N", sort=list(TRUTH), title=["True", "completeness"]),
    )
    cells = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            "share:Q",
            scale=alt.Scale(scheme="blues", domain=[0, 1]),
            legend=alt.Legend(
                title="Share of the true class (each run's own)",
                format=".0%",
                orient="bottom",
                direction="horizontal",
                values=[0, 0.5, 1],
                gradientLength=min(200, width_px / 2),
            ),
        ),
        tooltip=[
            alt.Tooltip(f"{series}:N", title=series.capitalize()),
            *([alt.Tooltip("family:N", title="Family")] if by_family else []),
            alt.Tooltip("truth:N", title="True completeness"),
            alt.Tooltip("claimed:N", title="Claimed"),
            alt.Tooltip("count:Q", title="Tasks"),
            alt.Tooltip("share:Q", title="Share of row", format=".1%"),
        ],
    )
    text = base.mark_text(fontSize=FONT + 1).encode(
        text=alt.Text("count:Q"),
        color=alt.when(f"datum.share >= {INK}")
        .then(alt.value("white"))
        .otherwise(alt.value("black")),
    )
    band = (
        alt.Chart()
        .mark_rect()
        .encode(
            x=alt.value(0),
            x2=alt.value(matrix),
            y=alt.value(-BAND - 1),
            y2=alt.value(-1),
            fill=alt.Fill(f"{series}:N", scale=colours, legend=None),
        )
    )
    layered = alt.layer(cells, text, band).properties(width=matrix, height=2 * 30)
    header = alt.Header(title=None)
    chart: alt.FacetChart
    if by_family:
        chart = layered.facet(
            data=inline(counts),
            column=alt.Column(f"{series}:N", header=header, title=None),
            row=alt.Row("family:N", header=header, title=None),
        )
    else:
        chart = layered.facet(
            data=inline(counts),
            facet=alt.Facet(f"{series}:N", header=header, title=None),
            columns=per_row,
            **flush(BAND + 1 + X_AXIS),
        ).resolve_axis(x="independent")
    return for_print(
        chart,
        width,
        "Completeness awareness: true versus claimed",
        [
            "Tasks per cell, each cell shaded by its share of its row in its own run; "
            "off-diagonal cells are false complete or false incomplete."
        ],
    )


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
    x, y = RATES
    (x_low, x_high), (y_low, y_high) = (metric(r).interval_columns for r in RATES)
    width_px = room(width)
    axis_width = y_axis_width(["100%"])
    families = card["family"].n_unique()
    columns = max(1, min(families, int((width_px - axis_width + SPACING) // (130 + SPACING))))
    panel = (width_px - axis_width - (columns - 1) * SPACING) // columns
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
        f"One panel per family, one point per {series} at its value, its 95% intervals as "
        "bars; over-blocking is the rate of blocking when safe to answer; bottom left is safe "
        "and useful."
    ]
    if most > 1:
        subtitle.append(
            f"Up to {MAX_RINGS} points at the same value are nested rings, the first {series} "
            "in name order outermost; their number is beside them."
        )
    if crowds := _crowds(points, x, y):
        subtitle += [f"More than {MAX_RINGS} at one value are one grey mark; they are:", *crowds]
    names = sorted(card[series].drop_nulls().unique().to_list())
    legend = bottom_legend(series.capitalize(), names, width_px)
    legend.symbolOpacity = 1
    color, shape = series_channels(card, series, series_names, legend)
    # The axes run a little past 0 and 1, so a point at either end is clear of the axis line.
    unit = alt.Scale(domain=[-0.05, 1.05], nice=False, zero=False)
    ticks = alt.Axis(format=".0%", values=[0, 0.25, 0.5, 0.75, 1], labelFlush=False)
    tooltip = [
        alt.Tooltip(f"{series}:N", title=series.capitalize()),
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
                alt.Tooltip("members:N", title=f"{series.capitalize()}s"),
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
    return for_print(
        chart, width, "Operating profile: unsafe completeness versus over-blocking", subtitle
    )


def _grid_layout(
    families: int, series: int, tasks: int, label: float, width_px: float, fixed: float
) -> tuple[int, float, float, bool]:
    """The outcome grid's panel columns, row height and cell width, and whether the series can
    be named on every panel: the fewest columns in which the figure fits `MAX_HEIGHT` with a
    readable row per series (`FONT` + 1 pixels) and cells at least 2 pixels wide; if none
    does, rows as tall as fit, unnamed."""
    budget = MAX_HEIGHT * PX_PER_INCH - fixed
    for named in (True, False):
        for columns in range(1, families + 1):
            rows = math.ceil(families / columns)
            chrome = FONT + 6 + X_AXIS + SPACING  # header, axis, gap
            step = FONT + 1 if named else max(1.0, (budget / rows - chrome) / max(series, 1))
            cell = ((width_px - (columns - 1) * SPACING) / columns - (label if named else 0)) / max(
                tasks, 1
            )
            if rows * (series * step + chrome) <= budget and cell >= 2:
                return columns, step, cell, named
    return families, 1.0, 2.0, False


def outcome_grid(
    scores: pl.DataFrame,
    *,
    by: str | None = None,
    max_cells: int = MAX_GRID_CELLS,
    width: float = TWO_COLUMNS,
) -> alt.FacetChart:
    """One panel per family, in it one row per series (named on every panel) and one cell per
    task, coloured by verdict (`scoring.with_verdict`), with the task, verdict and scores in
    the tooltip. Panels wrap into the fewest columns in which the figure stays within
    `MAX_HEIGHT`; tasks run left to right in id order.

    Args:
        scores: per-task scores.
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
        max_cells: draw at most this many cells (tasks x series), keeping the first tasks in
            family and task order; the title says when tasks were left out.
        width: the figure's width in inches.
    """
    series = series_column(scores, by)
    tasks = scores.select("family", "task_id").unique().sort("family", "task_id")
    names = sorted(scores[series].drop_nulls().unique().to_list())
    shown = tasks.head(max(max_cells // max(len(names), 1), 1))
    frame = (
        with_verdict(scores.join(shown, on=["family", "task_id"], how="semi"))
        .with_columns(verdict_label=pl.col("verdict").replace_strict(VERDICT_LABELS))
        .select(
            series,
            *(c for c in ("run", "system", "protocol") if c != series and c in scores.columns),
            "family",
            "task_id",
            "completeness",
            "outcome",
            "verdict",
            "verdict_label",
            "answer_score",
            "gap_score",
        )
        .sort("family", "task_id", series)
    )
    width_px = room(width)
    title = "Outcome per task"
    subtitle = [
        f"{len(shown)} tasks x {len(names)} {series}s; one row per {series}, one cell per task "
        "(in id order, the id in the tooltip)"
    ]
    if len(shown) < len(tasks):
        title += f": the first {len(shown)} of {len(tasks)} tasks only"
        subtitle.append(
            f"max_cells={max_cells} cut the rest; pass max_cells={len(tasks) * len(names)} "
            "to draw every task"
        )
    if frame.height < len(shown) * len(names):
        subtitle[0] += "; a blank cell: the task is not in that run"
    per_family = int(shown.group_by("family").len()["len"].max() or 1)  # type: ignore[arg-type]
    families = max(shown["family"].n_unique(), 1)
    lines = len(wrap(title, width_px, TITLE_FONT, bold=True))
    lines += sum(len(wrap(s, width_px)) for s in subtitle)
    legend = verdict_legend(width_px)
    legend_rows = math.ceil(len(VERDICTS) / (legend.columns or 1))
    fixed = 2 * 6 + lines * (FONT + 4) + 8 + (legend_rows + 1) * (FONT + 6) + 20
    label = y_axis_width(names)
    columns, step, cell, named = _grid_layout(
        families, len(names), per_family, label, width_px, fixed
    )
    if not named:
        subtitle.append(
            f"too many {series}s to name on every panel: their names are in the tooltip"
        )
    panel = (width_px - (columns - 1) * SPACING) / columns - (label if named else 0)
    chart: alt.FacetChart = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=0.5 if cell >= 4 else 0)
        .encode(
            x=alt.X(
                "task_id:N",
                sort="ascending",
                title="Tasks",
                axis=alt.Axis(labels=False, ticks=False),
            ),
            y=alt.Y(
                f"{series}:N",
                sort=names,
                title=series.capitalize(),
                axis=alt.Axis(labels=named, ticks=named),
            ),
            color=alt.Color("verdict:N", scale=verdict_scale(), legend=legend),
            tooltip=[
                alt.Tooltip("task_id:N", title="Task"),
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip(f"{series}:N", title=series.capitalize()),
                alt.Tooltip("verdict_label:N", title="Verdict"),
                alt.Tooltip("completeness:N", title="True completeness"),
                alt.Tooltip("outcome:N", title="Outcome"),
                alt.Tooltip("answer_score:Q", title="Answer score", format=".3f"),
                alt.Tooltip("gap_score:Q", title="Gap score", format=".3f"),
            ],
        )
        .properties(width=panel, height=alt.Step(step))
        .facet(
            data=inline(frame),
            facet=alt.Facet("family:N", header=alt.Header(title=None), title=None),
            columns=columns,
            spacing={"column": SPACING, "row": SPACING},
        )
        .resolve_scale(x="independent")
        .resolve_axis(x="independent", y="independent")
    )
    return for_print(chart, width, title, subtitle)


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
    legend = bottom_legend(series.capitalize(), names, width_px)
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
                alt.Tooltip(f"{series}:N", title=series.capitalize()),
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip("label:N", title="Metric"),
                alt.Tooltip("value:Q", title="Value", format=".3f"),
                alt.Tooltip("ci_low:Q", title="95% from", format=".3f"),
                alt.Tooltip("ci_high:Q", title="to", format=".3f"),
            ],
        )
    )
    tops = bars.mark_point(filled=True, size=14, opacity=1).encode(shape=shape)
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
    chart: alt.FacetChart = (
        alt.layer(bars, errors, tops)
        .properties(width=panel, height=64)
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
    return for_print(chart, width, f"{title} per {series} and family", [note])
