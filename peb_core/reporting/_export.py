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
from ._interventions import captions as study_captions
from ._interventions import intervention_figure, intervention_results
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


TEXT_WIDTH = 469.0
"""A paper's text width in points (6.5 inches, 469.75 points, less a little), which a LaTeX
table is laid out to fit."""
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
SIZES = (("small", 1.0), ("footnotesize", 0.919), ("scriptsize", 0.862))
"""The font sizes a LaTeX table is set in, the largest that fits first, each with the width of
its characters against `\\small`'s (Computer Modern's optical sizes: `\\scriptsize` is 7 points
but its digits are 86% as wide as 9-point ones)."""
_INTERVAL_SIZE = 0.862  # the interval under a value is \scriptsize whatever the table's size
_WIDTHS = {
    **dict.fromkeys("0123456789", 4.63),
    **dict.fromkeys("abcdefghijklmnopqrstuvwxyz", 4.8),
    **dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 6.9),
    **dict.fromkeys(".,:;[]!'|", 2.6),
    **dict.fromkeys("-()/", 3.6),
    " ": 3.1,
    "_": 3.35,
    "=": 7.2,
    "—": 9.25,
}
"""About how wide, in points, a character of 9-point Computer Modern is (measured with
pdflatex: its digits 4.63, its lower-case letters 4.54 on average, taken at their wider ones);
any other 5.0."""
_COLUMN_SEPARATION = 12.0  # points between two columns (twice \tabcolsep)
_LONG_CELL = 60  # a text column with a longer cell is wrapped whether or not it would fit


def _short_interval(c: _Cell) -> str:
    """An interval as a LaTeX table prints it under its value: `[.089, .532]` (no leading zero,
    to stay narrow)."""
    assert c.interval is not None
    low, high = (re.sub(r"^(-?)0\.", r"\1.", bound) for bound in c.interval)
    return f"[{low}, {high}]"


def _chars(text: str, scale: float) -> float:
    """About how wide, in points, `text` is set in a size of `scale` (`SIZES`)."""
    return sum(_WIDTHS.get(ch, 5.0) for ch in text) * scale


def _natural_width(printed: _Printed, i: int, scale: float) -> float:
    """About how wide, in points, column `i` of a LaTeX table is unwrapped: its widest cell (an
    interval at `_INTERVAL_SIZE`) or heading line."""
    widest = max(_chars(line, scale) for line in printed.headers[i].split(" ("))
    for row in printed.rows:
        c = row[i]
        widest = max(widest, _chars(c.text or "—", scale))
        if c.interval is not None:
            widest = max(widest, _chars(_short_interval(c), _INTERVAL_SIZE))
    return widest


def _least_width(printed: _Printed, i: int, scale: float) -> float:
    """About how narrow, in points, text column `i` may be wrapped: its longest word (a word
    breaks after an underscore) or heading word."""
    words = [w for line in printed.headers[i].split(" (") for w in line.split()]
    for row in printed.rows:
        words += re.findall(r"[^\s_]+_?", row[i].text or "—")
    return max((_chars(w, scale) for w in words), default=0.0)


@dataclass(frozen=True)
class _Layout:
    """How a LaTeX table's columns are set: its font size, each column's width in points where
    it wraps (None: at its natural width), on a landscape page or not, and whether it fits."""

    size: str
    widths: list[float | None]
    landscape: bool
    fits: bool


def _fitted(printed: _Printed, size: str, landscape: bool) -> _Layout:
    """The table in `size`, its text columns wrapped so it is at most the width of the page's
    text (upright or landscape) if it can be: text columns with a long cell always wrap, and
    the others only when the table is too wide; wrapped columns share what the others leave,
    the narrowest first, none below its longest word."""
    scale = dict(SIZES)[size]
    room = TEXT_HEIGHT if landscape else TEXT_WIDTH
    n = len(printed.headers)
    natural = [_natural_width(printed, i, scale) for i in range(n)]
    text = [not numeric for numeric in printed.numeric]
    long = [
        text[i] and any(len(row[i].text or "") > _LONG_CELL for row in printed.rows)
        for i in range(n)
    ]
    left = room - n * _COLUMN_SEPARATION
    if sum(natural) <= left and not any(long):
        return _Layout(size, [None] * n, landscape, True)
    wrapping = [i for i in range(n) if long[i] or (text[i] and sum(natural) > left)]
    share = left - sum(natural[i] for i in range(n) if i not in wrapping)
    widths: list[float | None] = [None] * n
    for k, i in enumerate(sorted(wrapping, key=lambda i: natural[i])):
        width = max(_least_width(printed, i, scale), min(natural[i], share / (len(wrapping) - k)))
        widths[i] = width
        share -= width
    return _Layout(size, widths, landscape, share >= 0)


