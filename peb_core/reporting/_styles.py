"""How a series (a system, or a run) and a verdict look in every chart: each series one colour
and one shape from the names present or given (`series_styles`), set as explicit scales so a
selection shows a series alike in every chart; each verdict its colour from
`scoring.VERDICT_COLORS`, in `scoring.VERDICTS` order; a value with its 95% interval, in a
tooltip (`interval_tooltip`)."""

from __future__ import annotations

from collections.abc import Iterable

import altair as alt
import polars as pl

from ..scoring import VERDICT_COLORS, VERDICT_LABELS, VERDICTS
from ._print import PX_PER_INCH, TWO_COLUMNS, bottom_legend, label_expr

PALETTE: tuple[str, ...] = (
    # Paul Tol's "muted" scheme (Tol 2021), made for points and lines read by people with any
    # colour vision: indigo, cyan, teal, green, olive, sand, rose, wine, purple.
    "#332288",
    "#88ccee",
    "#44aa99",
    "#117733",
    "#999933",
    "#ddcc77",
    "#cc6677",
    "#882255",
    "#aa4499",
)
"""Nine series colours, every two at least 15 CIELAB units apart in normal vision and in
simulated protanopia, deuteranopia and tritanopia (tests/reporting/test_charts.py), as the
verdicts' are."""

SHAPES: tuple[str, ...] = (
    "circle",
    "square",
    "triangle-up",
    "diamond",
    "cross",
    "triangle-down",
    "triangle-left",
    "triangle-right",
)
"""Series shapes, changing from the first series on: the i-th series is drawn as
`SHAPES[i % 8]` in `PALETTE[i % 9]`, so no two of the first 72 share a colour and a shape
(8 and 9 have no common factor), and two series a reader cannot tell by colour differ in shape."""


def series_column(frame: pl.DataFrame, by: str | None = None) -> str:
    """The column that names a line of results: `by`, else `system` when each system has one
    run, else `run_label` (what sets each run apart, `results.score_run_dirs`) where the frame
    has one label per run and run per label, else `run` (two runs of one system must not share
    a colour)."""
    if by is not None:
        if by not in frame.columns:
            raise ValueError(f"no column {by!r}; have {', '.join(frame.columns)}")
        return by
    runs = "run"
    if "run_label" in frame.columns:  # a label per run, each run's own
        pairs = frame.select("run", "run_label").unique()
        distinct = pairs.height == pairs["run"].n_unique() == pairs["run_label"].n_unique()
        runs = "run_label" if distinct else "run"
    if "system" not in frame.columns:
        return runs
    per_system = frame.group_by("system").agg(pl.col("run").n_unique().alias("n"))
    return "system" if per_system["n"].max() in (None, 1) else runs


def series_name(series: str) -> str:
    """How a figure names the series of column `series`: a run for `run_label` (a run by what
    sets it apart), else the column's name."""
    return "run" if series == "run_label" else series


def series_styles(names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """A (colour, shape) for each distinct name, the names sorted: the i-th gets
    `PALETTE[i % 9]` and `SHAPES[i % 8]`, so no two of up to 72 names look alike and one
    selection styles a name alike in every chart."""
    ordered = sorted(set(names))
    if len(ordered) > len(PALETTE) * len(SHAPES):
        raise ValueError(
            f"{len(ordered)} series; at most {len(PALETTE) * len(SHAPES)} can be told apart"
        )
    return {
        name: (PALETTE[i % len(PALETTE)], SHAPES[i % len(SHAPES)])
        for i, name in enumerate(ordered)
    }


def series_scales(
    frame: pl.DataFrame, series: str, names: Iterable[str] | None
) -> tuple[alt.Scale, alt.Scale]:
    """The explicit colour and shape scales of `series_styles` over `names` (default: the
    names of `series` in `frame`), which must cover every name in `frame`."""
    present = frame[series].drop_nulls().unique().to_list()
    styles = series_styles(present if names is None else names)
    if unstyled := set(present) - set(styles):
        raise ValueError(f"series_names lacks {', '.join(sorted(unstyled))}")
    domain = list(styles)
    return (
        alt.Scale(domain=domain, range=[c for c, _ in styles.values()]),
        alt.Scale(domain=domain, range=[s for _, s in styles.values()]),
    )


def series_channels(
    frame: pl.DataFrame,
    series: str,
    names: Iterable[str] | None,
    legend: alt.Legend | None = None,
) -> tuple[alt.Color, alt.Shape]:
    """Colour and shape channels of `series` with the scales of `series_scales`, sharing
    `legend` (so a legend shows each colour with its shape)."""
    colours, shapes = series_scales(frame, series, names)
    title = series_name(series).capitalize()
    return (
        alt.Color(f"{series}:N", title=title, scale=colours, legend=legend),
        alt.Shape(f"{series}:N", title=title, scale=shapes, legend=legend),
    )


def interval_tooltip(field: str, title: str, low: str, high: str) -> list[alt.Tooltip]:
    """The tooltip rows of a value with its 95% interval: `field` titled `title`, then `low`
    and `high` (`95% from`, `to`), each to three places."""
    return [
        alt.Tooltip(f"{field}:Q", title=title, format=".3f"),
        alt.Tooltip(f"{low}:Q", title="95% from", format=".3f"),
        alt.Tooltip(f"{high}:Q", title="to", format=".3f"),
    ]


def verdict_scale() -> alt.Scale:
    """The colour scale of verdicts: the domain `VERDICTS`, the range `VERDICT_COLORS`."""
    return alt.Scale(domain=list(VERDICTS), range=[VERDICT_COLORS[v] for v in VERDICTS])


def verdict_legend(width_px: float = TWO_COLUMNS * PX_PER_INCH) -> alt.Legend:
    """The verdict legend below a chart `width_px` wide, in `VERDICTS` order, with
    `VERDICT_LABELS`."""
    shown = bottom_legend(
        "Verdict", list(VERDICTS), width_px, [VERDICT_LABELS[v] for v in VERDICTS]
    )
    shown.labelExpr = label_expr(VERDICT_LABELS)
    return shown
