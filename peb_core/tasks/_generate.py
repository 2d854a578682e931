"""The generator: facts first, text rendered from facts, every oracle computed from facts.

The same family, template and seed give the same Task in any process: all randomness comes from
one `random.Random` seeded with a string (hashed with SHA-512 by the standard library, so
independent of PYTHONHASHSEED), and nothing iterates over a set.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Iterable, Iterator, Sequence

from .._gc import gc_paused
from ._answers import answer_schema, fold_answer, live_effects
from ._scenario import ROLES, ScenarioFile, TemplateSpec
from ._task import Contract, Document, Fact, GapReport, Oracles, RequiredEvidence, Task

_TASK_ID = re.compile(r"^(?P<template>[a-z][a-z0-9_]*?)__s(?P<seed>\d+)$")
_SEED_PART = re.compile(r"(?P<low>-?\d+)(?:-(?P<high>-?\d+))?")

MAX_TASKS = 100_000
"""The most tasks (and so seeds) one command asks for unless told otherwise: a bound on memory
and time."""
MAX_DISTRACTORS = 50
"""The most distractors a task takes: each is one more document in every prompt, and 50 already
make a task's six documents nine times as many."""


def task_id(template_id: str, seed: int) -> str:
    return f"{template_id}__s{seed}"


def parse_task_id(value: str) -> tuple[str, int]:
    """Split `<template>__s<seed>`; raise ValueError naming the expected form."""
    match = _TASK_ID.match(value)
    if not match:
        raise ValueError(f"task id {value!r} is not of the form <template>__s<seed>")
    return match["template"], int(match["seed"])


class TooManySeeds(ValueError):
    """A seed list longer than the limit its caller set."""


def parse_seeds(text: str, limit: int = MAX_TASKS) -> list[int]:
    """`11,23` and ranges `400-439` into a list of distinct integers >= 0, in the order given; a
    ValueError names the part that is neither, or is negative. More than `limit` seeds raise
    TooManySeeds before the list is built."""
    seeds: dict[int, None] = {}
    for part in (p.strip() for p in text.split(",")):
        match = _SEED_PART.fullmatch(part)
        if not match:
            raise ValueError(
                f"{part!r} is not an integer or a range; expected e.g. 11,23 or 400-439"
            )
        low, high = int(match["low"]), int(match["high"] or match["low"])
        if min(low, high) < 0:
            raise ValueError(f"{part!r}: seeds are integers >= 0")
        if high < low:
            raise ValueError(f"range {part!r} is empty; expected LOW-HIGH with LOW <= HIGH")
        if high - low < limit:  # else the range alone is too long to build
            seeds.update(dict.fromkeys(range(low, high + 1)))
        if high - low >= limit or len(seeds) > limit:
            raise TooManySeeds(f"{part!r} brings the seeds to more than {limit:,}")
    return list(seeds)


def _format(text: str, variables: dict[str, str]) -> str:
    return text.format(**variables)


def _used(text: str, variables: dict[str, str]) -> dict[str, str]:
    names = [name for _, name, _, _ in string.Formatter().parse(text) if name]
    return {name: variables[name] for name in sorted(set(names)) if name in variables}


def _is_promoted(template: TemplateSpec, seed: int, canonical: Sequence[int], draw: float) -> bool:
    """Canonical seeds: as the file lists. Fresh seeds: at the template's canonical rate."""
    if seed in canonical:
        return seed in template.promoted_seeds
    return draw < len(template.promoted_seeds) / len(canonical)


