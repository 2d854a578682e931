"""The completeness confusion matrices of a score frame, one per series."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import altair as alt
import polars as pl

from ...scoring import (
    CLAIMED,
    TRUTH,
    confusion_counts,
)
from .._print import (
    FONT,
    MAX_HEIGHT,
    PADDING,
    PX_PER_INCH,
    SPACING,
    TWO_COLUMNS,
    X_AXIS,
    flush,
    for_print,
    inline,
    room,
    text_width,
    wrap,
    y_axis_width,
)
from .._styles import (
    series_column,
    series_name,
    series_scales,
)

BAND = 6
"""The height in pixels of the band in a series' colour over each confusion matrix, which
carries the series' shape at its start."""


INK = 0.5
"""A confusion matrix prints its counts in white on cells at least this share of their row
(the darker half of the blues), in black on the paler ones."""


CELL_HEIGHTS = (30, 22, 16)
"""The heights in pixels a confusion matrix's cells may take, the tallest that keeps the figure
within `MAX_HEIGHT` first."""


def _header_lines(names: Sequence[str], width_px: float) -> dict[str, list[str]]:
    """Each series name broken between words into lines no wider than a matrix (`wrap`)."""
    return {name: wrap(name, width_px, bold=True) for name in names}


def _matrix_rows(lines: int, cell: float) -> float:
    """The height in pixels of a row of matrices: its headers of `lines` lines, the band, two
    rows of cells `cell` high, the x axis and the space below."""
    return lines * (FONT + 2) + 3 + BAND + 1 + 2 * cell + X_AXIS + SPACING


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
    washes out a small one), under a band in the series' colour with its shape at the start.
    Each series' name is broken into lines as wide as its matrix, and the cells are as tall as
    keep the figure within `MAX_HEIGHT` (`CELL_HEIGHTS`); if even the shortest do not, the
    first series by name that fit are drawn, and the subtitle says how many were left out.

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
    noun = series_name(series)
    keys = [series, "family"] if by_family else [series]
    counts = confusion_counts(scores, keys)
    names = sorted(counts[series].unique().to_list())
    width_px = room(width)
    inside = width_px - y_axis_width(TRUTH, title_lines=2)
    # A matrix is at least as wide as its column labels (a name breaks into lines as wide as
    # its matrix); the matrices of a row share the width, up to 70 pixels a column.
    words = [w for name in names for w in name.split(" ")]
    least = max(len(CLAIMED) * (text_width(CLAIMED) + 6), text_width(words, bold=True) + 4)
    per_row = columns or max(1, min(len(names), int((inside + SPACING) // (least + SPACING))))
    fill = (inside - (per_row - 1) * SPACING) / per_row
    matrix = least if by_family else max(least, min(fill, len(CLAIMED) * 70))
    headers = _header_lines(names, matrix - 4)
    title = "Completeness awareness: true versus claimed"
    subtitle = [
        "Tasks per cell, each cell shaded by its share of its row in its own run; "
        "off-diagonal cells are false complete or false incomplete."
    ]
    fixed = 2 * PADDING + (FONT + 4) * (2 + len(wrap(subtitle[0], width_px))) + 70  # + legend
    budget = MAX_HEIGHT * PX_PER_INCH - fixed
    lines = max(len(h) for h in headers.values())
    drawn = counts
    if not by_family:
        rows = math.ceil(len(names) / per_row)
        cell = next(
            (h for h in CELL_HEIGHTS if rows * _matrix_rows(lines, h) <= budget), CELL_HEIGHTS[-1]
        )
        fit = max(1, int(budget // _matrix_rows(lines, cell))) * per_row
        if fit < len(names):
            drawn = counts.filter(pl.col(series).is_in(names[:fit]))
            subtitle.append(
                f"The first {fit} of {len(names)} {noun}s by name: the rest would take the "
                f"figure past {MAX_HEIGHT:g} inches."
            )
    else:
        cell = CELL_HEIGHTS[0]
    colours, shapes = series_scales(counts, series, series_names)  # of every series, drawn or not
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
            alt.Tooltip(f"{series}:N", title=noun.capitalize()),
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
    # The series' shape at the start of its band, outlined in white: colour and shape, as in
    # every other figure.
    mark = (
        alt.Chart()
        .transform_filter("datum.truth == 'complete' && datum.claimed == 'complete'")
        .mark_point(filled=True, opacity=1, size=(BAND + 4) ** 2, stroke="white", strokeWidth=1)
        .encode(
            x=alt.value(BAND + 3),
            y=alt.value(-BAND / 2 - 1),
            fill=alt.Fill(f"{series}:N", scale=colours, legend=None),
            shape=alt.Shape(f"{series}:N", scale=shapes, legend=None),
        )
    )
    layered = alt.layer(cells, text, band, mark).properties(width=matrix, height=2 * cell)
    header = alt.Header(title=None, labelExpr=_lines_expr(headers))
    chart: alt.FacetChart
    if by_family:
        chart = layered.facet(
            data=inline(drawn),
            column=alt.Column(f"{series}:N", header=header, title=None),
            row=alt.Row("family:N", header=alt.Header(title=None), title=None),
        )
    else:
        chart = layered.facet(
            data=inline(drawn),
            facet=alt.Facet(f"{series}:N", header=header, title=None),
            columns=per_row,
            **flush(BAND + 1 + X_AXIS + (lines - 1) * (FONT + 2)),
        ).resolve_axis(x="independent")
    return for_print(chart, width, title, subtitle)


def _lines_expr(lines: dict[str, list[str]]) -> str:
    """A Vega expression giving each header value its lines (a one-line one as it is)."""
    expr = "datum.value"
    for name, broken in reversed(lines.items()):
        if len(broken) > 1:
            expr = f"datum.value === {json.dumps(name)} ? {json.dumps(broken)} : ({expr})"
    return expr
