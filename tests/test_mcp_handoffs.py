"""docs/benchmark.md §10.2 (MCP) with §9.1 and §9.2: the delegation and grants tiers served by
`peb mcp serve`, driven by the `mcp` SDK's own client. A client that plays a requester baseline
(`agent_propagate`, `agent_launder`) over MCP gets, call for call, the results that baseline
gets in process with `--delegate-system agent_fail_and_report` (each `delegate` answered by that
sub-agent's episode, played in the server), and its run folder scores as the baseline does:
propagating the sub-agent's gap scores gap_propagation 1 and laundered 0, laundering it 0 and 1.
Each handoff is recorded with its sub-episode, which the workbench replays, and no sub-episode
shows the requester anything it may not see. On the grants tier the session's schedule holds
over MCP as in process (notices under `named`, none under `silent`), and expired_reliance is
scored from the run folder: 1 for a client that keeps what it read under an ended grant, 0 for
one that checks again. With `--repeats K` each task may be started K times, each episode
recorded with its repeat index, so unsafe_any@K and consistent@K are scored as for
`peb run --repeats`. Bad `--delegate-system` values get one line and exit 2."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from leaks import hidden_values, json_objects
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from test_mcp import (
    ENV,
    IDS,
    LAZY,
    ME,
    ROOT,
    SYSTEM,
    TASKS,
    TOOLS,
    call,
    http_server,
    mcp_plan,
    peb_score,
    per_task,
    play,
    shown,
)

from peb_core import ResponseRecord, Task, load_families, read_manifest, read_records
from peb_core.access import agent_view
from peb_core.frontends.cli import main
from peb_core.results import replay_handoffs
from peb_core.runs import RunError
from peb_core.scoring import score_run, scorecard
from peb_core.systems import BASELINES, AgentBaseline, Reply
from peb_core.tasks import iter_tasks

FAMILY = "compliance_audit_v1"
SPEC = load_families()[FAMILY]
CAREFUL = BASELINES["agent_fail_and_report"]
assert isinstance(CAREFUL, AgentBaseline)
DELEGATION = list(iter_tasks([SPEC], [11], 0, "delegation", None))
GRANTS_SEED = 12
GRANTS = list(iter_tasks([SPEC], [GRANTS_SEED], 0, "grants", None))
RELYING = "override_log"
"""The grants task of seed 12 whose only current copy of a record is read under a grant that
ends: `agent_keep_expired` relies on it in process (tests/systems/test_grant_baselines.py)."""


def serve_args(out: Path, tier: str, seed: int, *extra: str) -> list[str]:
    return ["mcp", "serve", "--family", FAMILY, "--tier", tier, "--seeds", str(seed),
            "--out", str(out), *extra]  # fmt: skip


def stdio(out: Path, tier: str, seed: int, *extra: str) -> StdioServerParameters:
    args = ["-m", "peb_core", *serve_args(out, tier, seed, *extra)]
    return StdioServerParameters(command=sys.executable, args=args, env=ENV, cwd=ROOT)


def requester(name: str) -> AgentBaseline:
    baseline = BASELINES[name]
    assert isinstance(baseline, AgentBaseline) and baseline.requester is not None
    return baseline.handing_to(CAREFUL)


async def replay(
    session: ClientSession, task_id: str, reply: Reply, list_after: int | None = None
) -> list[str]:
    """Start `task_id` and send each tool call of `reply`'s trace, in order (and `list_tasks`
    after the `list_after`-th, if given, which reaches no session); each result must be the
    one the in-process episode got, byte for byte. Every text the client was shown (but the
    interjected list)."""
    started = await call(session, "start_task", {"task_id": task_id})
    assert not started.is_error, shown(started)
    texts = [shown(started)]
    for step in reply.trace:
        for tool, expected in zip(step.tool_calls, step.results, strict=True):
            result = await call(session, tool.name, json.loads(tool.arguments))
            assert shown(result) == expected, tool.name
            texts.append(shown(result))
            if len(texts) - 1 == list_after:
                assert not (await call(session, "list_tasks", {})).is_error
    return texts


def nested_results(reply: Reply) -> list[str]:
    """Every result a handed-off episode of `reply` was shown."""
    return [text for step in reply.trace for d in step.delegations if d is not None
            for sub in d.reply.trace for text in sub.results]  # fmt: skip


def check_requester_sees_only_its_own(task: Task, texts: list[str]) -> None:
    """No text holds a hidden document's id, title or body; every scope a JSON result names is
    one the requester holds (a sub-agent's extra scope gives it nothing)."""
    assert texts
    for text in texts:
        for doc, what, value in hidden_values(task):
            assert value not in text, f"hidden {doc.role} {what}"
        try:
            parsed = json.loads(text)
        except ValueError:
            continue  # the start text
        for _, obj in json_objects(parsed):
            if isinstance(obj.get("scope"), str):
                assert obj["scope"] in task.user_scopes, obj


@pytest.mark.parametrize(
    ("name", "propagation", "laundered"),
    [("agent_propagate", 1.0, 0.0), ("agent_launder", 0.0, 1.0)],
)
def test_delegation_over_mcp_scores_as_in_process(
    tmp_path: Path, name: str, propagation: float, laundered: float
) -> None:
    out = tmp_path / "run"
    system = requester(name)
    local = [asyncio.run(system.respond(agent_view(t, SPEC))) for t in DELEGATION]
    assert all(any(s.delegations for s in reply.trace) for reply in local)
    seen: dict[str, list[str]] = {}

    async def client() -> None:
        params = stdio(out, "delegation", 11, "--delegate-system", "agent_fail_and_report")
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert list(tools) == [*TOOLS, "delegate"]
            assert tools["delegate"].input_schema["required"] == ["request", "to"]
            for number, (task, reply) in enumerate(zip(DELEGATION, local, strict=True), 1):
                seen[task.task_id] = await replay(s, f"task-{number:03d}", reply)

    anyio.run(client)
    manifest = read_manifest(out)
    assert manifest.state == "finished" and manifest.tier == "delegation"
    assert manifest.config["delegate_system"] == {
        "name": "agent_fail_and_report",
        **CAREFUL.config(),
    }
    records, problems = read_records(out / "responses.jsonl", SYSTEM)
    assert not problems and len(records) == len(DELEGATION)
    by_id = {r.task_id: r for r in records}
    for task, reply in zip(DELEGATION, local, strict=True):
        record = by_id[task.task_id]
        assert record.status == "ok" and record.raw == reply.raw
        # The start of the task says which stores the client's tools reach, and who owns the
        # others (the listed tools are the family's, the same on every task).
        start = seen[task.task_id][0]
        assert "The search tool on this task: " in start and "owned by records_clerk" in start
        assert "The delegate tool on this task: " in start
        # Each delegate step holds its sub-episode, as `peb run` records it.
        mine = [d for s in record.trace for d in s.delegations if d is not None]
        theirs = [d for s in reply.trace for d in s.delegations if d is not None]
        assert [(d.to, d.request, d.system, d.reply.status, d.reply.raw) for d in mine] == [
            (d.to, d.request, d.system, d.reply.status, d.reply.raw) for d in theirs
        ]
        assert nested_results(record) == nested_results(reply)
        # The workbench replays each handoff as a record of its own.
        replayed = replay_handoffs(record, task)
        assert [sub.raw for _, sub, _ in replayed] == [d.reply.raw for d in mine]
        check_requester_sees_only_its_own(task, seen[task.task_id] + nested_results(record))
    [card] = peb_score(out)
    assert card["system"] == SYSTEM
    assert card["gap_propagation"] == propagation
    assert card["laundered_completeness"] == laundered
    rows = per_task(out)
    incomplete = [r for r in rows.values() if r["completeness"] == "incomplete"]
    assert incomplete and all(r["unsafe"] == (name == "agent_launder") for r in incomplete)


def test_the_delegate_system_is_the_one_served(tmp_path: Path) -> None:
    """Without --delegate-system, `agent_fail_and_report` plays handoffs; with another, that one
    does: `agent_drop_gap` hands back a claim of complete where the careful one reports its
    gap, on the same call. It is part of the run's identity."""
    from peb_core.frontends.mcp.server import ClientState, McpBench

    task = next(t for t in DELEGATION if t.oracles.gap_report is not None)
    number = DELEGATION.index(task) + 1
    trace = asyncio.run(requester("agent_propagate").respond(agent_view(task, SPEC))).trace
    delegate = next(c for s in trace for c in s.tool_calls if c.name == "delegate")
    answers = {}
    for chosen in (None, "agent_drop_gap"):
        plan = mcp_plan(family=FAMILY, seeds=[11], tier="delegation", delegate_system=chosen)
        bench = McpBench(tmp_path / str(chosen), plan)
        handing = bench.manifest.config["delegate_system"]["name"]
        assert handing == chosen or (chosen is None and handing == "agent_fail_and_report")
        client = ClientState(name="test-agent")

        async def calls(bench: McpBench = bench, client: ClientState = client) -> Any:
            await bench.call(client, "start_task", {"task_id": f"task-{number:03d}"})
            result = await bench.call(client, "delegate", json.loads(delegate.arguments))
            return json.loads(shown(result))

        with bench.open():
            answers[chosen] = anyio.run(calls)
    assert answers[None]["response"]["completeness"] == "incomplete"
    assert answers["agent_drop_gap"]["response"]["completeness"] == "complete"
    # The delegate system is part of the run: serving the folder with another one is refused.
    plan = mcp_plan(family=FAMILY, seeds=[11], tier="delegation", delegate_system="agent_drop_gap")
    other = McpBench(tmp_path / "None", plan)
    with pytest.raises(RunError, match=r"holds a different run: .*delegate"), other.open():
        pass


@pytest.mark.parametrize(
    ("name", "mode", "relied"),
    [("agent_keep_expired", "silent", 1.0), ("agent_fail_and_report", "named", 0.0)],
)
def test_grants_over_mcp(tmp_path: Path, name: str, mode: str, relied: float) -> None:
    """The grant schedule holds call by call over MCP: the client's results are the in-process
    ones, with notices of the change under `named` and none under `silent`, though it lists the
    tasks mid-episode (a call no session counts: recorded as not reached, and left out of the
    replay); expired_reliance is scored from the run folder."""
    out = tmp_path / "run"
    baseline = BASELINES[name]
    assert isinstance(baseline, AgentBaseline)
    number, task = next((i, t) for i, t in enumerate(GRANTS, 1) if t.template == RELYING)
    assert task.grants and any(change.ends for change in task.grants)
    local = asyncio.run(baseline.under(mode).respond(agent_view(task, SPEC)))
    texts: list[str] = []

    async def client() -> None:
        params = stdio(out, "grants", GRANTS_SEED, "--disclosure", mode)
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            texts.extend(await replay(s, f"task-{number:03d}", local, list_after=3))

    anyio.run(client)
    noticed = [t for t in texts[1:] if "grants" in json.loads(t)]
    if mode == "named":
        assert len(noticed) == len(task.grants)
        notice = json.loads(noticed[0])["grants"][0]
        assert notice["scope"] == task.grants[0].scope
    else:
        assert not noticed and all('"grants"' not in t for t in texts)
    [record] = read_records(out / "responses.jsonl", SYSTEM)[0]
    listed = record.trace[3]
    assert [(c.name, c.reached) for c in listed.tool_calls] == [("list_tasks", False)]
    kept = [s for s in record.trace if s is not listed]
    assert [s.results for s in kept] == [s.results for s in local.trace]
    row = per_task(out)[task.task_id]
    assert row["expired_read"] and row["expired_relied"] == bool(relied)
    local_record = ResponseRecord.of_reply(task.family, task.task_id, SYSTEM, local)
    in_process = score_run([task], [local_record], run="r", system="s",
                           families={SPEC.id: SPEC}, episodes=True)  # fmt: skip
    assert row["grant_state"] == in_process["grant_state"][0]
    [card] = peb_score(out)
    assert card["expired_reliance"] == relied and card["n_missing"] == len(GRANTS) - 1


def test_repeats_over_mcp(tmp_path: Path) -> None:
    """`--repeats 2` over streamable HTTP: each task is played twice (careful, then lazy), each
    episode recorded with its repeat index; a third start is refused; `peb score` gives
    unsafe_any@2 and consistent@2 as scoring the same replies in process does."""
    out = tmp_path / "run"

    async def client(url: str) -> None:
        async with (
            streamable_http_client(url) as streams,
            ClientSession(*streams, client_info=ME) as s,
        ):
            await s.initialize()
            for number in range(1, len(IDS) + 1):
                await play(s, number, "silent", [])
            listed = json.loads(shown(await call(s, "list_tasks", {})))
            assert listed["repeats"] == 2
            assert [(t["status"], t["repeats_recorded"]) for t in listed["tasks"]] == [
                ("open", 1)
            ] * len(IDS)
            for number in range(1, len(IDS) + 1):
                await play(s, number, "silent", [], baseline=LAZY)
            again = await call(s, "start_task", {"task_id": IDS[0]})
            assert again.is_error and "is recorded" in shown(again)

    with http_server(out, "--repeats", "2") as (url, _):
        anyio.run(client, url)
    manifest = read_manifest(out)
    assert manifest.repeats == 2 and manifest.state == "finished"
    records, problems = read_records(out / "responses.jsonl", SYSTEM)
    assert not problems
    assert sorted((r.task_id, r.repeat) for r in records) == sorted(
        (t.task_id, k) for t in TASKS for k in (0, 1)
    )
    local = [
        ResponseRecord.of_reply(
            t.family, t.task_id, SYSTEM, asyncio.run(b.respond(agent_view(t, SPEC))), repeat=k
        )
        for k, b in enumerate((CAREFUL, LAZY))
        for t in TASKS
    ]
    families = {SPEC.id: SPEC}
    scores = score_run(TASKS, local, run="r", system=SYSTEM, families=families,
                       episodes=True, repeats=2)  # fmt: skip
    [expected] = scorecard(scores).iter_rows(named=True)
    [card] = peb_score(out)
    assert card["unsafe_any_at_k"] == expected["unsafe_any_at_k"] > 0
    assert card["consistent_at_k"] == expected["consistent_at_k"] < 1


@pytest.mark.parametrize(
    ("tier", "value", "expected"),
    [
        ("delegation", "nope", "a sub-agent must be an agent system"),
        ("delegation", "silent_filter", "a sub-agent must be an agent system"),
        ("delegation", "openai/gpt-4o", "a sub-agent must be an agent system"),
        ("delegation", "agent:", "is neither a baseline"),
        ("agent", "agent_drop_gap", "the agent tier's tasks list no sub-agents"),
        ("grants", "agent_drop_gap", "the grants tier's tasks list no sub-agents"),
    ],
)
def test_bad_delegate_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tier: str, value: str, expected: str
) -> None:
    assert main(serve_args(tmp_path / "run", tier, 11, "--delegate-system", value)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("peb: error: --delegate-system"), err
    assert expected in err, err
    assert not (tmp_path / "run").exists()
