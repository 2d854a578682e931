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

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from ..._json import read_json
from ...tasks import SubAgent
from .._results import DelegateResult, ToolOutcome
from .._session import Corpus
from .._tool import (
    CallContext,
    Tool,
    ToolArguments,
    ToolContext,
    described,
    failed,
    register_tool,
    shown,
    text_argument,
    to_one_of,
)
from .._view import AgentView

MAX_REQUEST_CHARS = 2000
MAX_HANDOFFS = 4
"""The most handoffs one episode makes (each is a whole episode of the sub-agent)."""


class DelegateArguments(ToolArguments):
    request: Annotated[
        str, text_argument("what the sub-agent should find out, in words", MAX_REQUEST_CHARS)
    ]
    to: Annotated[str, text_argument("the sub-agent's name")]


def handoff_view(context: CallContext, agent: SubAgent, request: str) -> AgentView:
    """The view a handoff to `agent` runs on: `request` as its prompt, the session's contract
    and answer schema, and the documents of the stores `agent` owns under the scopes the
    session holds at the call that `agent` holds too; it lists no sub-agents."""
    corpus = context.corpus
    scopes = tuple(s for s in context.scopes if s in agent.scopes)
    start = context.start.model_copy(update={"prompt": request})
    narrowed = Corpus(corpus.index, scopes, corpus.response_schema, stores=agent.stores)
    return AgentView(start=start, _corpus=narrowed, handoff=True)


async def _delegate(context: CallContext, args: DelegateArguments) -> ToolOutcome:
    agents = {agent.name: agent for agent in context.corpus.agents}
    agent = agents.get(args.to.strip())
    if agent is None:
        names = ", ".join(agents) or "none"
        return failed(f"delegate: no sub-agent {args.to!r}; sub-agents: {names}")
    if context.delegator is None:
        return failed("delegate: this session cannot hand off (no sub-agent runs here)")
    if context.handoffs >= MAX_HANDOFFS:
        return failed(f"delegate: an episode hands off at most {MAX_HANDOFFS} times")
    handoff = await context.delegator(agent.name, handoff_view(context, agent, args.request))
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
    return ToolOutcome(content=shown(result), handed_off=True)


def _not_awaited(context: CallContext, args: DelegateArguments) -> ToolOutcome:
    return failed("delegate: a handoff runs an episode; this caller cannot wait for one")


def _description(context: ToolContext) -> str:
    """What the tool does, with the task's sub-agents (their stores and the scopes a handoff
    to each runs under); without them (a listing for every task), where each task lists its
    own."""
    if not context.agents:
        return (
            "Hand part of the work to a sub-agent of the task: it runs its own episode on your "
            "request (searching and opening documents in the stores it owns under the scopes it "
            "holds that you hold too) and returns its own response: answer, completeness and gap "
            "report. Each task's start lists its sub-agents with those stores and scopes."
        )
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


def _render(result: Mapping[str, Any], shown_ids: Sequence[str]) -> str:
    """To whom, and what the sub-agent claimed."""
    response = result.get("response")
    claimed = response.get("completeness") if isinstance(response, dict) else None
    return f"handed off to {result.get('to')}: " + (
        f"it claimed {claimed}" if claimed else f"{result.get('status')}, no response"
    )


def handoff_arguments(request: str, to: str) -> dict[str, str]:
    """The arguments of a `delegate` call handing `request` to `to`."""
    return {"request": request, "to": to}


DELEGATE_TOOL = register_tool(
    Tool(
        "delegate",
        _description,
        DelegateArguments,
        _not_awaited,
        parameters=to_one_of(
            DelegateArguments, lambda c: [a.name for a in c.agents] if c.agents else None
        ),
        arun=_delegate,
        render=_render,
        hands_off=True,
    )
)