def _layout(printed: _Printed) -> _Layout:
    """The first layout in which the table fits: upright, then on a landscape page, each in the
    largest of `SIZES` that fits; else the smallest size on a landscape page, which does not."""
    for landscape in (False, True):
        for size, _ in SIZES:
            layout = _fitted(printed, size, landscape)
            if layout.fits:
                return layout
    return layout


def _columns(printed: _Printed, columns: list[int]) -> _Printed:
    """The table of `columns` of `printed` only."""
    return _Printed(
        headers=[printed.headers[i] for i in columns],
        numeric=[printed.numeric[i] for i in columns],
        rows=[[row[i] for i in columns] for row in printed.rows],
    )


def _naming(printed: _Printed, keys: list[int]) -> list[int]:
    """The fewest of the `keys` columns, in order, that still tell every row apart: each taken
    only if it tells more rows apart than those before it."""
    kept: list[int] = []
    seen = 1
    for i in keys:
        told = len({tuple(row[j].text for j in (*kept, i)) for row in printed.rows})
        if not kept or told > seen:
            kept.append(i)
            seen = told
    return kept


def _parts(printed: _Printed) -> list[tuple[_Printed, _Layout]]:
    """The table as one part (`_layout`) if it fits a page's text width, upright or landscape;
    else split by columns into parts set one below the other on landscape pages: the first
    with every column that names a row (those up to the last text column), the next with only
    those that tell its rows apart (`_naming`), each with as many of the other columns, in
    order, as fit, in the largest size that makes fewest parts."""
    whole = _layout(printed)
    if whole.fits:
        return [(printed, whole)]
    n = len(printed.headers)
    keys = list(range(max((i for i in range(n) if not printed.numeric[i]), default=-1) + 1))
    leads = [keys, _naming(printed, keys)]
    best: list[tuple[_Printed, _Layout]] = []
    for size, _ in SIZES:
        parts: list[list[int]] = []
        for i in range(len(keys), n):
            lead = leads[len(parts) > 1]
            if parts and _fitted(_columns(printed, [*lead, *parts[-1], i]), size, True).fits:
                parts[-1].append(i)
            else:
                parts.append([i])
        found = [_columns(printed, [*leads[k > 0], *p]) for k, p in enumerate(parts)]
        laid = [(p, _fitted(p, size, True)) for p in found]
        if not best or len(laid) < len(best):
            best = laid
    return best


def _latex_lines(printed: _Printed, layout: _Layout) -> float:
    """About how many lines of `\\small` text a LaTeX table's rows take: a row with an interval
    1.7 (a line and a `\\scriptsize` one), a wrapped cell as many as its text fills in its
    column."""
    scale = dict(SIZES)[layout.size]
    total = 0.0
    for row in printed.rows:
        lines = 1.7 if any(c.interval is not None for c in row) else 1.0
        for c, width in zip(row, layout.widths, strict=True):
            if width is not None:
                lines = max(lines, math.ceil(_chars(c.text or "", scale) / width))
        total += lines * scale
    return total


LATEX_PACKAGES = ("array", "booktabs", "graphicx", "longtable", "pdflscape")
"""What a LaTeX table needs in the preamble (`\\usepackage{...}`)."""


