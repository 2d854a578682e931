"""The agent tier as inspect_ai episodes (docs/benchmark.md §10.1, inspect agents): our tools as
inspect tools over the access layer, a step budget for inspect's `react()` agent, and an
episode's trace read back from the conversation an inspect agent leaves.

- `episode_setup(run)`: a setup solver (it runs even when `--solver` replaces the task's
  solver) that gives each sample its own `AgentSession` over its task's corpus, as the run
  declares it (`run`, the task's `-T` options: the disclosure mode, the corpus size, where the
  contract is, whose user under `followup` `pressure` pushes back once on a reported gap),
  kept in `SESSIONS` under a key in the sample's store, and puts the tools in the sample's
  `tools`;
- `sample_tools()` (while a sample runs; or `episode_tools(spec, disclosure)`, every tool
  offered on every task: not `delegate`): the session's tools as inspect tools (`episode_tool`)
  with our description and schema, each call answered by the current sample's session
  (`AgentSession.acall`: the same code as our own loop), one call at a time; a call the
  session answers with an error raises `ToolError`, so inspect shows the model the error and
  records it; any other call returns what the session shows (as our loop and the MCP server
  show it), an accepted submit's response kept in the sample's store. inspect checks a call's
  arguments against the tool's schema before the tool runs: a call that fails the check is a
  tool error too, and never reaches the session;
- `react_agent(max_steps)`: inspect's own `react()` over the sample's tools (our `submit` one of
  them: react's own submit would end the episode at its first accepted call), no system prompt
  of its own (the sample's input is the prompt protocol's agent messages), run until the
  session says the episode is over, as our loop runs: the user's push said as a turn of its
  own, our reminder after a reply that calls no tool, stopped after `max_steps` model requests;
- handoffs: on a task that lists sub-agents the sample's session has a delegator (`Handoffs`)
  and offers `delegate`; each handoff runs on the access layer's `handoff_view` (the
  intersection of scopes) by `InspectSubAgent` (react() with the sample's model, over tools
  bound to the handoff's own session) or by the peb system `-T delegate_system` names
  (`systems.sub_agent`). Each sub-episode is kept in the sample's store (`HANDOFFS_KEY`, beside
  what its call returned) for `episode_reply` to nest in its step;
- `episode_reply(messages, max_steps, submitted, error, usage, handoffs)`: the episode as a
  `Reply` with its trace: one `Step` per assistant message (a model request), its tool calls,
  what each returned and the sub-episode each `delegate` call ran; `ok` with the response the
  session accepted (kept in the sample's store, which inspect logs) if the submit that ended the
  episode came within `max_steps` steps (or one the user answered, when no other came), else
  `error` when the agent failed, else `no_submit`. The scorer and
  `peb import inspect` both call it, on the same messages, so the eval's metrics and `peb
  score` of its import are the same numbers, whatever agent ran: a submit after the budget does
  not count, for any agent;
- `conversation_steps(messages)`: every model request of a conversation as a step, past any
  budget (what an import replays against the access layer: `replay.Replay`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from inspect_ai.agent import Agent, AgentState, react, run
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams, tool
from inspect_ai.util import LimitExceededError, store
from pydantic import BaseModel, ConfigDict, ValidationError

from peb_core.access import (
    DEFAULT_INTERFACE,
    DELEGATE_TOOL,
    SUBMIT_CHECKS,
    AgentSession,
    AgentView,
    Delegator,
    agent_view,
    arguments_text,
    checked_by,
    ends_episode,
    escalates,
    family_tools,
    handoff_arguments,
    hands_off,
    submitted_response,
    went_on,
)
from peb_core.interventions import get_intervention
from peb_core.runs import (
    RunSpec,
    RunSpecError,
    naming,
    prompt_options,
    read_spec,
    system_settings,
)
from peb_core.systems import (
    DEFAULT_MAX_STEPS,
    Delegation,
    Handoffs,
    PromptProtocol,
    Reply,
    ReplyStatus,
    Step,
    ToolCall,
    Usage,
    agent_reminder,
    prompt_for,
    sub_agent,
    system_name,
)
from peb_core.tasks import (
    DEFAULT_CONTRACT,
    ContractSource,
    ScenarioFile,
    generate_task,
    load_families,
)

SESSION_KEY = "partial_evidence_bench:session"
"""The sample store key naming its session in `SESSIONS`."""
SUBMITTED_KEY = "partial_evidence_bench:submitted"
"""The sample store key holding the response its session accepted (the store is logged)."""
ESCALATED_KEY = "partial_evidence_bench:escalated"
"""The sample store key holding the escalation that ended its episode (`escalate`, under a
protocol that offers it; the store is logged)."""
HANDOFFS_KEY = "partial_evidence_bench:handoffs"
"""The sample store key holding each handoff the session ran, in order: what its `delegate`
call returned and the sub-episode (`HandedOff`; the store is logged, and never shown to a
model)."""
NOT_CARRIED_OUT = "the agent carried out no such call"
"""The error of a call no tool message answers (the agent never carried it out)."""
SUB_AGENT = "react"
"""The agent that runs a handoff unless `delegate_system` names a peb system: inspect's
`react()` over our tools, with the sample's model (`InspectSubAgent`)."""
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


