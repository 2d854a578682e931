"""The completeness confusion matrices of a score frame, one per series."""

from __future__ import annotations

from collections.abc import Iterable

import altair as alt
import polars as pl

from ...scoring import (
    CLAIMED,
    TRUTH,
    confusion_counts,
)
from .._print import (
    FONT,
    SPACING,
    TWO_COLUMNS,
    X_AXIS,
    flush,
    for_print,
    inline,
    room,
    text_width,
    y_axis_width,
)
from .._styles import (
    series_column,
    series_scales,
)

BAND = 4
"""The height in pixels of the band in a series' colour over each confusion matrix."""


INK = 0.5
"""A confusion matrix prints its counts in white on cells at least this share of their row
(the darker half of the blues), in black on the paler ones."""


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
