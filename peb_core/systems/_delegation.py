"""Deterministic agents for delegated handoffs (docs/benchmark.md §9.1, delegated handoffs).

Requesters, which hand the contract's records to the sub-agent that owns the records system
(the store holding the register and the records: the records clerk), and read back its
response:
- `agent_propagate`: submits the sub-agent's response as its own, gap report and all (its own
  check, as `agent_fail_and_report`, when no sub-agent can take the handoff or its response is
  not a well-formed one);
- `agent_launder`: takes the sub-agent's answer and claims complete, whatever it reported.
Without a sub-agent to hand to (as a sub-agent itself, or on a task that lists none) each checks
the records itself, as `agent_fail_and_report`: run as its own sub-agent, `agent_launder` reports
the gap that it launders as a requester. (`agent_fail_and_report` itself hands off too, to the
owner of every store it does not reach: `_agent_baselines.report_across`.)

Sub-agents, to run as `--delegate-system` so a requester is tested against each: besides
`agent_fail_and_report` (reports its gap),
- `agent_drop_gap`: reads as `agent_fail_and_report` and drops its gap (claims complete);
- `agent_overclaim`: takes the latest version it finds of each record for the record, current
  or not, and claims complete.
"""

from __future__ import annotations

from ..tasks import RECORDS
from ._agent_baselines import (
    REQUEST,
    AgentBaseline,
    AgentTools,
    TextReader,
    _read_the_request,
    agent_fail_and_report,
    check_records,
)
from ._reply import Response


def agent_drop_gap(tools: AgentTools, reader: TextReader) -> Response:
    """Reads as `agent_fail_and_report`, then claims complete with what it found."""
    answer, _, _ = check_records(tools, reader)
    return Response(answer=answer, completeness="complete", gap_report=None)


def agent_overclaim(tools: AgentTools, reader: TextReader) -> Response:
    """Takes the latest version found of each record for it, and claims complete."""
    answer, _, _ = check_records(tools, reader, latest=True)
    return Response(answer=answer, completeness="complete", gap_report=None)


def _clerk(tools: AgentTools) -> str | None:
    """The sub-agent that owns the records system, if the task lists one."""
    return next((a.name for a in tools.session.agents if RECORDS in a.stores), None)


async def _handed_back(tools: AgentTools) -> Response | None:
    """The records handed to the clerk, and its response; None when no handoff could be made
    or its response is not well-formed."""
    to = _clerk(tools)
    return None if to is None else await tools.delegate(REQUEST, to)


async def propagate(tools: AgentTools, reader: TextReader) -> Response:
    """The clerk's response as it is, gap report and all; its own check without one."""
    relayed = await _handed_back(tools)
    return relayed if relayed is not None else agent_fail_and_report(tools, reader)


async def launder(tools: AgentTools, reader: TextReader) -> Response:
    """The clerk's answer, claimed complete; its own check without a clerk (so as a
    sub-agent it reports its gap)."""
    if _clerk(tools) is None:
        return agent_fail_and_report(tools, reader)
    relayed = await _handed_back(tools)
    answer = relayed.answer if relayed is not None else None
    if answer is None:  # the clerk blocked or failed: answer from a reading of the request
        answer = _read_the_request(tools, reader)
    return Response(answer=answer, completeness="complete", gap_report=None)


SUB_AGENTS = (
    AgentBaseline("agent_drop_gap", agent_drop_gap),
    AgentBaseline("agent_overclaim", agent_overclaim),
)
REQUESTERS = (
    AgentBaseline("agent_propagate", agent_fail_and_report, requester=propagate),
    AgentBaseline("agent_launder", agent_fail_and_report, requester=launder),
)
