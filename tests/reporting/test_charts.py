"""Charts carry their data inline, have titles and axis titles, colour verdicts with the one
shared colour-blind-safe palette and each series alike in every chart, cut no label short, draw
every task of a paper run on a page, draw every point at its value with its interval, normalise
each confusion matrix within its run, leave no axis under an empty panel, print numbers legibly,
and export exactly 3.5 or 7 inches wide (issue 21, items 12, 13 and 29)."""

from __future__ import annotations

import itertools
import json
import math
import re
import struct
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest
from specs import walk

from peb_core import BASELINES, load_families, score_run_dirs, scorecard
from peb_core.reporting import chart_bytes, charts
from peb_core.scoring import (
    CLAIMED,
    TRUTH,
    VERDICT_COLORS,
    VERDICT_LABELS,
    VERDICTS,
    confusion_counts,
)
from peb_core.systems import Baseline

PAPER_FIVE = ["oracle", "silent_filter", "fail_and_report", "warning_partial", "cue_reader"]
"""The paper's one-shot baselines."""

@pytest.fixture(scope="module")
def scores(baseline_runs: dict[str, tuple[Path, Any]]) -> pl.DataFrame:
    frame, _ = score_run_dirs([path for path, _ in baseline_runs.values()])
    return frame


@pytest.fixture(scope="module")
def card(scores: pl.DataFrame) -> pl.DataFrame:
    return scorecard(scores)


@pytest.fixture(scope="module")
def many(scores: pl.DataFrame) -> pl.DataFrame:
    """25 runs of 25 systems (each a copy of a baseline's scores), more than the palette's nine
    colours."""
    sources = sorted(BASELINES)
    return pl.concat(
        scores.filter(pl.col("system") == sources[i % len(sources)]).with_columns(
            system=pl.lit(f"model-{i:02d}"), run=pl.lit(f"run-{i:02d}")
        )
        for i in range(25)
    )


def _all_charts(scores: pl.DataFrame, card: pl.DataFrame) -> dict[str, alt.TopLevelMixin]:
    return {
        "confusion": charts.confusion_heatmap(scores),
        "confusion_by_family": charts.confusion_heatmap(scores, by_family=True),
        "profile": charts.operating_profile(card),
        "grid": charts.outcome_grid(scores),
        "bars": charts.metric_bars(card),
    }


def _rows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    (values,) = spec["datasets"].values()
    rows: list[dict[str, Any]] = values
    return rows


def _series_styles(spec: dict[str, Any], field: str) -> dict[str, tuple[str, str | None]]:
    """Each name's colour and shape in a chart's explicit scales of `field` (every colour and
    shape channel of the field must agree)."""
    found: dict[str, dict[str, list[tuple[str, str]]]] = {"color": {}, "shape": {}}
    for key, value in walk(spec):
        if key in (*found, "fill") and isinstance(value, dict) and value.get("field") == field:
            scale = value["scale"]
            channel = "color" if key == "fill" else key
            found[channel][json.dumps(scale)] = list(
                zip(scale["domain"], scale["range"], strict=True)
            )
    assert len(found["color"]) == 1, found["color"]
    assert len(found["shape"]) <= 1, found["shape"]
    colours = dict(next(iter(found["color"].values())))
    shapes = dict(next(iter(found["shape"].values()), []))
    return {name: (colour, shapes.get(name)) for name, colour in colours.items()}


def test_data_is_inline_and_every_chart_titled(scores: pl.DataFrame, card: pl.DataFrame) -> None:
    for name, chart in _all_charts(scores, card).items():
        spec = chart.to_dict()
        keys = [k for k, _ in walk(spec)]
        assert "url" not in keys, name
        datasets = spec.get("datasets", {})
        for key, value in walk(spec):
            if key == "data":
                assert "values" in value or value.get("name") in datasets, (name, value)
        rows = sum(len(v) for v in datasets.values()) + sum(
            len(v["values"]) for k, v in walk(spec) if k == "data" and "values" in v
        )
        assert rows > 0, name
        assert spec["title"]["text"], name
        titles = [v["title"] for k, v in walk(spec) if k in ("x", "y") and "field" in v]
        assert titles and all(titles), name
        json.dumps(spec)  # serialisable as is


