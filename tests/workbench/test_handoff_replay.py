"""A delegated episode in the workbench's replay (docs/benchmark.md §9.1): each `delegate`
step carries its sub-episode, replayed as any episode in the stores its sub-agent owns under the
scopes it ran with (the user's it holds too), with what it reported missing and whether that
reached the final report. Real run folders of the shipped delegation baselines
(`agent_propagate` relays its records clerk's gap, `agent_launder` drops it), and a requester
handing off to the analyst, whose mailbox holds no current record of the contract, through the
real session."""

from __future__ import annotations

import asyncio
import html
from typing import Any

import polars as pl
import pytest

from peb_core.access import agent_view
from peb_core.frontends.workbench import (
    Replay,
    episode_replay,
    handoff_line,
    handoffs_at,
    markdown_code,
    replay_of,
    replay_view,
    run_example,
    step_calls,
    step_table,
)
from peb_core.results import HANDOFFS_SCHEMA, handoff_frame
from peb_core.runs import run_system
from peb_core.systems import BASELINES, AgentBaseline, Response, ResponseRecord
from peb_core.tasks import MAILBOX, RECORDS, Task, generate_tasks, load_families

SPEC = load_families()["due_diligence_v1"]
TASKS = generate_tasks([SPEC], [11], tier="delegation")
INCOMPLETE = next(t for t in TASKS if t.oracles.completeness == "incomplete")


def _text(element: object) -> str:
    return html.unescape(str(element.text))  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Replay]:
    """The worked example's replay of an incomplete task in a real run of each requester."""
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for name in ("agent_propagate", "agent_launder"):
        run_system(BASELINES[name], [SPEC], root / name, seeds=[11], tier="delegation")
        example = run_example(root / name, name, SPEC.id, INCOMPLETE.task_id)
        replay = episode_replay(example)
        assert replay is not None
        made[name] = replay
    return made


def _missing(task: Task, scopes: set[str], stores: tuple[str, ...] = ()) -> set[str]:
    """The requirements with no current record under `scopes` (in `stores`: none, every store)."""
    return {
        r.id
        for r in task.contract.required_evidence
        if not any(
            d.evidence_family == r.id
            and not d.superseded
            and d.scope in scopes
            and (not stores or d.store in stores)
            for d in task.documents
        )
    }


def test_a_delegate_step_carries_its_sub_episode(replays: dict[str, Replay]) -> None:
    replay = replays["agent_propagate"]
    (handoff,) = replay.handoffs.iter_rows(named=True)
    assert replay.handoffs.schema == HANDOFFS_SCHEMA
    clerk = next(a for a in INCOMPLETE.sub_agents if a.name == handoff["to"])
    assert (handoff["step"], handoff["call"], handoff["system"]) == (1, 0, "agent_propagate")
    assert handoff["role"] == clerk.role
    assert set(handoff["scopes"]) == set(INCOMPLETE.user_scopes) & set(clerk.scopes)
    assert handoff["stores"] == [RECORDS]
    # What the clerk reported missing is exactly what the view it ran under lacks.
    assert INCOMPLETE.oracles.gap_report is not None
    gap = set(INCOMPLETE.oracles.gap_report.missing_requirements)
    under = _missing(INCOMPLETE, set(handoff["scopes"]), (RECORDS,))
    assert set(handoff["reported_missing"]) == gap == under
    assert handoff["completeness"] == "incomplete" and handoff["reached"] is True

    (sub,) = replay.subs
    assert sub.n_steps == handoff["steps"] > 2
    tools = sub.steps["tool"].to_list()
    assert tools[-1] == "submit" and {"search", "open"} <= set(tools)
    assert "delegate" not in tools  # the sub-agent is offered no delegate
    assert sub.claims["gap"].null_count() == sub.claims.height  # it claimed what it saw
    assert set(sub.claims.filter(pl.col("missing"))["requirement"]) == gap

    (call,) = step_calls(replay, 1)
    assert call["tool"] == "delegate"
    assert call["saw"] == f"handed off to {handoff['to']}: it claimed incomplete"
    ((row, at_step),) = handoffs_at(replay, 1)
    assert row == handoff and at_step is sub
    assert handoffs_at(replay, 2) == []


def test_a_dropped_gap_is_shown_not_reaching_the_final_report(
    replays: dict[str, Replay],
) -> None:
    (handoff,) = replays["agent_launder"].handoffs.iter_rows(named=True)
    assert handoff["reported_missing"] and handoff["reached"] is False
    line = handoff_line(handoff)
    assert "its gap did **not** reach the final report" in line
    assert all(markdown_code(r) in line for r in handoff["reported_missing"])
    claims = replays["agent_launder"].claims
    assert not claims.filter(pl.col("gap") == "unreported gap").is_empty()
    assert "its gap reached the final report" in handoff_line(
        next(replays["agent_propagate"].handoffs.iter_rows(named=True))
    )


