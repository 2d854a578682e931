"""Altair charts of score frames and scorecards, shared by the notebooks, the paper and the CLI.

Every chart is laid out for print at `width` inches (`ONE_COLUMN` or `TWO_COLUMNS`): sizes are
CSS pixels, `PX_PER_INCH` to the inch, no text is smaller than `FONT` pixels (6.75 pt printed),
and the chart carries its print width (`print_width`) for `reporting.chart_bytes`, which
renders it at exactly that width. No label or legend is cut short.

Each series (a system, or a run when a system has two runs) gets one colour and one shape from
the names present, or from `series_names` when given (`series_styles`), set as explicit
scales, so a selection shows a series alike in every chart. Verdict colours come only from
`scoring.VERDICT_COLORS`.

Every chart carries its data inline (`{"values": [...]}`, no `url`), so a saved spec or an
exported figure needs no network and no file beside it. Frames are aggregated in polars before
they reach altair. Nothing here touches altair's global settings.

- `confusion_heatmap(scores)`: true completeness x claimed completeness, counts, per series;
- `operating_profile(card)`: over-blocking against unsafe completeness, sized by answer
  quality, one panel per family;
- `outcome_grid(scores)`: one cell per task and series, coloured by verdict, one panel per
  family;
- `metric_bars(card)`: the four scored surfaces per series and family.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import altair as alt
import polars as pl

from ..scoring import SURFACES, VERDICT_COLORS, VERDICT_LABELS, VERDICTS, Metric, with_verdict


def titles(metrics: Sequence[Metric]) -> dict[str, str]:
    """Each metric's column name -> its title as a reader of the paper knows it, with the
    direction that is better (if it has one)."""
    return {m.name: m.title + (f" ({m.better} is better)" if m.better else "") for m in metrics}


METRICS: dict[str, str] = titles(SURFACES)
"""The four scored surfaces (`peb_core.scoring.SURFACES`), titled."""

CLAIMED = ("complete", "incomplete", "invalid")
"""Columns of the confusion matrix: what a response claimed (a block claims incomplete)."""

TRUTH = ("complete", "incomplete")
"""Rows of the confusion matrix: the task's true completeness."""

RATES = ("blocked_when_safe_to_answer_rate", "unsafe_completeness_rate")
"""The operating profile's x and y: over-blocking and unsafe completeness."""

ONE_COLUMN = 3.5
"""The width of a one-column figure, in inches."""

TWO_COLUMNS = 7.0
"""The width of a two-column (full text width) figure, in inches."""

PX_PER_INCH = 96
"""Chart sizes are CSS pixels, 96 to the inch as a browser and SVG count them."""

FONT = 9.0
"""The size of every label, in pixels (6.75 pt printed); titles are `TITLE_FONT`."""

TITLE_FONT = 11.0
"""The size of a figure's title, in pixels."""

SPACING = 10
"""Pixels between the panels of a faceted chart."""

PADDING = 6
"""Pixels of white around a figure."""

BAND = 4
"""The height in pixels of the band in a series' colour over each confusion matrix."""

PALETTE: tuple[str, ...] = (
    # Tableau 20: its ten saturated colours first, then their ten light partners.
    "#4c78a8",
    "#f58518",
    "#e45756",
    "#439894",
    "#54a24b",
    "#b79a20",
    "#b279a2",
    "#d67195",
    "#9e765f",
    "#79706e",
    "#9ecae9",
    "#ffbf79",
    "#ff9d98",
    "#83bcb6",
    "#88d27a",
    "#f2cf5b",
    "#d6a5c9",
    "#fcbfd2",
    "#d8b5a5",
    "#bab0ac",
)
"""Twenty distinct series colours."""

SHAPES: tuple[str, ...] = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down")
"""Series shapes: the first 20 series are circles, the next 20 squares, and so on."""

MAX_GRID_CELLS = 20_000
"""`outcome_grid` draws at most this many cells by default (tasks x series); past that it draws
the first tasks and says so in its title."""

MIN_BAR = 3
"""The narrowest bar `metric_bars` draws, in pixels (2.25 pt printed)."""

FONT_FAMILY = "Arial, Liberation Sans, Helvetica, sans-serif"
"""Arial, or a font with its metrics (Liberation Sans renders the exported figures)."""