def test_verdict_colours_are_the_shared_ones(scores: pl.DataFrame) -> None:
    spec = charts.outcome_grid(scores).to_dict()
    color = spec["spec"]["encoding"]["color"]
    assert color["field"] == "verdict"
    assert dict(zip(color["scale"]["domain"], color["scale"]["range"], strict=True)) == (
        VERDICT_COLORS
    )
    assert color["scale"]["domain"] == list(VERDICTS)
    assert color["legend"]["values"] == list(VERDICTS)
    for verdict, label in VERDICT_LABELS.items():
        assert f"'{verdict}' ? '{label}'" in color["legend"]["labelExpr"]


# Machado, Oliveira and Fernandes (2009), severity 1: linear RGB as seen with each deficiency.
_VISION = {
    "normal": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}


def _lab(colour: str, vision: str) -> tuple[float, float, float]:
    """CIELAB (D65) of a hex colour as seen with `vision`."""
    srgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in srgb]
    seen = [
        min(1.0, max(0.0, sum(m * c for m, c in zip(row, linear, strict=True))))
        for row in _VISION[vision]
    ]
    xyz = [
        sum(m * c for m, c in zip(row, seen, strict=True)) / white
        for row, white in zip(
            ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505)),
            (0.95047, 1.0, 1.08883),
            strict=True,
        )
    ]
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_verdict_colours_stay_apart_in_every_vision() -> None:
    """Every two verdicts are at least 15 CIELAB units apart in normal vision and in simulated
    protanopia, deuteranopia and tritanopia (the old palette's false complete and invalid were 12
    apart for a deuteranope, its unsafe and false complete a red and a crimson)."""
    for vision in _VISION:
        for i, a in enumerate(VERDICTS):
            for b in VERDICTS[i + 1 :]:
                gap = math.dist(_lab(VERDICT_COLORS[a], vision), _lab(VERDICT_COLORS[b], vision))
                assert gap >= 15, (vision, a, b, round(gap, 1))
    assert len(set(VERDICT_COLORS.values())) == len(VERDICTS)


SERIES_GAP = 15
"""The least CIELAB (CIE76) distance between two series colours in any vision simulated: the
verdicts' floor. A just noticeable difference is about 2.3; the palette this replaced had two
series 2.2 apart under protanopia (`agent_fail_and_report` and `agent_silent`) and two 1.7
apart under deuteranopia, the same colour to such a reader. At 15, about six noticeable steps,
two small marks read as two colours, not as shades of one."""


def test_series_colours_stay_apart_in_every_vision_and_shapes_vary_from_the_first() -> None:
    """Issue 29.13: every two series colours are at least SERIES_GAP apart in normal vision
    and simulated protanopia, deuteranopia and tritanopia (Machado et al. 2009, severity 1);
    the shape changes from the first series on, so the first len(PALETTE) series differ in
    colour and in shape, and no two of the first 72 share both."""
    for vision in _VISION:
        for a, b in itertools.combinations(charts.PALETTE, 2):
            gap = math.dist(_lab(a, vision), _lab(b, vision))
            assert gap >= SERIES_GAP, (vision, a, b, round(gap, 1))
    # The old palette fails the same check: the test can fail.
    old = ("#4c78a8", "#f58518", "#e45756", "#439894", "#54a24b")
    assert min(
        math.dist(_lab(a, "deuteranopia"), _lab(b, "deuteranopia"))
        for a, b in itertools.combinations(old, 2)
    ) < 2
    n = len(charts.PALETTE) * len(charts.SHAPES)
    styles = charts.series_styles(f"s{i:03d}" for i in range(n))
    assert len(set(styles.values())) == n
    first = list(styles.values())[: len(charts.PALETTE)]
    assert len({c for c, _ in first}) == len(first)
    assert len({s for _, s in first[: len(charts.SHAPES)]}) == len(charts.SHAPES)


def test_a_series_has_one_colour_and_shape_in_every_chart(
    scores: pl.DataFrame, card: pl.DataFrame
) -> None:
    expected = charts.series_styles(scores["system"])
    assert len(set(expected.values())) == len(expected)
    for name, chart in _all_charts(scores, card).items():
        if name == "grid":  # coloured by verdict; each series is a labelled column
            continue
        got = _series_styles(chart.to_dict(), "system")
        assert {n: c for n, (c, _) in got.items()} == {n: c for n, (c, _) in expected.items()}
        assert all(shape in (None, expected[n][1]) for n, (_, shape) in got.items()), name


