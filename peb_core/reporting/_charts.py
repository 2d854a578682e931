"""Altair charts of score frames and scorecards, shared by the notebooks, the paper and the CLI.

Every chart is built from a polars frame and carries its data inline (`{"values": [...]}`, no
`url`), so a saved spec or an exported figure needs no network and no file beside it. Frames are
aggregated in polars before they reach altair, so a chart of tens of thousands of per-task rows
stays small. Verdict colours come only from `scoring.VERDICT_COLORS`; nothing here touches altair's
global settings.

- `confusion_heatmap(scores)`: true completeness x claimed completeness, counts, per system;
- `operating_profile(card)`: over-blocking against unsafe completeness, sized by answer quality;
- `outcome_grid(scores)`: one cell per task and run, coloured by verdict;
- `metric_bars(card)`: the four scored surfaces per system and family.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from ..scoring import SURFACES, VERDICT_COLORS, VERDICT_LABELS, VERDICTS, with_verdict

METRICS: dict[str, str] = {m.name: f"{m.title} ({m.better} is better)" for m in SURFACES}
"""The four scored surfaces (`peb_core.scoring.SURFACES`), titled as a reader of the paper
knows them."""

CLAIMED = ("complete", "incomplete", "invalid")
"""Columns of the confusion matrix: what a response claimed (a block claims incomplete)."""

TRUTH = ("complete", "incomplete")
"""Rows of the confusion matrix: the task's true completeness."""

MAX_GRID_CELLS = 3000
"""`outcome_grid` draws at most this many cells by default (tasks x runs); past that it shows
the first tasks and says so in its subtitle."""


def _inline(frame: pl.DataFrame) -> dict[str, Any]:
    """The rows of `frame` as inline data: nothing for a renderer to fetch. A plain dict, since
    `alt.InlineData` checks every value against the schema on construction (a second per 3,000
    rows); the spec is still validated once, by `to_dict`."""
    return {"values": frame.to_dicts()}


def _series(frame: pl.DataFrame, by: str | None) -> str:
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


def _label_expr(labels: dict[str, str]) -> str:
    """A Vega expression mapping legend values to their labels."""
    expr = "datum.label"
    for key, label in reversed(labels.items()):
        expr = f"datum.label === {key!r} ? {label!r} : ({expr})"
    return expr


def verdict_scale() -> alt.Scale:
    """The colour scale of verdicts: the domain `VERDICTS`, the range `VERDICT_COLORS`."""
    return alt.Scale(domain=list(VERDICTS), range=[VERDICT_COLORS[v] for v in VERDICTS])


def verdict_legend() -> alt.Legend:
    """The verdict legend, in `VERDICTS` order, with `VERDICT_LABELS`."""
    return alt.Legend(title="Verdict", labelExpr=_label_expr(VERDICT_LABELS))


def confusion_counts(scores: pl.DataFrame, *, by_family: bool = False) -> pl.DataFrame:
    """Counts of true x claimed completeness per system (and family), every cell present."""
    series = _series(scores, None)
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
            share=pl.col("count") / pl.col("count").sum().over(*keys, "truth").clip(lower_bound=1)
        )
        .sort(keys)
    )


def confusion_heatmap(
    scores: pl.DataFrame, *, by_family: bool = False, columns: int = 3
) -> alt.FacetChart:
    """The completeness confusion matrix of each system: rows are the task's true completeness,
    columns what the response claimed (a block claims incomplete; an unparsable or missing
    response is `invalid`), the count in each cell.

    Args:
        scores: per-task scores (`scoring.score_frames` or `report.score_run_dirs`).
        by_family: one matrix per system and family (families as rows) instead of per system.
        columns: matrices per row when faceting by system only.
    """
    series = _series(scores, None)
    counts = confusion_counts(scores, by_family=by_family)
    base = alt.Chart().encode(
        x=alt.X("claimed:N", sort=list(CLAIMED), title="Claimed by the response"),
        y=alt.Y("truth:N", sort=list(TRUTH), title="True completeness"),
    )
    cells = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            "count:Q",
            scale=alt.Scale(scheme="blues"),
            legend=alt.Legend(title="Tasks"),
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
    text = base.mark_text(fontSize=13).encode(
        text=alt.Text("count:Q"),
        color=alt.condition("datum.share > 0.5", alt.value("white"), alt.value("black")),
    )
    layered = alt.layer(cells, text).properties(width=150, height=90)
    header = alt.Header(title=None, labelFontWeight="bold", labelLimit=260)
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
            columns=columns,
        )
    return chart.properties(
        title=alt.Title(
            "Completeness awareness: true versus claimed",
            subtitle="Tasks per cell; off-diagonal cells are false complete or false incomplete",
        )
    )


