"""The response schema of a family: a pydantic model of a well-formed response, whose JSON schema
constrains a model's output and is the `submit` tool's parameters (`peb_core.access`); and how
a response's keys and enum-like strings are folded when it is read (`fold`: scoring's reading,
docs/benchmark.md §2, and the access layer's reading of a submitted claim)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ._answers import gap_vocabulary
from ._scenario import ScenarioFile
from ._task import GAP_VALUES, Completeness


def fold(value: str) -> str:
    """`value` lower-cased with spaces and dashes as underscores, trimmed."""
    return re.sub(r"[\s\-]+", "_", value.strip().lower()).strip("_")


def response_model(spec: ScenarioFile) -> type[BaseModel]:
    """A pydantic model of a valid response for this family: vocabularies as enums, arrays capped
    at their vocabulary size (tiny models otherwise repeat items until max_tokens)."""
    return _response_model(spec.declared)


def response_schema(spec: ScenarioFile) -> dict[str, Any]:
    """`response_model(spec)`'s JSON schema (made once per family; a fresh copy each call)."""
    schema: dict[str, Any] = json.loads(_response_schema(spec.declared))
    return schema


@cache
def _response_schema(declared: bytes) -> str:
    return json.dumps(_response_model(declared).model_json_schema())


@cache
def _response_model(declared: bytes) -> type[BaseModel]:
    spec = ScenarioFile.model_validate_json(declared)
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
