"""An inspect log's episodes replayed against the access layer (docs/benchmark.md §10.1,
imported): what a log says a tool returned is not taken on trust. The tools are deterministic,
so `Replay.episode` makes each call the conversation records again, in order, on a fresh
`AgentSession` of the task under the run's disclosure mode (through its public `acall`, as the
eval's tools did), and what the log says each call returned must be what the session returns
now. A `delegate` call's handoff is the one the sample's store keeps next, and its sub-episode
must replay the same way on the view the session builds for it (the intersection of scopes). A
submit the store keeps must be the one the session accepted from the conversation's calls.

What a replay cannot check is what the model wrote: its text, its reasoning, and which calls it
made with which arguments (a call left out of a conversation is a call never made). It checks
that everything the access layer is said to have shown the model is what it shows.

A call inspect refused before any tool ran (a tool the sample did not offer, arguments inspect
could not parse, or arguments off the tool's schema) never reached the session: it must be
recorded as the error inspect gives (inspect's own check, `validate_tool_input`; a parse error
quotes the model's arguments, which is model text). A call no tool message answers was never
carried out and is not replayed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage
from inspect_ai.model._call_tools import validate_tool_input
from inspect_ai.tool import ToolParams

from peb_core.access import (
    DELEGATE_TOOL,
    MAX_HANDOFFS,
    AgentSession,
    AgentView,
    ToolOutcome,
    agent_view,
    went_on,
)
from peb_core.frontends.inspect.agent import (
    NOT_CARRIED_OUT,
    HandedOff,
    SessionSettings,
    conversation_steps,
    tool_params,
)
from peb_core.systems import Delegation, Handoffs, Reply, Step
from peb_core.tasks import ScenarioFile, Task

PARSE_ERROR = "Error parsing"
"""How inspect's error for arguments it could not parse begins (it then quotes them)."""


Reached = list[list[bool]]
"""For each step of a conversation, whether each of its calls reached the session: carried out
and not refused by inspect before any tool ran (`inspect_refusal`), as a replay decides it."""


class NotVerified(ValueError):
    """A sample whose log does not replay: one line naming the first call that differs (never
    quoting what the log says it returned)."""


def inspect_refusal(
    name: str, arguments: Mapping[str, Any], error: str | None, tools: Mapping[str, ToolParams]
) -> str | None:
    """The error inspect answers a call with before any tool runs, or None for a call it hands
    to the tool: a parse error (arguments it could not read, given as `{}`; its text, `error`,
    quotes them), a tool the sample did not offer (`tools`), arguments off the tool's schema."""
    if error is not None and error.startswith(PARSE_ERROR) and not arguments:
        return error
    if name not in tools:
        return f"Tool {name} not found"
    return validate_tool_input(dict(arguments), tools[name])


@dataclass
class _Kept:
    """A sub-agent that plays back the handoffs a sample's store keeps, in order, each replayed
    first on the view the session built for it; `name` is the system that must have run them."""

    name: str
    replay: Replay
    kept: Sequence[Delegation]
    taken: int = 0

    async def respond(self, view: AgentView) -> Reply:
        if self.taken == len(self.kept):
            raise NotVerified("the session ran a handoff the store does not keep")
        reply = self.kept[self.taken].reply
        self.taken += 1
        await self.replay.sub_episode(view, reply, f"handoff {self.taken}")
        return reply


def _shown_as_before(name: str, result: str, outcome: ToolOutcome) -> bool:
    """Whether `result` is what inspect's tools showed of an accepted submit that ended the
    episode before the user could push back (logs written before `--followup`): the response
    the session accepted, in place of what the session shows of it. Nothing the agent did not
    write itself: the response is the call's own argument."""
    return (
        outcome.submitted is not None
        and result == outcome.submitted
        and not went_on(name, outcome.content)
    )


