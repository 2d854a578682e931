"""Tables to Markdown, LaTeX (booktabs) and CSV; charts to PNG, SVG and PDF; the whole paper
report to a folder.

Markdown and LaTeX show a table as a paper prints it: each column under its printed heading
(`headers`), floats at `paper.DECIMALS` decimals, a value with its 95% interval in one cell
where the frame holds the interval beside it (columns `<c>_ci_low` and `<c>_ci_high`), and `—`
where there is no number; the CSV keeps every column at full precision (a null is empty). A
LaTeX table carries its caption without a number of its own (LaTeX numbers it) and is laid out
to fit the text width (wrapped, in a smaller size, or on a landscape page); one taller than a
page is a `longtable`, broken across pages. Figures are rendered by vl-convert with no base URL
allowed, so rendering never touches the network (the data is inline anyway), at the width in
inches they were laid out for (`charts.print_width`), a PNG at `FIGURE_DPI`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import vl_convert

from .._markdown import markdown_table
from ..scoring import NO_NUMBER
from ..tasks import DEFAULT_TIER, Tier
from . import charts
from ._paper import DECIMALS, HEADERS, Runs, captions, figures, run_dirs, tables

TABLE_FORMATS = ("md", "tex", "csv")
FIGURE_FORMATS = ("png", "svg", "pdf")
FIGURE_DPI = 300
"""PNG figures have this many pixels to the inch, enough for print."""
POINTS_PER_INCH = 72
"""vl-convert's unit on a PDF page and in a PNG's `ppi`: an SVG pixel is a point."""
INTERVAL = ("_ci_low", "_ci_high")
"""The suffixes of a column's 95% interval bounds, printed in the column's cell."""


def _text(value: Any, decimals: int) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class _Cell:
    """A printed cell: its text (None: no number) and, for a value with an interval, the
    interval's bounds as text."""

    text: str | None
    interval: tuple[str, str] | None = None


@dataclass(frozen=True)
class _Printed:
    """A frame as printed: its headings, which columns are numbers, and its cells."""

    headers: list[str]
    numeric: list[bool]
    rows: list[list[_Cell]]


def _printed(frame: pl.DataFrame, headers: Mapping[str, str] | None, decimals: int) -> _Printed:
    """The printed columns of `frame` (an interval's bounds fold into their column's cell)."""
    bounds = {c + suffix for c in frame.columns for suffix in INTERVAL}
    bounds &= set(frame.columns)
    shown = [c for c in frame.columns if c not in bounds]
    folded = {c for c in shown if all(c + suffix in bounds for suffix in INTERVAL)}
    rows = []
    for row in frame.iter_rows(named=True):
        cells = []
        for c in shown:
            text = _text(row[c], decimals)
            low, high = (
                (_text(row[c + suffix], decimals) for suffix in INTERVAL)
                if (c in folded)
                else (None, None)
            )
            interval = (
                (low, high) if text is not None and low is not None and high is not None else None
            )
            cells.append(_Cell(text, interval))
        rows.append(cells)
    return _Printed(
        headers=[(headers or {}).get(c, c) for c in shown],
        numeric=[frame.schema[c].is_numeric() for c in shown],
        rows=rows,
    )


def _plain(c: _Cell) -> str:
    """A cell as plain text: `0.583`, `0.583 [0.375, 0.792]` with an interval, `—` for none."""
    if c.text is None:
        return NO_NUMBER
    return c.text if c.interval is None else f"{c.text} [{c.interval[0]}, {c.interval[1]}]"


def as_printed(
    frame: pl.DataFrame, *, decimals: int = DECIMALS, headers: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """`frame` as a table prints it, every cell text: columns under `headers` (default: their
    names), floats at `decimals`, a value with its interval as `0.583 [0.375, 0.792]`, no number
    as `—` (what the notebooks show, and the Markdown holds)."""
    printed = _printed(frame, headers, decimals)
    rows = [[_plain(c) for c in row] for row in printed.rows]
    names = list(dict.fromkeys(printed.headers))
    if len(names) < len(printed.headers):
        names = [f"{h} ({i})" for i, h in enumerate(printed.headers)]
    return pl.DataFrame(rows, schema=dict.fromkeys(names, pl.String), orient="row")


def to_markdown(
    frame: pl.DataFrame, *, decimals: int = DECIMALS, headers: Mapping[str, str] | None = None
) -> str:
    """A GitHub-flavoured Markdown table (`markdown_table`: `|` in a cell escaped as `\\|`) of
    `as_printed`, numbers right-aligned."""
    printed = _printed(frame, headers, decimals)
    rows = [[_plain(c) for c in row] for row in printed.rows]
    return "\n".join(markdown_table(printed.headers, rows, right=printed.numeric)) + "\n"


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "—": "---",
}


