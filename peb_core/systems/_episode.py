"""One agent episode, recorded (docs/benchmark.md §10): a session, the steps of its trace and
the reply it ends with. Every call is carried out through the session, in order, a handoff
awaited and its sub-episode nested beside the call (`Handoffs`); a step is one model turn with
its tool calls (`turn`: the agent loop) or one tool call (`call`, `acall`: the agent baselines,
an MCP client's episode), or a message without one (`say`: a baseline speaking to the user).
Under `--interface chat` a turn's message without a tool call is the agent's response, said to
the session (`AgentSession.say`). The one recorder of `peb run`'s agents (models and baselines
alike) and of `peb mcp serve`; an inspect agent's episode is read back from its conversation
with the same step constructor (`Step.answered`)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..access import (
    DEFAULT_FOLLOWUP,
    DEFAULT_INTERFACE,
    DEFAULT_PUSHES,
    AgentSession,
    ToolOutcome,
)
from ._handoffs import Handoffs
from ._reply import Delegation, Reply, ReplyStatus, Step, ToolCall, Usage
from ._steps import step_started


class Episode:
    """An episode over `session`, recorded step by step.

    Args:
        session: the episode's session (its tools, calls and accepted response); where its
            delegator is a `Handoffs`, each handoff's sub-episode is nested beside its call.
        scripted: whether it is played by a script (an agent baseline) rather than timed
            requests: its own steps then cost nothing, and its reply's usage is only its
            handoffs' (no wall time, so a baseline's record is the same in every run).
        steps: steps that lead its trace (an MCP client's bad calls before it started the
            task); the calls it records are numbered after them.
    """

    def __init__(
        self,
        session: AgentSession,
        *,
        scripted: bool = False,
        steps: Iterable[Step] = (),
    ) -> None:
        self.session = session
        delegator = session.delegator
        self.handoffs = delegator if isinstance(delegator, Handoffs) else None
        self.scripted = scripted
        self.steps: list[Step] = list(steps)
        self.started = time.monotonic()

    def _ran(self, before: int) -> Delegation | None:
        """The sub-episode a call ran, if the session's handoffs grew past `before`."""
        ran = self.handoffs.done[before:] if self.handoffs is not None else []
        return ran[0] if ran else None

    def _count(self) -> int:
        return len(self.handoffs.done) if self.handoffs is not None else 0

    def starting(self, max_steps: int) -> None:
        """Says the episode starts its next step, of at most `max_steps` (`step_started`: told
        to whoever watches the task's start this episode began from; a handoff's sub-episode
        begins from its own)."""
        step_started(self.session.start, len(self.steps) + 1, max_steps)

    async def turn(
        self,
        calls: Sequence[ToolCall],
        *,
        sent: Sequence[dict[str, str]] = (),
        content: str | None = None,
        usage: Usage | None = None,
    ) -> Step:
        """One model turn, recorded: its message (`content`, the `calls` it made) after the
        messages `sent` before it, each call carried out through the session in order, and the
        request's `usage`. Under `--interface chat` a message without a call is the agent's
        response, said to the session (an empty one is none)."""
        if self.session.interface == "chat" and not calls and content and content.strip():
            self.session.say(content)
        answers: list[tuple[str, str | None]] = []
        delegations: list[Delegation | None] = []
        for call in calls:
            before = self._count()
            outcome = await self.session.acall(call.name, call.arguments)
            answers.append((outcome.content, outcome.error))
            delegations.append(self._ran(before))
        step = Step.answered(
            calls, answers, delegations, sent=tuple(sent), content=content, usage=usage or Usage()
        )
        self.steps.append(step)
        return step

    def call(
        self, name: str, arguments: str, *, sent: Sequence[dict[str, str]] = ()
    ) -> ToolOutcome:
        """One tool call, recorded as a step of its own (`arguments` as given; a call that
        hands off is refused: it must be awaited, `acall`)."""
        started, before = time.monotonic(), self._count()
        outcome = self.session.call(name, arguments)
        self._called(name, arguments, outcome, sent, started, before)
        return outcome

    async def acall(
        self, name: str, arguments: str, *, sent: Sequence[dict[str, str]] = ()
    ) -> ToolOutcome:
        """`call`, awaiting a call that hands off (its sub-episode nested in the step)."""
        started, before = time.monotonic(), self._count()
        outcome = await self.session.acall(name, arguments)
        self._called(name, arguments, outcome, sent, started, before)
        return outcome

    def _called(
        self,
        name: str,
        arguments: str,
        outcome: ToolOutcome,
        sent: Sequence[dict[str, str]],
        started: float,
        before: int,
    ) -> None:
        call = ToolCall(id=f"call_{len(self.steps) + 1}", name=name, arguments=arguments)
        latency = None if self.scripted else round(time.monotonic() - started, 3)
        self.steps.append(
            Step.answered(
                (call,),
                ((outcome.content, outcome.error),),
                (self._ran(before),),
                sent=tuple(sent),
                usage=Usage(latency_s=latency),
            )
        )

    def say(self, text: str, *, sent: Sequence[dict[str, str]] = ()) -> str | None:
        """A message to the user without a tool call, recorded as a step of its own: under
        `--interface chat` the agent's response (the user's words if it pushes back on it,
        `AgentSession.say`); else words beside the episode's calls, read as every message is
        (None)."""
        self.steps.append(Step.answered((), (), (), sent=tuple(sent), content=text, usage=Usage()))
        return self.session.say(text) if self.session.interface == "chat" else None

    @property
    def spent(self) -> int:
        """Tokens the episode has spent so far, its handoffs' included (a request whose
        provider reported none counts 0)."""
        return sum((u.prompt_tokens or 0) + (u.completion_tokens or 0) for u in self._usages())

    def _usages(self) -> list[Usage]:
        """The usage of each part of the episode: its own steps' (a scripted episode's: none,
        at no cost) and each handoff's reply's."""
        own = [Usage(cost_usd=0.0)] if self.scripted else [step.usage for step in self.steps]
        return own + [d.reply.usage for s in self.steps for d in s.delegations if d is not None]

    def out_of_budget(self, why: str) -> Reply:
        """The reply of an episode stopped by its budget (`why`) before the session said it
        was over: `ok` with the response that stands if a submit was accepted (the user pushed
        back and no second submit came), else `no_submit`."""
        if self.session.submitted is not None:
            return self.reply("ok")
        return self.reply("no_submit", why)

    def reply(self, status: ReplyStatus, error: str | None = None) -> Reply:
        """The episode's reply: `status`, the response the session accepted (if any), `error`
        (why it ended without one), its steps as the trace, and its usage summed over its parts
        (its handoffs' included): tokens (None if no part reported any), cost (unknown if any
        part's is, or with no part), its wall time (none for a scripted episode), and `cached`
        when every part came from the cache. An episode the session ended with an escalation
        (`escalate`) replies `escalated` for `ok`, its text the escalation."""
        parts = self._usages()
        costs = [u.cost_usd for u in parts]
        usage = Usage(
            prompt_tokens=_total(u.prompt_tokens for u in parts),
            completion_tokens=_total(u.completion_tokens for u in parts),
            latency_s=None if self.scripted else round(time.monotonic() - self.started, 3),
            cost_usd=None if not costs or None in costs else sum(c or 0.0 for c in costs),
            cached=bool(self.steps) and all(u.cached for u in parts),
        )
        escalated = self.session.escalated
        if status == "ok" and escalated is not None:
            return Reply(status="escalated", raw=escalated, usage=usage, trace=tuple(self.steps))
        return Reply(
            status=status,
            raw=self.session.submitted,
            error=error,
            usage=usage,
            trace=tuple(self.steps),
        )


def followup_config(
    followup: str, pushes: int = DEFAULT_PUSHES, interface: str = DEFAULT_INTERFACE
) -> dict[str, Any]:
    """An agent system's config keys for its follow-up mode (`--followup`, recorded only when
    the user pushes back), how often the user pushes (`--pushes`, only when more than once) and
    its interface (`--interface`, only under `chat`): the configs, and so the run folders, of
    agents run with the defaults are what they were before these options existed."""
    return {
        **({} if followup == DEFAULT_FOLLOWUP else {"followup": followup}),
        **({} if pushes == DEFAULT_PUSHES else {"pushes": pushes}),
        **({} if interface == DEFAULT_INTERFACE else {"interface": interface}),
    }


def _total(counts: Iterable[int | None]) -> int | None:
    known = [c for c in counts if c is not None]
    return sum(known) if known else None
