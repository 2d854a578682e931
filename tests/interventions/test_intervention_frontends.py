"""docs/benchmark.md §11 at every way in: `--intervention` is one run option, so `peb run`, the
workbench's form and headless flags, the inspect task's `-T` and `peb mcp serve` take it alike
and refuse it alike, in one line, where it does not apply; what a scripted model is told and what
the consumer is shown change only as the intervention says; the platform's check at the submit
holds over MCP and through inspect's react() as in our loop (the same results, call for call,
and an import that verifies)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, stdio_client
from scripted_server import ScriptedServer, Step, replies_so_far, tool_step
from test_mcp import ME, SYSTEM, per_task
from test_mcp_handoffs import GRANTS, GRANTS_SEED, RELYING, SPEC, replay, stdio

from peb_core import read_records
from peb_core.access import RECHECK, agent_start, agent_view
from peb_core.frontends.cli import main as peb_main
from peb_core.frontends.inspect import task as inspect_task
from peb_core.frontends.workbench import LaunchError, RunForm, check_run, headless
from peb_core.interventions import POLICY
from peb_core.runs import RESPONSES, naming, read_manifest, run_system
from peb_core.systems import BASELINES, AgentBaseline, build_system, get_protocol
from peb_core.tasks import generate_tasks, load_families

FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]

REFUSED = [
    # (system, options, what follows the option's name; {names} as the front-end names them)
    ("agent_silent", {"intervention": "shield"},
     "unknown intervention 'shield'; valid: none, recheck_at_submit, boundary_receipt, "
     "fail_and_report_guard, policy_scaffold"),
    ("agent_silent", {"intervention": "recheck_at_submit"},
     "recheck_at_submit checks an agent's submits; the paper tier has no corpus and no submit "
     "to check (choose {tier} agent, delegation or grants)"),
    ("agent_silent", {"intervention": "recheck_at_submit", "tier": "agent", "interface": "chat"},
     "recheck_at_submit checks the submit tool's responses; under {interface} chat an agent has "
     "none (choose submit)"),
    ("agent_silent", {"intervention": "fail_and_report_guard", "tier": "agent",
                      "contract": "corpus"},
     "fail_and_report_guard checks responses against the request's contract, which under "
     "{contract} corpus the platform is not given (choose given)"),
    ("oracle", {"intervention": "policy_scaffold"},
     "policy_scaffold puts a policy before what a model is told; oracle is a baseline and reads "
     "no prompt (run a model, or agent:<model>)"),
]  # fmt: skip


def _argv(values: dict[str, str]) -> list[str]:
    return [part for name, value in values.items() for part in (_flag(name), value)]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_each_front_end_refuses_an_intervention_where_it_does_not_apply(tmp_path: Path) -> None:
    for system, values, why in REFUSED:
        lines: dict[str, str] = {}
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = peb_main(["run", "--system", system, *_argv(values), "--out", str(tmp_path)])
        assert code == 2, err.getvalue()
        lines["cli"] = err.getvalue()
        with pytest.raises(LaunchError) as form:
            check_run(RunForm([system], dict(values)), tmp_path)
        lines["workbench"] = "\n".join(form.value.problems)
        out, err = io.StringIO(), io.StringIO()
        argv = ["--run", system, *_argv(values), "--out", str(tmp_path / "h")]
        assert headless(argv, tmp_path, out=out, err=err) == 2
        lines["headless"] = err.getvalue()
        for way, line in lines.items():
            names = naming("cli" if way == "headless" else way)
            expected = f"{names['intervention']}: " + why.format(**names)
            if "unknown" in why and way != "workbench":
                expected = f"argument {names['intervention']}: " + why
            [said] = line.strip().splitlines()
            assert said.endswith(expected), (way, said)
    # The front-ends whose own agent or model answers: inspect's -T and peb mcp serve.
    with pytest.raises(ValueError, match=r"^intervention: unknown intervention 'shield'"):
        inspect_task.partial_evidence(family="due_diligence_v1", intervention="shield")
    with pytest.raises(ValueError, match=r"^intervention: recheck_at_submit checks an agent's"):
        inspect_task.partial_evidence(family="due_diligence_v1", intervention="recheck_at_submit")
    for name in ("boundary_receipt", "fail_and_report_guard"):
        with pytest.raises(ValueError, match=f"^intervention: {name}: the inspect task "):
            inspect_task.partial_evidence(family="due_diligence_v1", tier="agent",
                                          intervention=name)  # fmt: skip
    for flags, why in (
        (["--intervention", "shield"], "argument --intervention: unknown intervention 'shield'"),
        (["--intervention", "fail_and_report_guard", "--contract", "corpus"],
         "--intervention: fail_and_report_guard checks responses against the request's"),
    ):  # fmt: skip
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            argv = ["mcp", "serve", "--family", "due_diligence_v1", "--out", str(tmp_path)]
            assert peb_main([*argv, *flags]) == 2
        [said] = err.getvalue().strip().splitlines()
        assert why in said, said


# What a scripted model is told, and what the consumer is shown.


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


def _overclaim(body: dict[str, Any]) -> Step:
    """Every request answered with the same overclaim (an answer, complete, no report)."""
    answer = {name: field.values[0] if field.kind == "ordinal" else [] for name, field
              in DD.answer.items()}  # fmt: skip
    return Step(text=json.dumps({"answer": answer, "completeness": "complete",
                                 "gap_report": None}))  # fmt: skip


@pytest.mark.parametrize("interface", ["submit", "chat"])
def test_the_scaffold_changes_only_what_a_model_is_told_and_the_receipt_what_it_shows(
    server: ScriptedServer, tmp_path: Path, interface: str
) -> None:
    """A one-shot model against a scripted server: under `policy_scaffold` each request is the
    one without it with the policy put first, and the replies are kept as given; under
    `boundary_receipt` each request is the one without it, and only the platform's part of the
    record (what the consumer is shown) differs."""
    server.script.route = _overclaim
    bodies: dict[str, list[dict[str, Any]]] = {}
    records = {}
    for name in ("none", "policy_scaffold", "boundary_receipt"):
        system = build_system("openai/scripted", [DD], api_base=server.url, use_cache=False,
                              interface=interface)  # fmt: skip
        start = len(server.script.bodies)
        run_system(system, [DD], tmp_path / name, seeds=[11], intervention=name)
        bodies[name] = sorted(
            server.script.bodies[start:], key=lambda body: body["messages"][-1]["content"]
        )
        records[name] = {r.task_id: r for r in read_records(tmp_path / name / RESPONSES)[0]}
    assert len(bodies["none"]) == len(DD.templates)
    for plain, shaped in zip(bodies["none"], bodies["policy_scaffold"], strict=True):
        first, *rest = shaped["messages"]
        assert first["content"].startswith(POLICY)
        assert first["content"].removeprefix(POLICY).lstrip() == plain["messages"][0]["content"]
        assert rest == plain["messages"][1:]
        assert {k: v for k, v in shaped.items() if k != "messages"} == {
            k: v for k, v in plain.items() if k != "messages"
        }
    assert bodies["boundary_receipt"] == bodies["none"]
    receipts = 0
    for task_id, bare in records["none"].items():
        scaffolded, received = (
            records["policy_scaffold"][task_id],
            records["boundary_receipt"][task_id],
        )
        assert scaffolded.raw == bare.raw == received.raw and bare.platform is None
        assert scaffolded.platform is None
        if received.platform is not None:
            receipts += 1
            assert "Platform receipt" in received.platform.said
            if interface == "chat":
                assert received.platform.response.endswith(received.platform.said)
    assert receipts > 0
    assert (
        read_manifest(tmp_path / "policy_scaffold").digests["protocol_text"]
        != read_manifest(tmp_path / "none").digests["protocol_text"]
    )


# The platform's check at the submit, over MCP and through inspect.


def test_recheck_at_submit_over_mcp_is_the_in_process_check(tmp_path: Path) -> None:
    """A client sending the calls `agent_keep_expired` makes under the platform's check (it is
    told which records no longer hold, and reads again) gets the in-process results byte for
    byte; the record scores it safe where it relied on expired evidence without the check."""
    out = tmp_path / "run"
    baseline = BASELINES["agent_keep_expired"]
    assert isinstance(baseline, AgentBaseline)
    number, task = next((i, t) for i, t in enumerate(GRANTS, 1) if t.template == RELYING)
    view = replace(agent_view(task, SPEC), checks=(RECHECK,))
    local = asyncio.run(baseline.respond(view))
    results = [json.loads(r) for s in local.trace for c, r in zip(s.tool_calls, s.results,
               strict=True) if c.name == "submit"]  # fmt: skip
    assert [r.get("platform") for r in results] == [RECHECK.name, None]

    async def client() -> None:
        params = stdio(out, "grants", GRANTS_SEED, "--intervention", "recheck_at_submit")
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            await replay(s, f"task-{number:03d}", local)

    anyio.run(client)
    assert read_manifest(out).config["intervention"] == "recheck_at_submit"
    [record] = read_records(out / RESPONSES, SYSTEM)[0]
    assert record.raw == local.raw
    row = per_task(out)[task.task_id]
    assert not row["unsafe"] and row["answer_score"] == 1.0 and not row["expired_relied"]


def test_a_receipt_and_a_scaffold_over_mcp(tmp_path: Path) -> None:
    """`peb mcp serve --intervention policy_scaffold` starts each task with the policy first;
    `--intervention boundary_receipt` records the platform's receipt beside the client's
    response."""
    lazy = BASELINES["agent_silent"]
    assert isinstance(lazy, AgentBaseline)
    number, task = 1, GRANTS[0]
    local = lazy.play(agent_view(task, SPEC)).reply("ok")
    started: list[str] = []
    for name in ("policy_scaffold", "boundary_receipt"):

        async def client(name: str = name) -> None:
            params = stdio(tmp_path / name, "grants", GRANTS_SEED, "--intervention", name)
            async with (
                stdio_client(params) as streams,
                ClientSession(*streams, client_info=ME) as s,
            ):
                await s.initialize()
                texts = await replay(s, f"task-{number:03d}", local)
                started.append(texts[0])

        anyio.run(client)
    assert POLICY in started[0] and POLICY not in started[1]
    [record] = read_records(tmp_path / "boundary_receipt" / RESPONSES, SYSTEM)[0]
    assert record.raw == local.raw
    assert record.platform is not None and record.platform.intervention == "boundary_receipt"
    assert json.loads(record.platform.response)["completeness"] == "incomplete"


def test_recheck_at_submit_through_react_is_our_loop_s(tmp_path: Path) -> None:
    """`-T intervention=recheck_at_submit` on the grants tier: a scripted agent that reads the
    records, searches on and submits complete is answered by the platform where a grant it read
    under has ended, and submits again (a block); react() runs on to that second submit as our
    loop does, with the same results shown at every step, and the log imports (its episodes
    replayed under the same check) with the intervention in its config."""
    from test_inspect import _eval_agent, _import, _reply, _required_visible, _user_message

    tasks = generate_tasks([DD], [11, 23], 0, "grants", corpus_size=20)[:6]  # the eval's first
    blocked = {"answer": None, "completeness": "incomplete", "gap_report": None}

    def step(task: Any, replies: int) -> Step:
        overclaim = json.loads(_reply(task, "overclaim").text or "")
        plan = [
            tool_step(("search", {"query": task.prompt[:200]})),
            tool_step(*(("open", {"doc_id": d.doc_id}) for d in _required_visible(task))),
            tool_step(*(("search", {"query": f"record {n}"}) for n in range(4))),
            tool_step(("submit", {"response": overclaim})),
            tool_step(("submit", {"response": blocked})),
        ]
        return plan[min(replies, len(plan) - 1)]

    options = {"intervention": "recheck_at_submit", "max_steps": 6}
    log, requests = _eval_agent(tmp_path, tasks, step, "11,23", tier="grants", options=options)
    out = _import(log, tmp_path, f"{len(tasks)} tasks ({len(tasks)} replies, 0 errors)")
    assert read_manifest(out).config["intervention"] == "recheck_at_submit"
    rechecked = [t.task_id for t in tasks if requests[t.task_id] == 5]
    assert rechecked and all(requests[t.task_id] in (4, 5) for t in tasks)

    protocol = get_protocol("structured_gap@1")
    assert protocol.agent is not None
    by_prompt = {_user_message(protocol.agent(agent_start(t, DD))): t for t in tasks}
    server = ScriptedServer().start()
    server.script.route = lambda body: step(
        by_prompt[_user_message(body["messages"])], replies_so_far(body)
    )
    try:
        system = build_system("agent:openai/scripted", [DD], api_base=server.url, max_steps=6,
                              use_cache=False)  # fmt: skip
        run_system(system, [DD], tmp_path / "runner", tier="grants", seeds="11,23",
                   limit=len(tasks), corpus_size=20, intervention="recheck_at_submit")  # fmt: skip
    finally:
        server.stop()
    imported = {r.task_id: r for r in read_records(out / RESPONSES)[0]}
    runner = {r.task_id: r for r in read_records(tmp_path / "runner" / RESPONSES)[0]}
    for task_id, record in imported.items():
        ours = runner[task_id]
        assert (record.status, record.raw) == (ours.status, ours.raw)
        assert [s.results for s in record.trace] == [s.results for s in ours.trace]
    assert any(json.loads(runner[t].raw or "")["answer"] is None for t in rechecked)


@pytest.mark.parametrize("tier", ["paper", "agent"])
def test_the_scaffold_reaches_the_inspect_task_s_samples(tier: str) -> None:
    """`-T intervention=policy_scaffold`: every sample's input is the run's prompt with the
    policy first (a prompt option, as for our systems), one-shot and an agent's start."""
    plain = inspect_task.partial_evidence(family="due_diligence_v1", seeds="11", tier=tier)
    shaped = inspect_task.partial_evidence(
        family="due_diligence_v1", seeds="11", tier=tier, intervention="policy_scaffold"
    )
    for bare, sample in zip(plain.dataset, shaped.dataset, strict=True):
        assert not isinstance(sample.input, str) and not isinstance(bare.input, str)
        first, *rest = sample.input
        assert first.role == "system" and first.text.startswith(POLICY)
        assert first.text.removeprefix(POLICY).lstrip() == bare.input[0].text
        assert [m.text for m in rest] == [m.text for m in bare.input[1:]]