def latex_escape(text: str) -> str:
    """`text` with LaTeX's special characters escaped (and `—` as TeX's em dash)."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _latex_header(header: str) -> str:
    """A heading, its parenthesis (if any) on a second line: `Gap (incomplete)` is as narrow as
    `(incomplete)`."""
    head, paren, rest = header.partition(" (")
    if not paren:
        return latex_escape(header)
    return rf"\shortstack{{{latex_escape(head)}\\({latex_escape(rest)}}}"


TEXT_WIDTH = 470.0
"""A paper's text width in points (6.5 inches), which a LaTeX table is laid out to fit."""
TEXT_HEIGHT = 650.0
"""A paper's text height in points (9 inches): the width of a landscape page's text, where a
table too wide for the text width is set."""
PAGE_LINES = 40
"""The most lines of `\\small` text a LaTeX table may take and still be one float on an upright
page (9 inches hold about 59 at 11 points a line; the caption and the headings take the rest);
a landscape page (6.5 inches) holds `LANDSCAPE_LINES`. A taller one is a `longtable`, which
breaks across pages (its headings repeated)."""
LANDSCAPE_LINES = 23
"""The most lines of `\\small` text a LaTeX table may take and still be one landscape float."""
SIZES = (("small", 9.0), ("footnotesize", 8.0), ("scriptsize", 7.0))
"""The font sizes a LaTeX table is set in (name, points), the largest that fits first."""
_INTERVAL_SIZE = 7.0  # the interval under a value is \scriptsize whatever the table's size
_POINTS_PER_CHARACTER = 4.6 / 9.0  # of an average character of Computer Modern, per point
_COLUMN_SEPARATION = 12.0  # points between two columns (twice \tabcolsep)
_LONG_CELL = 60  # a text column with a longer cell is wrapped whether or not it would fit


def _short_interval(c: _Cell) -> str:
    """An interval as a LaTeX table prints it under its value: `[.089, .532]` (no leading zero,
    to stay narrow)."""
    assert c.interval is not None
    low, high = (re.sub(r"^(-?)0\.", r"\1.", bound) for bound in c.interval)
    return f"[{low}, {high}]"


def _chars(text: str, size: float) -> float:
    """About how wide, in points, `text` is set at `size` points."""
    return len(text) * _POINTS_PER_CHARACTER * size


def _natural_width(printed: _Printed, i: int, size: float) -> float:
    """About how wide, in points, column `i` of a LaTeX table set at `size` is unwrapped: its
    widest cell (an interval at `_INTERVAL_SIZE`) or heading line."""
    widest = max(_chars(line, size) for line in printed.headers[i].split(" ("))
    for row in printed.rows:
        c = row[i]
        widest = max(widest, _chars(c.text or "---", size))
        if c.interval is not None:
            widest = max(widest, _chars(_short_interval(c), _INTERVAL_SIZE))
    return widest


def _least_width(printed: _Printed, i: int, size: float) -> float:
    """About how narrow, in points, text column `i` may be wrapped: its longest word (a word
    breaks after an underscore) or heading word."""
    words = [w for line in printed.headers[i].split(" (") for w in line.split()]
    for row in printed.rows:
        words += re.split(r"[\s_]+", row[i].text or "---")
    return max((_chars(w + "_", size) for w in words if w), default=0.0)


@dataclass(frozen=True)
class _Layout:
    """How a LaTeX table is set: its font size, each column's width in points where it wraps
    (None: set at its natural width), whether it is set on a landscape page, and whether it fits
    (the last layout tried is taken even if it does not)."""

    size: str
    widths: list[float | None]
    landscape: bool
    fits: bool


def _widths(printed: _Printed, size: float, room: float) -> tuple[list[float | None], bool]:
    """Each column's wrapped width (None: not wrapped) so the table is at most `room` points
    wide at `size`, and whether it can be: text columns with a long cell always wrap, and the
    others only when the table is too wide; wrapped columns share what the others leave, the
    narrowest first, none below its longest word."""
    n = len(printed.headers)
    natural = [_natural_width(printed, i, size) for i in range(n)]
    text = [not printed.numeric[i] for i in range(n)]
    long = [
        text[i] and any(len(row[i].text or "") > _LONG_CELL for row in printed.rows)
        for i in range(n)
    ]
    left = room - n * _COLUMN_SEPARATION
    if sum(natural) <= left and not any(long):
        return [None] * n, True
    wrapping = [i for i in range(n) if long[i] or (text[i] and sum(natural) > left)]
    fixed = sum(natural[i] for i in range(n) if i not in wrapping)
    share = left - fixed
    widths: list[float | None] = [None] * n
    least = {i: _least_width(printed, i, size) for i in wrapping}
    for k, i in enumerate(sorted(wrapping, key=lambda i: natural[i])):
        fair = share / (len(wrapping) - k)
        widths[i] = max(least[i], min(natural[i], fair))
        share -= widths[i]
    return widths, share >= -0.5


