"""The generator: facts first, text rendered from facts, every oracle computed from facts.

The same family, template, seed and tier give the same Task in any process: all randomness comes
from `random.Random` instances seeded with strings (hashed with SHA-512 by the standard library,
so independent of PYTHONHASHSEED), and nothing iterates over a set.

Two tiers share the rendering of documents from findings and the computation of the oracles:
- `paper`: the paper's six documents, the tracker naming the excluded scope (or the opened one);
- `hard` (docs/benchmark.md §7): every visible document carries a version stamp and a register lists
  each kind of record with its current version and the scope it is kept in. Besides the
  template's material record (M1) the contract requires a second restricted record (M2, kept in
  another scope); the view holds a copy of each, current or out of date, while the masters stay
  hidden. Complete and incomplete tasks are balanced, and so, independently of completeness, are
  the two surface signals: the tracker naming an excluded scope (a missing one, or a decoy
  holding nothing required) and a copy speaking of supersession (an out-of-date copy saying it
  is superseded, or a current copy saying it replaces an archived version); on an incomplete
  task either signal is a decoy as often as it is real.
"""

from __future__ import annotations

import functools
import random
import re
import string
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal, NamedTuple, NotRequired, TypedDict

from .._gc import gc_paused
from ._answers import answer_schema, fold_answer, live_effects
from ._scenario import ROLES, FindingSpec, Role, ScenarioFile, SlotSpec, TemplateSpec
from ._task import (
    TIERS,
    Answer,
    Completeness,
    Fact,
    GapReport,
    RequiredEvidence,
    Task,
    Tier,
)

_TASK_ID = re.compile(
    r"^(?P<template>[a-z][a-z0-9_]*?)(?:__(?P<tier>" + "|".join(TIERS[1:]) + r"))?__s(?P<seed>\d+)$"
)
_SEED_PART = re.compile(r"(?P<low>-?\d+)(?:-(?P<high>-?\d+))?")

MAX_TASKS = 100_000
"""The most tasks (and so seeds) one command asks for unless told otherwise: a bound on memory
and time."""
MAX_DISTRACTORS = 50
"""The most distractors a task takes: each is one more document in every prompt, and 50 already
make a task's six documents nine times as many."""


class TaskRef(NamedTuple):
    template: str
    seed: int
    tier: Tier


def task_id(template_id: str, seed: int, tier: Tier = "paper") -> str:
    """`<template>__s<seed>` on the paper tier, `<template>__<tier>__s<seed>` on another."""
    return f"{template_id}__s{seed}" if tier == "paper" else f"{template_id}__{tier}__s{seed}"


def parse_task_id(value: str) -> TaskRef:
    """Split a task id into template, seed and tier; raise ValueError naming the expected form."""
    match = _TASK_ID.match(value)
    if not match:
        raise ValueError(
            f"task id {value!r} is not of the form <template>__s<seed> or <template>__hard__s<seed>"
        )
    tier: Tier = "hard" if match["tier"] == "hard" else "paper"
    return TaskRef(match["template"], int(match["seed"]), tier)


class TooManySeeds(ValueError):
    """A seed list longer than the limit its caller set."""


def parse_seed(text: str) -> int:
    """One seed from text (spaces around it allowed); a ValueError naming what is valid, an
    integer >= 0, for anything else."""
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise ValueError(f"{text.strip()!r} is not a seed: seeds are integers >= 0, e.g. 11 or 400")
    return int(text)


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


def _used(text: str, variables: dict[str, str]) -> dict[str, str]:
    return {name: variables[name] for name in _placeholders(text) if name in variables}


@functools.cache
def _placeholders(text: str) -> tuple[str, ...]:
    """The distinct placeholder names of a phrasing, sorted (parsed once per phrasing)."""
    return tuple(sorted({name for _, name, _, _ in string.Formatter().parse(text) if name}))


def _is_promoted(template: TemplateSpec, seed: int, canonical: Sequence[int], draw: float) -> bool:
    """Canonical seeds: as the file lists. Fresh seeds: at the template's canonical rate."""
    if seed in canonical:
        return seed in template.promoted_seeds
    return draw < len(template.promoted_seeds) / len(canonical)