_ARIAL: dict[str, int] = {
    char: width
    for width, chars in (
        (191, "'"),
        (222, "ijl"),
        (278, " !,./:;I[]\\ft"),
        (333, "()-r"),
        (500, "Jckvxyzs"),
        (584, "+<=>"),
        (611, "FTZ"),
        (667, "ABEKPSVXY&"),
        (722, "CDHNRUw"),
        (778, "GOQ"),
        (833, "Mm"),
        (889, "%"),
        (944, "W"),
        (1015, "@"),
    )
    for char in chars
}
"""Arial's character widths in thousandths of an em; any other character is 556 wide (a digit,
most lower-case letters, `_`)."""


def _inline(frame: pl.DataFrame) -> dict[str, Any]:
    """The rows of `frame` as inline data: nothing for a renderer to fetch. A plain dict, since
    `alt.InlineData` checks every value against the schema on construction (a second per 3,000
    rows); the spec is still validated once, by `to_dict`."""
    return {"values": frame.to_dicts()}


def _text_width(texts: Iterable[str], size: float = FONT, *, bold: bool = False) -> float:
    """The width in pixels of the widest of `texts` set in `FONT_FAMILY` at `size`."""
    widest = max((sum(_ARIAL.get(char, 556) for char in text) for text in texts), default=0)
    return widest * size / 1000 * (1.09 if bold else 1)


def _room(width: float) -> float:
    """The pixels inside the padding of a figure `width` inches wide."""
    return width * PX_PER_INCH - 2 * PADDING


def _flush(above: float = 0) -> dict[str, Any]:
    """Facet layout that spaces panels by their frames (`SPACING` apart, and a header and
    `above` pixels more between rows), not by the marks that spill over them; for panels whose
    axes sit outside the panels."""
    return {"bounds": "flush", "spacing": {"column": SPACING, "row": SPACING + FONT + 6 + above}}


def _y_axis_width(labels: Iterable[str], title_lines: int = 1) -> float:
    """The width in pixels of a y axis with `labels` and a title of `title_lines` lines: the
    labels, a tick of 5, paddings of 2 and 4, and the title's lines."""
    return _text_width(labels) + 5 + 2 + 4 + title_lines * (FONT + 2)