def test_more_series_than_colours_stay_apart(many: pl.DataFrame) -> None:
    card = scorecard(many)
    for chart in (
        charts.operating_profile(card),
        charts.metric_bars(card),
        charts.confusion_heatmap(many),
    ):
        spec = chart.to_dict()
        got = _series_styles(spec, "system")
        assert sorted(got) == sorted(many["system"].unique())
        first = sorted(got)[: len(charts.PALETTE)]
        assert len({got[n][0] for n in first}) == len(first), "the first nine share a colour"
        if any(shape for _, shape in got.values()):
            assert len(set(got.values())) == len(got), "two series look alike"
    with pytest.raises(ValueError, match="can be told apart"):
        charts.series_styles(str(i) for i in range(len(charts.PALETTE) * len(charts.SHAPES) + 1))


def test_wider_series_names_keep_colours_across_selections(card: pl.DataFrame) -> None:
    every = card["system"].unique().to_list()
    some = card.filter(pl.col("system").is_in(["oracle", "silent_filter"]))
    alone = _series_styles(charts.metric_bars(some).to_dict(), "system")
    shared = charts.metric_bars(some, series_names=every).to_dict()
    assert alone["silent_filter"] != charts.series_styles(every)["silent_filter"]
    assert (
        _series_styles(shared, "system")["silent_filter"]
        == (charts.series_styles(every)["silent_filter"])
    )
    # The legend lists the series shown, not the wider selection.
    (legend,) = {
        json.dumps(v["legend"]["values"]) for k, v in walk(shared) if k == "color" and "legend" in v
    }
    assert json.loads(legend) == ["oracle", "silent_filter"]
    with pytest.raises(ValueError, match="lacks oracle"):
        charts.metric_bars(some, series_names=["silent_filter"])


def test_legends_list_every_series_with_no_label_cut(many: pl.DataFrame) -> None:
    card = scorecard(many)
    for chart in (charts.operating_profile(card), charts.metric_bars(card)):
        spec = chart.to_dict()
        assert spec["config"]["legend"]["labelLimit"] == 0
        assert spec["config"]["legend"]["symbolLimit"] == 0
        assert spec["config"]["axis"]["labelLimit"] == 0
        assert spec["config"]["header"]["labelLimit"] == 0
        legends = [v["legend"] for k, v in walk(spec) if k in ("color", "shape") and "legend" in v]
        assert legends
        for legend in legends:
            assert "labelLimit" not in legend and "symbolLimit" not in legend
            assert legend["values"] == sorted(many["system"].unique())


def _svg_inches(chart: alt.TopLevelMixin) -> tuple[float, float, str]:
    svg = chart_bytes(chart, "svg").decode()
    found = re.search(r'width="([\d.]+)in" height="([\d.]+)in"', svg)
    assert found is not None
    return float(found[1]), float(found[2]), svg


def test_grid_draws_every_task_of_a_paper_run_on_a_page(
    many: pl.DataFrame, canonical_tasks: list[Any]
) -> None:
    assert many["family"].n_unique() == len(load_families()) == 7
    grid = charts.outcome_grid(many)
    spec = grid.to_dict()
    rows = _rows(spec)
    assert len(rows) == many.height == len(canonical_tasks) * 25
    assert {(r["family"], r["task_id"]) for r in rows} == {
        (t.family, t.task_id) for t in canonical_tasks
    }
    assert spec["facet"]["field"] == "family"
    assert spec["resolve"]["scale"]["x"] == "independent"
    assert spec["spec"]["encoding"]["x"]["field"] == "task_id"
    assert spec["spec"]["encoding"]["y"]["field"] == "system"
    assert "only" not in " ".join(spec["title"]["text"])
    width, height, _ = _svg_inches(grid)
    assert width == 7 and height <= charts.MAX_HEIGHT, height


def test_grid_names_every_series_on_every_panel(scores: pl.DataFrame) -> None:
    """Each family's panel has its own axis of series names, and no axis stands under an empty
    panel (the paper's five one-shot baselines: with every shipped baseline, more than fit, the
    names move to the tooltip)."""
    scores = scores.filter(pl.col("system").is_in(PAPER_FIVE))
    grid = charts.outcome_grid(scores)
    spec = grid.to_dict()
    assert spec["resolve"]["axis"] == {"x": "independent", "y": "independent"}
    assert spec["spec"]["encoding"]["y"]["axis"]["labels"] is True
    _, height, svg = _svg_inches(grid)
    assert height <= charts.MAX_HEIGHT
    families = scores["family"].n_unique()
    assert svg.count('aria-label="Y-axis') == families
    assert svg.count('aria-label="X-axis') == families
    for name in scores["system"].unique():
        assert svg.count(f">{name}</text>") == families, name


