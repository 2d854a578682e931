"""docs/benchmark.md §9.2 (grant schedules): the access session applies a task's grant schedule
call by call, each change set going by what the episode does. An ending grant holds until the
episode first opens a document in its scope, then for `lag - 1` more calls, and is gone from
the `lag`-th call after that open; a late grant arrives at call `lag` (set going at the start)
or with the first search whose best matches over the whole corpus hold a document of its scope,
that search answered under it. Under `named` the result of the call at which a change takes
effect announces it (a typed `GrantNotice`), under `silent` and `counted` nothing does. The
session's timeline is what a replay of its calls gives, and what a model of the rules written
here from the spec gives, for any calls."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peb_core import Task, generate_tasks, load_families
from peb_core.access import (
    DISCLOSURES,
    NOT_FOUND,
    AgentSession,
    GrantNotice,
    agent_view,
    replay_grants,
    task_index,
)

FAMILIES = load_families()
TASKS = generate_tasks(list(FAMILIES.values()), [11, 12, 13, 14, 15, 16], tier="grants")


def _task(change: str, trigger: str) -> Task:
    return next(
        t for t in TASKS
        if (t.grants[0].change, t.grants[0].trigger) == (change, trigger)
        and set(t.topologies) & {"expired_gap", "late_cover"}
    )  # fmt: skip


def _master(task: Task) -> str:
    """The current material record kept in the scope the schedule changes."""
    scope = task.grants[0].scope
    return next(
        d.doc_id for d in task.documents
        if d.scope == scope and d.role == "material" and not d.superseded
    )  # fmt: skip


def _other(task: Task) -> str:
    """A document the user holds throughout, in another scope."""
    scope = task.grants[0].scope
    held = [d for d in task.documents if d.scope in task.user_scopes and d.scope != scope]
    return held[0].doc_id


def _call(session: AgentSession, name: str, **arguments: Any) -> dict[str, Any]:
    parsed = json.loads(session.call(name, json.dumps(arguments)).content)
    assert isinstance(parsed, dict)
    return parsed


def _ref(task: Task, doc_id: str) -> str:
    body = next(d.body for d in task.documents if d.doc_id == doc_id)
    return body[1:8]


@pytest.mark.parametrize("change", ["expires", "revoked"])
@pytest.mark.parametrize("mode", list(DISCLOSURES))
def test_an_ending_grant_ends_lag_calls_after_the_first_open_in_its_scope(
    change: str, mode: str
) -> None:
    task = _task(change, "open")
    lag, scope = task.grants[0].lag, task.grants[0].scope
    master = _master(task)
    session = agent_view(task, FAMILIES[task.family]).session(mode)
    assert scope in session.scopes
    # Searches, opens elsewhere and malformed opens set nothing going, however many.
    for _ in range(20):
        hits = _call(session, "search", query=_ref(task, master), k=50)["hits"]
        assert master in [h["doc_id"] for h in hits] and "grants" not in hits
        assert "document" in _call(session, "open", doc_id=_other(task))
        assert "error" in _call(session, "open", doc=master)
    assert scope in session.scopes and not session.timeline.changes
    opened = _call(session, "open", doc_id=master)  # call t: sets the end going
    t = session.calls
    assert opened["document"]["scope"] == scope and "grants" not in opened
    while session.calls < t + lag - 1:  # answered under the grant
        assert "document" in _call(session, "open", doc_id=master)
    after = _call(session, "open", doc_id=master)  # call t + lag: it has ended
    assert session.calls == t + lag and scope not in session.scopes
    assert "document" not in after
    assert after["error"] == f"open: {DISCLOSURES[mode].denial(scope)}"
    if mode == "named":
        (notice,) = (GrantNotice.model_validate(n) for n in after["grants"])
        assert (notice.scope, notice.step, notice.change) == (scope, t + lag, change)
        assert scope in notice.notice and str(t + lag) in notice.notice
    else:
        assert "grants" not in after
        if mode == "silent":
            assert after["error"] == f"open: {NOT_FOUND}"
    again = _call(session, "search", query=_ref(task, master), k=50)
    assert master not in [h["doc_id"] for h in again["hits"]]
    assert "grants" not in again  # announced once
    assert [(at, c.scope) for at, c in session.timeline.changes] == [(t + lag, scope)]


@pytest.mark.parametrize("mode", list(DISCLOSURES))
def test_a_late_grant_set_going_at_the_start_arrives_at_call_lag(mode: str) -> None:
    task = _task("granted", "start")
    lag, scope = task.grants[0].lag, task.grants[0].scope
    master = _master(task)
    session = agent_view(task, FAMILIES[task.family]).session(mode)
    assert scope not in session.scopes
    while session.calls < lag - 1:
        before = _call(session, "open", doc_id=master)
        assert "document" not in before and "grants" not in before
    result = _call(session, "search", query=_ref(task, master), k=50)
    assert session.calls == lag and master in [h["doc_id"] for h in result["hits"]]
    assert ("grants" in result) == (mode == "named")
    assert _call(session, "open", doc_id=master)["document"]["doc_id"] == master
    assert set(session.scopes) == set(task.states[1].user_scopes)


@pytest.mark.parametrize("mode", list(DISCLOSURES))
def test_a_late_grant_set_going_by_a_search_answers_that_search(mode: str) -> None:
    task = _task("granted", "search")
    scope = task.grants[0].scope
    master = _master(task)
    session = agent_view(task, FAMILIES[task.family]).session(mode)
    # Opens of the scope's documents (hidden) and searches that find none of them set nothing
    # going, however many.
    for _ in range(10):
        assert "document" not in _call(session, "open", doc_id=master)
        assert "grants" not in _call(session, "search", query="zzzz nothing matches", k=50)
    assert scope not in session.scopes
    result = _call(session, "search", query=_ref(task, master), k=50)
    assert master in [h["doc_id"] for h in result["hits"]]  # answered under the new grant
    assert ("grants" in result) == (mode == "named")
    if mode == "named":
        assert result["grants"][0]["step"] == session.calls == 21
    assert [at for at, _ in session.timeline.changes] == [21]


def test_the_submit_result_carries_a_notice_due_at_it() -> None:
    task = _task("expires", "open")
    session = agent_view(task, FAMILIES[task.family]).session("named")
    _call(session, "open", doc_id=_master(task))
    while session.calls < task.grants[0].lag:
        _call(session, "search", query="record")
    submitted = _call(session, "submit", response={"answer": None, "completeness": "complete"})
    assert submitted["submitted"] is True
    assert submitted["grants"][0]["scope"] == task.grants[0].scope
    timeline = session.timeline
    assert timeline.submit == timeline.calls == task.grants[0].lag + 1 and timeline.state == 1


# The rules, written again from docs/benchmark.md §9.2, to check the session against.


def _modelled_changes(task: Task, calls: list[tuple[str, str]]) -> list[int]:
    """The calls (from 1) at which the schedule's changes take effect, by the spec's words."""
    index = task_index(task)
    scopes = set(task.user_scopes)
    found: list[int] = []
    set_going: int | None = 0 if task.grants[0].trigger == "start" else None
    submitted = False
    for n, (name, text) in enumerate(calls, start=1):
        if len(found) == len(task.grants):
            break
        change = task.grants[len(found)]
        try:
            args = json.loads(text)
        except ValueError:
            args = None
        valid = isinstance(args, dict) and not submitted
        if set_going is None and valid and name == "open" and change.trigger == "open":
            doc_id = args.get("doc_id")
            wanted = doc_id.strip() if isinstance(doc_id, str) else None
            doc = next((d for d in task.documents if d.doc_id == wanted), None)
            well_formed = set(args) == {"doc_id"} and 0 < len(doc_id) <= 64
            held = doc is not None and doc.scope == change.scope and doc.scope in scopes
            if held and well_formed:
                set_going = n
        if set_going is None and valid and name == "search" and change.trigger == "search":
            query, k = args.get("query"), args.get("k", 10)
            if isinstance(query, str) and 0 < len(query) <= 300 and set(args) <= {"query", "k"} \
                    and type(k) is int and 1 <= k <= 50:  # fmt: skip
                everything = np.ones(len(index.documents), dtype=bool)
                best = index.rank(query, everything, k).visible
                if any(index.documents[p].scope == change.scope for p in best):
                    set_going = n
        if set_going is not None and set_going + change.lag <= n:
            found.append(n)
            if change.ends:
                scopes.discard(change.scope)
            else:
                scopes.add(change.scope)
        if valid and name == "submit" and isinstance(args.get("response"), dict):
            submitted = True
    return found


@st.composite
def episodes(draw: st.DrawFn) -> tuple[Task, list[tuple[str, str]]]:
    task = draw(st.sampled_from(TASKS))
    scope = task.grants[0].scope
    ids = [d.doc_id for d in task.documents]
    in_scope = [d.doc_id for d in task.documents if d.scope == scope]
    words = [_ref(task, i) for i in in_scope] + ["record", "the", task.prompt[:40]]
    call = st.one_of(
        st.builds(lambda d: ("open", json.dumps({"doc_id": d})), st.sampled_from(ids + in_scope)),
        st.builds(lambda d: ("open", json.dumps({"doc_id": f" {d} "})), st.sampled_from(in_scope)),
        st.builds(
            lambda q, k: ("search", json.dumps({"query": q, "k": k})),
            st.sampled_from(words),
            st.integers(0, 51),
        ),
        st.builds(
            lambda q: ("search", json.dumps({"query": q, "extra": 1})), st.sampled_from(words)
        ),
        st.sampled_from([("open", "{not json"), ("search", "[]"), ("delete", "{}")]),
        st.just(("submit", json.dumps({"response": {"answer": None}}))),
    )
    return task, draw(st.lists(call, min_size=1, max_size=14))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(episodes())
def test_the_session_the_replay_and_the_spec_agree(
    case: tuple[Task, list[tuple[str, str]]],
) -> None:
    task, calls = case
    session = agent_view(task, FAMILIES[task.family]).session("named")
    for name, arguments in calls:
        session.call(name, arguments)
    live = session.timeline
    assert replay_grants(task, calls) == live
    assert [at for at, _ in live.changes] == _modelled_changes(task, calls)
    assert set(session.scopes) == set(task.states[live.state_at(live.calls)].user_scopes)