def test_the_page_shows_the_sub_agent_steps_and_its_gap(replays: dict[str, Replay]) -> None:
    replay = replays["agent_launder"]
    (sub,) = replay.subs
    shown = _text(replay_view(replay, 1))
    (handoff,) = replay.handoffs.iter_rows(named=True)
    for part in (
        "Step 1: the sub-episode it handed off",
        "Handoffs (1), each under the step that made it",
        f"Handoff 1 to <code>{handoff['to']}</code>",
        "did <strong>not</strong> reach the final report",
        f"Steps of sub-agent {handoff['to']}",
        "The sub-agent's response",
        "What the sub-agent saw against what it claimed",
    ):
        assert part in shown, part
    # Its first tool call is on the page, as the sub-agent's steps table has it.
    first = step_table(sub).row(0, named=True)
    assert first["saw"] in shown
    # At a later step the handoff is listed, but its steps are not repeated under that step.
    later = _text(replay_view(replay, replay.n_steps))
    assert "Handoffs (1)" in later and f"Steps of sub-agent {handoff['to']}" not in later


async def _to_analyst(episode: Any, _reader: Any) -> Response:
    """Hands the records to the analyst through the session's `delegate` tool and relays its
    response."""
    relayed: Response | None = await episode.delegate(
        "Check each record against the register.", "analyst"
    )
    assert relayed is not None
    return relayed


def test_a_sub_agent_that_owns_another_store_is_judged_by_its_own_view() -> None:
    """The analyst owns the mailbox, which holds no current record of the contract: the
    sub-episode runs there under the scopes it holds with the user, every requirement is
    missing for it (its careful report parts nowhere), and relayed as it is, each requirement
    the user could see by another route reads as a false gap in the final report."""
    analyst = next(a for a in INCOMPLETE.sub_agents if a.name == "analyst")
    scopes = set(INCOMPLETE.user_scopes) & set(analyst.scopes)
    careful = BASELINES["agent_no_delegate"]
    assert isinstance(careful, AgentBaseline)
    requester = AgentBaseline(
        "to_analyst", careful.strategy, requester=_to_analyst, delegate_system=careful
    )
    reply = asyncio.run(requester.respond(agent_view(INCOMPLETE, SPEC)))
    record = ResponseRecord.of_reply(SPEC.id, INCOMPLETE.task_id, requester.name, reply)
    replay = replay_of(record, INCOMPLETE, SPEC)
    (handoff,) = handoff_frame(record, INCOMPLETE, SPEC).iter_rows(named=True)
    assert set(handoff["scopes"]) == scopes and handoff["stores"] == [MAILBOX]
    narrower = _missing(INCOMPLETE, scopes, (MAILBOX,))
    assert narrower == {r.id for r in INCOMPLETE.contract.required_evidence}
    # What it reports that the user's view misses reached the final report.
    assert set(handoff["reported_missing"]) == narrower and handoff["reached"] is True
    (sub,) = replay.subs
    assert set(sub.claims.filter(pl.col("missing"))["requirement"]) == narrower
    assert sub.claims["gap"].null_count() == sub.claims.height
    extra = narrower - _missing(INCOMPLETE, set(INCOMPLETE.user_scopes))
    false = set(replay.claims.filter(pl.col("gap") == "false gap")["requirement"])
    assert false == extra
    # Nothing the sub-agent opened lies outside its store and the scopes it ran under.
    opened = sub.steps.filter(pl.col("tool") == "open", pl.col("error").is_null())["doc_id"]
    by_id = {d.doc_id: d for d in INCOMPLETE.documents}
    assert opened.len() > 0 and {by_id[d].scope for d in opened} <= scopes
    assert {by_id[d].store for d in opened} == {MAILBOX}


def test_a_handoff_without_a_reply_reads_as_such(replays: dict[str, Replay]) -> None:
    """A sub-episode that ended without a submit reported nothing: the line says so, and no
    gap is said to have reached (or missed) the final report."""
    row = next(replays["agent_propagate"].handoffs.iter_rows(named=True))
    failed = {**row, "status": "no_submit", "completeness": None}
    failed |= {"reported_missing": None, "reached": None}
    line = handoff_line(failed)
    assert f"its reply was {markdown_code('no_submit')}; it reported no gap." in line
    assert "final report" not in line