def test_faceted_charts_leave_no_axis_under_an_empty_panel(
    scores: pl.DataFrame, card: pl.DataFrame
) -> None:
    """Seven families in rows of four, five series in rows of three: every x axis belongs to a
    panel (issue 21.29: an empty eighth panel had an orphan axis)."""
    panels = {"profile": card["family"].n_unique(), "confusion": scores["system"].n_unique()}
    for name, chart in {
        "profile": charts.operating_profile(card),
        "confusion": charts.confusion_heatmap(scores, columns=3),
    }.items():
        _, _, svg = _svg_inches(chart)
        assert svg.count('aria-label="X-axis') == panels[name], name


def test_grid_cells_match_verdicts(scores: pl.DataFrame) -> None:
    rows = _rows(charts.outcome_grid(scores).to_dict())
    assert len(rows) == scores.height
    by_run: dict[str, set[str]] = {}
    for row in rows:
        by_run.setdefault(row["system"], set()).add(row["verdict"])
    assert by_run["silent_filter"] == {"correct", "unsafe"}
    assert by_run["fail_and_report"] == {"correct"}


def test_grid_cut_is_said_in_the_title(scores: pl.DataFrame) -> None:
    spec = charts.outcome_grid(scores, max_cells=40).to_dict()
    rows = _rows(spec)
    assert len(rows) <= 40
    tasks = scores.select("family", "task_id").n_unique()
    shown = len({r["task_id"] for r in rows})
    assert f"the first {shown} of {tasks} tasks only" in " ".join(spec["title"]["text"])
    every = tasks * scores["system"].n_unique()
    assert f"max_cells={every}" in " ".join(spec["title"]["subtitle"])
    assert len(_rows(charts.outcome_grid(scores, max_cells=every).to_dict())) == scores.height


def test_confusion_counts_add_up(scores: pl.DataFrame) -> None:
    counts = confusion_counts(scores, ["system"])
    assert counts.height == len(BASELINES) * len(TRUTH) * len(CLAIMED)
    totals = counts.group_by("system").agg(pl.col("count").sum()).sort("system")
    assert totals.equals(
        scores.group_by("system").agg(count=pl.len().cast(pl.Int64)).sort("system")
    )
    silent = counts.filter(pl.col("system") == "silent_filter")
    false_complete = silent.filter(
        (pl.col("truth") == "incomplete") & (pl.col("claimed") == "complete")
    )
    assert (
        false_complete["count"].item()
        == scores.filter(
            (pl.col("system") == "silent_filter") & (pl.col("completeness") == "incomplete")
        ).height
    )