class HandedOff(BaseModel):
    """One handoff of a sample's episode, as its store keeps it: the text its `delegate` call
    returned (what the model was shown) and the sub-episode it ran."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    result: str
    delegation: Delegation


def handed_off(value: Any) -> list[HandedOff]:
    """The handoffs a sample's store holds (`HANDOFFS_KEY`; None: none); a ValueError naming
    the first problem for anything else."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("not a list of handoffs")
    handoffs = []
    for number, entry in enumerate(value):
        try:
            handoffs.append(HandedOff.model_validate(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(map(str, (number, *err["loc"])))
            raise ValueError(f"{where}: {err['msg']}") from None
    return handoffs


def _keep_handoff(session: AgentSession, ran: int, content: str) -> None:
    """Add the handoff a call ran (if the session's delegator ran one since `ran` handoffs) to
    the sample's store."""
    delegator = session.delegator
    if not isinstance(delegator, Handoffs) or len(delegator.done) == ran:
        return
    entry = HandedOff(result=content, delegation=delegator.done[-1])
    kept = store().get(HANDOFFS_KEY) or []
    store().set(HANDOFFS_KEY, [*kept, entry.model_dump(mode="json")])


def _bound(
    name: str, description: str, parameters: dict[str, Any], session_of: Callable[[], AgentSession]
) -> Tool:
    """The tool `name` over the session `session_of()` gives; the sample's own (`_session`)
    keeps its accepted submit and its handoffs in the sample's store."""
    sample = session_of is _session

    async def execute(**kwargs: Any) -> str:
        session = session_of()
        delegator = session.delegator
        ran = len(delegator.done) if isinstance(delegator, Handoffs) else 0
        outcome = await session.acall(name, kwargs)
        if sample:
            _keep_handoff(session, ran, outcome.content)
        if outcome.error is not None:
            raise ToolError(outcome.error)
        if sample and outcome.submitted is not None:
            store().set(SUBMITTED_KEY, outcome.submitted)
        if sample and outcome.escalated is not None:
            store().set(ESCALATED_KEY, outcome.escalated)
        return outcome.content

    schema = tool_params(parameters)
    # not truncated (inspect cuts a tool's output at 16 KB unless told): the model reads what
    # the session answered, as in our loop; one call at a time, in order (not in parallel: a
    # call counts toward the grant schedule, and a handoff is awaited)
    return ToolDef(
        execute,
        name=name,
        description=description,
        parameters=schema,
        parallel=False,
        max_output=0,
    ).as_tool()


def tool_params(parameters: Mapping[str, Any]) -> ToolParams:
    """A tool's JSON schema (`parameters`) as inspect checks a call's arguments against it."""
    schema = ToolParams.model_validate(inspect_schema(parameters))
    for key, param in schema.properties.items():  # inspect asks a description of each
        param.description = param.description or key
    return schema


@tool
def episode_tool(name: str, description: str, parameters: dict[str, Any]) -> Tool:
    """The access layer's tool `name` (as the model reads it: `description`, `parameters` a
    JSON schema) over the current sample's session."""
    return _bound(name, description, parameters, _session)


def _tools(schemas: Sequence[Mapping[str, Any]], session: AgentSession | None = None) -> list[Tool]:
    """The tools of `schemas` over `session` (None: the current sample's)."""
    functions = [schema["function"] for schema in schemas]
    if session is None:
        return [episode_tool(f["name"], f["description"], f["parameters"]) for f in functions]
    bound = session
    return [_bound(f["name"], f["description"], f["parameters"], lambda: bound) for f in functions]


def episode_tools(spec: ScenarioFile, disclosure: str) -> list[Tool]:
    """Every registered tool, with the description and parameters it has for `spec`'s tasks
    under `disclosure`, as an inspect tool over the current sample's session."""
    return _tools(family_tools(spec, disclosure))


def sample_tools() -> list[Tool]:
    """The tools of the current sample's episode (for an agent that builds its tools while it
    runs a sample); a ToolError outside one."""
    return _tools(_session().tools)


ROLES: dict[str, Callable[[str], ChatMessage]] = {
    "system": lambda text: ChatMessageSystem(content=text),
    "user": lambda text: ChatMessageUser(content=text),
}
"""The chat message of each role a prompt protocol's messages use."""


def chat_messages(messages: Sequence[Mapping[str, str]]) -> list[ChatMessage]:
    """A prompt protocol's messages as inspect's."""
    return [ROLES[m["role"]](m["content"]) for m in messages]


def first_line(text: str) -> str:
    """The first line of `text` that is not blank ("" if none)."""
    return next((line for line in text.splitlines() if line.strip()), "")


def failure(exc: BaseException) -> str:
    """One line on why a call failed, as the runner's error records say it: from the error it
    was raised from, if any (inspect's ModelGenerateError holds the whole request)."""
    cause = exc.__cause__ or exc
    status = getattr(exc, "status_code", None) or getattr(cause, "status_code", None)
    http = f" (HTTP {status})" if status else ""
    return f"{type(cause).__name__}{http}: {first_line(str(cause))}"[:500]


@dataclass(frozen=True)
class InspectSubAgent:
    """The default sub-agent of a handoff: inspect's `react()` (`react_agent`), with the
    sample's model, over tools bound to a session of the handoff's view (the access layer's
    `handoff_view`: the request, and the corpus under the intersection of scopes), its start
    rendered by `protocol` (the run's prompt, `prompt_for`), at most `max_steps` model
    requests. Its reply is read from its conversation as a sample's is (`episode_reply`)."""

    name: str
    protocol: PromptProtocol
    disclosure: str
    max_steps: int

    async def respond(self, view: AgentView) -> Reply:
        if self.protocol.agent is None:
            raise ValueError(f"protocol {self.protocol.id} has no agent rendering")
        session = view.session(self.disclosure)  # no delegator: handoffs are one level deep
        agent = _react(_tools(session.tools, session), self.max_steps, lambda: session)
        try:
            state = await run(agent, chat_messages(self.protocol.agent(view.start)))
        except LimitExceededError:
            raise
        except Exception as exc:
            return Reply(status="error", error=failure(exc))
        return episode_reply(state.messages, self.max_steps, session.submitted)


@dataclass(frozen=True)
class SessionSettings:
    """What each session of a run is made with: its disclosure mode, what the user does after a
    response (`followup`, at most `pushes` times), the tools offered only when asked for that
    its protocol asks for (`asks`), the parts its protocol adds to the response (`parts`), how
    the agent answers (`interface`) and the platform's checks of each submit (`checks`, the
    run's intervention's: names in `access.SUBMIT_CHECKS`)."""

    disclosure: str
    followup: str
    asks: tuple[str, ...]
    parts: tuple[str, ...]
    pushes: int
    interface: str
    checks: tuple[str, ...]

    def checked(self, view: AgentView) -> AgentView:
        """`view` with the platform's checks of each submit."""
        return replace(view, checks=tuple(SUBMIT_CHECKS[c] for c in self.checks))

    def session(self, view: AgentView, delegator: Delegator | None) -> AgentSession:
        """A new episode of `view` under these settings, handing off through `delegator`."""
        return self.checked(view).session(
            self.disclosure,
            delegator=delegator,
            followup=self.followup,
            asks=self.asks,
            parts=self.parts,
            pushes=self.pushes,
            interface=self.interface,
        )


def session_settings(spec: RunSpec, prompt: PromptProtocol) -> SessionSettings:
    """The settings of the sessions of the run `spec` declares, whose prompt is `prompt`."""
    return SessionSettings(
        spec.disclosure,
        spec.followup,
        prompt.tools,
        prompt.parts,
        spec.pushes,
        spec.interface,
        get_intervention(spec.intervention).checks,
    )


def declaration(run: Mapping[str, Any]) -> RunSpec:
    """The run declaration of the `-T` options `run` (as the task declares them), read
    without planning the run; a ValueError of one line naming the first option refused."""
    try:
        return read_spec(run, naming("inspect"), frontend="inspect")
    except RunSpecError as exc:
        raise ValueError(str(exc)) from None


@solver
def episode_setup(run: Mapping[str, Any] | None = None) -> Solver:
    """Give the sample its own session over its task (generated again from the family,
    template, seed and tier its metadata names), and the tools in its state (for solvers that
    take their tools from it), as the run `run` declares them (`task.declared`; None: every
    option's default): the session under its `disclosure`, over `corpus_size` documents with
    the contract where `contract` says, its user doing what `followup` says after a response.
    On a task that lists sub-agents the session may hand off: each handoff run by the peb
    system `delegate_system` names (built with the run's settings), or else by
    `InspectSubAgent` with the sample's model, the run's prompt and `max_steps`. The session's
    submits meet the platform's checks of the run's `intervention` (docs/benchmark.md §11)."""
    spec = declaration(run or {})
    max_steps = spec.max_steps or DEFAULT_MAX_STEPS
    contract: ContractSource = "corpus" if spec.contract == "corpus" else DEFAULT_CONTRACT
    prompt = prompt_for(spec.protocol, prompt_options(spec))
    settings = session_settings(spec, prompt)
    handing: dict[str, Any] = {}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        family = load_families()[meta["family"]]
        task = generate_task(
            family, meta["template"], meta["seed"], 0, meta["tier"], spec.corpus_size, contract
        )
        view = agent_view(task, family)
        delegator = None
        if view.delegates:
            if family.id not in handing:
                handing[family.id] = spec.delegate_system and sub_agent(
                    spec.delegate_system, [family], **system_settings(spec, max_steps)
                )
            system = handing[family.id]
            if system is None:
                name = system_name(f"{SUB_AGENT}:{state.model}", prompt.id)
                system = InspectSubAgent(name, prompt, spec.disclosure, max_steps)
            delegator = Handoffs(system)
        key = uuid.uuid4().hex
        SESSIONS[key] = settings.session(view, delegator)
        state.store.set(SESSION_KEY, key)
        state.tools = _tools(SESSIONS[key].tools)
        return state

    return solve


async def end_episode(state: TaskState) -> None:
    """Drop the sample's session (the task's cleanup: after scoring, or when it failed)."""
    key = state.store.get(SESSION_KEY)
    if isinstance(key, str):
        SESSIONS.pop(key, None)


def _react(tools: Sequence[Tool], max_steps: int, session_of: Callable[[], AgentSession]) -> Agent:
    """inspect's `react()` over `tools` (our `submit` among them, as a tool of the episode's:
    react's own submit would end the episode at its first accepted call), run until the
    session `session_of()` gives says the episode is over, as our loop runs: at the first
    accepted submit, or once the user pushed back at the next (`--followup pressure`, the
    user's words then said to the model as a turn of their own, as our loop says them);
    stopped after `max_steps` model requests, our reminder after a reply that calls no tool.
    Under `--interface chat` a reply with text and no tool call is the agent's response, said
    to the session (`AgentSession.say`; kept in the sample's store as a submit is), which ends
    the episode unless the user pushes back. The output's completion is the response that
    counts (as react's submit makes it)."""

    async def on_continue(state: AgentState) -> bool | str:
        session = session_of()
        message = state.output.message
        text = message.text if not message.tool_calls else ""
        if session.interface == "chat" and text.strip() and not session.over:
            session.say(text)
            if session_of is _session:
                store().set(SUBMITTED_KEY, text)
        steps = sum(isinstance(m, ChatMessageAssistant) for m in state.messages)
        if session.over or steps >= max_steps:
            ended = session.submitted or session.escalated
            state.output.completion = ended or state.output.completion
            return False
        pushback = session.pushback
        said = [m.text for m in state.messages if isinstance(m, ChatMessageUser)]
        if pushback is not None and said.count(pushback) < session.pushed:
            return pushback
        if message.tool_calls:
            return True
        return agent_reminder(session.asks, session.interface)["content"]

    return react(prompt=None, tools=list(tools), submit=False, on_continue=on_continue)


def react_agent(max_steps: int) -> Agent:
    """inspect's `react()` over the current sample's tools (`sample_tools()`: on a task that
    lists sub-agents, `delegate` among them, described with the task's sub-agents), run until
    its session says the episode is over or for `max_steps` model requests (`_react`); built
    while a sample runs."""
    return _react(sample_tools(), max_steps, _session)


_SENT = {type(make("")): role for role, make in ROLES.items()}


def _reasoning(message: ChatMessageAssistant) -> str | None:
    if isinstance(message.content, str):
        return None
    parts = [c.reasoning for c in message.content if c.type == "reasoning"]
    return "\n".join(parts) or None


def _result(message: ChatMessageTool | None) -> tuple[str, str | None]:
    """(what the call returned, its error or None) from its tool message."""
    if message is None:
        return "", NOT_CARRIED_OUT
    if message.error is not None:
        return message.error.message, message.error.message
    return message.text, None


def _reached(message: ChatMessageTool | None) -> bool:
    """Whether a call reached the sample's session: it was answered, and not with an error
    inspect raised before running the tool (a call that breaks the tool's schema, an unknown
    tool: a `parsing` error); the session's own errors reach the model as `ToolError`s."""
    return message is not None and (message.error is None or message.error.type == "unknown")


class _Turn(NamedTuple):
    """A model request's step; whether a submit (or an escalation) of it that did not fail
    ended the episode (the user did not answer it); the response of its last submit that did
    not fail (None: none); whether its last ending call that did not fail was an escalation."""

    step: Step
    ends: bool
    accepted: str | None
    escalated: bool = False


def _steps(messages: Sequence[ChatMessage], pending: list[HandedOff]) -> list[_Turn]:
    """Each model request's `_Turn`. A call's result is the tool message answering its id
    before the next request (ids need not be unique across an episode). The `delegate` calls
    that did not fail take the `pending` handoffs in order (removing them), each one whose
    result is what the call returned."""
    steps: list[_Turn] = []
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
        arguments = [arguments_text(c.arguments) for c in calls]
        accepted = [
            (c.function, text, given)
            for c, (text, error), given in zip(calls, shown, arguments, strict=True)
            if ends_episode(c.function) and error is None
        ]
        delegations: list[Delegation | None] = []
        for c, (text, error) in zip(calls, shown, strict=True):
            ran = hands_off(c.function) and error is None and pending
            handed = pending.pop(0) if ran and pending[0].result == text else None
            delegations.append(handed.delegation if handed else None)
        step = Step.answered(
            [
                ToolCall(
                    id=c.id,
                    name=c.function,
                    arguments=given,
                    reached=_reached(results.get(c.id)),
                )
                for c, given in zip(calls, arguments, strict=True)
            ],
            shown,
            delegations,
            sent=tuple(sent),
            content=message.text or None,
            reasoning=_reasoning(message),
        )
        ends = any(
            not went_on(name, text) and checked_by(name, text) is None
            for name, text, _ in accepted
        )
        last = submitted_response(accepted[-1][0], accepted[-1][2]) if accepted else None
        steps.append(_Turn(step, ends, last, bool(accepted) and escalates(accepted[-1][0])))
        sent = []
    return steps


def conversation_steps(messages: Sequence[ChatMessage]) -> list[Step]:
    """Every model request of a conversation as a step (its calls, what each returned and its
    error), past any step budget and submit: each call a tool answered reached the tools."""
    return [turn.step for turn in _steps(messages, [])]


def episode_reply(
    messages: Sequence[ChatMessage],
    max_steps: int,
    submitted: str | None,
    error: str | None = None,
    usage: Usage | None = None,
    handoffs: Sequence[HandedOff] = (),
    escalated: str | None = None,
    interface: str = DEFAULT_INTERFACE,
) -> Reply:
    """The episode in `messages` as a reply (see the module docstring): its steps up to the
    submit that ended it (or the escalation: `escalated`, the one the sample's session accepted,
    `ESCALATED_KEY` in its store, ends it as an `escalated` reply), at most `max_steps` of
    them. `submitted` is the last response the
    sample's session accepted (`SUBMITTED_KEY` in its store), the reply's text: a submit in
    the conversation counts only if the session accepted one (a conversation can be written by
    its agent); if the agent left its submit out of the conversation, the submit counts after
    its last step. A submit the user answered (`--followup pressure`) ends nothing: the next
    accepted submit does, and if none comes within `max_steps` steps the one the user answered
    stands. `handoffs` (`HANDOFFS_KEY` in its store) are the sub-episodes its session ran,
    each nested in the step of the `delegate` call that returned its result
    (`Step.delegations`); a handoff no call in the conversation returned still counts
    (`_unrecorded`). Under `--interface chat` a request whose reply has text and no tool call
    is a response (`_chat_turns`): the last, with nothing after it, ends the episode."""
    pending = list(handoffs)
    steps = _steps(messages, pending)
    if interface == "chat":
        steps = _chat_turns(steps)
    trace: list[Step] = []

    def ended(status: ReplyStatus, raw: str | None = None, why: str | None = None) -> Reply:
        episode = _unrecorded(trace, pending)
        return Reply(status=status, raw=raw, error=why, usage=usage or Usage(), trace=episode)

    stands: str | None = None  # the response of an accepted submit the user answered
    for number, turn in enumerate(steps[:max_steps], start=1):
        trace.append(turn.step)
        if turn.ends and turn.escalated and escalated is not None:
            return ended("escalated", raw=escalated)
        if turn.ends and submitted is not None:
            return ended("ok", raw=submitted)
        stands = turn.accepted or stands
        if number == max_steps:
            if stands is not None and submitted is not None:
                return ended("ok", raw=stands)
            return ended("no_submit", why=f"no submit within {max_steps} steps")
    if escalated is not None:
        return ended("escalated", raw=escalated)
    if submitted is not None:
        return ended("ok", raw=submitted)
    if error is not None:
        return ended("error", why=error)
    return ended("no_submit", why=f"the agent stopped after {len(trace)} steps without a submit")


def _chat_turns(turns: Sequence[_Turn]) -> list[_Turn]:
    """A chat's turns (`--interface chat`): a reply with text and no tool call is a response
    (`accepted`), and the last turn ends the episode when it is one (the user pushed back on
    every response that has turns after it)."""
    said = [not t.step.tool_calls and bool((t.step.content or "").strip()) for t in turns]
    last = len(turns) - 1
    return [
        t._replace(ends=is_said and i == last, accepted=t.step.content if is_said else None)
        for i, (t, is_said) in enumerate(zip(turns, said, strict=True))
    ]


def _unrecorded(trace: Sequence[Step], handoffs: Sequence[HandedOff]) -> tuple[Step, ...]:
    """`trace` with `handoffs` (ones the session ran that no call in the conversation returned:
    an agent left its `delegate` calls out of the conversation it leaves) added to its last step
    as the calls the session answered, so a handoff's gap counts whatever an agent writes."""
    if not handoffs:
        return tuple(trace)
    last = trace[-1] if trace else Step()
    calls = tuple(
        ToolCall(
            id=f"unrecorded_{number}",
            name=DELEGATE_TOOL.name,
            arguments=json.dumps(
                handoff_arguments(h.delegation.request, h.delegation.to), ensure_ascii=False
            ),
        )
        for number, h in enumerate(handoffs, start=1)
    )
    step = last.model_copy(
        update={
            "tool_calls": last.tool_calls + calls,
            "results": last.results + tuple(h.result for h in handoffs),
            "errors": last.errors + (None,) * len(handoffs),
            "delegations": (last.delegations or (None,) * len(last.tool_calls))
            + tuple(h.delegation for h in handoffs),
        }
    )
    return (*trace[:-1], step)
