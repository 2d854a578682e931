"""The agent tier's tools over the Model Context Protocol (docs/benchmark.md, "Any agent over
MCP"): `peb mcp serve` lets any MCP client (an agent framework, a desktop assistant) play the
tasks of a run, and records every episode into a normal run folder that `peb score`, compare and
the workbench read. The one module that imports the `mcp` SDK (the `mcp` extra).

A client calls `list_tasks`, then `start_task(task_id)`, which returns what an agent of our own
loop starts with (the prompt protocol's agent messages: the request, the answer fields, the
contract and policy, or under `--contract corpus` the kinds of evidence, the policy and where
to find what is required) and the response schema; then `search`, `open` and `submit`, which are the
access layer's tools (`AgentSession.acall`, the code the CLI's agents call, with its schemas),
and on tasks that list sub-agents `delegate`, whose handed-off episode a peb agent system (the
delegate system) plays here, in the server, recorded beside the call as `peb run` records it.
A connection plays one episode at a time; a run may record each task `repeats` times (each
episode with its repeat index, as `peb run --repeats`). An episode ends at its first accepted
submit (`ok`), or without one (`no_submit`) after `max_steps` tool calls, when the client
disconnects, or when the server stops; each ends as one record with the episode's trace, one
step per tool call.

Task ids a client sees are positions in the run (`task-001`, ...): a task id names its
template, which says what the task hides. An episode is state kept across calls, so the server
speaks the protocol's session era (the `initialize` handshake, over stdio and stateful
streamable HTTP); it declines the stateless `server/discover` probe, so clients fall back to
the handshake.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..._provenance import package_version
from ...access import (
    SUBMIT_CHECKS,
    TOOLS,
    AgentView,
    ToolContext,
    family_tools,
    get_disclosure,
    platform_view,
)
from ...interventions import at_response, get_intervention, platform_part
from ...runs import MCP_PREFIX, RunError, RunManifest, RunPlan, RunWriter, new_manifest
from ...systems import (
    Episode,
    Handoffs,
    PromptProtocol,
    ResponseRecord,
    Step,
    ToolCall,
    Usage,
    answering_repeat,
    followup_config,
    system_name,
)
from ...tasks import DEFAULT_CONTRACT, Task, iter_tasks, response_schema, view_for
from . import DEFAULT_PORT

SERVER_NAME = "partial-evidence-bench"
LIST_TASKS = "list_tasks"
START_TASK = "start_task"
MAX_CLIENT_NAME = 64
"""The most characters of a client's name a run's system keeps (`client_label`)."""
MAX_PENDING_CALLS = 100
"""The most bad calls made outside an episode that a connection keeps for its next trace; the
calls beyond them are counted, and the trace says how many (`NOT_KEPT`)."""
NOT_KEPT = "(calls not kept)"
"""The name of the step that says how many calls outside an episode were not kept."""

_START_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": {"type": "string", "description": "a task id from list_tasks, e.g. task-001"}
    },
    "required": ["task_id"],
    "additionalProperties": False,
}


@dataclass
class OpenTask:
    """A task being played on a connection: which task, what its episode started with, and the
    episode, recorded (`Episode`: its session and the steps so far)."""

    task_id: str
    """The id the client sees."""
    task: Task
    start: tuple[dict[str, str], ...]
    """The start messages, recorded as the first step's `sent`."""
    episode: Episode
    lead: int = 0
    """How many of the episode's steps are bad calls made before the task was started (they
    lead its trace, and count toward no step budget)."""
    repeat: int = 0
    """Which of the run's repeats of the task it plays (`--repeats`: 0 to K-1)."""

    @property
    def steps(self) -> int:
        """The calls made on the connection since the task was started."""
        return len(self.episode.steps) - self.lead


def client_label(name: str | None) -> str:
    """A client's handshake name as a run's system names it (`mcp:<label>:<protocol>`): ASCII
    letters, digits, `.`, `_` and `-`, each run of any other character (a space, a `:` that
    would split the system's name, a control, NUL or bidi character) one `-`, at most
    `MAX_CLIENT_NAME` characters; `client` when nothing is left."""
    label = re.sub(r"[^A-Za-z0-9._-]+", "-", name or "").strip("-")
    return label[:MAX_CLIENT_NAME].rstrip("-") or "client"


