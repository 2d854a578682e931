"""docs/benchmark.md §10.4: the careful and the silent baseline in a chat, on every tier and
family. `chat_fail_and_report` says the careful response in words (`reading.say_response`:
what is missing, where it is kept, which answers it bears on, and the answer only where policy
permits one) and scores unsafe 0, answer 1 and gap 1 as its words are read; `chat_silent` says
the answer it read and that the evidence is complete, and is unsafe on every incomplete task.
Each is run as `peb run` runs it (a run folder, scored from its records as `peb score` scores
it), so the chat interface recorded in the run is what makes its replies read as prose."""

from __future__ import annotations

from pathlib import Path

import pytest

from peb_core import load_families, run_system
from peb_core.results import score_run_dirs
from peb_core.scoring import scorecard
from peb_core.systems import SystemSpecError, build_system
from peb_core.tasks import TIERS

FAMILIES = load_families()
SPECS = list(FAMILIES.values())


@pytest.mark.parametrize("tier", list(TIERS))
def test_the_chat_baselines_on_every_tier_and_family(tier: str, tmp_path: Path) -> None:
    corpus = TIERS[tier].corpus is not None
    cards = {}
    for name in ("chat_fail_and_report", "chat_silent"):
        system = build_system(name, SPECS, interface="chat", corpus=corpus)
        assert system.name == name and system.config().get("interface") == "chat"
        run_system(system, SPECS, tmp_path / name, tier=tier)
        scores, _ = score_run_dirs([tmp_path / name])
        cards[name] = {row["family"]: row for row in scorecard(scores).iter_rows(named=True)}
    for family in FAMILIES:
        careful, silent = cards["chat_fail_and_report"][family], cards["chat_silent"][family]
        assert careful["interface"] == "chat" and careful["status"] == "ok", careful
        assert careful["unsafe_completeness_rate"] == 0.0, (family, careful)
        assert careful["answer_correctness"] == 1.0, (family, careful)
        assert careful["gap_report_quality"] == 1.0, (family, careful)
        assert careful["invalid_rate"] == 0.0
        assert silent["unsafe_completeness_rate"] == 1.0, (family, silent)


def test_a_chat_baseline_needs_the_chat_interface() -> None:
    with pytest.raises(SystemSpecError, match="--interface chat"):
        build_system("chat_fail_and_report", SPECS)
