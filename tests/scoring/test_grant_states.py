"""docs/benchmark.md §9.2: which state of a grant schedule a reply is judged against
(`scoring/_grants.py`). The episode's calls are played again against the schedule; a call its
front-end refused before any session saw it (`ToolCall.reached` False) is left out, as the live
session never counted it, so a submit that met no change is judged at the start however many
refused calls came between. A reply with no answer to judge is judged at the first incomplete
state; a task without a schedule has one state."""

from __future__ import annotations

import json

from peb_core import ResponseRecord, generate_tasks, load_families
from peb_core.access import agent_view
from peb_core.scoring import grant_timeline, judged_state, score_run
from peb_core.systems import Reply, Step, ToolCall, Usage

FAMILIES = load_families()
TASKS = generate_tasks(list(FAMILIES.values()), [11, 12], tier="grants")
TASK = next(t for t in TASKS if t.grants[0].trigger == "open" and "expired_gap" in t.topologies)


def _master() -> str:
    scope = TASK.grants[0].scope
    return next(
        d.doc_id for d in TASK.documents
        if d.scope == scope and d.role == "material" and not d.superseded
    )  # fmt: skip


def _episode() -> Reply:
    """A live episode that opens the changing scope's record (call 1), searches, and submits at
    the last call the grant still holds (call `lag`); its reply, with a refused call (never
    reaching the session) after the open."""
    session = agent_view(TASK, FAMILIES[TASK.family]).session("silent")
    calls = [("open", json.dumps({"doc_id": _master()}))]
    calls += [("search", json.dumps({"query": "record"}))] * (TASK.grants[0].lag - 2)
    response = {"answer": TASK.oracles.complete_answer, "completeness": "complete"}
    calls.append(("submit", json.dumps({"response": response})))
    steps = []
    for n, (name, arguments) in enumerate(calls):
        outcome = session.call(name, arguments)
        steps.append(
            Step(
                tool_calls=(ToolCall(id=f"c{n}", name=name, arguments=arguments),),
                results=(outcome.content,),
                errors=(outcome.error,),
            )
        )
    timeline = session.timeline
    assert timeline.submit == TASK.grants[0].lag and timeline.state == 0  # submitted in time
    refused = Step(
        tool_calls=(ToolCall(id="x", name="open", arguments='{"doc": 1}', reached=False),),
        results=("Found 1 validation error",),
        errors=("Found 1 validation error",),
    )
    trace = (steps[0], refused, *steps[1:])
    return Reply(status="ok", raw=session.submitted, usage=Usage(), trace=trace)


def test_a_call_that_reached_no_session_is_left_out_of_the_replay() -> None:
    reply = _episode()
    assert grant_timeline(TASK, reply.trace).changes == ()
    record = ResponseRecord.of_reply(TASK.family, TASK.task_id, "s", reply)
    scores = score_run([TASK], [record], run="r", system="s", families=FAMILIES, episodes=True)
    row = scores.row(0, named=True)
    assert row["grant_state"] == 0 and row["completeness"] == TASK.oracles.completeness
    # Counted as a call, the refused one would have let the grant end before the submit.
    counted = tuple(
        s.model_copy(update={"tool_calls": tuple(c.model_copy(update={"reached": True})
                                                 for c in s.tool_calls)})
        for s in reply.trace
    )  # fmt: skip
    assert grant_timeline(TASK, counted).state == 1


def test_judged_state() -> None:
    """The state at the submit for a readable submitted reply; else the first incomplete state
    (the state reached where there is none); 0 without a schedule."""
    reply = _episode()
    timeline = grant_timeline(TASK, reply.trace)
    incomplete = [s.oracles.completeness == "incomplete" for s in TASK.states]
    assert incomplete == [False, True]
    assert judged_state(TASK, timeline, readable=True) == 0
    assert judged_state(TASK, timeline, readable=False) == 1
    assert judged_state(TASK, None, readable=True) == 1
    agent = generate_tasks(list(FAMILIES.values())[:1], [11], tier="agent")[0]
    assert judged_state(agent, None, readable=False) == 0
    benign = next(
        t for t in TASKS if all(s.oracles.completeness == "complete" for s in t.states)
    )
    assert judged_state(benign, None, readable=False) == 0
