"""The `submit(response)` tool (docs/benchmark.md §9): the agent's final response, in the
family's response schema. The first accepted submit ends the episode (a later call is an error
result) and is the episode's reply. The response is read as given: a JSON object, a JSON string
of one, or the response's keys given flat without the `response` wrapper; it is read for what it
decides when the run is scored (section 2), never here."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..._json import read_json
from .._results import SubmitResult, ToolOutcome
from .._tool import CallContext, Tool, ToolContext, failed, register_tool, shown

RESPONSE_KEYS = frozenset({"answer", "completeness", "gap_report"})
"""The keys of a response, which a call may give flat."""


def _submit(context: CallContext, arguments: dict[str, Any]) -> ToolOutcome:
    response: Any = arguments.get("response")
    if "response" not in arguments and RESPONSE_KEYS & set(arguments):
        response = arguments  # the response given flat, without the wrapper: read as given
    if isinstance(response, str):
        with contextlib.suppress(ValueError):
            response = read_json(response)
    if not isinstance(response, dict):
        return failed(
            'submit: expected {"response": {"answer": ..., "completeness": ..., '
            '"gap_report": ...}}, the response as a JSON object'
        )
    submitted = json.dumps(response, ensure_ascii=False)
    return ToolOutcome(content=shown(SubmitResult()), submitted=submitted)


def _response(context: ToolContext) -> dict[str, Any]:
    """The family's response schema as `submit`'s `response`, its definitions left out."""
    return {key: value for key, value in context.response_schema.items() if key != "$defs"}


def _parameters(context: ToolContext) -> dict[str, Any]:
    """`{"response": <the family's response schema>}`, its definitions lifted to the top."""
    defs = context.response_schema.get("$defs", {})
    return {
        "type": "object",
        "properties": {"response": _response(context)},
        "required": ["response"],
        "additionalProperties": False,
        **({"$defs": defs} if defs else {}),
    }


def _note(context: ToolContext) -> str:
    return f"The response schema (submit's `response`): {json.dumps(_response(context))}"


def _render(result: Mapping[str, Any], shown_ids: Sequence[str]) -> str:
    return "submitted; the episode ends"


SUBMIT_TOOL = register_tool(
    Tool(
        "submit",
        lambda context: (
            "Submit your final response (the response schema); this ends the "
            "episode and only the first submit counts."
        ),
        dict,
        _submit,
        parameters=_parameters,
        prompt="When you are done, call submit(response) once",
        reminder="submit your response with submit",
        render=_render,
        note=_note,
        ends=True,
    )
)