def _layout(printed: _Printed) -> _Layout:
    """The first layout in which the table fits: upright, then on a landscape page, each in the
    largest of `SIZES` that fits; else the last (the smallest size, landscape)."""
    for landscape, room in ((False, TEXT_WIDTH), (True, TEXT_HEIGHT)):
        for name, points in SIZES:
            widths, fits = _widths(printed, points, room)
            if fits:
                return _Layout(name, widths, landscape, True)
    return _Layout(name, widths, True, False)


def _latex_lines(printed: _Printed, layout: _Layout) -> float:
    """About how many lines of `\\small` text a LaTeX table's rows take: a row with an interval
    1.7 (a line and a `\\scriptsize` one), a wrapped cell as many as its text fills in its
    column."""
    points = dict(SIZES)[layout.size]
    total = 0.0
    for row in printed.rows:
        lines = 1.7 if any(c.interval is not None for c in row) else 1.0
        for c, width in zip(row, layout.widths, strict=True):
            if width is not None:
                lines = max(lines, math.ceil(_chars(c.text or "", points) / width))
        total += lines * points / 9.0
    return total


LATEX_PACKAGES = ("array", "booktabs", "graphicx", "longtable", "pdflscape")
"""What a LaTeX table needs in the preamble (`\\usepackage{...}`)."""


def to_latex(
    frame: pl.DataFrame,
    *,
    caption: str | None = None,
    label: str | None = None,
    decimals: int = DECIMALS,
    headers: Mapping[str, str] | None = None,
) -> str:
    """A booktabs `table` (needs `LATEX_PACKAGES`): columns under `headers` (a heading's
    parenthesis on a second line), numbers right-aligned with an interval set small under its
    value and each value level with its row's label, text columns left-aligned; laid out to fit
    the text width (`_layout`): text columns with long cells (over 60 characters) wrapped, and
    the others too if the table is wider, in `\\small`, else a smaller size, else on a landscape
    page (pdflscape), in the largest size that fits. A float is also shrunk to the text width
    if it is wider after all (the layout is an estimate of Computer Modern's widths). A table
    taller than a page (`PAGE_LINES`, `LANDSCAPE_LINES`) is a `longtable` instead, which breaks
    across pages with its headings repeated on each (and needs three passes of pdflatex to
    settle its column widths). `caption` is the caption's text: LaTeX gives it its number."""
    printed = _printed(frame, headers, decimals)
    layout = _layout(printed)
    specs = [
        "r"
        if numeric
        else "l"
        if width is None
        else rf">{{\raggedright\arraybackslash}}p{{{width:.0f}pt}}"
        for numeric, width in zip(printed.numeric, layout.widths, strict=True)
    ]

    def cell(c: _Cell, wrapped: bool) -> str:
        if c.text is None:
            return "---"
        if c.interval is None:  # a long identifier may break after an underscore
            text = latex_escape(c.text)
            return text.replace(r"\_", r"\_\allowbreak{}") if wrapped else text
        # A one-column tabular aligned on its first line: the value level with the row's label.
        return (
            rf"\begin{{tabular}}[t]{{@{{}}r@{{}}}}{c.text}\\"
            rf"\scriptsize{_short_interval(c)}\end{{tabular}}"
        )

    wrapped = [w is not None for w in layout.widths]
    heading = " & ".join(map(_latex_header, printed.headers)) + r" \\"
    rows = [
        " & ".join(cell(c, w) for c, w in zip(row, wrapped, strict=True)) + r" \\"
        for row in printed.rows
    ]
    said = [rf"\caption{{{latex_escape(caption)}}}"] if caption else []
    said += [rf"\label{{{label}}}"] if label else []
    lines = [r"\begin{landscape}"] if layout.landscape else []
    page = LANDSCAPE_LINES if layout.landscape else PAGE_LINES
    if _latex_lines(printed, layout) > page:
        lines += [
            rf"\begingroup\{layout.size}",
            rf"\begin{{longtable}}{{{''.join(specs)}}}",
            *([" ".join(said) + r" \\"] if said else []),
            r"\toprule",
            heading,
            r"\midrule",
            r"\endfirsthead",
            r"\toprule",
            heading,
            r"\midrule",
            r"\endhead",
            r"\bottomrule",
            r"\endfoot",
            *rows,
            r"\end{longtable}",
            r"\endgroup",
        ]
    else:
        lines += [r"\begin{table}[ht]", r"\centering", rf"\{layout.size}", *said]
        lines += [
            r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
            rf"\begin{{tabular}}{{{''.join(specs)}}}",
            r"\toprule",
            heading,
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}}",
            r"\end{table}",
        ]
    if layout.landscape:
        lines.append(r"\end{landscape}")
    return "\n".join(lines) + "\n"


