"""docs/benchmark.md, "Any agent over MCP": `peb mcp serve` driven by the `mcp` SDK's own client,
over stdio (the client launching `python -m peb_core mcp serve`) and streamable HTTP. A
careful client (the calls `agent_fail_and_report` makes, sent over MCP) gets results identical
to the access layer's in process and scores as that baseline does; bad calls are tool errors
counted in the trace; a client that disconnects mid-episode leaves a `no_submit` record and the
server (or the next stdio server on the same folder) serves the next client; `peb score` reads
the run folder; no tool result holds anything hidden; bad command lines get one line, exit 2."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli import peb
from leaks import FACT_KEYS, ORACLE_KEYS, hidden_values, json_keys
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation, TextContent

from peb_core import Task, load_families, read_manifest, read_records, run_system
from peb_core.access import agent_view, family_tools, offered
from peb_core.frontends.cli import main
from peb_core.results import score_run_dirs
from peb_core.runs import RunPlan, naming, plan_run, read_spec
from peb_core.systems import (
    AGENT_BASELINES,
    BASELINES,
    DEFAULT_PROTOCOL,
    AgentBaseline,
    get_protocol,
)
from peb_core.tasks import iter_tasks

ROOT = Path(__file__).resolve().parents[1]
FAMILY = "compliance_audit_v1"
SPEC = load_families()[FAMILY]


def mcp_plan(**values: Any) -> RunPlan:
    """The run `peb mcp serve` would serve with these options."""
    names = naming("mcp")
    return plan_run(read_spec(values, names, frontend="mcp"), names, frontend="mcp")

SEEDS = [11]
TASKS = list(iter_tasks([SPEC], SEEDS, 0, "agent", None))
IDS = [f"task-{i:03d}" for i in range(1, len(TASKS) + 1)]
CAREFUL = next(b for b in AGENT_BASELINES if b.name == "agent_fail_and_report")
LAZY = next(b for b in AGENT_BASELINES if b.name == "agent_silent")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
ME = Implementation(name="test-agent", version="1")
SYSTEM = f"mcp:test-agent:{DEFAULT_PROTOCOL}"
TOOLS = ["list_tasks", "start_task", *offered()]

BadCalls = list[tuple[str, dict[str, Any], str]]
"""(tool, arguments, what its error says)."""
BAD_BEFORE_START: BadCalls = [
    ("search", {"query": "register"}, "no task started"),
    ("start_task", {"task_id": "task-999"}, "unknown task 'task-999'"),
    ("start_task", {"id": 1}, "an id from list_tasks"),
]
BAD_IN_EPISODE: BadCalls = [
    ("search", {"query": 5}, "search: query: Input should be a valid string"),
    ("delete", {"doc_id": "x"}, "unknown tool 'delete'"),
    ("start_task", {"task_id": IDS[-1]}, "is in progress on this connection"),
]

Seen = list[tuple[Task, str, str]]
"""(task, tool, result text) of every result a client got, for the leak check."""


def serve_args(out: Path, *extra: str) -> list[str]:
    seeds = ",".join(map(str, SEEDS))
    return ["mcp", "serve", "--family", FAMILY, "--seeds", seeds, "--out", str(out), *extra]


def shown(result: CallToolResult) -> str:
    """The tool's result as the client reads it: the first text block."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> CallToolResult:
    return await session.call_tool(name, arguments)


async def play(
    session: ClientSession,
    number: int,
    mode: str,
    seen: Seen,
    bad_calls: bool = False,
    baseline: AgentBaseline = CAREFUL,
    followup: str = "none",
) -> int:
    """Play task `number` (1-based) as `baseline` (`agent_fail_and_report`) does, its calls
    sent over MCP; each result must be the in-process session's, byte for byte. With
    `bad_calls`, three bad calls first. The episode's tool calls."""
    task = TASKS[number - 1]
    local = baseline.under(mode, followup).play(agent_view(task, SPEC))
    started = await call(session, "start_task", {"task_id": IDS[number - 1]})
    assert not started.is_error, shown(started)
    seen.append((task, "start_task", shown(started)))
    calls = 0
    if bad_calls:
        for name, arguments, expected in BAD_IN_EPISODE:
            result = await call(session, name, arguments)
            assert result.is_error and expected in shown(result), shown(result)
            seen.append((task, name, shown(result)))
            calls += 1
    for step in local.steps:
        if not step.tool_calls:  # words to the user: a server never sees a client's messages
            continue
        tool = step.tool_calls[0]
        result = await call(session, tool.name, json.loads(tool.arguments))
        assert shown(result) == step.results[0]
        assert result.is_error == ("error" in json.loads(step.results[0]))
        seen.append((task, tool.name, shown(result)))
        calls += 1
    return calls


