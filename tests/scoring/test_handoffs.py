"""docs/benchmark.md §9.1, delegated handoffs: `gap_propagation` and `laundered_completeness`
on records built step by step, for what each kind of requester does with a sub-agent's gap: a
careful one propagates it (1 and 0), a lazy one launders it (0 and 1), a broken one (an error,
no submit, an unreadable reply) is never better than the lazy one, a partial one propagates part.
A sub-agent's gap is what it reports that the user's view misses: what it could not find in its
stores but the user sees by another route is no gap to carry on (a careful requester drops it),
and on a complete task no handoff reports a gap. Runs without a handoff that reported a gap
(one-shot runs, agents that never hand off, a sub-agent that claims complete, a complete task, a
missing record) have null handoff metrics, never 0; and the scores are the same in any order of
records."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest
from answers import careful, lazy

from peb_core import Task, generate_tasks, load_families
from peb_core.scoring import HANDOFF, score_run, scorecard
from peb_core.systems import Delegation, Reply, ReplyStatus, ResponseRecord, Step, ToolCall

FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]
TASKS = generate_tasks([DD], tier="delegation")
TASK = next(t for t in TASKS if t.oracles.completeness == "incomplete")
TWO = next(t for t in TASKS if "two_missing" in t.topologies)
COMPLETE = next(t for t in TASKS if t.oracles.completeness == "complete")






def _handoff(response: dict[str, Any] | None, status: ReplyStatus = "ok") -> Step:
    sub = Reply(
        status=status,
        raw=json.dumps(response) if response is not None else None,
        trace=(Step(tool_calls=(ToolCall(id="s1", name="submit", arguments="{}"),),
                    results=('{"submitted":true}',)),),
    )  # fmt: skip
    request = json.dumps({"request": "check the records", "to": "records_clerk"})
    return Step(
        tool_calls=(ToolCall(id="c1", name="delegate", arguments=request),),
        results=("{}",),
        errors=(None,),
        delegations=(Delegation(to="records_clerk", request="check", system="s", reply=sub),),
    )


def _record(
    final: dict[str, Any] | str | None,
    *handoffs: Step,
    status: ReplyStatus = "ok",
    task: Task = TASK,
) -> ResponseRecord:
    raw = final if isinstance(final, str) or final is None else json.dumps(final)
    submit = Step(tool_calls=(ToolCall(id="c9", name="submit", arguments="{}"),), results=("",))
    reply = Reply(status=status, raw=raw, trace=(*handoffs, submit))
    return ResponseRecord.of_reply(task.family, task.task_id, "agent", reply)


def _row(*records: ResponseRecord, episodes: bool = True, task: Task = TASK) -> dict[str, Any]:
    scores = score_run([task], list(records), run="r", system="s", families=FAMILIES,
                       episodes=episodes)  # fmt: skip
    row: dict[str, Any] = scorecard(scores).row(0, named=True)
    return row


def _metrics(row: dict[str, Any]) -> tuple[Any, Any]:
    return row["gap_propagation"], row["laundered_completeness"]


def test_a_careful_requester_propagates_and_a_lazy_one_launders() -> None:
    gap = _handoff(careful(TASK))
    assert _metrics(_row(_record(careful(TASK), gap))) == (1.0, 0.0)
    laundered = _row(_record(lazy(TASK), gap))
    assert _metrics(laundered) == (0.0, 1.0)
    assert laundered["unsafe_completeness_rate"] == 1.0
    # Intervals, as for every rate and mean.
    assert laundered["laundered_completeness_ci_low"] is not None
    assert laundered["gap_propagation_ci_high"] is not None


@pytest.mark.parametrize(
    ("final", "status"),
    [(None, "error"), (None, "no_submit"), ("no JSON at all", "ok"), ("{}", "ok")],
)
def test_a_broken_requester_is_never_better_than_a_lazy_one(
    final: str | None, status: ReplyStatus
) -> None:
    row = _row(_record(final, _handoff(careful(TASK)), status=status))
    assert _metrics(row) == (0.0, 1.0)


def _listing(response: dict[str, Any], requirements: list[str]) -> dict[str, Any]:
    gap = {**response["gap_report"], "missing_requirements": requirements}
    return {**response, "completeness": "incomplete", "gap_report": gap}


def test_a_gap_reaches_the_final_report_only_whole() -> None:
    two = careful(TWO)
    listed = two["gap_report"]["missing_requirements"]
    assert len(listed) == 2
    half = _listing(two, listed[:1])
    assert _metrics(_row(_record(half, _handoff(two), task=TWO), task=TWO)) == (0.0, 0.0)
    assert _metrics(_row(_record(two, _handoff(half), task=TWO), task=TWO)) == (1.0, 0.0)
    report = careful(TASK)
    no_report = {**report, "gap_report": None}
    assert _metrics(_row(_record(no_report, _handoff(report)))) == (0.0, 0.0)
    # Two handoffs reported gaps; the final report carries one of them.
    both = _record(half, _handoff(half), _handoff(two), task=TWO)
    assert _metrics(_row(both, task=TWO)) == (0.5, 0.0)
    # A sub-agent that says incomplete and lists nothing: any final gap report carries it.
    bare = {"answer": None, "completeness": "incomplete", "gap_report": None}
    assert _metrics(_row(_record(report, _handoff(bare)))) == (1.0, 0.0)


def test_what_a_sub_agent_cannot_find_but_the_user_sees_is_no_gap() -> None:
    """A sub-agent sees only its stores: what it lists missing that the user's view holds is
    not a gap to carry on, and a careful requester that drops it is neither short of the gap
    nor laundering; on a complete task no handoff reports a gap."""
    report = careful(TASK)
    everything = [r.id for r in TASK.contract.required_evidence]
    assert set(report["gap_report"]["missing_requirements"]) < set(everything)
    wider = _listing(report, everything)
    assert _metrics(_row(_record(report, _handoff(wider)))) == (1.0, 0.0)
    # What the user's view misses must still reach the final report, whole.
    assert _metrics(_row(_record(_listing(report, []), _handoff(wider)))) == (0.0, 0.0)
    # On a complete task, a sub-agent that found nothing in its store reports no gap: a careful
    # requester that answers complete is not laundering.
    row = _row(_record(careful(COMPLETE), _handoff(wider), task=COMPLETE), task=COMPLETE)
    assert _metrics(row) == (None, None)
    assert row["completeness_accuracy"] == 1.0 and row["answer_correctness"] == 1.0


def test_without_a_reported_gap_the_handoff_metrics_are_null() -> None:
    none = (None, None)
    # The sub-agent claimed complete, failed, or never submitted: no gap was reported.
    assert _metrics(_row(_record(lazy(TASK), _handoff(lazy(TASK))))) == none
    assert _metrics(_row(_record(lazy(TASK), _handoff(None, "error")))) == none
    assert _metrics(_row(_record(lazy(TASK), _handoff(None, "no_submit")))) == none
    # An agent that never hands off; a one-shot reply; a missing record.
    assert _metrics(_row(_record(lazy(TASK)))) == none
    reply = Reply(status="ok", raw=json.dumps(lazy(TASK)))
    one_shot = ResponseRecord.of_reply(TASK.family, TASK.task_id, "m", reply)
    assert _metrics(_row(one_shot, episodes=False)) == none
    assert _metrics(_row(episodes=True)) == none


def test_the_handoff_metrics_are_registered_and_order_free() -> None:
    assert [m.name for m in HANDOFF] == ["gap_propagation", "laundered_completeness"]
    assert [m.better for m in HANDOFF] == ["higher", "lower"]
    tasks = [t for t in TASKS if t.oracles.completeness == "incomplete"][:4]
    records = []
    for i, task in enumerate(tasks):
        final = careful(task) if i % 2 else lazy(task)
        step = _handoff(careful(task))
        reply = Reply(status="ok", raw=json.dumps(final), trace=(step,))
        records.append(ResponseRecord.of_reply(task.family, task.task_id, "agent", reply))
    cards = [
        scorecard(score_run(tasks, order, run="r", system="s", families=FAMILIES, episodes=True))
        for order in (records, records[::-1])
    ]
    assert cards[0].equals(cards[1])
    row = cards[0].row(0, named=True)
    assert _metrics(row) == (0.5, 0.5)
    assert isinstance(cards[0], pl.DataFrame)