@dataclass(frozen=True)
class Replay:
    """How a run's episodes replay (`episode`): the settings its sessions were made with
    (`settings`: its disclosure mode, what the user did after a response, at most `pushes`
    times, though a sub-agent meets none; how the agent answered, where under `chat` a step with
    words and no call is a response, said to the session as the live episode said it; the
    platform's checks of each submit), the system that ran its handoffs (`sub_agent`, as each
    `Delegation` names it) and whether that system's calls went through inspect
    (`inspect_sub_agent`: inspect's `react()` over inspect tools, whose calls may be refused
    before a tool runs; else a peb agent system, each of whose calls reached its session)."""

    settings: SessionSettings
    sub_agent: str
    inspect_sub_agent: bool

    async def calls(
        self,
        session: AgentSession,
        steps: Sequence[Step],
        by_inspect: bool,
        where: str = "",
        handoffs: Sequence[HandedOff] = (),
    ) -> Reached:
        """Make each call of `steps` again on `session`, in order; a NotVerified at the first
        whose recorded result differs. `by_inspect`: the calls went through inspect's tools
        (an error is shown as the error's text; a submit that ended the episode may show the
        response it accepted, `_shown_as_before`). A `delegate` call takes the next of
        `handoffs` (what the store keeps of the call). Whether each call reached the session,
        as the replay decides it (`Reached`)."""
        tools = {t["function"]["name"]: tool_params(t["function"]["parameters"])
                 for t in session.tools}  # fmt: skip
        handing = session.delegator if isinstance(session.delegator, Handoffs) else None
        reached: Reached = []
        for number, step in enumerate(steps, start=1):
            if any(step.delegations):
                raise NotVerified(f"{where}step {number}: a sub-episode hands nothing off")
            if not len(step.tool_calls) == len(step.results) == len(step.errors):
                raise NotVerified(f"{where}step {number}: its calls and results do not pair")
            calls = zip(step.tool_calls, step.results, step.errors, strict=True)
            flags: list[bool] = []
            reached.append(flags)
            words = (step.content or "").strip()
            if session.interface == "chat" and words and not step.tool_calls and not session.over:
                session.say(step.content or "")  # a response, said as on_continue said it
            for index, (call, result, error) in enumerate(calls, start=1):
                at = f"{where}step {number}, call {index} ({_named(call.name)})"
                flags.append(False)
                if error == NOT_CARRIED_OUT and result == "":
                    continue
                refusal = None
                if by_inspect:
                    try:
                        arguments = json.loads(call.arguments)
                    except (ValueError, RecursionError):
                        arguments = None
                    if not isinstance(arguments, dict):
                        raise NotVerified(f"{at}: its arguments are not a JSON object")
                    refusal = inspect_refusal(call.name, arguments, error, tools)
                if refusal is not None:
                    expected: tuple[str, str | None] = (refusal, refusal)
                else:
                    flags[-1] = True
                    ran = len(handing.done) if handing is not None else 0
                    try:  # a handoff's sub-episode is replayed as the call runs it
                        outcome = await session.acall(call.name, call.arguments)
                    except NotVerified as exc:
                        raise NotVerified(f"{at}: {exc}") from None
                    if by_inspect and outcome.error is not None:
                        expected = (outcome.error, outcome.error)
                    elif by_inspect and _shown_as_before(call.name, result, outcome):
                        expected = (result, None)
                    else:
                        expected = (outcome.content, outcome.error)
                    if handing is not None and len(handing.done) > ran:
                        _same_handoff(handing.done[-1], outcome.content, handoffs, ran, at)
                if (result, error) != expected:
                    raise NotVerified(
                        f"{at}: inspect refuses this call before any tool runs, and the log "
                        "records another result"
                        if refusal is not None
                        else f"{at}: the log records another result than the access layer gives"
                    )
        return reached

    async def sub_episode(self, view: AgentView, reply: Reply, where: str) -> None:
        """Replay a handoff's sub-episode on `view` (a session of its own, which cannot hand
        off); its reply must be the submit that session accepted (none unless `ok`), and its
        trace must say of each call whether it reached that session as the replay does."""
        session = view.session(self.settings.disclosure)
        reached = await self.calls(session, reply.trace, self.inspect_sub_agent, f"{where}, ")
        if reached != [[call.reached for call in step.tool_calls] for step in reply.trace]:
            raise NotVerified(
                f"{where}: its trace says otherwise than the replay which calls reached its session"
            )
        if (reply.raw if reply.status == "ok" else None) != session.submitted:
            raise NotVerified(f"{where}: its reply is not the submit its session accepted")

    async def episode(
        self,
        task: Task,
        spec: ScenarioFile,
        messages: Sequence[ChatMessage],
        submitted: str | None,
        handoffs: Sequence[HandedOff],
        escalated: str | None = None,
    ) -> Reached:
        """Replay a sample's episode (its conversation `messages`, the submit and handoffs its
        store keeps) on a fresh session of `task`; a NotVerified (one line) at the first thing
        that differs. A handoff the store keeps that no call in the conversation made (an
        agent that left its `delegate` calls out) is replayed as a call on a session of its
        own, so its gap still counts, except on a task whose grants change (it cannot be
        placed). Which of the conversation's calls reached the session (`Reached`)."""
        view = self.settings.checked(agent_view(task, spec))
        kept = _Kept(self.sub_agent, self, [h.delegation for h in handoffs])
        handing = Handoffs(kept) if view.delegates else None
        session = self.settings.session(view, handing)
        steps = conversation_steps(messages)
        reached = await self.calls(session, steps, True, handoffs=handoffs)
        left = handoffs[kept.taken :]
        if left and task.grants:
            raise NotVerified("the store keeps a handoff no call in the conversation made")
        if len(handoffs) > MAX_HANDOFFS:
            raise NotVerified(
                f"the store keeps {len(handoffs)} handoffs; an episode makes at most "
                f"{MAX_HANDOFFS}"
            )
        for number, handed in enumerate(left, start=kept.taken + 1):
            where = f"handoff {number} (no call in the conversation made it)"
            alone = Handoffs(_Kept(self.sub_agent, self, [handed.delegation]))
            fresh = view.session(self.settings.disclosure, delegator=alone)
            request = {"request": handed.delegation.request, "to": handed.delegation.to}
            try:
                outcome = await fresh.acall(DELEGATE_TOOL.name, request)
            except NotVerified as exc:
                raise NotVerified(f"{where}: {exc}") from None
            if not alone.done:
                raise NotVerified(f"{where}: the session runs no such handoff")
            _same_handoff(alone.done[0], outcome.content, [handed], 0, where)
        if session.submitted != submitted:
            raise NotVerified(
                "the store's submit is not the one the session accepted from the "
                "conversation's calls"
            )
        if session.escalated != escalated:
            raise NotVerified(
                "the store's escalation is not the one the session accepted from the "
                "conversation's calls"
            )
        return reached


