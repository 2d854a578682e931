"""Handed-off episodes (docs/benchmark.md §9.1, delegated handoffs): what runs a sub-agent's
episode when a requester calls `delegate`. The access layer builds the sub-agent's view (its
request, and the corpus under the intersection of scopes); `Handoffs` runs it with a system (the
requester's own, or another: `--delegate-system`) and keeps each sub-episode's reply, which the
requester's step records beside the call (`Step.delegations`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..access import AgentSession, AgentView, Handoff, ToolOutcome
from ._reply import Delegation, Step, ToolCall, Usage


@dataclass
class Handoffs:
    """A requester's delegator: runs each handoff with `system` (an agent system: a name and
    `respond(view) -> Reply`) and keeps the sub-episodes in order (`done`)."""

    system: Any
    done: list[Delegation] = field(default_factory=list)

    async def __call__(self, to: str, view: AgentView) -> Handoff:
        reply = await self.system.respond(view)
        self.done.append(
            Delegation(to=to, request=view.start.prompt, system=self.system.name, reply=reply)
        )
        submitted = reply.raw if reply.status == "ok" else None
        return Handoff(status=reply.status, submitted=submitted, error=reply.error)


async def carry_out(
    session: AgentSession, calls: Sequence[ToolCall], handoffs: Handoffs | None
) -> tuple[list[ToolOutcome], tuple[Delegation | None, ...]]:
    """Each call through `session`, in order (awaiting handoffs), and for each the
    sub-episode it ran, if any (empty when none did)."""
    outcomes: list[ToolOutcome] = []
    delegations: list[Delegation | None] = []
    for call in calls:
        before = len(handoffs.done) if handoffs is not None else 0
        outcomes.append(await session.acall(call.name, call.arguments))
        ran = handoffs.done[before:] if handoffs is not None else []
        delegations.append(ran[0] if ran else None)
    return outcomes, (tuple(delegations) if any(delegations) else ())


def usages(steps: Sequence[Step]) -> Iterator[Usage]:
    """The usage of every request of an episode: each step's and, nested, each handed-off
    episode's steps' (a handoff's cost is part of the episode that made it)."""
    for step in steps:
        yield step.usage
        for delegation in step.delegations:
            if delegation is not None:
                yield from usages(delegation.reply.trace)