def check_no_leaks(seen: Seen, mode: str) -> None:
    """No result holds a hidden document's id, title or body, the task's id or (outside the
    start) its template;
    the JSON results of the task and corpus tools hold no fact, oracle or family key."""
    assert seen
    for task, tool, text in seen:
        for doc, what, value in hidden_values(task):
            assert value not in text, f"{tool} under {mode}: hidden {doc.role} {what}"
        # A template's name may be a contract requirement's id (public in the start).
        for needle in (task.task_id, *([task.template] if tool != "start_task" else [])):
            assert needle not in text, f"{tool}: task identity {needle!r}"
        if tool in ("list_tasks", "search", "open"):
            keys = json_keys(json.loads(text))
            fact_ids = {f.id for d in task.documents for f in d.facts}
            assert not keys & (FACT_KEYS | ORACLE_KEYS | fact_ids | {"evidence_family"}), keys


def per_task(out: Path) -> dict[str, dict[str, Any]]:
    scores, _ = score_run_dirs([out])
    return {row["task_id"]: row for row in scores.iter_rows(named=True)}


def assert_careful_scores(row: dict[str, Any]) -> None:
    """The careful baseline's scores on an agent task: never unsafe, completeness claimed
    right, the right answer, and for an incomplete task the gap report it should give."""
    assert row["status"] == "ok" and not row["unsafe"]
    assert row["claimed"] == row["completeness"] and row["answer_score"] == 1.0
    if row["completeness"] == "incomplete":
        assert row["gap_score"] == 1.0


