"""docs/benchmark.md §9 (grant schedules): the access session applies a task's grant schedule
call by call. Before an ending grant's step its scope's documents are found and opened; from
that call on searches stop returning them and opening one reads as the disclosure mode says of
a hidden document; a late grant works the other way round. Under `named` the first result from
that call on announces the change (a typed `GrantNotice`), under `silent` and `counted` nothing
does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from peb_core import Task, generate_tasks, load_families
from peb_core.access import DISCLOSURES, NOT_FOUND, AgentSession, GrantNotice, agent_view

FAMILIES = load_families()
TASKS = generate_tasks(list(FAMILIES.values()), [11, 12, 13, 14, 15, 16], tier="grants")


def _task(change: str) -> Task:
    return next(t for t in TASKS if t.grants[0].change == change and set(t.topologies)
                & {"expired_gap", "late_cover"})  # fmt: skip


def _master(task: Task) -> str:
    """The current record kept in the scope the schedule changes."""
    scope = task.grants[0].scope
    return next(
        d.doc_id for d in task.documents
        if (d.scope == scope and d.role == "material" and not d.superseded and d.facts)
        or (d.scope == scope and d.role == "material" and not d.superseded)
    )  # fmt: skip


def _call(session: AgentSession, name: str, **arguments: Any) -> dict[str, Any]:
    parsed = json.loads(session.call(name, json.dumps(arguments)).content)
    assert isinstance(parsed, dict)
    return parsed


def _ref(task: Task, doc_id: str) -> str:
    body = next(d.body for d in task.documents if d.doc_id == doc_id)
    return body[1:8]


@pytest.mark.parametrize("change", ["expires", "revoked"])
@pytest.mark.parametrize("mode", list(DISCLOSURES))
def test_an_ending_grant_takes_its_documents_away_at_its_step(change: str, mode: str) -> None:
    task = _task(change)
    step, scope = task.grants[0].step, task.grants[0].scope
    master = _master(task)
    session = agent_view(task, FAMILIES[task.family]).session(mode)
    assert scope in session.scopes
    hits = _call(session, "search", query=_ref(task, master), k=50)["hits"]
    assert master in [h["doc_id"] for h in hits]
    opened = _call(session, "open", doc_id=master)
    assert opened["document"]["scope"] == scope and "grants" not in opened
    while session.calls < step - 2:
        assert "grants" not in _call(session, "open", doc_id=master)
    last = _call(session, "open", doc_id=master)  # call step - 1: the grant still holds
    assert "document" in last and session.calls == step - 1
    after = _call(session, "open", doc_id=master)  # call `step`: it has ended
    assert scope not in session.scopes and "document" not in after
    denial = DISCLOSURES[mode].denial(scope)
    assert after["error"] == f"open: {denial}"
    if mode == "named":
        (notice,) = (GrantNotice.model_validate(n) for n in after["grants"])
        assert (notice.scope, notice.step, notice.change) == (scope, step, change)
        assert scope in notice.notice and str(step) in notice.notice
    else:
        assert "grants" not in after
        if mode == "silent":
            assert after["error"] == f"open: {NOT_FOUND}"
    again = _call(session, "search", query=_ref(task, master), k=50)
    assert master not in [h["doc_id"] for h in again["hits"]]
    assert "grants" not in again  # announced once


@pytest.mark.parametrize("mode", list(DISCLOSURES))
def test_a_late_grant_brings_its_documents_at_its_step(mode: str) -> None:
    task = _task("granted")
    step, scope = task.grants[0].step, task.grants[0].scope
    master = _master(task)
    session = agent_view(task, FAMILIES[task.family]).session(mode)
    assert scope not in session.scopes
    while session.calls < step - 1:
        before = _call(session, "open", doc_id=master)
        assert "document" not in before and "grants" not in before
    result = _call(session, "search", query=_ref(task, master), k=50)
    assert master in [h["doc_id"] for h in result["hits"]]
    assert ("grants" in result) == (mode == "named")
    assert _call(session, "open", doc_id=master)["document"]["doc_id"] == master
    assert session.scopes == task.user_scopes


def test_the_submit_result_carries_a_notice_due_at_it() -> None:
    task = _task("expires")
    session = agent_view(task, FAMILIES[task.family]).session("named")
    while session.calls < task.grants[0].step - 1:
        _call(session, "search", query="record")
    submitted = _call(session, "submit", response={"answer": None, "completeness": "complete"})
    assert submitted["submitted"] is True
    assert submitted["grants"][0]["scope"] == task.grants[0].scope
