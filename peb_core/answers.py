"""A family's answer schema: the fields shown to a model, how facts fold into an answer, and the
per-family response model whose JSON schema constrains a model's output."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from .responses import Answer, Completeness, GapReason, GapStatus
from .scenarios import ScenarioFile
from .tasks import Fact


class AnswerField(BaseModel):
    """One answer field as a model is shown it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: Literal["ordinal", "set"]
    values: tuple[str, ...]
    description: str


def answer_schema(spec: ScenarioFile) -> tuple[AnswerField, ...]:
    """The family's answer fields, in file order."""
    return tuple(
        AnswerField(name=name, kind=f.kind, values=tuple(f.values), description=f.description)
        for name, f in spec.answer.items()
    )


def live_effects(facts: Iterable[Fact]) -> list[dict[str, list[str]]]:
    """The effects of the facts that no other fact among `facts` retracts, in order. Hidden
    evidence that contradicts visible evidence thus changes the complete answer only: the
    authorized answer never holds the retracting fact."""
    facts = list(facts)
    retracted = {r for f in facts for r in f.retracts}
    return [f.effects for f in facts if f.id not in retracted]


def fold_answer(schema: Iterable[AnswerField], effects: Iterable[dict[str, list[str]]]) -> Answer:
    """The answer a set of facts implies: per ordinal field the most severe contributed value (the
    first value if none), per set field the union in vocabulary order."""
    fields = tuple(schema)
    seen: dict[str, set[str]] = {f.name: set() for f in fields}
    for effect in effects:
        for name, values in effect.items():
            seen[name].update(values)
    answer: Answer = {}
    for f in fields:
        present = [v for v in f.values if v in seen[f.name]]
        answer[f.name] = (
            (present[-1] if present else f.values[0]) if f.kind == "ordinal" else present
        )
    return answer


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
    gap = create_model(
        f"{_camel(spec.id)}GapReport",
        __config__=config,
        status=(GapStatus, ...),
        missing_requirements=(_capped([e.id for e in spec.evidence_families]), ...),
        missing_scopes=(_capped(list(spec.scopes)), ...),
        affected_claims=(_capped(list(spec.answer)), ...),
        reason=(GapReason, ...),
    )
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
