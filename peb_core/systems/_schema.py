"""The response schema of a family: a pydantic model of a well-formed response, whose JSON schema
constrains a model's output, and the `response_format` a litellm request carries."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..tasks import GAP_VALUES, Completeness, ScenarioFile, gap_vocabulary


def response_model(spec: ScenarioFile) -> type[BaseModel]:
    """A pydantic model of a valid response for this family: vocabularies as enums, arrays capped
    at their vocabulary size (tiny models otherwise repeat items until max_tokens)."""
    return _response_model(spec.model_dump_json())


@cache
def _response_model(spec_json: str) -> type[BaseModel]:
    spec = ScenarioFile.model_validate_json(spec_json)
    fields: dict[str, Any] = {
        name: (
            _enum(f.values) if f.kind == "ordinal" else _capped(f.values),
            Field(description=f.description),
        )
        for name, f in spec.answer.items()
    }
    config = ConfigDict(extra="forbid")
    answer = create_model(f"{_camel(spec.id)}Answer", __config__=config, **fields)
    parts: dict[str, Any] = {
        part: (_enum(values) if part in GAP_VALUES else _capped(values), ...)
        for part, values in gap_vocabulary(spec).items()
    }
    gap = create_model(f"{_camel(spec.id)}GapReport", __config__=config, **parts)
    return create_model(
        f"{_camel(spec.id)}Response",
        __config__=config,
        answer=(answer | None, Field(description="null when blocking")),
        completeness=(Completeness, ...),
        gap_report=(gap | None, Field(description="null when the evidence is complete")),
    )


def _enum(values: Sequence[str]) -> Any:
    return Literal[tuple(values)]


def _capped(values: Sequence[str]) -> Any:
    item = _enum(values)
    return Annotated[list[item], Field(max_length=len(values))]  # type: ignore[valid-type]


def _camel(family_id: str) -> str:
    return "".join(part.capitalize() for part in family_id.split("_"))


def response_format(spec: ScenarioFile, style: str) -> dict[str, Any]:
    """The family's JSON schema as a litellm `response_format`: `json_schema` (OpenAI-style) or
    `json_object` with a `schema` (llama.cpp server)."""
    schema = response_model(spec).model_json_schema()
    if style == "json_object":
        return {"type": "json_object", "schema": schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": f"{spec.id}_response", "schema": schema, "strict": False},
    }