@dataclass
class ClientState:
    """A connection's state: its client's name (`client_label`), its open task if any, the bad
    calls it made outside an episode before its first (they lead the trace of that episode; at
    most `MAX_PENDING_CALLS` are kept, the rest counted in `not_kept`) and whether one of its
    episodes has ended (`played`: the bad calls it makes outside an episode after that belong
    to no task, and are answered but not kept)."""

    name: str
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    task: OpenTask | None = None
    pending: list[Step] = field(default_factory=list)
    not_kept: int = 0
    """Bad calls outside an episode beyond the `MAX_PENDING_CALLS` kept."""
    played: bool = False
    """Whether an episode of this connection has ended."""

    def keep(self, step: Step) -> None:
        """Keep a bad call made outside an episode for the next trace (within the record
        caps: a refused argument of any size is its start), or count it; none once an
        episode of the connection has ended (a call after it is no next task's)."""
        if self.played:
            return
        if len(self.pending) < MAX_PENDING_CALLS:
            self.pending.append(step.bounded())
        else:
            self.not_kept += 1

    def take_pending(self) -> list[Step]:
        """The bad calls kept for the trace of the episode that starts now (a step saying how
        many more were made, if any were not kept), and none kept after."""
        steps = list(self.pending)
        if self.not_kept:
            note = (
                f"{self.not_kept:,} more bad calls outside an episode were made; a trace keeps "
                f"the first {MAX_PENDING_CALLS}"
            )
            call = ToolCall(
                id="not_kept", name=NOT_KEPT, arguments=json.dumps({"calls": self.not_kept})
            )
            steps.append(Step.answered((call,), ((json.dumps({"error": note}), note),)))
        self.pending.clear()
        self.not_kept = 0
        return steps


def _failed(message: str) -> tuple[str, str | None]:
    return json.dumps({"error": message}), message