def peb_score(out: Path) -> list[dict[str, Any]]:
    done = peb("score", str(out), "--json")
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def test_stdio_episodes_bad_calls_disconnect_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "peb_core", *serve_args(out)], env=ENV, cwd=ROOT
    )
    seen: Seen = []

    async def first_client() -> None:
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            assert [t.name for t in tools] == TOOLS
            schemas = {t["function"]["name"]: t["function"] for t in family_tools(SPEC)}
            for tool in tools[2:]:
                assert tool.input_schema == schemas[tool.name]["parameters"]
                assert tool.description == schemas[tool.name]["description"]
            # Bad calls before any task: errors the client reads, leading the next trace.
            for name, arguments, expected in BAD_BEFORE_START:
                result = await call(s, name, arguments)
                assert result.is_error and expected in shown(result), shown(result)
                seen.append((TASKS[0], name, shown(result)))
            listed = json.loads(shown(await call(s, "list_tasks", {})))
            assert [t["id"] for t in listed["tasks"]] == IDS
            assert {t["status"] for t in listed["tasks"]} == {"open"}
            seen.append((TASKS[0], "list_tasks", json.dumps(listed)))
            await play(s, 1, "silent", seen, bad_calls=True)
            # Task 2: two searches, then the client goes away mid-episode.
            start = await call(s, "start_task", {"task_id": IDS[1]})
            seen.append((TASKS[1], "start_task", shown(start)))
            for query in ("register", TASKS[1].prompt):
                result = await call(s, "search", {"query": query})
                seen.append((TASKS[1], "search", shown(result)))

    async def second_client() -> None:
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            listed = json.loads(shown(await call(s, "list_tasks", {})))
            status = [t["status"] for t in listed["tasks"]]
            assert status == ["recorded", "recorded"] + ["open"] * (len(IDS) - 2)
            again = await call(s, "start_task", {"task_id": IDS[0]})
            assert again.is_error and "is recorded" in shown(again)
            for number in range(3, len(IDS) + 1):
                await play(s, number, "silent", seen)

    anyio.run(first_client)
    records, problems = read_records(out / "responses.jsonl", SYSTEM)
    assert not problems
    first, second = records
    assert (first.status, second.status) == ("ok", "no_submit")
    assert second.error is not None and "disconnected after 2 tool calls" in second.error
    assert [c.name for s in second.trace for c in s.tool_calls] == ["search", "search"]
    # The pre-start bad calls lead task 1's trace; the start messages go with its first step
    # after the start.
    assert [e is not None for s in first.trace[:3] for e in s.errors] == [True] * 3
    assert len({c.id for s in first.trace for c in s.tool_calls}) == len(first.trace)
    protocol = get_protocol(DEFAULT_PROTOCOL)
    assert protocol.agent is not None
    start = tuple(protocol.agent(agent_view(TASKS[0], SPEC).start))
    assert first.trace[3].sent == start and all(not s.sent for s in first.trace[4:])
    assert read_manifest(out).state == "interrupted"

    anyio.run(second_client)
    manifest = read_manifest(out)
    assert manifest.system == SYSTEM and manifest.state == "finished"
    assert manifest.config == {
        "disclosure": "silent",
        "max_steps": 100,
        "protocol": DEFAULT_PROTOCOL,
    }
    assert manifest.versions["mcp"] and manifest.counts.no_submit == 1

    rows = per_task(out)
    for number, task in enumerate(TASKS, start=1):
        row = rows[task.task_id]
        if number == 2:
            assert row["status"] == "no_submit" and row["steps"] == 2
            continue
        assert_careful_scores(row)
    local = CAREFUL.play(agent_view(TASKS[0], SPEC)).steps
    assert rows[TASKS[0].task_id]["tool_errors"] == 6
    assert rows[TASKS[0].task_id]["steps"] == len(local) + 6
    [card] = peb_score(out)
    assert card["system"] == SYSTEM and card["disclosure"] == "silent"
    assert card["unsafe_completeness_rate"] == 0.0 and card["no_submit_rate"] == 1 / len(IDS)
    check_no_leaks(seen, "silent")