class _Document(TypedDict):
    """A `Document`'s fields: a task's documents are built as data and validated once, with the
    Task."""

    doc_id: str
    title: str
    role: Role
    scope: str
    evidence_family: str
    body: str
    facts: list[Fact]
    superseded: NotRequired[bool]


class _Contract(TypedDict):
    """A `Contract`'s fields."""

    required_evidence: list[RequiredEvidence]
    partial_response_permitted: bool


class _Oracles(TypedDict):
    """An `Oracles`' fields."""

    complete_answer: Answer
    authorized_answer: Answer
    completeness: Completeness
    gap_report: GapReport | None


class _Draw:
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

    def distractor(self, scope: str | None = None) -> _Document:
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


def _check(spec: ScenarioFile, seed: int, distractors: int, tier: str) -> None:
    if seed < 0:
        raise ValueError(f"seed {seed} is negative; seeds are integers >= 0")
    if distractors < 0:
        raise ValueError(f"distractors {distractors} is negative; expected an integer >= 0")
    if distractors > MAX_DISTRACTORS:
        raise ValueError(f"distractors {distractors}: at most {MAX_DISTRACTORS} per task")
    if distractors and spec.distractors is None:
        raise ValueError(f"family {spec.id} declares no distractors")
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}; valid: {', '.join(TIERS)}")
    if tier == "hard" and spec.hard is None:
        raise ValueError(f"family {spec.id} declares no [hard] text, so it has no hard tier")


def generate_task(
    spec: ScenarioFile, template_id: str, seed: int, distractors: int = 0, tier: Tier = "paper"
) -> Task:
    """One task of `spec` for a template, any non-negative integer seed and a tier, with
    `distractors` neutral authorized documents added (they carry no facts and a family no
    contract requires, so they never change an oracle). Documents are shuffled per seed, so no
    role sits at a fixed position, and so is the contract's order."""
    _check(spec, seed, distractors, tier)
    template = spec.template(template_id)
    if tier == "hard":
        return _hard_task(spec, template, seed, distractors)
    return _paper_task(spec, template, seed, distractors)


def _paper_task(spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int) -> Task:
    draw = _Draw(spec, f"{spec.id}|{template.id}|{seed}")
    rng = draw.rng
    promoted = _is_promoted(template, seed, spec.canonical_seeds, rng.random())
    material = template.material
    user_scopes = (*spec.user_scopes, material.scope) if promoted else tuple(spec.user_scopes)
    documents: list[_Document] = []
    slots = spec.slots_by_role
    for role in ROLES:
        slot = slots[role]
        facts, fills = draw.slot(slot, template.findings_by_slot[role])
        if role == "tracker":
            phrasing = rng.choice(spec.boundary.included if promoted else spec.boundary.excluded)
            fills["boundary"] = phrasing.format(
                scope=material.scope, scope_description=spec.scopes[material.scope]
            )
        title = draw.text(material.titles if role == "material" else slot.titles)
        body = rng.choice(slot.bodies).format_map(fills)
        documents.append(
            {
                "doc_id": draw.doc_id(),
                "title": title,
                "role": role,
                "scope": material.scope if role == "material" else str(slot.scope),
                "evidence_family": (
                    material.evidence_family if role == "material" else str(slot.evidence_family)
                ),
                "body": body,
                "facts": facts,
            }
        )
    required = [
        d["evidence_family"]
        for d in documents
        if d["role"] == "material" or slots[d["role"]].required
    ]
    contract = _contract(spec, template, required, rng)
    documents += [draw.distractor() for _ in range(distractors)]
    rng.shuffle(documents)
    authorized = [d for d in documents if d["scope"] in user_scopes]
    oracles = _oracles(spec, contract, documents, authorized)
    return Task.model_validate(
        {
            "task_id": task_id(template.id, seed),
            "family": spec.id,
            "template": template.id,
            "seed": seed,
            "prompt": template.prompt.format_map(draw.variables),
            "documents": documents,
            "user_scopes": user_scopes,
            "authorized_doc_ids": [d["doc_id"] for d in authorized],
            "contract": contract,
            "promoted": promoted,
            "oracles": oracles,
            "topologies": ("named_gap",) if oracles["completeness"] == "incomplete" else (),
        }
    )


Stale = Literal["none", "m1", "m2", "both"]
Signal = Literal["none", "real", "decoy"]


