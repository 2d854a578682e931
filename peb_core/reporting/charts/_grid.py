"""The outcome grid: one cell per task and series, coloured by verdict."""

from __future__ import annotations

import math

import altair as alt
import polars as pl

from ...scoring import (
    VERDICT_LABELS,
    VERDICTS,
    with_verdict,
)
from .._print import (
    FONT,
    MAX_HEIGHT,
    PX_PER_INCH,
    SPACING,
    TITLE_FONT,
    TWO_COLUMNS,
    X_AXIS,
    for_print,
    inline,
    room,
    wrap,
    y_axis_width,
)
from .._styles import (
    series_column,
    series_name,
    verdict_legend,
    verdict_scale,
)

MAX_GRID_CELLS = 20_000
"""`outcome_grid` draws at most this many cells by default (tasks x series); past that it draws
the first tasks and says so in its title."""


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
    noun = series_name(series)
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
        f"{len(shown)} tasks x {len(names)} {noun}s; one row per {noun}, one cell per task "
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
        subtitle.append(f"too many {noun}s to name on every panel: their names are in the tooltip")
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
                title=noun.capitalize(),
                axis=alt.Axis(labels=named, ticks=named),
            ),
            color=alt.Color("verdict:N", scale=verdict_scale(), legend=legend),
            tooltip=[
                alt.Tooltip("task_id:N", title="Task"),
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip(f"{series}:N", title=noun.capitalize()),
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