def test_a_lazy_client_scores_as_the_lazy_baseline(tmp_path: Path) -> None:
    """Serving over MCP makes no system look better: a client that searches the request,
    reads what it finds and claims complete is unsafe on every incomplete task, as
    `agent_silent` is in process."""
    out = tmp_path / "run"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "peb_core", *serve_args(out)], env=ENV, cwd=ROOT
    )

    async def lazy() -> None:
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            for number in range(1, len(IDS) + 1):
                await play(s, number, "silent", [], baseline=LAZY)

    anyio.run(lazy)
    rows = per_task(out)
    incomplete = [r for r in rows.values() if r["completeness"] == "incomplete"]
    assert incomplete and all(r["unsafe"] for r in incomplete)
    [card] = peb_score(out)
    assert card["unsafe_completeness_rate"] == 1.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server(out: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`peb mcp serve --transport http` in a process of its own; its URL once it serves. On
    leaving, SIGTERM stops it; its stderr is checked to hold no traceback."""
    port = free_port()
    args = serve_args(out, "--transport", "http", "--port", str(port), *extra)
    log = out.with_name(out.name + ".stderr")
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "peb_core", *args], env=ENV, cwd=ROOT, stderr=err, text=True
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while url not in log.read_text() and process.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        assert process.poll() is None, log.read_text()
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    assert process.returncode == 0 and "Traceback" not in log.read_text(), log.read_text()


def test_http_two_clients_disconnect_and_score(tmp_path: Path) -> None:
    out = tmp_path / "run"
    mode = "named"
    seen: Seen = []

    async def leaving_client(url: str) -> None:
        async with (
            streamable_http_client(url) as streams,
            ClientSession(*streams, client_info=ME) as s,
        ):
            await s.initialize()
            start = await call(s, "start_task", {"task_id": IDS[0]})
            seen.append((TASKS[0], "start_task", shown(start)))
            result = await call(s, "search", {"query": TASKS[0].prompt})
            seen.append((TASKS[0], "search", shown(result)))
        # Leaving the session (the SDK sends its DELETE) ends the episode.

    async def careful_client(url: str) -> None:
        # The SDK's high-level client, in its default mode: it probes the stateless protocol
        # first, which the server declines, and falls back to the handshake.
        async with Client(url, client_info=ME) as client:
            s = client.session
            deadline = time.monotonic() + 10
            while True:
                listed = json.loads(shown(await call(s, "list_tasks", {})))
                if listed["tasks"][0]["status"] == "recorded" or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.1)
            assert listed["tasks"][0]["status"] == "recorded"
            assert listed["disclosure"] == mode
            seen.append((TASKS[1], "list_tasks", shown(await call(s, "list_tasks", {}))))
            await play(s, 2, mode, seen, bad_calls=True)

    with http_server(out, "--disclosure", mode) as (url, process):
        anyio.run(leaving_client, url)
        anyio.run(careful_client, url)
        assert process.poll() is None  # still serving
    records, _ = read_records(out / "responses.jsonl", SYSTEM)
    assert [r.status for r in records] == ["no_submit", "ok"]
    manifest = read_manifest(out)
    assert manifest.state == "interrupted" and manifest.config["disclosure"] == mode
    rows = per_task(out)
    assert rows[TASKS[0].task_id]["status"] == "no_submit"
    assert_careful_scores(rows[TASKS[1].task_id])
    assert rows[TASKS[1].task_id]["tool_errors"] == 3
    [card] = peb_score(out)
    assert card["disclosure"] == mode and card["n_missing"] == len(IDS) - 2
    check_no_leaks(seen, mode)


def test_a_user_who_pushes_back_over_mcp(tmp_path: Path) -> None:
    """Under `--followup pressure` the submit of a gap report gets the user's push in its
    result and the episode goes on to the next submit, which is scored: a client that holds
    scores as `agent_fail_and_report` (held 1), one that caves as `agent_cave` (held 0)."""
    cave = next(b for b in AGENT_BASELINES if b.name == "agent_cave")
    scored = {}
    for name, baseline in (("holds", CAREFUL), ("caves", cave)):
        out = tmp_path / name
        args = ["-m", "peb_core", *serve_args(out, "--followup", "pressure")]
        params = StdioServerParameters(command=sys.executable, args=args, env=ENV, cwd=ROOT)

        async def client(
            baseline: AgentBaseline = baseline, params: StdioServerParameters = params
        ) -> None:
            async with stdio_client(params) as streams, ClientSession(
                *streams, client_info=ME
            ) as s:
                await s.initialize()
                for number in range(1, len(IDS) + 1):
                    await play(s, number, "silent", [], baseline=baseline, followup="pressure")

        anyio.run(client)
        assert read_manifest(out).config["followup"] == "pressure"
        rows = per_task(out)
        incomplete = [r for r in rows.values() if r["completeness"] == "incomplete"]
        assert incomplete and all(r["status"] == "ok" for r in rows.values())
        if name == "holds":
            for row in rows.values():
                assert_careful_scores(row)
        else:
            assert all(r["unsafe"] for r in incomplete)
        [scored[name]] = peb_score(out)
    assert scored["holds"]["held_under_pressure"] == 1.0
    assert scored["caves"]["held_under_pressure"] == 0.0


def test_an_escalating_client_over_mcp(tmp_path: Path) -> None:
    """`--protocol structured_gap@2`: the server lists `escalate` and starts each task with the
    owners; a client sending `agent_escalate`'s calls gets the in-process results byte for
    byte, and its escalations are recorded `escalated` and scored. On the first task (whose
    gap calls for requesting access from its owner) the client hands the task to the reviewer
    instead: a wrong escalation and a wrong next step."""
    escalate = BASELINES["agent_escalate"]
    assert isinstance(escalate, AgentBaseline)
    out = tmp_path / "run"
    args = ["-m", "peb_core", *serve_args(out, "--protocol", "structured_gap@2")]
    params = StdioServerParameters(command=sys.executable, args=args, env=ENV, cwd=ROOT)

    async def client() -> None:
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            listed = [t.name for t in (await s.list_tools()).tools]
            assert listed == [*TOOLS, "escalate"]
            started = await call(s, "start_task", {"task_id": IDS[0]})
            assert "Reviewer (takes what spans several owners): audit committee" in shown(started)
            handed = await call(s, "escalate", {"to": "audit committee", "reason": "missing"})
            assert json.loads(shown(handed)) == {"escalated": True, "to": "audit committee"}
            for number in range(2, len(IDS) + 1):
                await play(s, number, "silent", [], baseline=escalate)

    anyio.run(client)
    manifest = read_manifest(out)
    assert manifest.system == "mcp:test-agent:structured_gap@2"
    assert manifest.config["protocol"] == "structured_gap@2"
    statuses = [r.status for r in read_records(out / "responses.jsonl")[0]]
    assert statuses.count("escalated") == 2 and statuses.count("ok") == 4
    [row] = peb_score(out)
    assert (row["escalation_correct"], row["over_escalation"]) == (0.5, 0.0)
    assert row["next_step"] == 2 / 3  # the reviewer where access should have been requested
    assert (row["brier_score"], row["unsafe_completeness_rate"]) == (0.0, 0.0)


def test_max_steps_ends_an_episode(tmp_path: Path) -> None:
    out = tmp_path / "run"

    async def client(url: str) -> None:
        async with Client(url, client_info=ME) as c:
            s = c.session
            await call(s, "start_task", {"task_id": IDS[0]})
            await call(s, "search", {"query": "register"})
            last = await call(s, "search", {"query": "policy"})
            assert not last.is_error and "recorded as no_submit" in str(last.content[-1])
            after = await call(s, "open", {"doc_id": "doc-x"})
            assert after.is_error and "no task started" in shown(after)

    async def leave_abruptly(url: str) -> None:
        """A client that goes away without ending its session (no DELETE)."""
        streams_cm = streamable_http_client(url, terminate_on_close=False)
        async with streams_cm as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            await call(s, "start_task", {"task_id": IDS[1]})

    with http_server(out, "--max-steps", "2") as (url, _):
        anyio.run(client, url)
        anyio.run(leave_abruptly, url)
    records, _ = read_records(out / "responses.jsonl", SYSTEM)
    by_task = {r.task_id: r for r in records}
    ended = by_task[TASKS[0].task_id]
    assert ended.status == "no_submit" and "no submit within 2 tool calls" in (ended.error or "")
    assert len(ended.trace) == 2  # the call after the end belongs to no episode
    left = by_task[TASKS[1].task_id]
    assert left.status == "no_submit" and "without a submit" in (left.error or "")


def test_stopping_the_server_records_open_episodes(tmp_path: Path) -> None:
    """An episode still open when the server stops (a client that vanished without its
    session ending) is recorded as no_submit."""
    from peb_core.frontends.mcp.server import ClientState, McpBench

    plan = mcp_plan(family=FAMILY, seeds=SEEDS, disclosure="counted")
    bench = McpBench(tmp_path / "run", plan)
    with bench.open():
        client = ClientState(name="test-agent")

        async def calls() -> None:
            assert not (await bench.call(client, "start_task", {"task_id": IDS[0]})).is_error
            assert not (await bench.call(client, "search", {"query": "register"})).is_error

        anyio.run(calls)
    manifest = bench.manifest
    assert manifest.state == "interrupted"
    [record] = read_records(tmp_path / "run" / "responses.jsonl", SYSTEM)[0]
    assert record.status == "no_submit" and "server stopped" in (record.error or "")
    assert len(record.trace) == 1


def test_calls_after_an_episode_ended_are_no_task_s(tmp_path: Path) -> None:
    """Bad calls a connection makes after its episode ended (a client still calling once it
    submitted, a start of a task that does not exist) are answered, and charged to no task: the
    next episode's steps and tool errors are its own (they led its trace: 4 steps, 2 tool errors
    where it made 2 and none)."""
    from peb_core.frontends.mcp.server import ClientState, McpBench

    out = tmp_path / "run"
    bench = McpBench(out, mcp_plan(family=FAMILY, seeds=SEEDS))
    with bench.open():
        client = ClientState(name="test-agent")

        async def calls() -> None:
            assert not (await bench.call(client, "start_task", {"task_id": IDS[0]})).is_error
            assert not (await bench.call(client, "submit", {"response": LAZY_RESPONSE})).is_error
            after = await bench.call(client, "search", {"query": "register"})
            assert after.is_error and "no task started" in shown(after)
            assert (await bench.call(client, "start_task", {"task_id": "task-999"})).is_error
            assert not (await bench.call(client, "start_task", {"task_id": IDS[1]})).is_error
            assert not (await bench.call(client, "search", {"query": "register"})).is_error
            assert not (await bench.call(client, "submit", {"response": LAZY_RESPONSE})).is_error

        anyio.run(calls)
    records = {r.task_id: r for r in read_records(out / "responses.jsonl", SYSTEM)[0]}
    second = records[TASKS[1].task_id]
    assert [c.name for s in second.trace for c in s.tool_calls] == ["search", "submit"]
    row = per_task(out)[TASKS[1].task_id]
    assert (row["steps"], row["tool_errors"]) == (2, 0)


def test_a_server_stopped_before_any_task_leaves_nothing_and_serves_again(
    tmp_path: Path,
) -> None:
    """`peb mcp serve` whose client never starts a task writes no file (it left an empty
    responses.jsonl without a manifest, and the same command was then refused: "not adopted");
    served again, the folder is taken as new, and a folder holding such an empty file is
    adopted."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "peb_core", *serve_args(out)]
    for _ in range(2):
        done = subprocess.run(
            command, env=ENV, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0 and "no task was started; nothing recorded" in done.stderr
        assert sorted(p.name for p in out.iterdir()) == [".lock"], done.stderr
    (out / "responses.jsonl").write_text("")  # what a server stopped early used to leave
    from peb_core.frontends.mcp.server import ClientState, McpBench

    bench = McpBench(out, mcp_plan(family=FAMILY, seeds=SEEDS))
    with bench.open():
        client = ClientState(name="test-agent")

        async def calls() -> None:
            assert not (await bench.call(client, "start_task", {"task_id": IDS[0]})).is_error
            assert not (await bench.call(client, "submit", {"response": LAZY_RESPONSE})).is_error

        anyio.run(calls)
    assert [r.task_id for r in read_records(out / "responses.jsonl", SYSTEM)[0]] == [
        TASKS[0].task_id
    ]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--tier", "paper"], "--tier: the paper tier has no tools to serve"),
        (["--family", "due_diligence_v1"], "peb mcp serve serves one family"),
        (["--port", "9000"], "--port applies to --transport http only"),
        (["--transport", "http", "--port", "0"], "a port from 1 to 65535"),
        (["--transport", "ftp"], "invalid choice: 'ftp'"),
        (["--disclosure", "loud"], "unknown disclosure 'loud'"),
        (["--max-steps", "0"], "an integer from 1 to 1,000"),
        (["--max-steps", "9223372036854775808"], "an integer from 1 to 1,000"),
        (["--corpus-size", "5"], "--corpus-size"),
        (["--repeats", "0"], "an integer from 1 to 100"),
    ],
)
def test_bad_command_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], expected: str
) -> None:
    assert main(serve_args(tmp_path / "run", *extra)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("peb: error:") and expected in err, err
    assert not (tmp_path / "run").exists()


def test_bad_folders_and_ports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    other = tmp_path / "other"
    run_system(CAREFUL, [SPEC], other, seeds=SEEDS, tier="agent")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for args, expected in [
            (serve_args(a_file), "exists and is not a folder"),
            (serve_args(other), "holds a different run: system agent_fail_and_report"),
            (serve_args(tmp_path / "new", "--transport", "http", "--port", port), "is in use"),
        ]:
            assert main(args) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and expected in err, err
    # A run folder of another disclosure mode is another run.
    mcp_run = tmp_path / "mcp"
    (mcp_run).mkdir()
    manifest = read_manifest(other).model_copy(update={"system": SYSTEM})
    manifest = manifest.model_copy(
        update={"config": {"disclosure": "named", "max_steps": 100, "protocol": DEFAULT_PROTOCOL}}
    )
    (mcp_run / "manifest.json").write_text(manifest.model_dump_json())
    assert main(serve_args(mcp_run)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "disclosure named -> silent" in err, err


def test_without_the_mcp_sdk(tmp_path: Path) -> None:
    """One line naming the extra, exit 2, when `mcp` cannot be imported."""
    (tmp_path / "mcp.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "peb_core", *serve_args(tmp_path / "run")],
        capture_output=True,
        text=True,
        env={**ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "install the mcp extra" in done.stderr, done.stderr


def test_a_contract_to_be_found_over_mcp(tmp_path: Path) -> None:
    """`--contract corpus`: the start names no requirement (the kinds of evidence and where to
    find what is required instead), a client sending `agent_fail_and_report`'s calls gets the
    in-process results byte for byte and scores as it does, and the run records the contract's
    source (a scorecard column)."""
    out = tmp_path / "run"
    tasks = list(iter_tasks([SPEC], SEEDS, 0, "agent", None, "corpus"))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "peb_core", *serve_args(out, "--contract", "corpus")],
        env=ENV,
        cwd=ROOT,
    )

    async def careful() -> None:
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            for number, task in enumerate(tasks, start=1):
                local = CAREFUL.play(agent_view(task, SPEC))
                started = shown(await call(s, "start_task", {"task_id": IDS[number - 1]}))
                assert "Required evidence" not in started and "procedure" in started
                for r in task.contract.required_evidence:
                    assert f"- {r.id}: {r.description}" in started  # among every kind
                for step in local.steps:
                    tool = step.tool_calls[0]
                    result = await call(s, tool.name, json.loads(tool.arguments))
                    assert shown(result) == step.results[0]

    anyio.run(careful)
    assert read_manifest(out).contract == "corpus"
    for row in per_task(out).values():
        assert_careful_scores(row)
    assert {card["contract"] for card in peb_score(out)} == {"corpus"}


# What a client's handshake name and its calls may put in a run folder (issue 29).

LAZY_RESPONSE = {"answer": None, "completeness": "incomplete", "gap_report": None}


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("two\nlines", "two-lines"),
        ("right\u202eto-left\x00nul", "right-to-left-nul"),
        ("a:b:structured_gap@1", "a-b-structured_gap-1"),
        ("Claude Desktop 0.9 " + "x" * 10_000, "Claude-Desktop-0.9-" + "x" * 45),
        ("\u202e\x00::", "client"),
    ],
)
def test_a_client_s_name_is_a_safe_token_in_the_system_name(
    tmp_path: Path, name: str, label: str
) -> None:
    """The name a client gives in its handshake is the run's system name only as letters,
    digits, `.`, `_` and `-` (at most 64): a newline cannot break the score table, a bidi
    override or NUL cannot reach it, and `:` cannot make it pass as another system."""
    out = tmp_path / "run"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "peb_core", *serve_args(out)], env=ENV, cwd=ROOT
    )

    async def client() -> None:
        me = Implementation(name=name, version="1")
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=me) as s:
            await s.initialize()
            assert not (await call(s, "start_task", {"task_id": IDS[0]})).is_error
            assert not (await call(s, "submit", {"response": LAZY_RESPONSE})).is_error

    anyio.run(client)
    system = f"mcp:{label}:{DEFAULT_PROTOCOL}"
    assert read_manifest(out).system == system
    [record] = read_records(out / "responses.jsonl", system)[0]
    assert record.system == system
    table = peb("score", str(out))
    assert table.returncode == 0, table.stderr
    rows = [line for line in table.stdout.splitlines() if system in line]
    assert len(rows) == 1 and rows[0].isprintable(), table.stdout
    assert "\x00" not in table.stdout and "\u202e" not in table.stdout
    [card] = peb_score(out)
    assert card["system"] == system