class McpBench:
    """The tasks of one run served to MCP clients, and the run folder their episodes go to.

    Args:
        out: the run folder (created, or resumed when it holds the same run).
        plan: the run, checked (`runs.plan_run` with `frontend="mcp"`): one family served (the
            `submit` tool's schema is its response schema) at its seeds, on a tier whose tasks
            are reached through tools, under its disclosure mode, with its contract given or
            to be found in the corpus (`plan.contract`, docs §9.3), with `max_steps` tool calls
            an episode may make without a submit (a step of an MCP episode is one tool call:
            the client's model requests are not seen), its repeats (a task may be started until
            it has that many episodes, each recorded with its repeat index), and the system
            that plays the episode a `delegate` call hands off (`plan.delegate`, on tasks that
            list sub-agents), recorded in the run's config.

    The start of an episode is the run's prompt (`plan.prompt`: its protocol's agent rendering
    with the run's prompt options), as our own agents are given it; a protocol that asks for a
    tool offered only when asked for (`escalate` under `structured_gap@2`) has it listed and
    served.
    """

    def __init__(self, out: Path, plan: RunPlan) -> None:
        self.out = out
        self.plan = plan
        [self.spec] = plan.selection.families
        self.intervention = get_intervention(plan.spec.intervention)
        """The platform element around the client's episodes (docs/benchmark.md §11): its
        checks in each session and its part in each record (its prompt edit is the run's
        prompt, `plan.prompt`)."""
        self.protocol: PromptProtocol = plan.prompt
        if self.protocol.agent is None:
            raise ValueError(f"protocol {self.protocol.id} has no agent rendering")
        self.disclosure = plan.spec.disclosure
        self.followup = plan.spec.followup
        assert plan.max_steps is not None
        self.max_steps = plan.max_steps
        self.repeats = plan.spec.repeats
        tasks = iter_tasks(
            [self.spec],
            plan.seeds,
            plan.selection.distractors,
            plan.tier,
            plan.corpus_size,
            plan.contract or DEFAULT_CONTRACT,
        )
        self.tasks = {f"task-{i:03d}": task for i, task in enumerate(tasks, start=1)}
        self.delegate_system = plan.delegate
        self.tools = [
            types.Tool(name=LIST_TASKS, description=_LIST_DESCRIPTION, input_schema=_EMPTY),
            types.Tool(name=START_TASK, description=_START_DESCRIPTION, input_schema=_START_SCHEMA),
            *(
                types.Tool(
                    name=tool["function"]["name"],
                    description=tool["function"]["description"],
                    input_schema=tool["function"]["parameters"],
                )
                for tool in family_tools(
                    self.spec,
                    self.disclosure,
                    plan.delegate is not None,
                    asks=self.protocol.tools,
                    parts=self.protocol.parts,
                )
            ),
        ]
        handing = plan.delegate
        self.manifest = new_manifest(
            system="",
            config={
                "disclosure": self.disclosure,
                "max_steps": self.max_steps,
                **self.protocol.config(),
                **followup_config(self.followup),
                **self.intervention.config(),
                **(
                    {}
                    if handing is None
                    else {"delegate_system": {"name": handing.name, **handing.config()}}
                ),
            },
            families=[self.spec],
            seeds=plan.seeds,
            tier=plan.tier,
            kind="episodes",
            n_tasks=len(self.tasks),
            distractors=plan.selection.distractors,
            corpus_size=plan.corpus_size,
            contract=plan.contract,
            repeats=self.repeats,
            digests={"protocol_text": self.protocol.agent_digest},
            versions={"mcp": version("mcp")},
        )
        """The run's manifest, until the writer takes it (`open`)."""
        self.writer: RunWriter | None = None
        self._recorded: dict[tuple[str, str], set[int]] = {}
        """The repeats of each task (family, task id) with a record."""
        self.active: dict[str, ClientState] = {}
        self.warnings: list[str] = []

    # The run folder.

    @contextmanager
    def open(self) -> Iterator[RunWriter]:
        """Hold the run folder while serving: the run already in `out` (the same run, any
        client's name) is resumed, or one is started (written once a client starts a task); a
        RunError for a folder that holds another run or replies without a manifest. Warnings
        met are kept in `warnings`. At the end every open episode is recorded (`no_submit`:
        the server stopped) and the run left `finished` if every task has its records, else
        `interrupted` (serving again resumes it)."""
        with RunWriter.resume(
            self.out, self.manifest, [self.spec], retry_errors=False, any_system=MCP_PREFIX
        ) as writer:
            self.warnings += writer.problems
            self.writer = writer
            for family, task_id, repeat in writer.done:
                self._recorded.setdefault((family, task_id), set()).add(repeat)
            try:
                yield writer
            finally:
                for client in list(self.active.values()):
                    self._end(client, "the server stopped before a submit")
                self.manifest = writer.close()

    def status(self, task_id: str) -> str:
        """`recorded` (every repeat), `in progress` (on some connection) or `open`."""
        if len(self._done(task_id)) == self.repeats:
            return "recorded"
        return "in progress" if task_id in self.active else "open"

    def _done(self, task_id: str) -> set[int]:
        """The repeats of a task that have a record."""
        task = self.tasks[task_id]
        return self._recorded.get((task.family, task.task_id), set())

    def _system(self, client: ClientState) -> str:
        return system_name(f"{MCP_PREFIX}{client.name}", self.protocol.id)

    def _record(self, record: ResponseRecord) -> None:
        """Append `record` (flushed at once), then the manifest with the counts so far."""
        assert self.writer is not None
        self.writer.append(record)
        self.writer.checkpoint()
        self._recorded.setdefault((record.family, record.task_id), set()).add(record.repeat)

    # Calls.

    async def call(
        self, client: ClientState, name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """Answer one tool call of `client` (a `delegate` call awaits the handed-off episode);
        never raises for what a client sends."""
        started = time.monotonic()
        open_task = client.task
        text = json.dumps(arguments, ensure_ascii=False)
        sent = open_task.start if open_task is not None and not open_task.steps else ()
        if open_task is not None and name not in (LIST_TASKS, START_TASK):
            with answering_repeat(open_task.repeat):  # a model sub-agent's cache key and seed
                outcome = await open_task.episode.acall(name, text, sent=sent)
            content, error = outcome.content, outcome.error
        else:
            content, error = self._unseen(client, name, arguments)
            if name == START_TASK and error is None:
                return _result(content)
            # A call no session sees is in the trace it goes to, uncounted by a grant schedule:
            # the open task's, or (a bad call before the connection's first task) that task's;
            # one after an episode ended is no task's (`ClientState.keep`).
            steps = open_task.episode.steps if open_task is not None else client.pending
            if open_task is not None or error is not None:
                number = f"call_{len(steps) + client.not_kept + 1}"
                call = ToolCall(id=number, name=name, arguments=text, reached=False)
                usage = Usage(latency_s=round(time.monotonic() - started, 3))
                step = Step.answered((call,), ((content, error),), sent=sent, usage=usage)
                if open_task is not None:
                    steps.append(step.bounded())
                else:
                    client.keep(step)
            if open_task is None:
                return _result(content, error)
        notes: list[str] = []
        if open_task.episode.session.over:
            self._end(client)
        elif open_task.steps >= self.max_steps:
            self._end(client, f"no submit within {self.max_steps} tool calls")
            notes.append(
                f"The episode is over: {self.max_steps} tool calls without a submit (recorded "
                "as no_submit). Call list_tasks and start_task for another task."
            )
        return _result(content, error, notes)

    def _unseen(
        self, client: ClientState, name: str, arguments: dict[str, Any]
    ) -> tuple[str, str | None]:
        """The answer to a call no session sees: `list_tasks`, `start_task`, or a call made
        before a task was started."""
        if name == LIST_TASKS:
            return self._list_tasks(), None
        if name == START_TASK:
            return self._start(client, arguments)
        known = name in {t.name for t in self.tools}
        return _failed(
            f"{name}: no task started: call list_tasks, then start_task(task_id)"
            if known
            else f"unknown tool {name!r}; tools: {', '.join(t.name for t in self.tools)}"
        )

    def _list_tasks(self) -> str:
        return json.dumps(
            {
                "family": self.spec.id,
                "disclosure": self.disclosure,
                "max_steps": self.max_steps,
                **({"repeats": self.repeats} if self.repeats > 1 else {}),
                "tasks": [
                    {
                        "id": t,
                        "status": self.status(t),
                        **({"repeats_recorded": len(self._done(t))} if self.repeats > 1 else {}),
                    }
                    for t in self.tasks
                ],
            }
        )

    def _start(self, client: ClientState, arguments: dict[str, Any]) -> tuple[str, str | None]:
        task_id = arguments.get("task_id")
        if set(arguments) != {"task_id"} or not isinstance(task_id, str):
            return _failed('start_task: expected {"task_id": string}, an id from list_tasks')
        if client.task is not None:
            return _failed(
                f"start_task: task {client.task.task_id} is in progress on this connection; "
                "submit it first (one episode at a time)"
            )
        if task_id not in self.tasks:
            first, last = next(iter(self.tasks), "-"), next(reversed(self.tasks), "-")
            return _failed(f"start_task: unknown task {task_id!r}; tasks: {first} to {last}")
        status = self.status(task_id)
        if status != "open":
            return _failed(f"start_task: task {task_id} is {status}; choose an open task")
        assert self.writer is not None
        claimed, system = self.writer.manifest.system, self._system(client)
        if claimed and claimed != system:
            return _failed(
                f"start_task: this run records the client {claimed!r}; a client named "
                f"{client.name!r} needs a run folder of its own"
            )
        try:
            self.writer.claim(system)
        except RunError as exc:  # its responses file cannot be written
            return _failed(f"start_task: {exc}")
        task = self.tasks[task_id]
        view = view_for("agent", task, self.spec)
        assert isinstance(view, AgentView) and self.protocol.agent is not None
        view = replace(view, checks=tuple(SUBMIT_CHECKS[c] for c in self.intervention.checks))
        start = tuple(self.protocol.agent(view.start))
        handoffs = (
            Handoffs(self.delegate_system)
            if self.delegate_system is not None and view.delegates
            else None
        )
        session = view.session(
            self.disclosure,
            delegator=handoffs,
            followup=self.followup,
            asks=self.protocol.tools,
            parts=self.protocol.parts,
        )
        repeat = min(set(range(self.repeats)) - self._done(task_id))
        lead = client.take_pending()
        episode = Episode(session, steps=lead)
        client.task = OpenTask(task_id, task, start, episode, len(lead), repeat)
        self.active[task_id] = client
        text = "\n\n".join(message["content"] for message in start)
        listed = {t.name: t.description for t in self.tools}
        for schema in session.tools:  # what a tool says of this task only: the stores it
            said = schema["function"]  # reaches, the sub-agents with their stores and scopes
            if said["description"] != listed.get(said["name"]):
                text += f"\n\nThe {said['name']} tool on this task: {said['description']}"
        context = ToolContext(
            response_schema(self.spec, self.protocol.parts), get_disclosure(self.disclosure)
        )
        for tool in (TOOLS[t.name] for t in self.tools if t.name in TOOLS):
            if tool.note is not None:  # what the tool adds to a start read as text
                text += f"\n\n{tool.note(context)}"
        which = f" (repeat {repeat + 1} of {self.repeats})" if self.repeats > 1 else ""
        return f"Task {task_id}{which}.\n\n{text}", None

    def _end(self, client: ClientState, stopped: str | None = None) -> None:
        """Record the client's episode, over as its session says (`stopped` None: `ok`) or
        stopped for the reason `stopped` (`Episode.out_of_budget`: `no_submit`, or `ok` with
        the first response where the user pushed back and no second submit came), and close
        it."""
        open_task = client.task
        assert open_task is not None and self.writer is not None
        client.task, client.played = None, True
        self.active.pop(open_task.task_id, None)
        task = open_task.task
        episode = open_task.episode
        reply = episode.reply("ok") if stopped is None else episode.out_of_budget(stopped)
        if self.intervention.respond is not None and reply.status == "ok":
            given = at_response(reply, platform_view(task), self.spec, disclosure=self.disclosure)
            reply = platform_part(self.intervention, reply, given)
        system = self.writer.manifest.system
        self._record(
            ResponseRecord.of_reply(
                task.family, task.task_id, system, reply, repeat=open_task.repeat
            )
        )

    def disconnected(self, client: ClientState) -> None:
        """The client's connection closed: its open episode ends without a submit."""
        if client.task is not None:
            calls = len(client.task.episode.steps)
            self._end(client, f"the client disconnected after {calls} tool calls without a submit")


_EMPTY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_LIST_DESCRIPTION = (
    "List the tasks of this benchmark run with their status (open, in progress, recorded). "
    "Start an open one with start_task."
)
_START_DESCRIPTION = (
    "Start a task: returns its request, the answer fields, the contract (or where to find it) "
    "and policy, and the response schema. Then use search and open, and end with submit. One "
    "task at a time."
)


def _result(
    content: str, error: str | None = None, notes: Sequence[str] = ()
) -> types.CallToolResult:
    blocks: list[types.ContentBlock] = [types.TextContent(text=t) for t in (content, *notes)]
    return types.CallToolResult(content=blocks, is_error=error is not None)


def _connection(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The connection a request came on. The SDK keeps per-connection state and teardown on a
    `Connection` (`state`; `exit_stack`, unwound however the connection ends: EOF on stdio, a
    DELETE, an idle timeout or the server stopping on HTTP) but does not yet hand it to
    low-level handlers (its request context rework is pending), so it is read off the
    request's session."""
    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection):
        raise RuntimeError("this mcp SDK does not keep a connection on its request session")
    return connection


def build_server(bench: McpBench) -> Server[Any]:
    """The MCP server of `bench`: its tools listed and called, one `ClientState` per connection."""

    async def client_of(ctx: ServerRequestContext[Any, Any]) -> ClientState:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="an episode is kept per session: connect with the initialize handshake",
            )
        connection = _connection(ctx)
        client = connection.state.get("peb")
        if not isinstance(client, ClientState):
            params = ctx.session.client_params
            name = params.client_info.name if params is not None else None
            client = connection.state["peb"] = ClientState(name=client_label(name))

            async def closed() -> None:
                bench.disconnected(client)

            connection.exit_stack.push_async_callback(closed)
        return client

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=bench.tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        client = await client_of(ctx)
        async with client.lock:
            return await bench.call(client, params.name, dict(params.arguments or {}))

    async def no_discover(
        ctx: ServerRequestContext[Any, Any], params: types.RequestParams
    ) -> types.DiscoverResult:
        raise MCPError(
            code=types.METHOD_NOT_FOUND, message="server/discover is not served: use initialize"
        )

    server: Server[Any] = Server(
        SERVER_NAME,
        version=package_version(),
        instructions=(
            "Benchmark tasks behind an access-controlled search: list_tasks, start_task, then "
            "search, open and submit."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    return server


def serve(
    bench: McpBench,
    transport: str = "stdio",
    port: int = DEFAULT_PORT,
    ready: Callable[[str], None] | None = None,
) -> RunManifest | None:
    """Serve `bench` over `transport` (`stdio`: one client, until it disconnects; `http`:
    streamable HTTP on 127.0.0.1:`port` at /mcp, until interrupted) holding the run's lock;
    `ready` is told where. A KeyboardInterrupt stops it as the end of the input does. The
    manifest at the end (None if no task was started)."""
    with bench.open() as writer:
        try:
            if transport == "stdio":
                if ready:
                    ready("stdio")
                anyio.run(_stdio, bench)
            else:
                anyio.run(_http, bench, port, ready)
        except KeyboardInterrupt:
            pass  # Ctrl-C: how a server is stopped
    return bench.manifest if writer.manifest.system else None


async def _stdio(bench: McpBench) -> None:
    server = build_server(bench)
    async with stdio_server() as (read_stream, write_stream):
        await serve_loop(server, read_stream, write_stream, lifespan_state={})


async def _http(bench: McpBench, port: int, ready: Callable[[str], None] | None) -> None:
    import uvicorn

    app = build_server(bench).streamable_http_app(host="127.0.0.1")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    # Bound here, so a client may connect (and wait in the backlog) once `ready` is told.
    listening = socket.create_server(("127.0.0.1", port))
    with listening:
        if ready:
            ready(f"http://127.0.0.1:{port}/mcp")
        await server.serve(sockets=[listening])
