"""The reliability diagram (docs/benchmark.md §3.2): its bins are the ECE's bins, each with its
tasks, mean confidence and share complete with a Wilson interval; it exports offline like every
chart; `peb report` writes it (and the escalation metrics' bars) only where a run states a
confidence."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from peb_core import BASELINES, load_families, run_system, score_run_dirs
from peb_core.reporting import chart_bytes, charts, figures
from peb_core.scoring import wilson_interval

FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("confident") / "runs"
    for name in ("calibrated_reader", "half_confident", "fail_and_report"):
        run_system(BASELINES[name], [DD], root / name, tier="hard")
    return sorted(root.iterdir())


def test_the_bins_are_the_ece_s_and_each_share_has_its_interval(runs: list[Path]) -> None:
    scores, _ = score_run_dirs(runs)
    bins = charts.reliability_bins(scores)
    assert set(bins["system"]) == {"calibrated_reader", "half_confident"}  # not @1's run
    calibrated = bins.filter(pl.col("system") == "calibrated_reader").sort("bin")
    assert calibrated["bin"].to_list() == [0, 9]
    assert calibrated["confidence"].to_list() == calibrated["complete"].to_list() == [0.0, 1.0]
    (half,) = bins.filter(pl.col("system") == "half_confident").iter_rows(named=True)
    complete = scores.filter(pl.col("system") == "half_confident")["completeness"] == "complete"
    assert (half["bin"], half["n"], half["confidence"]) == (5, 24, 0.5)
    assert half["complete"] == complete.mean()
    assert (half["ci_low"], half["ci_high"]) == wilson_interval(int(complete.sum()), 24)
    svg = chart_bytes(charts.reliability_diagram(scores), "svg")
    assert svg.startswith(b"<svg") and b"half_confident" in svg


def test_peb_report_draws_it_where_a_run_states_a_confidence(runs: list[Path]) -> None:
    found = figures(runs, "hard")
    assert {"figure_reliability", "figure_escalation"} <= set(found)
    plain = figures([r for r in runs if r.name == "fail_and_report"], "hard")
    assert not {"figure_reliability", "figure_escalation"} & set(plain)
    assert chart_bytes(found["figure_reliability"], "png").startswith(b"\x89PNG")


def test_the_workbench_shows_the_calibration_metrics_where_a_row_has_one(runs: list[Path]) -> None:
    from peb_core.frontends.workbench import scorecard_glance
    from peb_core.scoring import scorecard

    scores, _ = score_run_dirs(runs)
    card = scorecard(scores)
    labels = {"next_step", "escalated_right", "over_escalated", "brier", "ece", "auroc"}
    assert labels <= set(scorecard_glance(card).columns)
    plain = card.filter(pl.col("system") == "fail_and_report")
    assert not labels & set(scorecard_glance(plain).columns)