def with_reached(reply: Reply, reached: Reached) -> Reply:
    """`reply` (an episode read from a conversation, `agent.episode_reply`) with whether each
    call of its conversation's steps reached the session as the replay decided it (`Reached`),
    never as the log labels its errors: a call after them (a handoff no call in the
    conversation made, replayed on a session of its own) keeps its own."""
    trace = list(reply.trace)
    for number, flags in enumerate(reached[: len(trace)]):
        step = trace[number]
        calls = [
            call.model_copy(update={"reached": flags[i]}) if i < len(flags) else call
            for i, call in enumerate(step.tool_calls)
        ]
        trace[number] = step.model_copy(update={"tool_calls": tuple(calls)})
    return reply.model_copy(update={"trace": tuple(trace)})


def _named(name: str) -> str:
    """A tool's name as a one-line message shows it (at most 40 characters; quoted, its
    control and bidi characters escaped, unless it is printable)."""
    name = name[:40]
    return name if name.isprintable() else repr(name)


def _same_handoff(
    ran: Delegation, content: str, handoffs: Sequence[HandedOff], number: int, at: str
) -> None:
    """The handoff a call ran in the replay must be the store's `number`th, its text the
    call's."""
    kept = handoffs[number]
    if kept.delegation != ran or kept.result != content:
        raise NotVerified(
            f"{at}: the store's handoff {number + 1} is not the one this call ran (to "
            f"{ran.to}, by {ran.system})"
        )