def _cell(c: _Cell, wrapped: bool) -> str:
    """A body cell: `---` for no number; a value with its interval set small below it, in a
    one-column tabular aligned on its first line, so the value sits level with the row's
    label; text escaped, a long identifier free to break after an underscore where wrapped."""
    if c.text is None:
        return "---"
    if c.interval is None:
        text = latex_escape(c.text)
        return text.replace(r"\_", r"\_\allowbreak{}") if wrapped else text
    return (
        rf"\begin{{tabular}}[t]{{@{{}}r@{{}}}}{c.text}\\"
        rf"\scriptsize{_short_interval(c)}\end{{tabular}}"
    )


def _body(printed: _Printed, layout: _Layout) -> tuple[str, str, list[str]]:
    """A part's column specification, heading line and row lines."""
    specs = "".join(
        "r"
        if numeric
        else "l"
        if width is None
        else rf">{{\raggedright\arraybackslash}}p{{{width:.0f}pt}}"
        for numeric, width in zip(printed.numeric, layout.widths, strict=True)
    )
    heading = " & ".join(map(_latex_header, printed.headers)) + r" \\"
    rows = [
        " & ".join(_cell(c, w is not None) for c, w in zip(row, layout.widths, strict=True))
        + r" \\"
        for row in printed.rows
    ]
    return specs, heading, rows


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
    the page's text width (`_layout`): text columns with long cells (over 60 characters)
    wrapped, and the others too if the table is wider, in `\\small` or, if that is too wide, a
    smaller size, upright or else on a landscape page (pdflscape); a table too wide for either
    is split by columns into parts set one below the other, each repeating the columns that name
    a row (`_parts`). A float is also shrunk to the text width if it is wider after all (in a
    document whose text is narrower than 6.5 inches). A table taller than a page (`PAGE_LINES`,
    `LANDSCAPE_LINES`) is a `longtable` instead, which breaks across pages with its headings
    repeated on each; pdflatex settles its column widths over two or three passes. `caption` is
    the caption's text: LaTeX gives it its number."""
    parts = _parts(_printed(frame, headers, decimals))
    whole, first = parts[0]
    said = [rf"\caption{{{latex_escape(caption)}}}"] if caption else []
    said += [rf"\label{{{label}}}"] if label else []
    more = rf"Continued: more columns of Table~\ref{{{label}}}." if label else "Continued."
    landscape = first.landscape
    lines = [r"\begin{landscape}"] if landscape else []
    page = LANDSCAPE_LINES if landscape else PAGE_LINES
    if _latex_lines(whole, first) > page:
        for k, (part, layout) in enumerate(parts):
            specs, heading, rows = _body(part, layout)
            named = said if k == 0 else [rf"\caption*{{{more}}}"]
            lines += [
                rf"\begingroup\{layout.size}",
                rf"\begin{{longtable}}{{{specs}}}",
                *([" ".join(named) + r" \\"] if named else []),
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
        lines += [r"\begin{table}[ht]", r"\centering", rf"\{first.size}", *said]
        for k, (part, layout) in enumerate(parts):
            specs, heading, rows = _body(part, layout)
            lines += [
                *([r"\par\medskip"] if k else []),
                r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
                rf"\begin{{tabular}}{{{specs}}}",
                r"\toprule",
                heading,
                r"\midrule",
                *rows,
                r"\bottomrule",
                r"\end{tabular}}",
            ]
        lines.append(r"\end{table}")
    if landscape:
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
    (created if need be), each table with its caption for the tier, and where the runs hold an
    intervention study, its frontier (`table_interventions`, `figure_interventions`); the
    paths written."""
    paths: list[Path] = []
    dirs = run_dirs(runs)
    said = captions(tier)
    for stem, frame in tables(dirs, tier).items():
        paths += write_table(frame, out_dir, stem, caption=said[stem], headers=HEADERS)
    for stem, chart in figures(dirs, tier).items():
        paths += write_chart(chart, out_dir, stem, dpi=dpi)
    frontier = intervention_results(dirs, tier)  # the intervention study, where there is one
    if not frontier.is_empty():
        caption = study_captions(tier)["table_interventions"]
        paths += write_table(frontier, out_dir, "table_interventions", caption=caption,
                             headers=HEADERS)  # fmt: skip
    figure = intervention_figure(dirs, tier)
    if figure is not None:
        paths += write_chart(figure, out_dir, "figure_interventions", dpi=dpi)
    return paths
