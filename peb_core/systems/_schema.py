"""The `response_format` a litellm request carries: the family's response schema
(`tasks.response_model`) in the form a provider takes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..tasks import ScenarioFile, response_model


def response_format(spec: ScenarioFile, style: str, parts: Sequence[str] = ()) -> dict[str, Any]:
    """The family's JSON schema (with the `parts` a protocol adds) as a litellm
    `response_format`: `json_schema` (OpenAI-style) or `json_object` with a `schema` (llama.cpp
    server)."""
    schema = response_model(spec, parts).model_json_schema()
    if style == "json_object":
        return {"type": "json_object", "schema": schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": f"{spec.id}_response", "schema": schema, "strict": False},
    }
