"""The agent tier as inspect_ai episodes (docs/benchmark.md §9, inspect agents): our tools as
inspect tools over the access layer, a step budget for inspect's `react()` agent, and an
episode's trace read back from the conversation an inspect agent leaves.

- `episode_setup(disclosure, corpus_size)`: a setup solver (it runs even when `--solver`
  replaces the task's solver) that gives each sample its own `AgentSession` over its task's
  corpus, kept in `SESSIONS` under a key in the sample's store, and puts the tools in the
  sample's `tools`;
- `episode_tools(spec, disclosure)` (or, while a sample runs, `sample_tools()`): every
  registered tool (`search`, `open`, `submit`, and any tool registered later, such as
  `delegate`) as an inspect tool (`episode_tool`) with our description and schema, each call
  answered by the current sample's session (`AgentSession.call`: the same code as our own
  loop); a call the session answers with an error raises `ToolError`, so inspect shows the
  model the error and records it; an accepted submit returns the submitted response. inspect
  checks a call's arguments against the tool's schema before the tool runs: a call that fails
  the check is a tool error too, and never reaches the session;
- `react_agent(spec, disclosure, max_steps)`: inspect's own `react()` over those tools, its
  submit our `submit` (kept in the conversation), no system prompt of its own (the sample's
  input is the prompt protocol's agent messages), our reminder after a reply that calls no tool,
  and stopped after `max_steps` model requests;
- `episode_reply(messages, max_steps, submitted, error)`: the episode as a `Reply` with its
  trace: one `Step` per assistant message (a model request), its tool calls and what each
  returned; `ok` with the response the session accepted (kept in the sample's store, which
  inspect logs) if its submit came within `max_steps` steps, else `error` when the agent
  failed, else `no_submit`. The scorer and `peb import inspect` both call it, on the same
  messages, so the eval's metrics and `peb score` of its import are the same numbers, whatever
  agent ran: a submit after the budget does not count, for any agent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.agent import Agent, AgentState, AgentSubmit, react
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams, tool
from inspect_ai.util import store

from peb_core.access import AgentSession, agent_view, family_tools
from peb_core.systems import AGENT_REMINDER, Reply, Step, ToolCall, Usage
from peb_core.tasks import ScenarioFile, generate_task, load_families

SUBMIT = "submit"
"""The tool whose accepted call ends an episode."""
SESSION_KEY = "partial_evidence_bench:session"
"""The sample store key naming its session in `SESSIONS`."""
SUBMITTED_KEY = "partial_evidence_bench:submitted"
"""The sample store key holding the response its session accepted (the store is logged)."""
SESSIONS: dict[str, AgentSession] = {}
"""The live sessions, one per running sample, by the key in its store (dropped at cleanup)."""


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    """A JSON schema with every `$ref` to `defs` replaced by its definition and `const` as a
    one-value `enum`."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out = {k: _inline(v, defs) for k, v in node.items() if k not in ("$defs", "const")}
    if "const" in node:
        out["enum"] = [node["const"]]
    return out


def inspect_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with its definitions inlined, as inspect's JSONSchema takes it (it has no
    `$defs` nor `const`; it ignores `title`)."""
    return dict(_inline(schema, schema.get("$defs", {})))


def _session() -> AgentSession:
    key = store().get(SESSION_KEY)
    session = SESSIONS.get(key) if isinstance(key, str) else None
    if session is None:
        raise ToolError(
            "no episode: this sample was not set up by the partial_evidence task's agent tier"
        )
    return session


@tool
def episode_tool(name: str, description: str, parameters: dict[str, Any]) -> Tool:
    """The access layer's tool `name` (as the model reads it: `description`, `parameters` a
    JSON schema) over the current sample's session."""

    async def execute(**kwargs: Any) -> str:
        outcome = _session().call(name, kwargs)
        if outcome.error is not None:
            raise ToolError(outcome.error)
        if outcome.submitted is None:
            return outcome.content
        store().set(SUBMITTED_KEY, outcome.submitted)
        return outcome.submitted

    schema = ToolParams.model_validate(inspect_schema(parameters))
    for key, param in schema.properties.items():  # inspect asks a description of each
        param.description = param.description or key
    # not truncated (inspect cuts a tool's output at 16 KB unless told): the model reads what
    # the session answered, as in our loop; one call at a time, in order
    return ToolDef(
        execute, name=name, description=description, parameters=schema, max_output=0
    ).as_tool()


def _tools(schemas: Sequence[Mapping[str, Any]]) -> list[Tool]:
    return [
        episode_tool(f["name"], f["description"], f["parameters"])
        for f in (schema["function"] for schema in schemas)
    ]


def episode_tools(spec: ScenarioFile, disclosure: str) -> list[Tool]:
    """Every registered tool, with the description and parameters it has for `spec`'s tasks
    under `disclosure`, as an inspect tool over the current sample's session."""
    return _tools(family_tools(spec, disclosure))


def sample_tools() -> list[Tool]:
    """The tools of the current sample's episode (for an agent that builds its tools while it
    runs a sample); a ToolError outside one."""
    return _tools(_session().tools)


