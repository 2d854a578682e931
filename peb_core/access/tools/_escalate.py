"""The `escalate(to, reason)` tool (docs/benchmark.md §9.4): the agent hands the task to a named
human, one of its family's scope owners or its reviewer, and the episode ends without a response
(the reply's status is `escalated`). It is offered only where a session asks for it (a prompt
protocol's `tools`: `structured_gap@2`), so the shipped protocols' sessions, prompts and digests
are as they were. `to` is one of the family's roles (an enum of them in the schema; a role read
as §2 reads a value, case, spaces and dashes folded); another is an error result and the episode
goes on (the error names the roles, never what the agent sent: a `to` may be a hidden scope's
id). A handoff to the reviewer is a human review, to a scope's owner an escalation
(`tasks.handed_to`). Its result names the role only: no scope, no document."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from ...tasks import handed_to
from .._results import EscalateResult, ToolOutcome
from .._tool import (
    CallContext,
    Tool,
    ToolArguments,
    ToolContext,
    failed,
    register_tool,
    shown,
    text_argument,
    to_one_of,
)

MAX_REASON_CHARS = 2000
"""The longest reason an escalation takes."""


class EscalateArguments(ToolArguments):
    to: Annotated[str, text_argument("the role it goes to: a scope's owner, or the reviewer")]
    reason: Annotated[
        str,
        text_argument("why, in words: what is missing and what it holds up", MAX_REASON_CHARS),
    ]


def _escalate(context: CallContext, args: EscalateArguments) -> ToolOutcome:
    owners = context.start.owners
    if owners is None:
        return failed("escalate: this task's family names no owners to hand it to")
    step = handed_to(args.to, owners)
    if step is None:
        return failed(f"escalate: to is none of this family's roles: {', '.join(owners.roles)}")
    escalation = json.dumps({"to": step.to, "reason": args.reason}, ensure_ascii=False)
    return ToolOutcome(content=shown(EscalateResult(to=step.to)), escalated=escalation)


def _description(context: ToolContext) -> str:
    return (
        "Hand the task to a human instead of answering: to the owner of a scope (where a "
        "decision needs evidence kept there) or to the reviewer (where what is missing spans "
        "several owners). This ends the episode without a response; give the reason in words."
    )


def _render(result: Mapping[str, Any], shown_ids: Sequence[str]) -> str:
    return f"escalated to {result.get('to')}; the episode ends"


def escalation_arguments(to: str, reason: str) -> dict[str, str]:
    """The arguments of an `escalate` call handing the task to `to` for `reason`."""
    return {"to": to, "reason": reason}


ESCALATE_TOOL = register_tool(
    Tool(
        "escalate",
        _description,
        EscalateArguments,
        _escalate,
        parameters=to_one_of(
            EscalateArguments, lambda c: c.owners.roles if c.owners is not None else None
        ),
        prompt="or hand the task to a human with escalate(to, reason), which ends the episode "
        "without a response",
        reminder="escalate it with escalate",
        render=_render,
        ends=True,
        asked=True,
        escalates=True,
    )
)
