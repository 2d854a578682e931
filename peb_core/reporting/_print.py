"""Print layout shared by every chart: a chart is laid out for print at a width in inches
(`ONE_COLUMN` or `TWO_COLUMNS`, at most `MAX_HEIGHT` tall): sizes are CSS pixels,
`PX_PER_INCH` to the inch, no text is smaller than `FONT` pixels (6.75 pt printed), text is
measured in Arial's widths (`text_width`) to lay out what fits, and the chart carries its print
width (`print_width`) for `reporting.chart_bytes`, which renders it at exactly that width. No
label or legend is cut short. Data goes inline (`inline`): nothing for a renderer to fetch."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import altair as alt
import polars as pl

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

MAX_HEIGHT = 9.0
"""The tallest a figure may be, in inches: it fits a page with its caption."""

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


def inline(frame: pl.DataFrame) -> dict[str, Any]:
    """The rows of `frame` as inline data: nothing for a renderer to fetch. A plain dict, since
    `alt.InlineData` checks every value against the schema on construction (a second per 3,000
    rows); the spec is still validated once, by `to_dict`."""
    return {"values": frame.to_dicts()}


def text_width(texts: Iterable[str], size: float = FONT, *, bold: bool = False) -> float:
    """The width in pixels of the widest of `texts` set in `FONT_FAMILY` at `size`."""
    widest = max((sum(_ARIAL.get(char, 556) for char in text) for text in texts), default=0)
    return widest * size / 1000 * (1.09 if bold else 1)


def room(width: float) -> float:
    """The pixels inside the padding of a figure `width` inches wide."""
    return width * PX_PER_INCH - 2 * PADDING


def flush(above: float = 0) -> dict[str, Any]:
    """Facet layout that spaces panels by their frames (`SPACING` apart, and a header and
    `above` pixels more between rows), not by the marks that spill over them; for panels whose
    axes sit outside the panels."""
    return {"bounds": "flush", "spacing": {"column": SPACING, "row": SPACING + FONT + 6 + above}}


def y_axis_width(labels: Iterable[str], title_lines: int = 1) -> float:
    """The width in pixels of a y axis with `labels` and a title of `title_lines` lines: the
    labels, a tick of 5, paddings of 2 and 4, and the title's lines."""
    return text_width(labels) + 5 + 2 + 4 + title_lines * (FONT + 2)


def wrap(text: str, width_px: float, size: float = FONT, *, bold: bool = False) -> list[str]:
    """`text` broken between words into lines no wider than `width_px` at `size` (a longer
    word stays whole)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and text_width([f"{lines[-1]} {word}"], size, bold=bold) <= width_px:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def for_print(
    chart: alt.FacetChart, width: float, title: str, subtitle: Iterable[str]
) -> alt.FacetChart:
    """`chart` titled (`title` and each `subtitle` paragraph wrapped to the width), with the
    print configuration (`FONT`, no label limit, no legend entry limit, titles flush left) and
    its print width in inches, which `print_width` reads back."""
    width_px = room(width)
    unlimited = {"labelFontSize": FONT, "titleFontSize": FONT, "labelLimit": 0}
    heading = alt.Title(
        wrap(title, width_px, TITLE_FONT, bold=True),
        subtitle=[line for paragraph in subtitle for line in wrap(paragraph, width_px)],
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
    it is a chart of this package."""
    width = spec.get("usermeta", {}).get("print_width_in")
    return None if width is None else float(width)


def legend_entry(labels: list[str]) -> float:
    """The width in pixels of a legend entry (symbol, label, padding) for the widest label."""
    return text_width(labels) + 28


def bottom_legend(
    title: str, values: list[str], width_px: float, labels: list[str] | None = None
) -> alt.Legend:
    """A legend below a chart `width_px` wide listing every one of `values` (shown as
    `labels`, default the values themselves), in as many columns as fit."""
    shown = labels or values
    columns = max(1, min(len(shown), int(width_px // legend_entry(shown))))
    return alt.Legend(
        title=title, values=values, orient="bottom", direction="horizontal", columns=columns
    )


def panels_room(
    title: str, subtitle: Iterable[str], width_px: float, legend: alt.Legend, entries: int
) -> float:
    """About how many pixels of `MAX_HEIGHT` are left for a figure's panels and their axes once
    it is padded and titled as `for_print` does (`title` and each `subtitle` paragraph wrapped
    to `width_px`), with `legend`, a `bottom_legend` of `entries` values, below it."""
    legend_rows = math.ceil(entries / (legend.columns or 1))
    return MAX_HEIGHT * PX_PER_INCH - (
        2 * PADDING
        + len(wrap(title, width_px, TITLE_FONT, bold=True)) * (TITLE_FONT + 3)
        + sum(len(wrap(line, width_px)) for line in subtitle) * (FONT + 3)
        + (FONT + 8) * (legend_rows + 1)
    )


def label_expr(labels: dict[str, str]) -> str:
    """A Vega expression mapping legend values to their labels."""
    expr = "datum.label"
    for key, label in reversed(labels.items()):
        expr = f"datum.label === {key!r} ? {label!r} : ({expr})"
    return expr


X_AXIS = 5 + 2 + FONT + 4 + FONT + 2
"""The height in pixels of an x axis below a panel: tick, padding, labels, padding, title."""
