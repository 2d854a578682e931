"""The response schema of a family: a pydantic model of a well-formed response, whose JSON schema
constrains a model's output and is the `submit` tool's parameters (`peb_core.access`), with the
parts a protocol adds (`RESPONSE_PARTS`: a next step in the gap report, a confidence); and how
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
from ._owners import owners_of
from ._scenario import ScenarioFile
from ._task import GAP_VALUES, NEXT_ACTIONS, Completeness

RESPONSE_PARTS = ("next_step", "confidence")
"""The parts a prompt protocol may add to the response (docs/benchmark.md §2.2): `next_step`
(`{action, to}`) in the gap report, and `confidence` (the probability, 0 to 1, that the evidence
is complete) beside the answer. A protocol that asks for none gets the response of §2."""


def fold(value: str) -> str:
    """`value` lower-cased with spaces and dashes as underscores, trimmed."""
    return re.sub(r"[\s\-]+", "_", value.strip().lower()).strip("_")


def response_model(spec: ScenarioFile, parts: Sequence[str] = ()) -> type[BaseModel]:
    """A pydantic model of a valid response for this family: vocabularies as enums, arrays capped
    at their vocabulary size (tiny models otherwise repeat items until max_tokens); with the
    `RESPONSE_PARTS` in `parts` (a next step's `to` one of the family's roles: `NoOwners` for a
    family without owners)."""
    return _response_model(spec.declared, _parts(spec, parts))


def response_schema(spec: ScenarioFile, parts: Sequence[str] = ()) -> dict[str, Any]:
    """`response_model(spec, parts)`'s JSON schema (made once per family and parts; a fresh copy
    each call)."""
    schema: dict[str, Any] = json.loads(_response_schema(spec.declared, _parts(spec, parts)))
    return schema


def _parts(spec: ScenarioFile, parts: Sequence[str]) -> tuple[str, ...]:
    """`parts` in `RESPONSE_PARTS` order (a ValueError for another); NoOwners where a next step
    is asked of a family without owners."""
    unknown = [p for p in parts if p not in RESPONSE_PARTS]
    if unknown:
        valid = ", ".join(RESPONSE_PARTS)
        raise ValueError(f"unknown response part {unknown[0]!r}; valid: {valid}")
    if "next_step" in parts:
        owners_of(spec)
    return tuple(p for p in RESPONSE_PARTS if p in parts)


@cache
def _response_schema(declared: bytes, parts: tuple[str, ...] = ()) -> str:
    return json.dumps(_response_model(declared, parts).model_json_schema())


@cache
def _response_model(declared: bytes, parts: tuple[str, ...] = ()) -> type[BaseModel]:
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
    gap_parts: dict[str, Any] = {
        part: (_enum(values) if part in GAP_VALUES else _capped(values), ...)
        for part, values in gap_vocabulary(spec).items()
    }
    extra: dict[str, Any] = {}
    if "next_step" in parts:
        step = create_model(
            f"{_camel(spec.id)}NextStep",
            __config__=config,
            action=(_enum(NEXT_ACTIONS), ...),
            to=(_enum(owners_of(spec).roles), ...),
        )
        gap_parts["next_step"] = (step, ...)
    if "confidence" in parts:
        extra["confidence"] = (
            Annotated[float, Field(ge=0, le=1)],
            Field(description="the probability, 0 to 1, that the evidence is complete"),
        )
    gap = create_model(f"{_camel(spec.id)}GapReport", __config__=config, **gap_parts)
    return create_model(
        f"{_camel(spec.id)}Response",
        __config__=config,
        answer=(answer | None, Field(description="null when blocking")),
        completeness=(Completeness, ...),
        gap_report=(gap | None, Field(description="null when the evidence is complete")),
        **extra,
    )


def _enum(values: Sequence[str]) -> Any:
    return Literal[tuple(values)]


def _capped(values: Sequence[str]) -> Any:
    item = _enum(values)
    return Annotated[list[item], Field(max_length=len(values))]  # type: ignore[valid-type]


def _camel(family_id: str) -> str:
    return "".join(part.capitalize() for part in family_id.split("_"))
