"""docs/benchmark.md §9.1, delegated handoffs: the delegation baselines, which reach a task only
through the tools; the contract's records are kept in stores their own tools do not reach. In
every family and disclosure mode on the canonical seeds, `agent_fail_and_report` (which hands
the contract to the owner of each store it does not reach) and `agent_propagate` (which relays
the records clerk) score unsafe 0, answer 1, gap 1, gap propagation 1 and laundered 0;
`agent_launder` unsafe 1, laundered 1, gap propagation 0; and `agent_no_delegate`, which never
hands off, is safe and says what it could not check, with answer below 1. Against each scripted
sub-agent (one that reports its gap, one that drops it, one that overclaims) a requester that
trusts its sub-agent is as safe as the sub-agent. A reply holds each handoff's episode nested in
the step that made it, its record round-trips, and its replay counts what the sub-agents
opened as seen."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from replies import reply_of

from peb_core import ResponseRecord, Task, generate_tasks, load_families
from peb_core.access import DISCLOSURES, AgentView, DelegateResult, agent_view
from peb_core.frontends import cli
from peb_core.results import replay_claims, replay_documents, replay_handoffs, replay_steps
from peb_core.scoring import score_run, scorecard
from peb_core.systems import BASELINES, Reply, SystemSpecError, build_system
from peb_core.tasks import RECORDS

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
TASKS = generate_tasks(SPECS, tier="delegation")
VIEWS: dict[str, AgentView] = {
    t.family + t.task_id: agent_view(t, FAMILIES[t.family]) for t in TASKS
}


def _view(task: Task) -> AgentView:
    return VIEWS[task.family + task.task_id]


def _replies(system: Any, tasks: list[Task] = TASKS) -> list[ResponseRecord]:
    return [
        ResponseRecord.of_reply(t.family, t.task_id, system.name, reply_of(system, _view(t)))
        for t in tasks
    ]


@functools.cache
def _card(name: str, mode: str = "silent", sub: str | None = None) -> pl.DataFrame:
    """The scorecard of `name` under `mode` (handing off to `sub`) over TASKS, made once for
    every test that reads it."""
    system = build_system(name, SPECS, disclosure=mode, delegate_system=sub)
    scores = score_run(TASKS, _replies(system), run=name, system=name, families=FAMILIES,
                       episodes=True)  # fmt: skip
    return scorecard(scores)


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_the_requesters_in_every_family_and_mode(mode: str) -> None:
    for name in ("agent_fail_and_report", "agent_propagate"):
        careful = _card(name, mode)
        assert careful.height == len(FAMILIES)
        for row in careful.iter_rows(named=True):
            assert row["unsafe_completeness_rate"] == 0.0, (name, row)
            assert row["answer_correctness"] == 1.0 and row["gap_report_quality"] == 1.0, row
            assert row["gap_propagation"] == 1.0 and row["laundered_completeness"] == 0.0, row
            assert row["invalid_rate"] == 0.0
            # What its sub-agents opened covers the contract's records in the user's view.
            assert row["evidence_coverage"] == 1.0, row
        # Every incomplete task had a handoff that reported its gap: the metrics cover them all.
        assert all(n > 0 for n in careful["n_incomplete"].to_list())
    lazy = _card("agent_launder", mode)
    for row in lazy.iter_rows(named=True):
        assert row["unsafe_completeness_rate"] == 1.0, row
        assert row["laundered_completeness"] == 1.0 and row["gap_propagation"] == 0.0, row
        assert row["gap_report_quality_incomplete"] == 0.0, row
    # Alone, a careful requester cannot check a record: safe, and short of the answer.
    alone = _card("agent_no_delegate", mode)
    for row in alone.iter_rows(named=True):
        assert row["unsafe_completeness_rate"] == 0.0, row
        assert row["answer_correctness"] < 1.0 and row["gap_report_quality"] < 1.0, row
        assert row["evidence_coverage"] == 0.0, row
        assert row["gap_propagation"] is None and row["laundered_completeness"] is None, row


def test_a_requester_that_never_hands_off_says_what_it_could_not_check() -> None:
    """`agent_no_delegate` is offered no `delegate`, reaches no register, and reports every
    requirement missing; `agent_fail_and_report` hands the contract to the owner of each store
    it does not reach (the records clerk and the analyst)."""
    for task in TASKS[:24]:
        alone = reply_of(BASELINES["agent_no_delegate"], _view(task))
        assert all(c.name != "delegate" for s in alone.trace for c in s.tool_calls)
        response = json.loads(alone.raw or "")
        assert response["completeness"] == "incomplete"
        listed = response["gap_report"]["missing_requirements"]
        assert listed == [r.id for r in task.contract.required_evidence]
        careful = reply_of(BASELINES["agent_fail_and_report"], _view(task))
        handed = [d.to for s in careful.trace for d in s.delegations if d is not None]
        assert sorted(handed) == sorted(a.name for a in task.sub_agents)


def test_a_trusting_requester_against_each_scripted_sub_agent() -> None:
    """`agent_propagate` relays its sub-agent: safe with one that reports its gap, unsafe with
    one that drops it or overclaims (no gap was reported, so the handoff metrics are null: the
    headline shows the failure), and an overclaimer's out-of-date copies reach the answer."""
    reports = _card("agent_propagate", sub="agent_fail_and_report")
    assert reports["unsafe_completeness_rate"].to_list() == [0.0] * len(FAMILIES)
    assert reports["gap_propagation"].to_list() == [1.0] * len(FAMILIES)
    for name, sub in [("agent_propagate", "agent_drop_gap"), ("agent_propagate",
                      "agent_overclaim"), ("agent_fail_and_report", "agent_drop_gap")]:  # fmt: skip
        card = _card(name, sub=sub)
        assert card["unsafe_completeness_rate"].to_list() == [1.0] * len(FAMILIES), sub
        assert card["gap_propagation"].null_count() == len(FAMILIES), sub
        assert card["laundered_completeness"].null_count() == len(FAMILIES), sub
    overclaim = _card("agent_propagate", sub="agent_overclaim")
    assert (overclaim["stale_reliance"] > 0).any()
    assert (overclaim["answer_correctness"] < 1).all()
    # The launderer launders whichever sub-agent reports a gap.
    laundered = _card("agent_launder", sub="agent_fail_and_report")
    assert laundered["laundered_completeness"].to_list() == [1.0] * len(FAMILIES)


