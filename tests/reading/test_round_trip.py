"""A response said in words reads back as that response (docs/benchmark.md §2.1): for every
canonical task of every tier (paper, hard, agent, delegation, grants), the careful response
(complete: the complete answer; incomplete: the oracle's gap report, with the authorized answer
where a partial answer is permitted, else a block) said by `reading.say_response`, as the chat
baselines say it, is read by the prose reader as exactly that answer (a block None; each field,
a set field `[]` where empty), completeness, gaps (requirement and scope ids) and affected
claims. A reader that drops a field, a gap or a claim of the words it is given fails here."""

from __future__ import annotations

from typing import Any

import pytest

from peb_core.reading import read_prose, say_response
from peb_core.tasks import TIERS, Answer, ScenarioFile, Task, generate_tasks, load_families

FAMILIES = load_families()


def _careful(task: Task) -> tuple[Answer | None, str]:
    """The careful response's answer (None: a block) and completeness."""
    oracles = task.oracles
    if oracles.completeness == "complete":
        return oracles.complete_answer, "complete"
    if task.contract.partial_response_permitted:
        return oracles.authorized_answer, "incomplete"
    return None, "incomplete"


def _in_order(answer: Answer, spec: ScenarioFile) -> dict[str, Any]:
    return {
        name: value
        if isinstance(value, str)
        else [v for v in spec.answer[name].values if v in value]
        for name, value in answer.items()
    }


def _misread(task: Task, with_task: bool) -> list[str]:
    """Where the reading of the careful response to `task`, said in words, differs from it."""
    spec = FAMILIES[task.family]
    answer, completeness = _careful(task)
    gap = task.oracles.gap_report
    text = say_response(answer, completeness, gap, spec)
    reading = read_prose(text, spec, task=task if with_task else None)
    requirements = gap.missing_requirements if gap else []
    scopes = gap.missing_scopes if gap else []
    affected = gap.affected_claims if gap else []
    want = {  # ids in the family's order, as the reader gives them
        "answer": None if answer is None else _in_order(answer, spec),
        "completeness": completeness,
        "gaps": (
            *(e.id for e in spec.evidence_families if e.id in requirements),
            *(s for s in spec.scopes if s in scopes),
        ),
        "affected": tuple(f for f in spec.answer if f in affected),
    }
    got = {
        "answer": reading.answer,
        "completeness": reading.completeness,
        "gaps": reading.gaps,
        "affected": reading.affected,
    }
    return [
        f"{task.family}/{task.task_id}: {key} read {got[key]!r}, said {want[key]!r}\n{text}"
        for key in want
        if got[key] != want[key]
    ]


@pytest.mark.parametrize("tier", list(TIERS))
def test_every_canonical_careful_response_said_in_words_reads_back_exactly(tier: str) -> None:
    tasks = generate_tasks(FAMILIES.values(), tier=tier)
    kinds = {(t.oracles.completeness, t.contract.partial_response_permitted) for t in tasks}
    assert ("complete", True) in kinds or ("complete", False) in kinds
    assert ("incomplete", True) in kinds and ("incomplete", False) in kinds
    wrong = [w for task in tasks for with_task in (True, False) for w in _misread(task, with_task)]
    assert not wrong, f"{len(wrong)} misread, the first:\n" + "\n\n".join(wrong[:3])


def test_a_misread_response_is_caught() -> None:
    """The check itself can fail: a response said with a field left out reads back without it."""
    task = next(
        t
        for t in generate_tasks([FAMILIES["security_incident_v1"]], tier="paper")
        if t.oracles.completeness == "complete"
    )
    spec = FAMILIES[task.family]
    said = say_response(task.oracles.complete_answer, "complete", None, spec)
    cut = "\n".join(line for line in said.splitlines() if not line.startswith("- Severity"))
    assert read_prose(cut, spec).answer != _in_order(task.oracles.complete_answer, spec)