@dataclass(frozen=True)
class _Layout:
    """How a hard task's evidence is laid out: which restricted copies are out of date, and the
    two surface signals. `notice`: the tracker names an excluded scope, a missing one (`real`)
    or one holding nothing required (`decoy`). `supersession`: the out-of-date copies say so
    (`real`), or a current copy says it replaces an archived version (`decoy`)."""

    stale: Stale
    notice: Signal
    supersession: Signal


def _schedule(spec: ScenarioFile) -> tuple[_Layout, ...]:
    """`_schedule_of` for a family's canonical tasks (computed once per family)."""
    return _schedule_of(spec.id, len(spec.templates) * len(spec.canonical_seeds))


@functools.cache
def _schedule_of(family: str, n: int) -> tuple[_Layout, ...]:
    """The layouts of a family's canonical hard tasks (templates x canonical seeds, in order):
    half complete; the incomplete half split evenly among M1, M2 and both out of date; each
    signal present in half of either half, independently, and on incomplete tasks a decoy as
    often as a real one (where a current copy exists to carry a decoy supersession)."""
    layouts: list[_Layout] = []
    kinds: dict[str, list[Signal]] = {"notice": [], "supersession": []}

    def present(signal: str, decoy_possible: bool = True) -> Signal:
        given = kinds[signal]
        kind: Signal = (
            "decoy" if decoy_possible and given.count("real") > given.count("decoy") else "real"
        )
        given.append(kind)
        return kind

    for notice in (False, True):
        for sup in (False, True):
            for _ in range(3):
                layouts.append(
                    _Layout("none", "decoy" if notice else "none", "decoy" if sup else "none")
                )
            for stale in ("m1", "m2", "both"):
                layouts.append(
                    _Layout(
                        stale,
                        present("notice") if notice else "none",
                        present("supersession", stale != "both") if sup else "none",
                    )
                )
    layouts = [layouts[i % len(layouts)] for i in range(n)]
    random.Random(f"{family}|hard-schedule").shuffle(layouts)
    return tuple(layouts)


def _layout(spec: ScenarioFile, template: TemplateSpec, seed: int, rng: random.Random) -> _Layout:
    """A canonical seed's layout from the family's schedule; a fresh seed's drawn at the same
    rates (half complete; each signal present half the time, a decoy or, on an incomplete
    task, as often a real one)."""
    if seed in spec.canonical_seeds:
        index = spec.templates.index(template) * len(spec.canonical_seeds)
        return _schedule(spec)[index + spec.canonical_seeds.index(seed)]
    stale: Stale = "none" if rng.random() < 0.5 else rng.choice(("m1", "m2", "both"))

    def signal(decoy_possible: bool) -> Signal:
        if rng.random() < 0.5:
            return "none"
        if stale == "none" or (decoy_possible and rng.random() < 0.5):
            return "decoy"
        return "real"

    return _Layout(stale, signal(True), signal(stale != "both"))


_DAY_ONE = date(2026, 1, 5)


@functools.cache
def _shown(day: int) -> str:
    """Day `day` after 5 January 2026, as `14 March 2026`."""
    when = _DAY_ONE + timedelta(days=day)
    return f"{when.day} {when:%B %Y}"


