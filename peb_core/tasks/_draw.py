"""What every tier builds a task from: one task's seeded draws (variables, document ids,
findings rendered to facts and sentences), documents, the contract and the oracles as plain data
(validated once, with the Task), and the oracles computed from the facts (docs/benchmark.md §1).

All randomness comes from `random.Random` instances seeded with strings (hashed with SHA-512 by
the standard library, so independent of PYTHONHASHSEED), and nothing iterates over a set."""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Iterable, Sequence
from typing import NotRequired, TypedDict

from ._answers import answer_schema, fold_answer, live_effects
from ._scenario import FindingSpec, ScenarioFile, SlotSpec, TemplateSpec
from ._task import Answer, Completeness, Fact, GapReport, RequiredEvidence


def _used(text: str, variables: dict[str, str]) -> dict[str, str]:
    return {name: variables[name] for name in placeholders(text) if name in variables}


@functools.cache
def placeholders(text: str) -> tuple[str, ...]:
    """The distinct placeholder names of a family text, sorted (parsed once per text)."""
    return tuple(sorted({name for _, name, _, _ in string.Formatter().parse(text) if name}))


def is_promoted(template: TemplateSpec, seed: int, canonical: Sequence[int], draw: float) -> bool:
    """Canonical seeds: as the file lists. Fresh seeds: at the template's canonical rate."""
    if seed in canonical:
        return seed in template.promoted_seeds
    return draw < len(template.promoted_seeds) / len(canonical)


class DocumentData(TypedDict):
    """A `Document`'s fields: a task's documents are built as data and validated once, with the
    Task."""

    doc_id: str
    title: str
    role: str
    scope: str
    evidence_family: str
    body: str
    facts: list[Fact]
    superseded: NotRequired[bool]


class ContractData(TypedDict):
    """A `Contract`'s fields."""

    required_evidence: list[RequiredEvidence]
    partial_response_permitted: bool


class OraclesData(TypedDict):
    """An `Oracles`' fields."""

    complete_answer: Answer
    authorized_answer: Answer
    completeness: Completeness
    gap_report: GapReport | None


class Draw:
    """One task's seeded draws: its variables, document ids, and rendered findings."""

    def __init__(self, spec: ScenarioFile, seed_text: str) -> None:
        self.spec = spec
        self.rng = random.Random(seed_text)
        rng = self.rng
        self.variables = {name: rng.choice(spec.pools[name]) for name in sorted(spec.pools)}
        for name in sorted(spec.numbers):
            low, high = spec.numbers[name]
            self.variables[name] = f"{rng.randint(low, high):,}"
        self._ids: set[str] = set()

    def doc_id(self) -> str:
        doc_id = f"doc-{self.rng.getrandbits(24):06x}"
        while doc_id in self._ids:
            doc_id = f"doc-{self.rng.getrandbits(24):06x}"
        self._ids.add(doc_id)
        return doc_id

    def text(self, phrasings: Sequence[str], **fills: str) -> str:
        return self.rng.choice(phrasings).format_map(
            {**self.variables, **fills} if fills else self.variables
        )

    def findings(self, findings: Iterable[FindingSpec]) -> tuple[list[Fact], list[str]]:
        """Each finding's fact and its sentence, one phrasing drawn each."""
        facts, sentences = [], []
        for finding in findings:
            text = self.rng.choice(finding.text)
            facts.append(
                Fact(
                    id=finding.id,
                    effects=finding.effect_lists,
                    variables=_used(text, self.variables),
                    retracts=list(finding.retracts),
                )
            )
            sentences.append(text.format_map(self.variables))
        return facts, sentences

    def slot(
        self, slot: SlotSpec, findings: Iterable[FindingSpec]
    ) -> tuple[list[Fact], dict[str, str]]:
        """A slot document's facts and the fills of its body: the variables, and `findings` as
        the findings' sentences or, without any, one of the slot's no-findings phrasings."""
        facts, sentences = self.findings(findings)
        fills = dict(self.variables)
        if sentences:
            fills["findings"] = " ".join(sentences)
        elif slot.no_findings:
            fills["findings"] = self.text(slot.no_findings)
        return facts, fills

    def distractor(self, scope: str | None = None) -> DocumentData:
        """A neutral document (no facts, a family no contract requires), in `scope` if given."""
        neutral = self.spec.distractors
        assert neutral is not None
        return {
            "doc_id": self.doc_id(),
            "title": self.text(neutral.titles),
            "role": "distractor",
            "scope": scope or neutral.scope,
            "evidence_family": neutral.evidence_family,
            "body": self.text(neutral.bodies),
            "facts": [],
        }


def build_contract(
    spec: ScenarioFile, template: TemplateSpec, required: Sequence[str], rng: random.Random
) -> ContractData:
    """The contract over the required evidence families, in an order drawn from the task's
    generator before any distractor (so the order carries no information, and distractors
    leave it as it is)."""
    families = list(dict.fromkeys(required))
    rng.shuffle(families)
    return {
        "required_evidence": [spec.requirements[f] for f in families],
        "partial_response_permitted": template.partial_response_permitted,
    }


def _live(documents: Iterable[DocumentData]) -> list[dict[str, list[str]]]:
    return live_effects([fact for doc in documents for fact in doc["facts"]])


def build_oracles(
    spec: ScenarioFile,
    contract: ContractData,
    documents: Sequence[DocumentData],
    authorized: Sequence[DocumentData],
) -> OraclesData:
    """Every oracle from the facts: a required family is covered by an authorized document of
    it that is not superseded; the gap report names the uncovered families (in contract order),
    the scopes of the hidden documents holding them, and the answer fields they inform."""
    schema = answer_schema(spec)
    covered = {d["evidence_family"] for d in authorized if not d.get("superseded")}
    missing = [r for r in contract["required_evidence"] if r.id not in covered]
    gap = None
    if missing:
        visible = {d["doc_id"] for d in authorized}
        hidden = [d for d in documents if d["doc_id"] not in visible]
        scopes = (d["scope"] for r in missing for d in hidden if d["evidence_family"] == r.id)
        gap = GapReport.of(missing, scopes, partial=contract["partial_response_permitted"])
    return {
        "complete_answer": fold_answer(schema, _live(documents)),
        "authorized_answer": fold_answer(schema, _live(authorized)),
        "completeness": "incomplete" if missing else "complete",
        "gap_report": gap,
    }
