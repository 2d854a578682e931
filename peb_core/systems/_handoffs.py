"""Handed-off episodes (docs/benchmark.md §9.1, delegated handoffs): what runs a sub-agent's
episode when a requester calls `delegate`. The access layer builds the sub-agent's view (its
request, and the corpus under the intersection of scopes); `Handoffs` runs it with a system (the
requester's own, or another: `--delegate-system`) and keeps each sub-episode's reply, which the
requester's step records beside the call (`Step.delegations`, `Episode`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..access import AgentView, Handoff
from ._reply import Delegation


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