@solver
def episode_setup(disclosure: str, corpus_size: int | None = None) -> Solver:
    """Give the sample its own session under `disclosure` over its task (generated again from
    the family, template, seed and tier its metadata names, with `corpus_size` documents), and
    the tools in its state (for solvers that take their tools from it)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        spec = load_families()[meta["family"]]
        task = generate_task(spec, meta["template"], meta["seed"], 0, meta["tier"], corpus_size)
        key = uuid.uuid4().hex
        SESSIONS[key] = agent_view(task, spec).session(disclosure)
        state.store.set(SESSION_KEY, key)
        state.tools = _tools(SESSIONS[key].tools)
        return state

    return solve


async def end_episode(state: TaskState) -> None:
    """Drop the sample's session (the task's cleanup: after scoring, or when it failed)."""
    key = state.store.get(SESSION_KEY)
    if isinstance(key, str):
        SESSIONS.pop(key, None)


def react_agent(spec: ScenarioFile, disclosure: str, max_steps: int) -> Agent:
    """inspect's `react()` over our tools, with our `submit` as its submit, stopped after
    `max_steps` model requests."""
    tools = episode_tools(spec, disclosure)
    named = {ToolDef(t).name: t for t in tools}
    submit = named.pop(SUBMIT)

    async def on_continue(state: AgentState) -> bool | str:
        steps = sum(isinstance(m, ChatMessageAssistant) for m in state.messages)
        if steps >= max_steps:
            return False
        return True if state.output.message.tool_calls else AGENT_REMINDER["content"]

    return react(
        prompt=None,
        tools=list(named.values()),
        submit=AgentSubmit(tool=submit, answer_only=True, keep_in_messages=True),
        on_continue=on_continue,
    )


_SENT = {ChatMessageSystem: "system", ChatMessageUser: "user"}


def _reasoning(message: ChatMessageAssistant) -> str | None:
    if isinstance(message.content, str):
        return None
    parts = [c.reasoning for c in message.content if c.type == "reasoning"]
    return "\n".join(parts) or None


def _result(message: ChatMessageTool | None) -> tuple[str, str | None]:
    """(what the call returned, its error or None) from its tool message."""
    if message is None:
        return "", "the agent carried out no such call"
    if message.error is not None:
        return message.error.message, message.error.message
    return message.text, None


def _steps(messages: Sequence[ChatMessage]) -> list[tuple[Step, bool]]:
    """Each model request's step, and whether it made a submit that did not fail. A call's
    result is the tool message answering its id before the next request (ids need not be
    unique across an episode)."""
    steps: list[tuple[Step, bool]] = []
    sent: list[dict[str, str]] = []
    for number, message in enumerate(messages):
        role = _SENT.get(type(message))
        if role is not None:
            sent.append({"role": role, "content": message.text})
        if not isinstance(message, ChatMessageAssistant):
            continue
        results: dict[str | None, ChatMessageTool] = {}
        for later in messages[number + 1 :]:
            if isinstance(later, ChatMessageAssistant):
                break
            if isinstance(later, ChatMessageTool):
                results.setdefault(later.tool_call_id, later)
        calls = message.tool_calls or []
        shown = [_result(results.get(c.id)) for c in calls]
        submits = any(
            c.function == SUBMIT and error is None
            for c, (_, error) in zip(calls, shown, strict=True)
        )
        step = Step(
            sent=tuple(sent),
            content=message.text or None,
            reasoning=_reasoning(message),
            tool_calls=tuple(
                ToolCall(
                    id=c.id,
                    name=c.function,
                    arguments=json.dumps(c.arguments, ensure_ascii=False),
                )
                for c in calls
            ),
            results=tuple(text for text, _ in shown),
            errors=tuple(error for _, error in shown),
        )
        steps.append((step, submits))
        sent = []
    return steps


def episode_reply(
    messages: Sequence[ChatMessage],
    max_steps: int,
    submitted: str | None,
    error: str | None = None,
    usage: Usage | None = None,
) -> Reply:
    """The episode in `messages` as a reply (see the module docstring): its steps up to the
    submit, at most `max_steps` of them. `submitted` is the response the sample's session
    accepted (`SUBMITTED_KEY` in its store), the reply's text: a submit in the conversation
    counts only if the session accepted one (a conversation can be written by its agent);
    if the agent left its submit out of the conversation, the submit counts after its last
    step."""
    steps = _steps(messages)
    trace: list[Step] = []
    for number, (step, submits) in enumerate(steps[:max_steps], start=1):
        trace.append(step)
        if submits and submitted is not None:
            return Reply(status="ok", raw=submitted, usage=usage or Usage(), trace=tuple(trace))
        if number == max_steps:
            return Reply(status="no_submit", error=f"no submit within {max_steps} steps",
                         usage=usage or Usage(), trace=tuple(trace))  # fmt: skip
    if submitted is not None:
        return Reply(status="ok", raw=submitted, usage=usage or Usage(), trace=tuple(trace))
    if error is not None:
        return Reply(status="error", error=error, usage=usage or Usage(), trace=tuple(trace))
    return Reply(
        status="no_submit",
        error=f"the agent stopped after {len(trace)} steps without a submit",
        usage=usage or Usage(),
        trace=tuple(trace),
    )