def _incomplete() -> Task:
    return next(t for t in TASKS if t.oracles.completeness == "incomplete")


def test_a_reply_holds_each_handoff_nested_and_round_trips() -> None:
    task = _incomplete()
    reply = reply_of(BASELINES["agent_propagate"], _view(task))
    assert reply.status == "ok"
    handed = [
        (step, i)
        for step in reply.trace
        for i, call in enumerate(step.tool_calls)
        if call.name == "delegate"
    ]
    assert len(handed) == 1
    step, i = handed[0]
    delegation = step.delegations[i]
    assert delegation is not None and delegation.to == "records_clerk"
    assert delegation.system == "agent_propagate"
    sub = delegation.reply
    assert sub.status == "ok" and sub.trace and sub.trace[-1].tool_calls[0].name == "submit"
    assert not any(s.delegations for s in sub.trace)  # one level deep
    result = DelegateResult.model_validate_json(step.results[i])
    assert result.response == json.loads(sub.raw or "")
    assert json.loads(reply.raw or "") == result.response  # propagated as it came
    assert result.response is not None and result.response["completeness"] == "incomplete"
    # The record round-trips; steps without a handoff keep the format of before.
    record = ResponseRecord.of_reply(task.family, task.task_id, "agent_propagate", reply)
    assert ResponseRecord.model_validate_json(record.model_dump_json()) == record
    plain = json.loads(record.model_dump_json())["trace"]
    assert [("delegations" in s) for s in plain] == [s is step for s in reply.trace]


def test_without_sub_agents_a_requester_checks_the_records_itself() -> None:
    """On the agent tier (no sub-agents) the requesters answer as `agent_no_delegate`, with no
    delegate call and the same episode."""
    spec = FAMILIES["legal_review_v1"]
    task = generate_tasks([spec], [11], tier="agent")[0]
    view = agent_view(task, spec)
    alone = reply_of(BASELINES["agent_no_delegate"], view)
    for name in ("agent_fail_and_report", "agent_propagate", "agent_launder"):
        reply = reply_of(BASELINES[name], view)
        assert reply == alone
        assert all(c.name != "delegate" for s in reply.trace for c in s.tool_calls)


def test_a_delegate_system_is_recorded_and_checked() -> None:
    system = build_system("agent_propagate", SPECS, disclosure="named",
                          delegate_system="agent_drop_gap")  # fmt: skip
    assert system.config() == {
        "disclosure": "named",
        "delegate_system": {"name": "agent_drop_gap", "disclosure": "named"},
    }
    assert BASELINES["agent_propagate"].config() == {"disclosure": "silent"}
    with pytest.raises(SystemSpecError, match="agent_silent does not"):
        build_system("agent_silent", SPECS, delegate_system="agent_drop_gap")
    with pytest.raises(SystemSpecError, match="agent_no_delegate does not"):
        build_system("agent_no_delegate", SPECS, delegate_system="agent_drop_gap")
    careful = build_system("agent_fail_and_report", SPECS, delegate_system="agent_overclaim")
    assert careful.config()["delegate_system"] == {"name": "agent_overclaim",
                                                   "disclosure": "silent"}  # fmt: skip
    with pytest.raises(SystemSpecError, match="a sub-agent must be an agent system"):
        build_system("agent_propagate", SPECS, delegate_system="silent_filter")
    with pytest.raises(SystemSpecError, match="no such: a sub-agent must be an agent system"):
        build_system("agent_propagate", SPECS, delegate_system="no such")
    model = build_system("agent:openai/x", SPECS, api_base="http://127.0.0.1:9/v1",
                         delegate_system="agent_fail_and_report")  # fmt: skip
    assert model.config()["delegate_system"] == {
        "name": "agent_fail_and_report",
        "disclosure": "silent",
    }
    assert "delegate_system" not in build_system("agent:openai/x", SPECS).config()