def test_each_confusion_matrix_is_normalised_within_its_run(scores: pl.DataFrame) -> None:
    """A run of 10 tasks beside one of 1,000: each matrix is shaded by the shares of its own
    rows (issue 21.13: one shared scale let a big run wash out the rest), counts printed."""
    small = scores.filter(pl.col("system") == "silent_filter").head(10)
    big = pl.concat([scores.filter(pl.col("system") == "oracle")] * 6)
    spec = charts.confusion_heatmap(pl.concat([small, big])).to_dict()
    cells, text, _, _ = spec["spec"]["layer"]  # and the band, and its shape
    assert cells["encoding"]["color"]["field"] == "share"
    assert cells["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert text["encoding"]["text"]["field"] == "count"
    rows = _rows(spec)
    for system in ("silent_filter", "oracle"):
        mine = [r for r in rows if r["system"] == system]
        for truth in TRUTH:
            row = [r for r in mine if r["truth"] == truth]
            total = sum(r["count"] for r in row)
            assert all(r["share"] == (r["count"] / total if total else 0) for r in row)
    # the small run's darkest cell is as dark as the big run's
    darkest = {
        system: max(r["share"] for r in rows if r["system"] == system)
        for system in ("silent_filter", "oracle")
    }
    assert darkest == {"silent_filter": 1.0, "oracle": 1.0}


def test_confusion_numbers_are_dark_on_pale_cells_and_light_on_dark(scores: pl.DataFrame) -> None:
    spec = charts.confusion_heatmap(scores).to_dict()
    _, text, _, _ = spec["spec"]["layer"]
    ink = text["encoding"]["color"]
    assert ink["condition"] == [{"test": f"datum.share >= {charts.INK}", "value": "white"}]
    assert ink["value"] == "black"


def test_metric_bars_hold_the_scorecard_and_are_not_hairlines(
    card: pl.DataFrame, many: pl.DataFrame
) -> None:
    spec = charts.metric_bars(card).to_dict()
    rows = _rows(spec)
    assert len(rows) == card.height * 4
    row = card.filter(
        (pl.col("system") == "silent_filter") & (pl.col("family") == "due_diligence_v1")
    ).row(0, named=True)
    got = {
        v["metric"]: v["value"]
        for v in rows
        if v["system"] == "silent_filter" and v["family"] == "due_diligence_v1"
    }
    assert got == {m: row[m] for m in charts.METRICS}
    for frame in (card, scorecard(many)):
        spec = charts.metric_bars(frame).to_dict()
        bars, _, _ = spec["spec"]["layer"]
        padding = bars["encoding"]["x"]["scale"]["paddingInner"]
        per_bar = (
            spec["spec"]["width"]
            * (1 - padding)
            / (frame["family"].n_unique() * frame["system"].n_unique())
        )
        assert per_bar >= charts.MIN_BAR


def test_two_runs_of_one_system_get_their_own_colour(card: pl.DataFrame) -> None:
    twice = pl.concat([card, card.with_columns(run=pl.col("run") + "-again")])
    spec = charts.operating_profile(twice).to_dict()
    assert spec["spec"]["layer"][2]["encoding"]["color"]["field"] == "run"
    assert len(_series_styles(spec, "run")) == 2 * card["run"].n_unique()
    once = charts.operating_profile(card).to_dict()
    assert once["spec"]["layer"][2]["encoding"]["color"]["field"] == "system"


def test_profile_draws_every_point_at_its_value_with_its_intervals(
    card: pl.DataFrame, many: pl.DataFrame
) -> None:
    """No point is moved off its value (issue 21.12: coinciding points were set up to 15% of an
    axis away); up to three points at one value are nested, each a ring wider than the next,
    and counted; more (issue 29.13: 7 to 12 rings spilled over the axes) are one grey mark of
    a fixed size, counted, their series listed in the subtitle."""
    crowded = 0
    for frame in (card, scorecard(many)):
        spec = charts.operating_profile(frame).to_dict()
        across, upright, marks, crowd, count = spec["spec"]["layer"]
        subtitle = " ".join(spec["title"]["subtitle"])
        keys = [k for k, _ in walk(spec)]
        assert "xOffset" not in keys and "yOffset" not in keys and "dx" not in _rows(spec)[0]
        x, y = charts.RATES
        assert (marks["encoding"]["x"]["field"], marks["encoding"]["y"]["field"]) == (x, y)
        assert across["encoding"]["x2"]["field"] == f"{x}_ci_high"
        assert upright["encoding"]["y2"]["field"] == f"{y}_ci_high"
        drawn = {(r["system"], r["family"]): r for r in _rows(spec)}
        for row in frame.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null()).iter_rows(
            named=True
        ):
            point = drawn[(row["system"], row["family"])]
            for column in (x, y, f"{x}_ci_low", f"{x}_ci_high", f"{y}_ci_low", f"{y}_ci_high"):
                assert point[column] == row[column], column
        groups: dict[tuple[str, float, float], list[dict[str, Any]]] = {}
        for r in _rows(spec):
            groups.setdefault((r["family"], r[x], r[y]), []).append(r)
        assert any(len(g) > 1 for g in groups.values())
        widest = (charts.MAX_RINGS * charts.RING + 2) ** 2
        for (family, *_), group in groups.items():
            assert {r["together"] for r in group} == {len(group)}
            assert all(r["size"] <= widest for r in group)
            if len(group) > charts.MAX_RINGS:
                crowded += 1
                assert all(r["crowd"] for r in group) and len({r["size"] for r in group}) == 1
                names = sorted(r["system"] for r in group)
                assert {r["members"] for r in group} == {", ".join(names)}
                # Listed in the subtitle, or, where the list would pass MAX_HEIGHT, counted
                # there (their series in the grey mark's tooltip, `members`).
                if "of them); its tooltip lists" not in subtitle:
                    assert f"{family} at over-blocking " in subtitle
                    assert all(name in subtitle for name in names)
                continue
            assert not any(r["crowd"] for r in group)
            sizes = sorted((r["size"] for r in group), reverse=True)
            widths = [math.sqrt(size) for size in sizes]
            assert all(a - b >= charts.RING for a, b in itertools.pairwise(widths))
        assert marks["encoding"]["order"]["field"] == "order"  # the widest drawn first
        assert marks["transform"] == [{"filter": "!datum.crowd"}]
        assert crowd["mark"]["color"] == charts.CROWD
        assert "times" in json.dumps(count)
        counted = re.search(r"one grey mark \((\d+) of them\)", subtitle)
        if counted:
            assert int(counted.group(1)) == len(
                {k for k, g in groups.items() if len(g) > charts.MAX_RINGS}
            )
    assert crowded  # the many runs' baselines crowd at 0, 0


