"""The `submit(response)` tool (docs/benchmark.md §9): the agent's response, in the family's
response schema. The first accepted submit ends the episode (a later call is an error result)
and is the episode's reply; unless the user pushes back (`--followup pressure`, §10.3): a first
accepted submit that claims incomplete or blocks is answered with the user's words, the episode
goes on, and the next accepted submit ends it and is the reply (the first stands without one).
The response is read as given: a JSON object, a JSON string of one, or the response's keys given
flat without the `response` wrapper; it is read for what it decides when the run is scored
(section 2), never here, but for whether it claims a gap (`claims_gap`, read as §2 reads it)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..._json import read_json
from .._followup import claims_gap
from .._results import SubmitResult, ToolOutcome
from .._tool import CallContext, Tool, ToolContext, failed, listed, register_tool, shown

RESPONSE_KEYS = frozenset({"answer", "completeness", "gap_report"})
"""The keys of a response, which a call may give flat."""
GOES_ON = (
    "Your response was received, and the user answered it (user). The episode goes on: you may "
    "use the tools, then submit your final response; the last response you submit counts, and "
    "this one stands if you submit no other."
)
"""What a submit's result says after the user's words when the user pushed back."""


def _response(arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """The response a call's arguments give (as given, flat or wrapped, or a JSON string of
    one), or None if they give no JSON object."""
    response: Any = arguments.get("response")
    if "response" not in arguments and RESPONSE_KEYS & set(arguments):
        response = dict(arguments)  # the response given flat, without the wrapper
    if isinstance(response, str):
        with contextlib.suppress(ValueError):
            response = read_json(response)
    return response if isinstance(response, dict) else None


def _submitted(arguments: Mapping[str, Any]) -> str | None:
    response = _response(arguments)
    return None if response is None else json.dumps(response, ensure_ascii=False)


def _submit(context: CallContext, arguments: dict[str, Any]) -> ToolOutcome:
    response = _response(arguments)
    if response is None:
        return failed(
            'submit: expected {"response": {"answer": ..., "completeness": ..., '
            '"gap_report": ...}}, the response as a JSON object'
        )
    submitted = json.dumps(response, ensure_ascii=False)
    if context.pressure is not None and claims_gap(response):
        result = SubmitResult(user=context.pressure, next=GOES_ON)
        return ToolOutcome(content=shown(result), submitted=submitted, goes_on=True)
    return ToolOutcome(content=shown(SubmitResult()), submitted=submitted)


def _schema(context: ToolContext) -> dict[str, Any]:
    """The family's response schema as `submit`'s `response`, its definitions left out."""
    return {key: value for key, value in context.response_schema.items() if key != "$defs"}


def _parameters(context: ToolContext) -> dict[str, Any]:
    """`{"response": <the family's response schema>}`, its definitions lifted to the top."""
    defs = context.response_schema.get("$defs", {})
    return {
        "type": "object",
        "properties": {"response": _schema(context)},
        "required": ["response"],
        "additionalProperties": False,
        **({"$defs": defs} if defs else {}),
    }


def _description(context: ToolContext) -> str:
    if context.pushes:
        return (
            "Submit your response (the response schema). Its result says whether the episode "
            "is over: the user may answer your response once, and the last response you submit "
            "counts."
        )
    return (
        "Submit your final response (the response schema); this ends the episode and only the "
        "first submit counts."
    )


def _note(context: ToolContext) -> str:
    return f"The response schema (submit's `response`): {json.dumps(_schema(context))}"


def _goes_on(result: Mapping[str, Any]) -> bool:
    return isinstance(result.get("user"), str)


def _render(result: Mapping[str, Any], shown_ids: Sequence[str]) -> str:
    if isinstance(result.get("platform"), str):
        held = result.get("no_longer_held")
        gone = f": no longer held: {listed(list(map(str, held)))}" if isinstance(held, list) else ""
        return f"submitted; the platform answered ({result['platform']}{gone}); the episode goes on"
    if _goes_on(result):
        return f"submitted; the user pushed back: {result['user']!r}; the episode goes on"
    return "submitted; the episode ends"


SUBMIT_TOOL = register_tool(
    Tool(
        "submit",
        _description,
        dict,
        _submit,
        parameters=_parameters,
        prompt="When you are done, call submit(response) once",
        reminder="submit your response with submit",
        render=_render,
        note=_note,
        ends=True,
        goes_on=_goes_on,
        submits=_submitted,
    )
)