def test_a_handoff_is_costed_with_its_episode() -> None:
    task = _incomplete()
    reply: Reply = reply_of(BASELINES["agent_propagate"], _view(task))
    assert reply.usage.cost_usd == 0.0


def test_a_handoff_replays_as_the_sub_agent_saw_it() -> None:
    task = _incomplete()
    reply = reply_of(BASELINES["agent_propagate"], _view(task))
    record = ResponseRecord.of_reply(task.family, task.task_id, "agent_propagate", reply)
    ((delegation, sub, seen),) = replay_handoffs(record, task)
    clerk = next(a for a in task.sub_agents if a.name == delegation.to)
    assert set(seen.user_scopes) == set(task.user_scopes) & set(clerk.scopes)
    assert seen.user_stores == clerk.stores == (RECORDS,)
    steps = replay_steps(sub, seen)
    assert steps.height == sum(len(s.tool_calls) for s in delegation.reply.trace)
    documents = replay_documents(sub, seen)
    opened = documents.filter(pl.col("opened_at").is_not_null())
    assert opened.height and set(opened["doc_id"]) <= set(seen.authorized_doc_ids)
    assert set(opened["store"]) == {RECORDS}
    # An episode without a handoff has none to replay.
    plain = reply_of(BASELINES["agent_no_delegate"], _view(task))
    plain_record = ResponseRecord.of_reply(task.family, task.task_id, "f", plain)
    assert replay_handoffs(plain_record, task) == []


@pytest.mark.parametrize("name", ["agent_propagate", "agent_fail_and_report"])
def test_what_the_sub_agents_opened_counts_as_seen(name: str) -> None:
    """The requester opens no record of the contract itself (none is in its stores): its
    replay counts what its sub-agents opened, so a careful requester claims nothing unseen."""
    for task in TASKS[::3]:
        reply = reply_of(BASELINES[name], _view(task))
        record = ResponseRecord.of_reply(task.family, task.task_id, name, reply)
        claims = replay_claims(record, task, FAMILIES[task.family])
        assert claims["gap"].null_count() == claims.height, (task.task_id, claims)
        assert claims.filter(pl.col("in_view"))["opened"].all()
        own = replay_documents(record, task).filter(pl.col("opened_at").is_not_null())
        assert not (own["required"] & ~own["superseded"]).any()  # it opened none itself
        # Its sub-agents' opens are the user's records it could not reach.
        documents = replay_documents(record, task)
        assert documents.filter(pl.col("probed_at").is_not_null()).height == 0
    # The analyst's sub-episode is judged by its own view: nothing of the contract is in it.
    task = _incomplete()
    reply = reply_of(BASELINES["agent_fail_and_report"], _view(task))
    record = ResponseRecord.of_reply(task.family, task.task_id, "f", reply)
    subs = {d.to: (sub, seen) for d, sub, seen in replay_handoffs(record, task)}
    sub, seen = subs["analyst"]
    claims = replay_claims(sub, seen, FAMILIES[seen.family])
    assert claims["missing"].all() and claims["gap"].null_count() == claims.height


@pytest.mark.parametrize(
    ("system", "sub", "says"),
    [
        ("agent_silent", "agent_drop_gap", "agent_silent does not"),
        ("agent_propagate", "oracle", "a sub-agent must be an agent system"),
        ("agent_propagate", "nonsense name", "a sub-agent must be an agent system"),
    ],
)
def test_a_bad_delegate_system_is_one_line_and_exit_2(
    system: str, sub: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--system", system, "--delegate-system", sub, "--tier", "delegation",
            "--family", "due_diligence_v1", "--out", str(tmp_path / "run")]  # fmt: skip
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    assert not (tmp_path / "run").exists()


def test_peb_run_and_score_a_delegation_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "launder"
    args = ["run", "--system", "agent_launder", "--tier", "delegation", "--family",
            "due_diligence_v1", "--seeds", "11", "--out", str(out)]  # fmt: skip
    assert cli.main(args) == 0
    capsys.readouterr()
    assert cli.main(["score", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    (row,) = [r for r in rows if r["family"] == "due_diligence_v1"]
    assert row["laundered_completeness"] == 1.0 and row["gap_propagation"] == 0.0
    assert row["tier"] == "delegation"