def _hard_task(spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int) -> Task:
    hard = spec.hard
    assert hard is not None
    draw = _Draw(spec, f"{spec.id}|{template.id}|{seed}|hard")
    rng = draw.rng
    layout = _layout(spec, template, seed, rng)
    homes = spec.home_scopes
    m1, s1 = template.material.evidence_family, template.material.scope
    m2 = rng.choice([f for f in spec.restricted_families if f != m1 and homes[f] != s1])
    s2 = homes[m2]
    decoy = rng.choice([s for s in spec.restricted_scopes if s not in (s1, s2)])
    stale = {m1: layout.stale in ("m1", "both"), m2: layout.stale in ("m2", "both")}
    missing_scopes = [homes[f] for f in (m1, m2) if stale[f]]

    # Each record's current version (2-9) and date, and an out-of-date copy's earlier date, from
    # one draw of bits; one stamp and one register line phrasing per task, as one document-control
    # office would write them, and the register in the family's order of evidence.
    bits = rng.getrandbits(12 * len(spec.evidence_families))
    versions, days = {}, {}
    for i, e in enumerate(spec.evidence_families):
        versions[e.id] = 2 + (bits >> 12 * i) % 8
        days[e.id] = 60 + (bits >> (12 * i + 3)) % 261  # after _DAY_ONE
    dates = {family: _shown(day) for family, day in days.items()}
    earlier = {f: _shown(days[f] - rng.randint(14, 90)) for f in (m1, m2)}  # 2 to 13 weeks before
    stamp_text, line_text = rng.choice(hard.stamps), rng.choice(hard.register_lines)

    def stamp(family: str, old: bool = False) -> str:
        return stamp_text.format(
            version=versions[family] - old, date=(earlier if old else dates)[family]
        )

    slots = spec.slots_by_role
    visible = spec.user_scopes[0]
    documents: list[_Document] = []
    for role in ("overview", "primary_evidence", "context_note", "advisor_note", "tracker"):
        slot = slots[role]
        facts, fills = draw.slot(slot, template.findings_by_slot[role])
        if role == "tracker":
            if layout.notice != "none":
                named = rng.choice(missing_scopes) if layout.notice == "real" else decoy
                phrasing = rng.choice(spec.boundary.excluded)
                fills["boundary"] = phrasing.format(
                    scope=named, scope_description=spec.scopes[named]
                )
            else:
                fills["boundary"] = rng.choice(hard.neutral)
        family = str(slot.evidence_family)
        body = f"{rng.choice(slot.bodies).format_map(fills)} {stamp(family)}"
        documents.append(
            {
                "doc_id": draw.doc_id(),
                "title": draw.text(slot.titles),
                "role": role,
                "scope": str(slot.scope),
                "evidence_family": family,
                "body": body,
                "facts": facts,
            }
        )

    # The restricted records: a visible copy of each (with a stamp; perhaps a sentence on
    # supersession) and the hidden master, current, in its home scope.
    # M1's copy carries the template's material findings under one of its titles; M2's copy
    # holds none, so it is titled by what the record is (its template's titles name findings).
    facts, sentences = draw.findings(template.findings_by_slot["material"])
    current = [f for f in (m1, m2) if not stale[f]]
    speaks = rng.choice(current) if layout.supersession == "decoy" else None
    for family in (m1, m2):
        if family == m1:
            body, title = " ".join(sentences), draw.text(template.material.titles)
        else:
            body = draw.text(hard.no_findings[family])
            title = spec.requirements[family].description.rstrip(".")
        own = facts if family == m1 else []
        master: _Document = {
            "doc_id": draw.doc_id(),
            "title": title,
            "role": "material",
            "scope": homes[family],
            "evidence_family": family,
            "body": f"{body} {stamp(family)}",
            "facts": own,
        }
        copy_text = f"{body} {stamp(family, old=stale[family])}"
        pair = {
            "version": str(versions[family]),
            "date": dates[family],
            "old": str(versions[family] - 1),
            "old_date": earlier[family],
        }
        if stale[family] and layout.supersession == "real":
            copy_text += " " + draw.text(
                hard.superseded_by,
                scope=homes[family],
                scope_description=spec.scopes[homes[family]],
                **pair,
            )
        elif family == speaks:
            copy_text += " " + draw.text(
                hard.supersedes, scope=decoy, scope_description=spec.scopes[decoy], **pair
            )
        copy: _Document = {
            "doc_id": draw.doc_id(),
            "title": title,
            "role": "material",
            "scope": visible,
            "evidence_family": family,
            "body": copy_text,
            "facts": own,
            "superseded": stale[family],
        }
        documents += [copy, master]

    tracker = slots["tracker"]
    register = spec.registers[line_text].format(*versions.values(), *dates.values())
    documents.append(
        {
            "doc_id": draw.doc_id(),
            "title": draw.text(hard.register_titles),
            "role": "register",
            "scope": str(tracker.scope),
            "evidence_family": str(tracker.evidence_family),
            "body": f"{draw.text(hard.register_intros)} {register}",
            "facts": [],
        }
    )
    required = [*(slots[r].evidence_family for r in ROLES if r != "material" and slots[r].required)]
    contract = _contract(spec, template, [*map(str, required), m1, m2], rng)
    documents.append(draw.distractor(decoy))
    for _ in range(distractors):
        extra = draw.distractor()
        extra["body"] += f" {stamp(extra['evidence_family'])}"
        documents.append(extra)
    rng.shuffle(documents)
    authorized = [d for d in documents if d["scope"] in spec.user_scopes]
    oracles = _oracles(spec, contract, documents, authorized)
    topologies: list[str] = []
    if missing_scopes:
        # A gap is named by a real notice (one missing scope) or by the out-of-date copies
        # saying so (every missing scope); otherwise it is silent.
        if layout.supersession == "real":
            n_named = len(missing_scopes)
        else:
            n_named = int(layout.notice == "real")
        topologies.append("superseded")
        if n_named:
            topologies.append("named_gap")
        if n_named < len(missing_scopes):
            topologies.append("silent_gap")
        if len(missing_scopes) == 2:
            topologies.append("two_missing")
    if layout.notice == "decoy":
        topologies.append("decoy_notice")
    if layout.supersession == "decoy":
        topologies.append("decoy_supersession")
    return Task.model_validate(
        {
            "task_id": task_id(template.id, seed, "hard"),
            "family": spec.id,
            "template": template.id,
            "seed": seed,
            "tier": "hard",
            "prompt": template.prompt.format_map(draw.variables),
            "documents": documents,
            "user_scopes": spec.user_scopes,
            "authorized_doc_ids": [d["doc_id"] for d in authorized],
            "contract": contract,
            "promoted": False,
            "oracles": oracles,
            "topologies": topologies,
        }
    )