def _wrap(text: str, width_px: float, size: float = FONT, *, bold: bool = False) -> list[str]:
    """`text` broken between words into lines no wider than `width_px` at `size` (a longer
    word stays whole)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and _text_width([f"{lines[-1]} {word}"], size, bold=bold) <= width_px:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def _for_print(
    chart: alt.FacetChart, width: float, title: str, subtitle: Iterable[str]
) -> alt.FacetChart:
    """`chart` titled (`title` and each `subtitle` paragraph wrapped to the width), with the
    print configuration (`FONT`, no label limit, no legend entry limit, titles flush left) and
    its print width in inches, which `print_width` reads back."""
    width_px = _room(width)
    unlimited = {"labelFontSize": FONT, "titleFontSize": FONT, "labelLimit": 0}
    heading = alt.Title(
        _wrap(title, width_px, TITLE_FONT, bold=True),
        subtitle=[line for paragraph in subtitle for line in _wrap(paragraph, width_px)],
    )
    printable: alt.FacetChart = chart.properties(
        title=heading, usermeta={"print_width_in": width}
    ).configure(
        font=FONT_FAMILY,
        padding=PADDING,
        title={"fontSize": TITLE_FONT, "subtitleFontSize": FONT, "anchor": "start", "offset": 6},
        axis={**unlimited, "titlePadding": 4},
        header={**unlimited, "labelFontWeight": "bold", "labelPadding": 3},
        legend={**unlimited, "symbolLimit": 0, "columnPadding": 12, "rowPadding": 2},
        facet={"spacing": SPACING},
    )
    return printable


def print_width(spec: dict[str, Any]) -> float | None:
    """The print width in inches the chart of a spec (`chart.to_dict()`) was laid out for, if
    it is a chart of this module."""
    width = spec.get("usermeta", {}).get("print_width_in")
    return None if width is None else float(width)


def series_column(frame: pl.DataFrame, by: str | None = None) -> str:
    """The column that names a line of results: `by`, else `system` when each system has one
    run, else `run` (two runs of one system must not share a colour)."""
    if by is not None:
        if by not in frame.columns:
            raise ValueError(f"no column {by!r}; have {', '.join(frame.columns)}")
        return by
    if "system" not in frame.columns:
        return "run"
    per_system = frame.group_by("system").agg(pl.col("run").n_unique().alias("n"))
    return "system" if per_system["n"].max() in (None, 1) else "run"


def series_styles(names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """A (colour, shape) for each distinct name, the names sorted: the i-th gets
    `PALETTE[i % 20]` and `SHAPES[i // 20]`, so no two of up to 120 names look alike and one
    selection styles a name alike in every chart."""
    ordered = sorted(set(names))
    if len(ordered) > len(PALETTE) * len(SHAPES):
        raise ValueError(
            f"{len(ordered)} series; at most {len(PALETTE) * len(SHAPES)} can be told apart"
        )
    return {
        name: (PALETTE[i % len(PALETTE)], SHAPES[i // len(PALETTE)])
        for i, name in enumerate(ordered)
    }


def _legend_entry(labels: list[str]) -> float:
    """The width in pixels of a legend entry (symbol, label, padding) for the widest label."""
    return _text_width(labels) + 28


def _legend(
    title: str, values: list[str], width_px: float, labels: list[str] | None = None
) -> alt.Legend:
    """A legend below a chart `width_px` wide listing every one of `values` (shown as
    `labels`, default the values themselves), in as many columns as fit."""
    shown = labels or values
    columns = max(1, min(len(shown), int(width_px // _legend_entry(shown))))
    return alt.Legend(
        title=title, values=values, orient="bottom", direction="horizontal", columns=columns
    )


def _series_channels(
    frame: pl.DataFrame,
    series: str,
    names: Iterable[str] | None,
    legend: alt.Legend | None = None,
) -> tuple[alt.Color, alt.Shape]:
    """Colour and shape channels of `series`, with the explicit scales of `series_styles` over
    `names` (default: the names in `frame`), sharing `legend` (so a legend shows each colour
    with its shape)."""
    present = frame[series].drop_nulls().unique().to_list()
    styles = series_styles(present if names is None else names)
    if unstyled := set(present) - set(styles):
        raise ValueError(f"series_names lacks {', '.join(sorted(unstyled))}")
    domain = list(styles)
    return (
        alt.Color(
            f"{series}:N",
            title=series.capitalize(),
            scale=alt.Scale(domain=domain, range=[c for c, _ in styles.values()]),
            legend=legend,
        ),
        alt.Shape(
            f"{series}:N",
            title=series.capitalize(),
            scale=alt.Scale(domain=domain, range=[s for _, s in styles.values()]),
            legend=legend,
        ),
    )


def _label_expr(labels: dict[str, str]) -> str:
    """A Vega expression mapping legend values to their labels."""
    expr = "datum.label"
    for key, label in reversed(labels.items()):
        expr = f"datum.label === {key!r} ? {label!r} : ({expr})"
    return expr


def verdict_scale() -> alt.Scale:
    """The colour scale of verdicts: the domain `VERDICTS`, the range `VERDICT_COLORS`."""
    return alt.Scale(domain=list(VERDICTS), range=[VERDICT_COLORS[v] for v in VERDICTS])


def verdict_legend(width_px: float = TWO_COLUMNS * PX_PER_INCH) -> alt.Legend:
    """The verdict legend below a chart `width_px` wide, in `VERDICTS` order, with
    `VERDICT_LABELS`."""
    legend = _legend("Verdict", list(VERDICTS), width_px, [VERDICT_LABELS[v] for v in VERDICTS])
    legend.labelExpr = _label_expr(VERDICT_LABELS)
    return legend


def confusion_counts(scores: pl.DataFrame, *, by_family: bool = False) -> pl.DataFrame:
    """Counts of true x claimed completeness per series (and family), every cell present, with
    each cell's share of its row and the `ink` its number is printed in: white on a cell at
    least half as dark as the darkest (count >= half the largest count), else black."""
    series = series_column(scores)
    keys = [series, "family"] if by_family else [series]
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
    return (
        cells.join(counts, on=[*keys, "truth", "claimed"], how="left")
        .with_columns(pl.col("count").fill_null(0).cast(pl.Int64))
        .with_columns(
            share=pl.col("count") / pl.col("count").sum().over(*keys, "truth").clip(lower_bound=1),
            ink=pl.when(pl.col("count") >= pl.col("count").max() / 2)
            .then(pl.lit("white"))
            .otherwise(pl.lit("black")),
        )
        .sort(keys)
    )


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
    or missing response is `invalid`), the count in each cell, over a band in the series'
    colour.

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
    counts = confusion_counts(scores, by_family=by_family)
    names = counts[series].unique().to_list()
    room = _room(width) - _y_axis_width(TRUTH, title_lines=2)
    # A matrix is at least as wide as its series' name (so no header runs into the next) and
    # its column labels; the matrices of a row share the width, up to 70 pixels a column.
    least = max(len(CLAIMED) * (_text_width(CLAIMED) + 6), _text_width(names, bold=True) + 4)
    per_row = columns or max(1, min(len(names), int((room + SPACING) // (least + SPACING))))
    fill = (room - (per_row - 1) * SPACING) / per_row
    matrix = least if by_family else max(least, min(fill, len(CLAIMED) * 70))
    color, _ = _series_channels(counts, series, series_names)
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
            "count:Q",
            scale=alt.Scale(scheme="blues", domain=[0, max(counts["count"].to_list(), default=1)]),
            legend=None,
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
        text=alt.Text("count:Q"), color=alt.Color("ink:N", scale=None)
    )
    band = (
        alt.Chart()
        .mark_rect()
        .encode(
            x=alt.value(0),
            x2=alt.value(matrix),
            y=alt.value(-BAND - 1),
            y2=alt.value(-1),
            color=color,
        )
    )
    layered = alt.layer(cells, text, band).properties(width=matrix, height=2 * 30)
    header = alt.Header(title=None)
    chart: alt.FacetChart
    if by_family:
        chart = layered.facet(
            data=_inline(counts),
            column=alt.Column(f"{series}:N", header=header, title=None),
            row=alt.Row("family:N", header=header, title=None),
        )
    else:
        chart = layered.facet(
            data=_inline(counts),
            facet=alt.Facet(f"{series}:N", header=header, title=None),
            columns=per_row,
            **_flush(BAND + 1),
        )
    return _for_print(
        chart,
        width,
        "Completeness awareness: true versus claimed",
        ["Tasks per cell; off-diagonal cells are false complete or false incomplete."],
    )


def _dodge(points: pl.DataFrame, series: str, panel: float, step: float) -> pl.DataFrame:
    """`points` with pixel offsets `dx`, `dy` that keep the points of a family's panel
    (`panel` pixels square) `step` apart: in series order, each point takes the nearest free
    place on a grid `step` apart that grows from its value toward the panel's centre (its own
    value when free)."""
    x, y = RATES
    offsets: list[tuple[int, float, float]] = []
    indexed = points.with_row_index("_row").sort(series)
    for _, group in indexed.group_by("family", maintain_order=True):
        reach = 2 * math.isqrt(group.height) + 2
        grid = sorted(
            ((i, j) for i in range(reach) for j in range(reach)),
            key=lambda ij: (ij[0] ** 2 + ij[1] ** 2, ij[1]),
        )
        placed: list[tuple[float, float]] = []
        for row, rx, ry in group.select("_row", x, y).iter_rows():
            sx, sy = (1 if rx <= 0.5 else -1) * step, (-1 if ry <= 0.5 else 1) * step
            spots = [(rx * panel + i * sx, (1 - ry) * panel + j * sy) for i, j in grid]
            free = next(
                (k for k, at in enumerate(spots) if all(math.dist(at, q) >= step for q in placed)),
                0,
            )
            placed.append(spots[free])
            offsets.append((row, grid[free][0] * sx, grid[free][1] * sy))
    moved = pl.DataFrame(
        offsets, schema={"_row": pl.UInt32, "dx": pl.Float64, "dy": pl.Float64}, orient="row"
    )
    return points.with_row_index("_row").join(moved, on="_row").sort("_row").drop("_row")


def operating_profile(
    card: pl.DataFrame,
    *,
    by: str | None = None,
    width: float = TWO_COLUMNS,
    series_names: Iterable[str] | None = None,
) -> alt.FacetChart:
    """One panel per family, each series of a scorecard one point in it: over-blocking on x,
    unsafe completeness on y (both 0 to 1), answer correctness as size, the series as colour
    and shape. Points at equal rates are set side by side, toward the panel's centre, and the
    subtitle says by how much. The safe and useful corner is bottom left. Rows missing either
    rate are left out.

    Args:
        card: a scorecard (`results.scorecard_of`).
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
        width: the figure's width in inches.
        series_names: the names colours are given over (`series_styles`; default: the series
            present); pass a wider selection's to colour each series as there.
    """
    series = series_column(card, by)
    width_px = _room(width)
    axis_width = _y_axis_width(["100%"])
    families = card["family"].n_unique()
    columns = max(1, min(families, int((width_px - axis_width + SPACING) // (130 + SPACING))))
    panel = (width_px - axis_width - (columns - 1) * SPACING) // columns
    sizes = (16, 64)
    step = 1.25 * math.sqrt(sizes[1])  # a little over the widest mark
    points = _dodge(
        card.filter(pl.all_horizontal(pl.col(RATES).is_not_null())).select(
            series,
            *(c for c in ("run", "system", "protocol") if c != series and c in card.columns),
            "family",
            *METRICS,
            "n_tasks",
        ),
        series,
        panel,
        step,
    )
    spread = points.select((pl.col("dx") ** 2 + pl.col("dy") ** 2).sqrt().max()).item() or 0.0
    subtitle = [
        f"One panel per family, one point per {series}; over-blocking is the rate of blocking "
        "when safe to answer; bottom left is safe and useful; size is answer correctness."
    ]
    if spread:
        subtitle.append(
            "Points that would overlap are set side by side toward the centre, up to "
            f"{spread / panel:.0%} of an axis from their value."
        )
    names = sorted(card[series].drop_nulls().unique().to_list())
    # The size legend sits beside the series legend, one entry a value.
    size_values = [0, 0.5, 1]
    beside = len(size_values) * _legend_entry(["0.5"])
    legend = _legend(series.capitalize(), names, width_px - beside)
    color, shape = _series_channels(card, series, series_names, legend)
    unit = alt.Scale(domain=[0, 1], nice=False)
    ticks = alt.Axis(format=".0%", values=[0, 0.25, 0.5, 0.75, 1])
    chart: alt.FacetChart = (
        alt.Chart()
        .mark_point(
            filled=True,
            opacity=0.85,
            clip=False,
            xOffset=alt.expr("datum.dx"),
            yOffset=alt.expr("datum.dy"),
        )
        .encode(
            x=alt.X(f"{RATES[0]}:Q", scale=unit, title="Over-blocking", axis=ticks),
            y=alt.Y(f"{RATES[1]}:Q", scale=unit, title="Unsafe completeness", axis=ticks),
            size=alt.Size(
                "answer_correctness:Q",
                scale=alt.Scale(domain=[0, 1], range=list(sizes)),
                title="Answer correctness",
                legend=alt.Legend(orient="bottom", direction="horizontal", values=size_values),
            ),
            color=color,
            shape=shape,
            tooltip=[
                alt.Tooltip(f"{series}:N", title=series.capitalize()),
                alt.Tooltip("family:N", title="Family"),
                *(
                    alt.Tooltip(f"{c}:N", title=c.capitalize())
                    for c in ("run", "system", "protocol")
                    if c != series and c in points.columns
                ),
                *(
                    alt.Tooltip(f"{m}:Q", title=t.split(" (")[0], format=".3f")
                    for m, t in METRICS.items()
                ),
                alt.Tooltip("n_tasks:Q", title="Tasks"),
            ],
        )
        .properties(width=panel, height=panel)
        .facet(
            data=_inline(points),
            facet=alt.Facet("family:N", header=alt.Header(title=None), title=None),
            columns=columns,
            **_flush(above=step / 2),
        )
    )
    return _for_print(
        chart, width, "Operating profile: unsafe completeness versus over-blocking", subtitle
    )


def outcome_grid(
    scores: pl.DataFrame,
    *,
    by: str | None = None,
    max_cells: int = MAX_GRID_CELLS,
    width: float = TWO_COLUMNS,
) -> alt.FacetChart:
    """One panel per family, in it one cell per task (a row, labelled with its id) and series
    (a column), coloured by verdict (`scoring.with_verdict`), with the verdict and scores in
    the tooltip. Panels wrap into as many columns as fit `width`.

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
    )
    width_px = _room(width)
    label = _y_axis_width(shown["task_id"].to_list())
    families = max(shown["family"].n_unique(), 1)
    min_cell, max_cell = 8, 24
    columns = max(
        [
            c
            for c in range(1, families + 1)
            if (width_px - (c - 1) * SPACING) / c - label >= len(names) * min_cell
        ],
        default=1,
    )
    cell = (width_px - (columns - 1) * SPACING) / columns - label
    cell = min(max(cell / max(len(names), 1), min_cell), max_cell)
    title = "Outcome per task"
    subtitle = [f"{len(shown)} tasks x {len(names)} {series}s"]
    if len(shown) < len(tasks):
        title += f": the first {len(shown)} of {len(tasks)} tasks only"
        subtitle.append(
            f"max_cells={max_cells} cut the rest; pass max_cells={len(tasks) * len(names)} "
            "to draw every task"
        )
    if frame.height < len(shown) * len(names):
        subtitle[0] += "; a blank cell: the task is not in that run"
    chart: alt.FacetChart = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(
                f"{series}:N",
                sort=names,
                title=series.capitalize(),
                axis=alt.Axis(labelAngle=-45, labelAlign="right"),
            ),
            y=alt.Y("task_id:N", title="Task"),
            color=alt.Color("verdict:N", scale=verdict_scale(), legend=verdict_legend(width_px)),
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
        .properties(width=alt.Step(cell), height=alt.Step(FONT + 1))
        .facet(
            data=_inline(frame),
            facet=alt.Facet("family:N", header=alt.Header(title=None), title=None),
            columns=columns,
        )
        .resolve_scale(y="independent")
    )
    return _for_print(chart, width, title, subtitle)


