"""The answer facts imply (docs/benchmark.md §1), written independently of
`peb_core.tasks.fold_answer`: per ordinal field the latest vocabulary value contributed (else the
first), per set field the contributed values in vocabulary order. A fact retracted by another
fact among them counts for nothing. For the tests that check the oracles, and the readers built
on a task's facts. Also the responses scripted agents submit: a careful one's and a lazy one's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from peb_core import Fact, ScenarioFile
from peb_core.tasks import Task


def implied_answer(spec: ScenarioFile, facts: Iterable[Fact]) -> dict[str, object]:
    facts = list(facts)
    contributed: dict[str, set[str]] = {name: set() for name in spec.answer}
    retracted = {r for f in facts for r in f.retracts}
    for fact in facts:
        if fact.id not in retracted:
            for name, values in fact.effects.items():
                contributed[name] |= set(values)
    answer: dict[str, object] = {}
    for name, field in spec.answer.items():
        present = [v for v in field.values if v in contributed[name]]
        if field.kind == "ordinal":
            answer[name] = max(present, key=field.values.index) if present else field.values[0]
        else:
            answer[name] = present
    return answer


def careful(task: Task) -> dict[str, Any]:
    """The response a careful agent gives: the oracle's (incomplete with its gap report, the
    authorized answer only where a partial answer is permitted)."""
    o = task.oracles
    if o.completeness == "complete":
        return {"answer": o.complete_answer, "completeness": "complete", "gap_report": None}
    assert o.gap_report is not None
    partial = task.contract.partial_response_permitted
    return {
        "answer": o.authorized_answer if partial else None,
        "completeness": "incomplete",
        "gap_report": o.gap_report.model_dump(),
    }


def lazy(task: Task) -> dict[str, Any]:
    """What an agent that answers from what it found and claims complete gives."""
    return {"answer": task.oracles.authorized_answer, "completeness": "complete",
            "gap_report": None}  # fmt: skip


def required_records(task: Task) -> list[str]:
    """The ids of the current records of required evidence the user may open: what a careful
    agent opens."""
    required = {r.id for r in task.contract.required_evidence}
    return [
        d.doc_id
        for d in task.authorized_documents
        if d.evidence_family in required and not d.superseded
    ]
