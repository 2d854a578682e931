"""Tables to Markdown, LaTeX (booktabs) and CSV; charts to PNG, SVG and PDF; the whole paper
report to a folder.

Markdown and LaTeX show a table as a paper prints it: each column under its printed heading
(`headers`), floats at `paper.DECIMALS` decimals, a value with its 95% interval in one cell
where the frame holds the interval beside it (columns `<c>_ci_low` and `<c>_ci_high`), and `—`
where there is no number; the CSV keeps every column at full precision (a null is empty). A
LaTeX table carries its caption without a number of its own (LaTeX numbers it) and is shrunk to
the text width only if it is wider; one taller than a page is a `longtable`, broken across
pages. Figures are rendered by vl-convert with no base URL allowed,
so rendering never touches the network (the data is inline anyway), at the width in inches they
were laid out for (`charts.print_width`), a PNG at `FIGURE_DPI`.
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


TEXT_WIDTH = 470.0
"""A paper's text width in points (6.5 inches), which a LaTeX table is laid out to fit."""
PAGE_LINES = 40
"""The most lines of `\\small` text a LaTeX table may take and still be one float: a page of
9 inches holds about 55, less the caption and the headings. A taller one is a `longtable`,
which breaks across pages (its headings repeated)."""
MIN_WRAPPED = 0.3
"""The least share of the text width a LaTeX table's wrapped text columns share."""
_POINTS_PER_CHARACTER = 4.6  # a character of \small Computer Modern, on average
_COLUMN_SEPARATION = 12.0  # points between two columns (twice \tabcolsep)


def _short_interval(c: _Cell) -> str:
    """An interval as a LaTeX table prints it under its value: `[.089, .532]` (no leading zero,
    to stay narrow)."""
    assert c.interval is not None
    low, high = (re.sub(r"^(-?)0\.", r"\1.", bound) for bound in c.interval)
    return f"[{low}, {high}]"


def _latex_width(printed: _Printed, i: int) -> float:
    """About how wide, in points, column `i` of a LaTeX table is: its widest cell (an interval
    set small counts at 0.7) or heading line, and the space between columns."""
    widest = max(len(line) for line in printed.headers[i].split(" ("))
    for row in printed.rows:
        c = row[i]
        widest = max(widest, len(c.text or "---"))
        if c.interval is not None:
            widest = max(widest, round(0.7 * len(_short_interval(c))))
    return widest * _POINTS_PER_CHARACTER + _COLUMN_SEPARATION


LATEX_PACKAGES = ("booktabs", "graphicx", "longtable")
"""What a LaTeX table needs in the preamble (`\\usepackage{...}`)."""


def _latex_lines(printed: _Printed, wrapped: list[bool], share: float) -> int:
    """About how many lines of text a LaTeX table's rows take: a row with an interval two, a
    wrapped cell as many as its text fills in its column."""
    per_line = share * TEXT_WIDTH / _POINTS_PER_CHARACTER
    total = 0
    for row in printed.rows:
        lines = 2 if any(c.interval is not None for c in row) else 1
        for c, w in zip(row, wrapped, strict=True):
            if w:
                lines = max(lines, math.ceil(len(c.text or "") / per_line))
        total += lines
    return total


def to_latex(
    frame: pl.DataFrame,
    *,
    caption: str | None = None,
    label: str | None = None,
    decimals: int = DECIMALS,
    headers: Mapping[str, str] | None = None,
) -> str:
    """A booktabs `table` (needs `LATEX_PACKAGES`) in `\\small`: columns under `headers` (a
    heading's parenthesis on a second line), numbers right-aligned with an interval set small
    under its value, text columns left-aligned and those with long cells (over 60 characters)
    wrapped, sharing at least `MIN_WRAPPED` of the text width; shrunk to the text width only
    when wider. A table taller than `PAGE_LINES` is a `longtable` instead, which breaks across
    pages with its headings repeated on each (and is never shrunk: its wrapped columns take
    what the others leave). `caption` is the caption's text: LaTeX gives it its number."""
    printed = _printed(frame, headers, decimals)

    long = [
        not numeric and any(len(row[i].text or "") > 60 for row in printed.rows)
        for i, numeric in enumerate(printed.numeric)
    ]
    rest = sum(_latex_width(printed, i) for i, wrapped in enumerate(long) if not wrapped)
    room = TEXT_WIDTH - rest - sum(long) * _COLUMN_SEPARATION  # a wrapped column's sides too
    share = math.floor(100 * max(MIN_WRAPPED, room / TEXT_WIDTH) / max(sum(long), 1)) / 100
    specs = [
        "r" if numeric else rf"p{{{share}\linewidth}}" if wrapped else "l"
        for numeric, wrapped in zip(printed.numeric, long, strict=True)
    ]

    def cell(c: _Cell, wrapped: bool) -> str:
        if c.text is None:
            return "---"
        if c.interval is None:  # a long identifier may break after an underscore
            text = latex_escape(c.text)
            return text.replace(r"\_", r"\_\allowbreak{}") if wrapped else text
        return rf"\shortstack[r]{{{c.text}\\\scriptsize{_short_interval(c)}}}"

    heading = " & ".join(map(_latex_header, printed.headers)) + r" \\"
    rows = [
        " & ".join(cell(c, w) for c, w in zip(row, long, strict=True)) + r" \\"
        for row in printed.rows
    ]
    said = [rf"\caption{{{latex_escape(caption)}}}"] if caption else []
    said += [rf"\label{{{label}}}"] if label else []
    if _latex_lines(printed, long, share) > PAGE_LINES:
        lines = [
            r"\begingroup\small",
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
        return "\n".join(lines) + "\n"
    lines = [r"\begin{table}[ht]", r"\centering", r"\small", *said]
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
        stem = "table_interventions"
        paths += write_table(frontier, out_dir, stem, caption=said[stem], headers=HEADERS)
    figure = intervention_figure(dirs, tier)
    if figure is not None:
        paths += write_chart(figure, out_dir, "figure_interventions", dpi=dpi)
    return paths
