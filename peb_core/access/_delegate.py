"""The `delegate(request, to)` tool (docs/benchmark.md §9.1, delegated handoffs): the agent
hands part of the contract to a sub-agent its task lists. The sub-agent runs its own episode (by
the session's `delegator`: the same system or another) on a view the access layer builds here:
the request as its prompt, the task's contract and answer schema, and the documents of the
stores the sub-agent owns under the intersection of the requester's scopes and the sub-agent's
own, so authority never escalates.
The call returns the sub-agent's own response, its gap report included (`DelegateResult`). A
sub-agent's view offers no `delegate` (handoffs are one level deep), and an episode hands off
at most `MAX_HANDOFFS` times."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .._json import read_json
from ..tasks import SubAgent
from ._results import DelegateResult, ToolOutcome
from ._session import (
    DELEGATE,
    MAX_ID_CHARS,
    AgentSession,
    Corpus,
    Tool,
    ToolContext,
    _Arguments,
    _arguments,
    _failed,
    _shown,
    described,
    register_tool,
)
from ._view import AgentView

MAX_REQUEST_CHARS = 2000
MAX_HANDOFFS = 4
"""The most handoffs one episode makes (each is a whole episode of the sub-agent)."""


class DelegateArguments(_Arguments):
    request: str = Field(
        min_length=1,
        max_length=MAX_REQUEST_CHARS,
        description="what the sub-agent should find out, in words",
    )
    to: str = Field(min_length=1, max_length=MAX_ID_CHARS, description="the sub-agent's name")


def handoff_view(session: AgentSession, agent: SubAgent, request: str) -> AgentView:
    """The view a handoff to `agent` runs on: `request` as its prompt, the session's contract
    and answer schema, and the documents of the stores `agent` owns under the scopes the
    session holds that `agent` holds too; it lists no sub-agents."""
    corpus = session._corpus
    scopes = tuple(s for s in session.scopes if s in agent.scopes)
    start = session.start.model_copy(update={"prompt": request})
    narrowed = Corpus(corpus.index, scopes, corpus.response_schema, stores=agent.stores)
    return AgentView(start=start, _corpus=narrowed)


async def _delegate(session: AgentSession, arguments: dict[str, Any]) -> ToolOutcome:
    args = _arguments(DelegateArguments, DELEGATE, arguments)
    if isinstance(args, ToolOutcome):
        return args
    assert isinstance(args, DelegateArguments)
    agents = {agent.name: agent for agent in session._corpus.agents}
    agent = agents.get(args.to.strip())
    if agent is None:
        names = ", ".join(agents) or "none"
        return _failed(f"delegate: no sub-agent {args.to!r}; sub-agents: {names}")
    if session.delegator is None:
        return _failed("delegate: this session cannot hand off (no sub-agent runs here)")
    if session.handoffs >= MAX_HANDOFFS:
        return _failed(f"delegate: an episode hands off at most {MAX_HANDOFFS} times")
    session.handoffs += 1
    handoff = await session.delegator(agent.name, handoff_view(session, agent, args.request))
    response = None
    if handoff.status == "ok" and handoff.submitted is not None:
        try:
            parsed = read_json(handoff.submitted)
        except ValueError:
            parsed = None
        response = parsed if isinstance(parsed, dict) else None
    result = DelegateResult(
        to=agent.name, status=handoff.status, response=response, error=handoff.error
    )
    return ToolOutcome(content=_shown(result))


def _not_awaited(session: AgentSession, arguments: dict[str, Any]) -> ToolOutcome:
    return _failed("delegate: a handoff runs an episode; this caller cannot wait for one")


def _description(context: ToolContext) -> str:
    listed = "; ".join(
        f"{agent.name} ({agent.role}; "
        + (f"owns: {', '.join(map(described, agent.stores))}; " if agent.stores else "")
        + f"scopes: {', '.join(agent.scopes) or 'none'})"
        for agent in context.agents
    )
    where = "in the stores it owns " if any(agent.stores for agent in context.agents) else ""
    return (
        "Hand part of the work to a sub-agent: it runs its own episode on your request "
        f"(searching and opening documents {where}under the scopes listed for it, those of its "
        "own that you hold too) and returns its own response: answer, completeness and gap "
        f"report. Sub-agents: {listed}."
    )


def _parameters(context: ToolContext) -> dict[str, Any]:
    schema = DelegateArguments.model_json_schema()
    if context.agents:
        schema["properties"]["to"]["enum"] = [agent.name for agent in context.agents]
    return schema


DELEGATE_TOOL = register_tool(
    Tool(DELEGATE, _description, _parameters, _not_awaited, arun=_delegate, offered=False)
)
