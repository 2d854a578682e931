"""A family's answer schema (the fields shown to a model), the values each part of its gap
reports may take, and how facts fold into an answer."""

from __future__ import annotations

from collections.abc import Iterable

from ._scenario import AnswerField, ScenarioFile
from ._task import GAP_VALUES, Answer, Fact, GapReport


def answer_schema(spec: ScenarioFile) -> tuple[AnswerField, ...]:
    """The family's answer fields, in file order (made once per loaded family)."""
    return spec.answer_fields


def gap_vocabulary(spec: ScenarioFile) -> dict[str, tuple[str, ...]]:
    """Every part of a gap report in the family `spec`, in `GapReport`'s order, with the values
    it may take: a status and a reason (`GAP_VALUES`), the ids of the family's required evidence,
    of its scopes and of its answer fields (`GAP_LISTS`)."""
    ids = {
        "missing_requirements": tuple(e.id for e in spec.evidence_families),
        "missing_scopes": tuple(spec.scopes),
        "affected_claims": tuple(spec.answer),
    }
    return {part: GAP_VALUES.get(part) or ids[part] for part in GapReport.model_fields}


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
        given = seen[f.name]
        present = [v for v in f.values if v in given] if given else []
        answer[f.name] = (
            (present[-1] if present else f.values[0]) if f.kind == "ordinal" else present
        )
    return answer
