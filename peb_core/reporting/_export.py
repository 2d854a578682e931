"""Tables to Markdown, LaTeX (booktabs) and CSV; charts to PNG, SVG and PDF; the whole paper
report to a folder.

Markdown and LaTeX show floats at `paper.DECIMALS` decimals, the CSV keeps full precision. A
null cell is `-` in Markdown and LaTeX and empty in CSV. Figures are rendered by vl-convert with
no base URL allowed, so rendering never touches the network (the data is inline anyway), at the
width in inches they were laid out for (`charts.print_width`), a PNG at `FIGURE_DPI`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import vl_convert

from .._markdown import markdown_table
from ..tasks import Tier
from . import _charts as charts
from ._paper import CAPTIONS, DECIMALS, Runs, figures, run_dirs, tables

TABLE_FORMATS = ("md", "tex", "csv")
FIGURE_FORMATS = ("png", "svg", "pdf")
FIGURE_DPI = 300
"""PNG figures have this many pixels to the inch, enough for print."""
POINTS_PER_INCH = 72
"""vl-convert's unit on a PDF page and in a PNG's `ppi`: an SVG pixel is a point."""
NULL = "-"


def _cell(value: Any, decimals: int) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _cells(frame: pl.DataFrame, decimals: int) -> list[list[str]]:
    return [[_cell(v, decimals) for v in row] for row in frame.iter_rows()]


def to_markdown(frame: pl.DataFrame, *, decimals: int = DECIMALS) -> str:
    """A GitHub-flavoured Markdown table (`markdown_table`: `|` in a cell escaped as `\\|`),
    numbers right-aligned."""
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    return "\n".join(markdown_table(frame.columns, _cells(frame, decimals), right=numeric)) + "\n"


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
}


def latex_escape(text: str) -> str:
    """`text` with LaTeX's special characters escaped."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def to_latex(
    frame: pl.DataFrame,
    *,
    caption: str | None = None,
    label: str | None = None,
    decimals: int = DECIMALS,
    wrap: str = "5cm",
) -> str:
    """A booktabs `table` (needs `\\usepackage{booktabs}`): numbers right-aligned, text columns
    left-aligned, and text columns with long cells (over 60 characters) wrapped at `wrap`."""
    cells = _cells(frame, decimals)
    specs = []
    for i, dtype in enumerate(frame.dtypes):
        if dtype.is_numeric():
            specs.append("r")
        elif any(len(row[i]) > 60 for row in cells):
            specs.append(f"p{{{wrap}}}")
        else:
            specs.append("l")
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [
        rf"\begin{{tabular}}{{{''.join(specs)}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in frame.columns) + r" \\",
        r"\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in cells),
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def write_table(
    frame: pl.DataFrame, out_dir: Path, stem: str, *, caption: str | None = None
) -> list[Path]:
    """`frame` as `stem.md`, `stem.tex` and `stem.csv` in `out_dir`; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, tex, csv = (out_dir / f"{stem}.{ext}" for ext in TABLE_FORMATS)
    md.write_text(to_markdown(frame), encoding="utf-8")
    tex.write_text(to_latex(frame, caption=caption, label=f"tab:{stem}"), encoding="utf-8")
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
    tier: Tier = "paper",
    *,
    dpi: float = FIGURE_DPI,
) -> list[Path]:
    """Every paper table (Markdown, LaTeX, CSV) and figure (PNG at `dpi`, SVG, PDF) of the
    scenarios and the selected runs (`_paper.run_dirs`) on `tier`, written to `out_dir`
    (created if need be); the paths written."""
    paths: list[Path] = []
    dirs = run_dirs(runs)
    for stem, frame in tables(dirs, tier).items():
        paths += write_table(frame, out_dir, stem, caption=CAPTIONS.get(stem))
    for stem, chart in figures(dirs, tier).items():
        paths += write_chart(chart, out_dir, stem, dpi=dpi)
    return paths
