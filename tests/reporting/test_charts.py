"""Charts carry their data inline, have titles and axis titles, and colour verdicts with the one
shared palette."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest

from peb_core import BASELINES, score_run_dirs, scorecard
from peb_core.reporting import charts
from peb_core.scoring import VERDICT_COLORS, VERDICT_LABELS, VERDICTS


@pytest.fixture(scope="module")
def scores(baseline_runs: dict[str, tuple[Path, Any]]) -> pl.DataFrame:
    frame, _ = score_run_dirs([path for path, _ in baseline_runs.values()])
    return frame


@pytest.fixture(scope="module")
def card(scores: pl.DataFrame) -> pl.DataFrame:
    return scorecard(scores)


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def _all_charts(scores: pl.DataFrame, card: pl.DataFrame) -> dict[str, alt.TopLevelMixin]:
    return {
        "confusion": charts.confusion_heatmap(scores),
        "confusion_by_family": charts.confusion_heatmap(scores, by_family=True),
        "profile": charts.operating_profile(card),
        "grid": charts.outcome_grid(scores),
        "bars": charts.metric_bars(card),
    }


def test_data_is_inline_and_every_chart_titled(scores: pl.DataFrame, card: pl.DataFrame) -> None:
    for name, chart in _all_charts(scores, card).items():
        spec = chart.to_dict()
        keys = [k for k, _ in _walk(spec)]
        assert "url" not in keys, name
        datasets = spec.get("datasets", {})
        for key, value in _walk(spec):
            if key == "data":
                assert "values" in value or value.get("name") in datasets, (name, value)
        rows = sum(len(v) for v in datasets.values()) + sum(
            len(v["values"]) for k, v in _walk(spec) if k == "data" and "values" in v
        )
        assert rows > 0, name
        assert spec["title"]["text"], name
        titles = [v["title"] for k, v in _walk(spec) if k in ("x", "y") and "title" in v]
        assert titles and all(titles), name
        json.dumps(spec)  # serialisable as is


def test_verdict_colours_are_the_shared_ones(scores: pl.DataFrame) -> None:
    spec = charts.outcome_grid(scores).to_dict()
    color = spec["encoding"]["color"]
    assert color["field"] == "verdict"
    assert dict(zip(color["scale"]["domain"], color["scale"]["range"], strict=True)) == (
        VERDICT_COLORS
    )
    assert color["scale"]["domain"] == list(VERDICTS)
    for verdict, label in VERDICT_LABELS.items():
        assert f"'{verdict}' ? '{label}'" in color["legend"]["labelExpr"]


def test_grid_cells_match_verdicts(scores: pl.DataFrame) -> None:
    spec = charts.outcome_grid(scores).to_dict()
    (values,) = spec["datasets"].values()
    assert len(values) == scores.height
    by_run: dict[str, set[str]] = {}
    for row in values:
        by_run.setdefault(row["system"], set()).add(row["verdict"])
    assert by_run["silent_filter"] == {"correct", "unsafe"}
    assert by_run["fail_and_report"] == {"correct"}


def test_grid_caps_cells_and_says_so(scores: pl.DataFrame) -> None:
    chart = charts.outcome_grid(scores, max_cells=40)
    spec = chart.to_dict()
    (values,) = spec["datasets"].values()
    assert len(values) <= 40
    assert "first" in spec["title"]["subtitle"]


def test_confusion_counts_add_up(scores: pl.DataFrame) -> None:
    counts = charts.confusion_counts(scores)
    assert counts.height == len(BASELINES) * len(charts.TRUTH) * len(charts.CLAIMED)
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


def test_metric_bars_hold_the_scorecard(card: pl.DataFrame) -> None:
    spec = charts.metric_bars(card).to_dict()
    (values,) = spec["datasets"].values()
    assert len(values) == card.height * 4
    row = card.filter(
        (pl.col("system") == "silent_filter") & (pl.col("family") == "due_diligence_v1")
    ).row(0, named=True)
    got = {
        v["metric"]: v["value"]
        for v in values
        if v["system"] == "silent_filter" and v["family"] == "due_diligence_v1"
    }
    assert got == {m: row[m] for m in charts.METRICS}


def test_two_runs_of_one_system_get_their_own_colour(card: pl.DataFrame) -> None:
    twice = pl.concat([card, card.with_columns(run=pl.col("run") + "-again")])
    spec = charts.operating_profile(twice).to_dict()
    assert spec["encoding"]["color"]["field"] == "run"
    assert charts.operating_profile(card).to_dict()["encoding"]["color"]["field"] == "system"
