"""The explicit-signal reader: it finds exactly the stated signals the generator wrote, by the
phrasings the family file declares, and decides as most training views with the same signals."""

from __future__ import annotations

import pytest

from peb_core.audit import SIGNALS, SignalReader, SignalRule
from peb_core.tasks import ScenarioFile, Task, generate_tasks, model_view

SEEDS = [11, 23, 37, 53, *range(5_000, 5_012)]


def _stated(spec: ScenarioFile, tier: str) -> list[tuple[dict[str, bool], Task]]:
    reader = SignalReader.of(spec)
    return [
        (dict(zip(SIGNALS, reader.read(model_view(t, spec)), strict=True)), t)
        for t in generate_tasks([spec], SEEDS, tier=tier)
    ]


def test_on_the_paper_tier_the_tracker_states_the_boundary(
    families: dict[str, ScenarioFile],
) -> None:
    for spec in families.values():
        for signals, task in _stated(spec, "paper"):
            incomplete = task.oracles.completeness == "incomplete"
            assert signals == {
                "excluded": incomplete,
                "included": not incomplete,
                "superseded_by": False,
                "supersedes": False,
            }, task.task_id


def test_on_the_hard_tier_each_signal_is_found_where_the_generator_wrote_it(
    families: dict[str, ScenarioFile],
) -> None:
    seen = dict.fromkeys(SIGNALS, 0)
    for spec in families.values():
        assert spec.hard is not None
        for signals, task in _stated(spec, "hard"):
            topologies = task.topologies
            (tracker,) = [d for d in task.documents if d.role == "tracker"]
            neutral = any(n in tracker.body for n in spec.hard.neutral)
            # An out-of-date copy says so when it holds a sentence more than its master (the
            # same text and stamp phrasing, at another version and date).
            masters = {d.evidence_family: d for d in task.hidden_documents}
            said = any(
                d.body.count(".") > masters[d.evidence_family].body.count(".")
                for d in task.documents
                if d.superseded
            )
            assert signals["excluded"] == (not neutral), task.task_id
            assert not signals["included"]
            assert signals["supersedes"] == ("decoy_supersession" in topologies)
            assert signals["superseded_by"] == said
            if "named_gap" in topologies:
                assert signals["excluded"] or signals["superseded_by"]
            for name, present in signals.items():
                seen[name] += present
    assert seen["excluded"] and seen["superseded_by"] and seen["supersedes"]


def test_the_rule_answers_the_majority_of_each_combination() -> None:
    a, b, c = (True, False), (False, True), (False, False)
    rule = SignalRule.fit(
        [a, a, a, b, b, c, c],
        ["incomplete", "incomplete", "complete", "complete", "complete", "complete", "incomplete"],
    )
    assert rule.default == "complete"  # 4 complete, 3 incomplete
    assert rule.predict([a, b, c, (True, True)]) == [
        "incomplete",
        "complete",
        "complete",  # a tie: the commoner class overall
        "complete",  # never seen: the same
    ]


def test_a_view_of_another_family_is_refused(families: dict[str, ScenarioFile]) -> None:
    first, second = list(families.values())[:2]
    task = generate_tasks([second], [11])[0]
    with pytest.raises(ValueError, match="read as"):
        SignalReader.of(first).read(model_view(task, second))