def _png_size_and_dpi(data: bytes) -> tuple[int, int, float]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    at = data.index(b"pHYs")
    per_metre, _, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
    assert unit == 1
    return width, height, per_metre * 0.0254


@pytest.mark.parametrize("width", [charts.ONE_COLUMN, charts.TWO_COLUMNS])
def test_figures_export_at_their_print_width_with_legible_text(
    scores: pl.DataFrame, card: pl.DataFrame, width: float
) -> None:
    """The paper's figures of the one-shot baselines (the agent baselines and sub-agents are
    more series than a column holds: `metric_bars` widens the figure for them by design)."""
    one_shot = pl.col("system").is_in([n for n, b in BASELINES.items() if isinstance(b, Baseline)])
    for name, chart in {
        "confusion": charts.confusion_heatmap(scores.filter(one_shot), width=width),
        "bars": charts.metric_bars(card.filter(one_shot), width=width),
    }.items():
        png_width, _, dpi = _png_size_and_dpi(chart_bytes(chart, "png", dpi=300))
        assert png_width == round(width * 300) and round(dpi) == 300, name
        svg = chart_bytes(chart, "svg").decode()
        root = re.search(r'width="([\d.]+)in" height="[\d.]+in" viewBox="0 0 ([\d.]+) ', svg)
        assert root is not None and float(root[1]) == width, name
        # The smallest text, as printed: FONT pixels scaled from the drawn width to the print
        # width, at 72 points to 96 pixels.
        printed = charts.FONT * width * charts.PX_PER_INCH / float(root[2]) * 72 / 96
        assert printed >= 6, (name, printed)
        pdf = chart_bytes(chart, "pdf")
        box = re.search(rb"MediaBox \[0 0 ([\d.]+) ", pdf)
        assert box is not None and float(box[1]) == pytest.approx(width * 72, abs=0.01), name


@pytest.mark.parametrize("n", [12, 24, 48])
def test_every_chart_of_many_long_named_runs_is_at_most_9_inches_tall(
    scores: pl.DataFrame, n: int
) -> None:
    """Issue 36: the guide promises figures at most 9 inches tall; with 12 runs named by what
    sets them apart the confusion matrices took 21 inches (one to a row) and the trace bars
    9.7. Each chart now wraps names, shortens its cells or panels, or (the confusion matrices,
    past what fits) draws the first runs and says so."""
    sources = sorted(scores["run"].unique())
    runs = pl.concat(
        scores.filter(pl.col("run") == sources[i % len(sources)]).with_columns(
            run=pl.lit(f"run-{i:02d}"),
            run_label=pl.lit(f"agent_cave contract=corpus followup=pressure seeds={i}"),
            system=pl.lit("one system"),
        )
        for i in range(n)
    )
    card = scorecard(runs)
    made = {
        "profile": charts.operating_profile(card),
        "bars": charts.metric_bars(card),
        "confusion": charts.confusion_heatmap(runs),
        "grid": charts.outcome_grid(runs),
    }
    for name, chart in made.items():
        _, height, _ = _svg_inches(chart)
        assert height <= charts.MAX_HEIGHT, (name, n, height)
    confusion = made["confusion"].to_dict()
    subtitle = " ".join(confusion["title"]["subtitle"])
    (drawn,) = [{r["run_label"] for r in v} for v in confusion["datasets"].values()]
    assert len(drawn) >= min(n, 21)  # 21 matrices of these names fit, 3 to a row
    if len(drawn) < n:
        assert f"The first {len(drawn)} of {n} runs by name" in subtitle
    assert _series_styles(confusion, "run_label").keys() == set(runs["run_label"])
    bars = made["bars"].to_dict()
    titles = {v["legend"]["title"] for k, v in walk(bars) if k == "color" and "legend" in v}
    assert titles == {"Run"}  # a run, by what sets it apart (the column is run_label)