def _contract(
    spec: ScenarioFile, template: TemplateSpec, required: Sequence[str], rng: random.Random
) -> _Contract:
    """The contract over the required evidence families, in an order drawn from the task's
    generator before any distractor (so the order carries no information, and distractors
    leave it as it is)."""
    families = list(dict.fromkeys(required))
    rng.shuffle(families)
    return {
        "required_evidence": [spec.requirements[f] for f in families],
        "partial_response_permitted": template.partial_response_permitted,
    }


def _effects(documents: Iterable[_Document]) -> list[dict[str, list[str]]]:
    return live_effects([fact for doc in documents for fact in doc["facts"]])


def _oracles(
    spec: ScenarioFile,
    contract: _Contract,
    documents: Sequence[_Document],
    authorized: Sequence[_Document],
) -> _Oracles:
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
        "complete_answer": fold_answer(schema, _effects(documents)),
        "authorized_answer": fold_answer(schema, _effects(authorized)),
        "completeness": "incomplete" if missing else "complete",
        "gap_report": gap,
    }


def _slots(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None
) -> Iterator[tuple[ScenarioFile, str, int]]:
    for spec in families:
        for template in spec.templates:
            for seed in seeds if seeds is not None else spec.canonical_seeds:
                yield spec, template.id, seed


def iter_tasks(
    families: Iterable[ScenarioFile],
    seeds: Sequence[int] | None = None,
    distractors: int = 0,
    tier: Tier = "paper",
) -> Iterator[Task]:
    """Every template of every family at `seeds` (default: each family's canonical seeds), in
    family, template, seed order, each with `distractors` neutral documents; one at a time."""
    for spec, template, seed in _slots(families, seeds):
        yield generate_task(spec, template, seed, distractors, tier)


def task_keys(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None, tier: Tier = "paper"
) -> Iterator[tuple[str, str]]:
    """The (family, task id) of each task `iter_tasks(families, seeds, tier=tier)` yields, in
    its order, without generating them."""
    return (
        (spec.id, task_id(template, seed, tier)) for spec, template, seed in _slots(families, seeds)
    )


def generate_tasks(
    families: Iterable[ScenarioFile],
    seeds: Sequence[int] | None = None,
    distractors: int = 0,
    tier: Tier = "paper",
) -> list[Task]:
    """`iter_tasks` as a list."""
    with gc_paused():
        return list(iter_tasks(families, seeds, distractors, tier))


def count_tasks(families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None) -> int:
    """How many tasks `iter_tasks(families, seeds)` yields, without generating them."""
    return sum(
        len(spec.templates) * len(seeds if seeds is not None else spec.canonical_seeds)
        for spec in families
    )