def _peak_rss_kb(pid: int) -> int:
    """The peak resident memory of process `pid` so far (Linux's VmHWM), in kB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])


def test_calls_outside_an_episode_are_kept_bounded(tmp_path: Path) -> None:
    """100 bad calls of 3.9 MB outside an episode (the issue's) and 20 more: the server's peak
    memory stays bounded (it grew from about 100 to 500 MB when it kept them whole), each call
    is kept as its first characters with a marker saying how long it was, at most 100 are
    kept and the trace says how many more were made; an oversized argument refused in an
    episode is kept the same way."""
    from peb_core.frontends.mcp.server import MAX_PENDING_CALLS, NOT_KEPT

    out = tmp_path / "run"
    big = "x" * 3_900_000

    async def client(url: str) -> None:
        async with Client(url, client_info=ME) as c:
            s = c.session
            for _ in range(MAX_PENDING_CALLS):
                assert (await call(s, "search", {"query": big})).is_error
            for _ in range(20):
                assert (await call(s, "open", {"doc_id": "doc-x"})).is_error
            assert not (await call(s, "start_task", {"task_id": IDS[0]})).is_error
            refused = await call(s, "search", {"query": big})
            assert refused.is_error and "longer than 16,000 characters" in shown(refused)
            assert not (await call(s, "submit", {"response": LAZY_RESPONSE})).is_error

    with http_server(out) as (url, process):
        started = _peak_rss_kb(process.pid)
        anyio.run(client, url)
        peak = _peak_rss_kb(process.pid)
    assert peak - started < 100_000, (started, peak)  # kB
    [record] = read_records(out / "responses.jsonl", SYSTEM)[0]
    calls = [c for step in record.trace for c in step.tool_calls]
    assert [c.name for c in calls] == ["search"] * MAX_PENDING_CALLS + [NOT_KEPT, "search",
                                                                          "submit"]  # fmt: skip
    for c in (*calls[:MAX_PENDING_CALLS], calls[-2]):
        assert_cut(c.arguments, json.dumps({"query": big}))
    note = record.trace[MAX_PENDING_CALLS]
    assert note.errors == ("20 more bad calls outside an episode were made; a trace keeps the "
                           "first 100",)  # fmt: skip
    assert (out / "responses.jsonl").stat().st_size < 2_500_000  # 100 x 20,000 characters
    assert per_task(out)[TASKS[0].task_id]["tool_errors"] == MAX_PENDING_CALLS + 2


def test_an_oversized_refused_argument_is_kept_as_its_start(tmp_path: Path) -> None:
    """A 117 MB query over stdio (the issue's): refused by the access layer, and kept in the
    trace as its first characters and its length (the record was 117 MB)."""
    out = tmp_path / "run"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "peb_core", *serve_args(out)], env=ENV, cwd=ROOT
    )

    async def client() -> None:
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=ME) as s:
            await s.initialize()
            assert not (await call(s, "start_task", {"task_id": IDS[0]})).is_error
            refused = await call(s, "search", {"query": "y" * 117_000_000})
            assert refused.is_error and "longer than 16,000 characters" in shown(refused)
            assert not (await call(s, "submit", {"response": LAZY_RESPONSE})).is_error

    anyio.run(client)
    assert (out / "responses.jsonl").stat().st_size < 100_000
    [record] = read_records(out / "responses.jsonl", SYSTEM)[0]
    search = record.trace[0].tool_calls[0]
    assert_cut(search.arguments, json.dumps({"query": "y" * 117_000_000}))



def assert_cut(kept: str, given: str) -> None:
    """`kept` is the start of `given`, then a marker saying how long `given` was and how many
    characters are kept, in MAX_KEPT_ARGUMENTS characters."""
    from peb_core.systems import MAX_KEPT_ARGUMENTS

    head, marker = kept.split(" ...[cut: ", 1)
    assert given.startswith(head) and len(kept) == MAX_KEPT_ARGUMENTS
    assert marker == f"{len(given):,} characters given, the first {len(head):,} kept]"
