"""docs/benchmark.md §9.2: grants judged at the submit, through the `agent:<model>` loop against
the scripted tool-calling server (tests/scripted_server.py). A scripted agent that batches its
calls (a search; two searches in one turn; six opens in one turn; the submit, at call 10) runs
every canonical grants task in every disclosure mode. Whether its episode reached the task's
change before the submit is worked out here from the spec's words alone (an ending grant ends
`lag` calls after the first open in its scope; a late grant arrives at call `lag`, or with the
first search whose best matches over the whole corpus hold a document of its scope): no reply
is judged against a change its episode did not reach, and each is judged against the state it
did reach. Under `named` the result of the call at which the change took effect announces it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from answers import careful
from scripted_server import ScriptedServer, Step, replies_so_far, tool_step

from peb_core import ResponseRecord, Task, generate_tasks, load_families
from peb_core.access import DISCLOSURES, agent_view, task_index
from peb_core.scoring import score_run
from peb_core.systems import AgentSystem

FAMILIES = load_families()
TASKS = generate_tasks(list(FAMILIES.values()), tier="grants")
SUBMIT_CALL = 10


def _plan(task: Task) -> list[Step]:
    """The batching agent's replies on `task`: the request searched (call 1), two of the
    contract's descriptions in one turn (calls 2-3), six opens in one turn (calls 4-9), among
    them the current record kept in the scope the schedule changes at a place that varies with
    the task, then the submit (call 10) of the careful response for the start."""
    scope = task.grants[0].scope
    master = next(
        d.doc_id for d in task.documents
        if d.scope == scope and d.role == "material" and not d.superseded
    )  # fmt: skip
    others = [d.doc_id for d in task.documents if d.scope in task.user_scopes and d.scope != scope]
    place = (task.seed + len(task.template)) % 6
    opens = [*others[:place], master, *others[place:5]]
    descriptions = [r.description for r in task.contract.required_evidence[:2]]
    return [
        tool_step(("search", {"query": task.prompt, "k": 10})),
        tool_step(*(("search", {"query": d, "k": 10}) for d in descriptions)),
        tool_step(*(("open", {"doc_id": d}) for d in opens)),
        tool_step(("submit", {"response": careful(task.in_state(0))})),
    ]


def _reached(task: Task, plan: list[Step]) -> int | None:
    """The call (from 1) from which the task's change held in an episode of `plan`, by the
    spec (None: not before the submit)."""
    change = task.grants[0]
    calls = [(name, json.loads(a)) for step in plan for name, a in step.calls]
    assert len(calls) == SUBMIT_CALL and calls[-1][0] == "submit"
    index = task_index(task)
    scope_of = {d.doc_id: d.scope for d in task.documents}
    set_going = 0 if change.trigger == "start" else None
    for n, (name, args) in enumerate(calls, start=1):
        if set_going is None and change.trigger == "open" and name == "open":
            set_going = n if scope_of[args["doc_id"]] == change.scope else None
        if set_going is None and change.trigger == "search" and name == "search":
            everything = np.ones(len(index.documents), dtype=bool)
            best = index.rank(args["query"], everything, args["k"]).visible
            set_going = n if any(index.documents[p].scope == change.scope for p in best) else None
        if set_going is not None and set_going + change.lag <= n:
            return n
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


def _episode(server: ScriptedServer, tmp: Path, task: Task, mode: str) -> ResponseRecord:
    plan = _plan(task)

    def route(body: dict[str, Any]) -> Step:
        return plan[min(replies_so_far(body), len(plan) - 1)]

    server.script.route = route
    system = AgentSystem(
        model="openai/scripted",
        families=[FAMILIES[task.family]],
        api_base=server.url,
        timeout_s=5.0,
        retries=1,
        backoff_s=0.01,
        cache_folder=tmp / "cache",
        disclosure=mode,
    )
    reply = asyncio.run(system.respond(agent_view(task, FAMILIES[task.family])))
    assert reply.status == "ok" and [len(s.tool_calls) for s in reply.trace] == [1, 2, 6, 1]
    return ResponseRecord.of_reply(task.family, task.task_id, "batching", reply)


@pytest.mark.parametrize("mode", list(DISCLOSURES))
def test_a_batching_agent_is_judged_on_the_state_its_submit_met(
    server: ScriptedServer, tmp_path: Path, mode: str
) -> None:
    server.script.keep_bodies = False
    records = [_episode(server, tmp_path, task, mode) for task in TASKS]
    scores = score_run(TASKS, records, run="r", system="s", families=FAMILIES, episodes=True)
    rows = {r["task_id"]: r for r in scores.iter_rows(named=True)}
    reached = {"before": 0, "after": 0}
    for task, record in zip(TASKS, records, strict=True):
        at = _reached(task, _plan(task))
        state = 0 if at is None else 1
        row = rows[task.task_id]
        assert row["grant_state"] == state, (task.task_id, at)
        assert row["completeness"] == task.states[state].oracles.completeness
        reached["after" if at is not None else "before"] += 1
        if at is None:  # judged on the state it saw: the start's careful response is right
            assert (row["unsafe"], row["answer_score"], row["gap_score"]) == (False, 1.0, 1.0)
        results = [r for step in record.trace for r in step.results]
        noticed = [n for n, r in enumerate(results, start=1) if "grants" in json.loads(r)]
        assert noticed == ([at] if at is not None and mode == "named" else [])
    # Both kinds of episode are here: some met the change before their submit, some did not
    # (among them ending grants that end only after call 10, as in the episode).
    assert reached["before"] >= 20 and reached["after"] >= 20, reached