def write_table(
    frame: pl.DataFrame,
    out_dir: Path,
    stem: str,
    *,
    caption: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[Path]:
    """`frame` as `stem.md`, `stem.tex` and `stem.csv` in `out_dir`; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, tex, csv = (out_dir / f"{stem}.{ext}" for ext in TABLE_FORMATS)
    md.write_text(to_markdown(frame, headers=headers), encoding="utf-8")
    tex.write_text(
        to_latex(frame, caption=caption, label=f"tab:{stem}", headers=headers), encoding="utf-8"
    )
    frame.write_csv(csv)
    return [md, tex, csv]


_SVG_SIZE = re.compile(r'(<svg[^>]*?) width="([\d.]+)" height="([\d.]+)"')


def chart_bytes(chart: alt.TopLevelMixin, fmt: str, *, dpi: float = FIGURE_DPI) -> bytes:
    """`chart` rendered as `png`, `svg` or `pdf`, offline, exactly as wide as its
    `charts.print_width` (else its own size at `charts.PX_PER_INCH`): a PNG at `dpi` pixels to
    the inch (and saying so), an SVG sized in inches, a PDF page of that size."""
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}; valid: {', '.join(FIGURE_FORMATS)}")
    spec = chart.to_dict()
    svg = str(vl_convert.vegalite_to_svg(json.dumps(spec), allowed_base_urls=[]))
    root = _SVG_SIZE.search(svg)
    if root is None:
        raise ValueError("vl-convert rendered an SVG with no width and height")
    width, height = float(root[2]), float(root[3])
    inches = charts.print_width(spec) or width / charts.PX_PER_INCH

    def sized(new_width: str, new_height: str) -> str:
        return _SVG_SIZE.sub(rf'\1 width="{new_width}" height="{new_height}"', svg, count=1)

    if fmt == "svg":
        return sized(f"{inches:.4g}in", f"{inches * height / width:.4g}in").encode("utf-8")
    points = inches * POINTS_PER_INCH
    if fmt == "pdf":
        return bytes(
            vl_convert.svg_to_pdf(sized(f"{points:.2f}", f"{points * height / width:.2f}"))
        )
    # Half a pixel over the exact scale, since vl-convert rounds the PNG's width down.
    scale = (round(inches * dpi) + 0.5) / (width * dpi / POINTS_PER_INCH)
    return bytes(vl_convert.svg_to_png(svg, scale=scale, ppi=dpi))


def write_chart(
    chart: alt.TopLevelMixin, out_dir: Path, stem: str, *, dpi: float = FIGURE_DPI
) -> list[Path]:
    """`chart` as `stem.png` (at `dpi`), `stem.svg` and `stem.pdf` in `out_dir`; the paths
    written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FIGURE_FORMATS:
        path = out_dir / f"{stem}.{fmt}"
        path.write_bytes(chart_bytes(chart, fmt, dpi=dpi))
        paths.append(path)
    return paths


def export_report(
    out_dir: Path,
    runs: Runs = None,
    tier: Tier = DEFAULT_TIER,
    *,
    dpi: float = FIGURE_DPI,
) -> list[Path]:
    """Every paper table (Markdown, LaTeX, CSV) and figure (PNG at `dpi`, SVG, PDF) of the
    scenarios and the selected runs (`_paper.run_dirs`) on `tier`, written to `out_dir`
    (created if need be), each table with its caption for the tier; the paths written."""
    paths: list[Path] = []
    dirs = run_dirs(runs)
    said = captions(tier)
    for stem, frame in tables(dirs, tier).items():
        paths += write_table(frame, out_dir, stem, caption=said[stem], headers=HEADERS)
    for stem, chart in figures(dirs, tier).items():
        paths += write_chart(chart, out_dir, stem, dpi=dpi)
    return paths