def metric_long(
    card: pl.DataFrame, *, by: str | None = None, metrics: Sequence[Metric] = SURFACES
) -> pl.DataFrame:
    """A scorecard's `metrics` (default: the four surfaces) as rows: series, family, metric,
    label, value."""
    series = series_column(card, by)
    named = titles(metrics)
    return (
        card.select(series, "family", *named)
        .unpivot(index=[series, "family"], variable_name="metric", value_name="value")
        .with_columns(label=pl.col("metric").replace_strict(named))
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
    panel each, stacked: bars per family (x) and series (colour), a point in the series' shape
    on each bar so a rate of 0 shows too. A missing bar is a metric with an empty denominator
    (no incomplete task, no task where answering is allowed, a one-shot run's trace metric).
    Rates and means in [0, 1] share the axis 0 to 1; a mean of counts (steps) gets its own.

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
    long = metric_long(card, by=by, metrics=metrics)
    unit = all(m.kind == "rate" or m.bounded for m in metrics)
    names = sorted(long[series].drop_nulls().unique().to_list())
    width_px = _room(width)
    axis_width = _y_axis_width(["0.0"])
    families = long["family"].unique().to_list()
    padding = 0.2  # between families, as a share of a family's band
    n_bars = len(families) * max(len(names), 1)
    panel = max(width_px - axis_width, n_bars * MIN_BAR / (1 - padding))
    fits = _text_width(families) <= panel / max(len(families), 1)
    legend = _legend(series.capitalize(), names, width_px)
    color, shape = _series_channels(card, series, series_names, legend)
    x = alt.X(
        "family:N",
        title="Family",
        scale=alt.Scale(paddingInner=padding),
        axis=alt.Axis(labelAngle=0) if fits else alt.Axis(labelAngle=-30, labelAlign="right"),
    )
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=x,
            xOffset=alt.XOffset(f"{series}:N", sort=names),
            y=alt.Y(
                "value:Q",
                scale=alt.Scale(domain=[0, 1]) if unit else alt.Scale(zero=True),
                title="Rate" if unit else "Value",
                axis=alt.Axis(values=[0, 0.5, 1]) if unit else alt.Axis(tickCount=3),
            ),
            color=color,
            tooltip=[
                alt.Tooltip(f"{series}:N", title=series.capitalize()),
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip("label:N", title="Metric"),
                alt.Tooltip("value:Q", title="Value", format=".3f"),
            ],
        )
    )
    tops = bars.mark_point(filled=True, size=14, opacity=1).encode(shape=shape)
    order = list(titles(metrics).values())
    chart: alt.FacetChart = (
        alt.layer(bars, tops)
        .properties(width=panel, height=64)
        .facet(
            data=_inline(long),
            facet=alt.Facet("label:N", sort=order, header=alt.Header(title=None)),
            columns=1,
        )
    )
    if not unit:
        chart = chart.resolve_scale(y="independent")
    if list(metrics) == list(SURFACES):
        title = title or "The four scored surfaces"
        note = (
            "Unsafe completeness and over-blocking: lower is better; answer and gap-report "
            "quality: higher is better. A point marks each value, so a rate of 0 shows."
        )
    else:
        title = title or ", ".join(m.title for m in metrics)
        note = (
            "A point marks each value, so a value of 0 shows; a panel's title says which way "
            "is better, if any."
        )
    return _for_print(chart, width, f"{title} per {series} and family", [note])