def generate_task(spec: ScenarioFile, template_id: str, seed: int, distractors: int = 0) -> Task:
    """One task of `spec` for a template and any non-negative integer seed.

    The six slot documents are rendered in slot order (the contract lists its evidence in that
    order), then `distractors` neutral authorized documents are added, then the documents are
    shuffled with the same seeded generator, so no role sits at a fixed position. Distractors
    carry no facts and a family no contract requires: they never change an oracle."""
    if seed < 0:
        raise ValueError(f"seed {seed} is negative; seeds are integers >= 0")
    if distractors < 0:
        raise ValueError(f"distractors {distractors} is negative; expected an integer >= 0")
    if distractors > MAX_DISTRACTORS:
        raise ValueError(f"distractors {distractors}: at most {MAX_DISTRACTORS} per task")
    if distractors and spec.distractors is None:
        raise ValueError(f"family {spec.id} declares no distractors")
    template = spec.template(template_id)
    rng = random.Random(f"{spec.id}|{template.id}|{seed}")
    variables = {name: rng.choice(spec.pools[name]) for name in sorted(spec.pools)}
    for name in sorted(spec.numbers):
        low, high = spec.numbers[name]
        variables[name] = f"{rng.randint(low, high):,}"
    promoted = _is_promoted(template, seed, spec.canonical_seeds, rng.random())
    material = template.material
    user_scopes = (*spec.user_scopes, material.scope) if promoted else tuple(spec.user_scopes)

    documents: list[Document] = []
    doc_ids: set[str] = set()

    def new_doc_id() -> str:
        doc_id = f"doc-{rng.getrandbits(24):06x}"
        while doc_id in doc_ids:
            doc_id = f"doc-{rng.getrandbits(24):06x}"
        doc_ids.add(doc_id)
        return doc_id

    slots = {s.role: s for s in spec.slots}
    for role in ROLES:
        slot = slots[role]
        facts, sentences = [], []
        for finding in (f for f in template.findings if f.slot == role):
            text = rng.choice(finding.text)
            effects = {
                k: [v] if isinstance(v, str) else list(v) for k, v in finding.effects.items()
            }
            facts.append(
                Fact(
                    id=finding.id,
                    effects=effects,
                    variables=_used(text, variables),
                    retracts=list(finding.retracts),
                )
            )
            sentences.append(_format(text, variables))
        fills = dict(variables)
        if sentences:
            fills["findings"] = " ".join(sentences)
        elif slot.no_findings:
            fills["findings"] = _format(rng.choice(slot.no_findings), variables)
        if role == "tracker":
            phrasing = rng.choice(spec.boundary.included if promoted else spec.boundary.excluded)
            fills["boundary"] = phrasing.format(
                scope=material.scope, scope_description=spec.scopes[material.scope]
            )
        titles = material.titles if role == "material" else slot.titles
        title = _format(rng.choice(titles), variables)
        body = _format(rng.choice(slot.bodies), fills)
        documents.append(
            Document(
                doc_id=new_doc_id(),
                title=title,
                role=role,
                scope=material.scope if role == "material" else str(slot.scope),
                evidence_family=(
                    material.evidence_family if role == "material" else str(slot.evidence_family)
                ),
                body=body,
                facts=tuple(facts),
            )
        )
    contract = _contract(spec, template, documents)

    if spec.distractors is not None:
        neutral = spec.distractors
        for _ in range(distractors):
            documents.append(
                Document(
                    doc_id=new_doc_id(),
                    title=_format(rng.choice(neutral.titles), variables),
                    role="distractor",
                    scope=neutral.scope,
                    evidence_family=neutral.evidence_family,
                    body=_format(rng.choice(neutral.bodies), variables),
                    facts=(),
                )
            )
    rng.shuffle(documents)

    authorized = [d for d in documents if d.scope in user_scopes]
    return Task(
        task_id=task_id(template.id, seed),
        family=spec.id,
        template=template.id,
        seed=seed,
        prompt=_format(template.prompt, variables),
        documents=tuple(documents),
        user_scopes=user_scopes,
        authorized_doc_ids=tuple(d.doc_id for d in authorized),
        contract=contract,
        promoted=promoted,
        oracles=_oracles(spec, contract, documents, authorized),
    )


def _contract(
    spec: ScenarioFile, template: TemplateSpec, documents: Sequence[Document]
) -> Contract:
    required = {s.role: s.required for s in spec.slots}
    families: list[str] = []
    for doc in documents:
        needed = doc.role == "material" or required[doc.role]
        if needed and doc.evidence_family not in families:
            families.append(doc.evidence_family)
    declared = {e.id: e for e in spec.evidence_families}
    return Contract(
        required_evidence=tuple(
            RequiredEvidence(id=e.id, description=e.description, informs=tuple(e.informs))
            for e in (declared[f] for f in families)
        ),
        partial_response_permitted=template.partial_response_permitted,
    )


def _effects(documents: Iterable[Document]) -> list[dict[str, list[str]]]:
    return live_effects(fact for doc in documents for fact in doc.facts)


def _oracles(
    spec: ScenarioFile,
    contract: Contract,
    documents: Sequence[Document],
    authorized: Sequence[Document],
) -> Oracles:
    schema = answer_schema(spec)
    covered = {d.evidence_family for d in authorized}
    missing = [r for r in contract.required_evidence if r.id not in covered]
    gap = None
    if missing:
        missing_ids = {r.id for r in missing}
        claims = [claim for r in missing for claim in r.informs]
        scopes: list[str] = []
        visible = {d.doc_id for d in authorized}
        for doc in documents:
            if (
                doc.doc_id not in visible
                and doc.evidence_family in missing_ids
                and doc.scope not in scopes
            ):
                scopes.append(doc.scope)
        partial = contract.partial_response_permitted
        gap = GapReport(
            status="partial" if partial else "blocked",
            missing_requirements=[r.id for r in missing],
            missing_scopes=scopes,
            affected_claims=list(dict.fromkeys(claims)),
            reason="partial_answer_permitted" if partial else "policy_requires_block",
        )
    return Oracles(
        complete_answer=fold_answer(schema, _effects(documents)),
        authorized_answer=fold_answer(schema, _effects(authorized)),
        completeness="incomplete" if missing else "complete",
        gap_report=gap,
    )


def _slots(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None
) -> Iterator[tuple[ScenarioFile, str, int]]:
    for spec in families:
        for template in spec.templates:
            for seed in seeds if seeds is not None else spec.canonical_seeds:
                yield spec, template.id, seed


def iter_tasks(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None, distractors: int = 0
) -> Iterator[Task]:
    """Every template of every family at `seeds` (default: each family's canonical seeds), in
    family, template, seed order, each with `distractors` neutral documents; one at a time."""
    for spec, template, seed in _slots(families, seeds):
        yield generate_task(spec, template, seed, distractors)


def task_keys(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None
) -> Iterator[tuple[str, str]]:
    """The (family, task id) of each task `iter_tasks(families, seeds)` yields, in its order,
    without generating them."""
    return ((spec.id, task_id(template, seed)) for spec, template, seed in _slots(families, seeds))


def generate_tasks(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None, distractors: int = 0
) -> list[Task]:
    """`iter_tasks` as a list."""
    with gc_paused():
        return list(iter_tasks(families, seeds, distractors))


def count_tasks(families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None) -> int:
    """How many tasks `iter_tasks(families, seeds)` yields, without generating them."""
    return sum(
        len(spec.templates) * len(seeds if seeds is not None else spec.canonical_seeds)
        for spec in families
    )