def operating_profile(card: pl.DataFrame, *, by: str | None = None) -> alt.Chart:
    """Each (system, family) of a scorecard as one point: over-blocking on x, unsafe
    completeness on y, answer correctness as size, the system as colour, the family as shape.
    The safe and useful corner is bottom left. Rows missing either rate are left out.

    Args:
        card: a scorecard (`report.scorecard_of`).
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
    """
    series = _series(card, by)
    points = card.filter(
        pl.col("unsafe_completeness_rate").is_not_null()
        & pl.col("blocked_when_safe_to_answer_rate").is_not_null()
    ).select(
        series,
        *(c for c in ("run", "system", "protocol") if c != series and c in card.columns),
        "family",
        *METRICS,
        "n_tasks",
    )
    unit = alt.Scale(domain=[-0.05, 1.05], nice=False)
    chart: alt.Chart = (
        alt.Chart(_inline(points))
        .mark_point(filled=True, opacity=0.8)
        .encode(
            x=alt.X(
                "blocked_when_safe_to_answer_rate:Q",
                scale=unit,
                title="Over-blocking (blocked when safe to answer)",
                axis=alt.Axis(format=".0%"),
            ),
            y=alt.Y(
                "unsafe_completeness_rate:Q",
                scale=unit,
                title="Unsafe completeness rate",
                axis=alt.Axis(format=".0%"),
            ),
            size=alt.Size(
                "answer_correctness:Q",
                scale=alt.Scale(domain=[0, 1], range=[30, 400]),
                title="Answer correctness",
            ),
            color=alt.Color(f"{series}:N", title=series.capitalize()),
            shape=alt.Shape("family:N", title="Family"),
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
        .properties(
            width=420,
            height=320,
            title=alt.Title(
                "Operating profile: unsafe completeness versus over-blocking",
                subtitle="One point per system and family; bottom left is safe and useful; "
                "size is answer correctness",
            ),
        )
    )
    return chart


def outcome_grid(
    scores: pl.DataFrame, *, by: str | None = None, max_cells: int = MAX_GRID_CELLS
) -> alt.Chart:
    """One cell per task (x, grouped by family) and run (y), coloured by verdict
    (`outcomes.with_verdict`), with the task id, verdict and scores in the tooltip.

    Args:
        scores: per-task scores; filter to a selection first for a readable grid.
        by: the column naming a row (default: `system`, or `run` if a system has two runs).
        max_cells: draw at most this many cells, keeping the first tasks in family and task
            order; the subtitle says when tasks were left out.
    """
    series = _series(scores, by)
    tasks = scores.select("family", "task_id").unique().sort("family", "task_id")
    n_series = max(scores[series].n_unique(), 1)
    keep = max(max_cells // n_series, 1)
    shown = tasks.head(keep)
    frame = (
        with_verdict(scores.join(shown, on=["family", "task_id"], how="semi"))
        .with_columns(
            task=pl.col("family") + pl.lit(" / ") + pl.col("task_id"),
            verdict_label=pl.col("verdict").replace_strict(VERDICT_LABELS),
        )
        .select(
            series,
            *(c for c in ("run", "system", "protocol") if c != series and c in scores.columns),
            "family",
            "task_id",
            "task",
            "completeness",
            "outcome",
            "verdict",
            "verdict_label",
            "answer_score",
            "gap_score",
        )
    )
    order = (shown["family"] + " / " + shown["task_id"]).to_list()
    subtitle = f"{len(shown)} tasks x {n_series} {series}s"
    if len(shown) < len(tasks):
        subtitle += f" (first {len(shown)} of {len(tasks)} tasks; filter to see the rest)"
    step = 10 if len(shown) > 80 else 14
    chart: alt.Chart = (
        alt.Chart(_inline(frame))
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(
                "task:N",
                sort=order,
                title="Task (family / task id)",
                axis=alt.Axis(labels=len(shown) <= 120, labelAngle=-60, labelLimit=220),
            ),
            y=alt.Y(f"{series}:N", title=series.capitalize()),
            color=alt.Color("verdict:N", scale=verdict_scale(), legend=verdict_legend()),
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
        .properties(
            width=alt.Step(step),
            height=alt.Step(18),
            title=alt.Title("Outcome per task", subtitle=subtitle),
        )
    )
    return chart


def metric_long(card: pl.DataFrame, *, by: str | None = None) -> pl.DataFrame:
    """A scorecard's four surfaces as rows: series, family, metric, label, value."""
    series = _series(card, by)
    return (
        card.select(series, "family", *METRICS)
        .unpivot(index=[series, "family"], variable_name="metric", value_name="value")
        .with_columns(label=pl.col("metric").replace_strict(METRICS))
    )


def metric_bars(card: pl.DataFrame, *, by: str | None = None) -> alt.FacetChart:
    """The four scored surfaces (unsafe completeness, answer correctness, gap-report quality,
    over-blocking), one panel each: bars per family (x) and system (colour). A missing bar is a
    rate with an empty denominator (no incomplete task, or no task where answering is allowed).

    Args:
        card: a scorecard (`report.scorecard_of`).
        by: the column naming a series (default: `system`, or `run` if a system has two runs).
    """
    series = _series(card, by)
    long = metric_long(card, by=by)
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=alt.X("family:N", title="Family", axis=alt.Axis(labelAngle=-30)),
            xOffset=alt.XOffset(f"{series}:N"),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title="Rate"),
            color=alt.Color(f"{series}:N", title=series.capitalize()),
            tooltip=[
                alt.Tooltip(f"{series}:N", title=series.capitalize()),
                alt.Tooltip("family:N", title="Family"),
                alt.Tooltip("label:N", title="Metric"),
                alt.Tooltip("value:Q", title="Value", format=".3f"),
            ],
        )
    )
    # A tick at each value, so a rate of 0 shows as a line on the axis, not as no bar at all.
    ticks = bars.mark_tick(thickness=2, size=10, opacity=1)
    return (
        alt.layer(bars, ticks)
        .properties(width=240, height=180)
        .facet(
            data=_inline(long),
            facet=alt.Facet(
                "label:N",
                sort=list(METRICS.values()),
                header=alt.Header(title=None, labelFontWeight="bold", labelLimit=300),
            ),
            columns=2,
        )
        .properties(
            title=alt.Title(
                "The four scored surfaces per system and family",
                subtitle="Unsafe completeness and over-blocking: lower is better; "
                "answer and gap-report quality: higher is better",
            )
        )
    )
