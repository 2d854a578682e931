"""What surface cues buy on each tier (docs/benchmark.md §4 and §7), measured from fresh runs of
the baselines: `cue_reader`, which reads only the model view and decides by surface cues, nearly
solves the paper tier and falls to the majority rate on the hard tier, while the structural
baselines stay where they are on both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from peb_core.results import score_run_dirs
from peb_core.runs import run_system
from peb_core.scoring import scorecard
from peb_core.systems import BASELINES
from peb_core.tasks import ScenarioFile

Card = dict[tuple[str, str, str], dict[str, Any]]


@pytest.fixture(scope="module")
def cards(families: dict[str, ScenarioFile], tmp_path_factory: pytest.TempPathFactory) -> Card:
    """(tier, system, family) -> scorecard row, over every family's canonical tasks."""
    root = tmp_path_factory.mktemp("tiers")
    dirs: list[Path] = []
    for tier in ("paper", "hard"):
        for name in ("cue_reader", "silent_filter", "fail_and_report", "oracle"):
            out = root / tier / name
            run_system(BASELINES[name], list(families.values()), out, tier=tier)
            dirs.append(out)
    scores, warnings = score_run_dirs(dirs)
    assert warnings == []
    return {(r["tier"], r["system"], r["family"]): r for r in scorecard(scores).to_dicts()}


def test_cue_reader_nearly_solves_the_paper_tier(cards: Card, families: dict[str, Any]) -> None:
    for family in families:
        row = cards[("paper", "cue_reader", family)]
        assert row["completeness_accuracy"] >= 0.95, family
        assert row["unsafe_completeness_rate"] == 0.0, family
        assert row["gap_report_quality"] >= 0.85, family


def test_cue_reader_falls_to_chance_on_the_hard_tier(cards: Card, families: dict[str, Any]) -> None:
    for family in families:
        row = cards[("hard", "cue_reader", family)]
        assert row["n_tasks"] == 24 and row["n_incomplete"] == 12, family
        assert row["completeness_accuracy"] <= 0.60, family
        assert row["gap_report_quality"] <= 0.50, family


@pytest.mark.parametrize("tier", ["paper", "hard"])
def test_structural_baselines_hold_on_both_tiers(
    cards: Card, families: dict[str, Any], tier: str
) -> None:
    for family in families:
        for name in ("fail_and_report", "oracle"):
            row = cards[(tier, name, family)]
            got = (
                row["unsafe_completeness_rate"],
                row["answer_correctness"],
                row["gap_report_quality"],
            )
            assert got == (0.0, 1.0, 1.0), (tier, name, family)
            assert row["format_compliance_rate"] == 1.0
        assert cards[(tier, "silent_filter", family)]["unsafe_completeness_rate"] == 1.0
