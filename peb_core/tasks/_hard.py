"""The `hard` tier (docs/benchmark.md §7): every visible document carries a version stamp and a
register lists each kind of record with its current version, the version before it, and the
scope it is kept in. Besides the template's material record (M1) the contract requires a second
restricted record (M2, kept in another scope); the view holds a copy of each, current or out of
date (the version before), while the masters stay hidden. A record is clean or holds findings;
an out-of-date copy holds the state its record was in before the current version, the other one,
so that relying on it gives a wrong answer, and its text, version and date are drawn as a
current copy's are: only comparing its stamp with the register tells which it is. Complete and
incomplete tasks are balanced, and so, independently of completeness, are the two surface
signals: the tracker naming an excluded scope (a missing one, or a decoy holding nothing
required, drawn so that which scope a notice names says little of which it is) and a copy
speaking of supersession (an out-of-date copy saying it is superseded, or a current copy saying
it replaces an archived version); on an incomplete task either signal is a decoy as often as it
is real."""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from ._answers import answer_schema, fold_answer, live_effects
from ._checks import one_of
from ._draw import DocumentData, Draw, build_contract, build_oracles, placeholders
from ._ids import task_id
from ._scenario import ROLES, AnswerField, FindingSpec, ScenarioFile, TemplateSpec
from ._task import Fact, Task
from ._tiers import TierSpec, register_tier

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


@dataclass(frozen=True)
class _Records:
    """What a family's restricted records are drawn from on the hard tier. `sources`: for each
    restricted family, the templates whose material record it is (their material findings are
    the record's findings). `seconds`: for each template, the restricted families its second
    record (M2) may be: kept in another scope than its material record (M1), with a third
    restricted scope left for the decoy, and such that each record's two states give different
    answers whatever the state of the other."""

    sources: Mapping[str, tuple[TemplateSpec, ...]]
    seconds: Mapping[str, tuple[str, ...]]


_RECORDS: dict[bytes, _Records] = {}


def _records(spec: ScenarioFile) -> _Records:
    """`_Records` of a family (computed once per declared family)."""
    records = _RECORDS.get(spec.declared)
    if records is None:
        records = _RECORDS[spec.declared] = _records_of(spec)
    return records


def _records_of(spec: ScenarioFile) -> _Records:
    sources: dict[str, tuple[TemplateSpec, ...]] = {}
    for t in spec.templates:
        sources[t.material.evidence_family] = (*sources.get(t.material.evidence_family, ()), t)
    schema = answer_schema(spec)
    material = {t.id: _facts(t.findings_by_slot["material"]) for t in spec.templates}
    homes = spec.home_scopes
    seconds = {}
    for t in spec.templates:
        m1, s1 = t.material.evidence_family, t.material.scope
        visible = _facts(f for f in t.findings if f.slot != "material")
        seconds[t.id] = tuple(
            f
            for f in spec.restricted_families
            if f != m1
            and homes[f] != s1
            and any(s not in (s1, homes[f]) for s in spec.restricted_scopes)
            and all(
                _states_matter(schema, visible, material[t.id], material[source.id])
                for source in sources[f]
            )
        )
    return _Records(sources, seconds)


Decoys = Mapping[tuple[str, str], tuple[tuple[str, ...], tuple[float, ...]]]
_DECOYS: dict[bytes, Decoys] = {}


def _decoys(spec: ScenarioFile) -> Decoys:
    """`_decoys_of` a family (computed once per declared family)."""
    decoys = _DECOYS.get(spec.declared)
    if decoys is None:
        decoys = _DECOYS[spec.declared] = _decoys_of(spec)
    return decoys


def _decoys_of(spec: ScenarioFile) -> Decoys:
    """For each pair of scopes a task's two records may be kept in (M1's, M2's): the restricted
    scopes left for its decoy, and weights to draw one by, such that over the family's tasks a
    decoy notice names each scope about as often as a real notice does (a missing record's
    scope, either record's alike), so that which scope a notice names tells nothing of whether
    it is real. Found by proportional fitting; where no weights match (a scope that nearly every
    task keeps a record in can seldom be left for a decoy), the nearest the fitting reaches."""
    homes, seconds = spec.home_scopes, _records(spec).seconds
    share: dict[tuple[str, str], float] = {}
    for t in spec.templates:
        for f in seconds[t.id]:
            pair = (t.material.scope, homes[f])
            share[pair] = share.get(pair, 0.0) + 1 / len(spec.templates) / len(seconds[t.id])
    scopes = spec.restricted_scopes
    left = {pair: tuple(s for s in scopes if s not in pair) for pair in share}
    real = {s: sum(p * pair.count(s) / 2 for pair, p in share.items()) for s in scopes}
    weights = dict.fromkeys(scopes, 1.0)
    for _ in range(60):
        drawn = dict.fromkeys(scopes, 0.0)
        for pair, p in share.items():
            total = sum(weights[s] for s in left[pair])
            for s in left[pair]:
                drawn[s] += p * weights[s] / total
        fitted = {s: w * real[s] / drawn[s] if drawn[s] else w for s, w in weights.items()}
        top = max(fitted.values())
        weights = {s: max(w / top, 1e-3) for s, w in fitted.items()}
    return {pair: (left[pair], tuple(weights[s] for s in left[pair])) for pair in share}


def _facts(findings: Iterable[FindingSpec]) -> list[Fact]:
    """Findings as facts: their effects and retractions, no variables."""
    return [
        Fact(id=f.id, effects=f.effect_lists, variables={}, retracts=f.retracts) for f in findings
    ]


def _states_matter(
    schema: Iterable[AnswerField], visible: list[Fact], one: list[Fact], two: list[Fact]
) -> bool:
    """Whether, beside the `visible` facts, the first record's findings `one` change the answer
    with the second record clean or holding `two`, and `two` change it with the first clean or
    holding `one`."""
    clean, first, second, both = (
        fold_answer(schema, live_effects([*visible, *held]))
        for held in ([], one, two, [*one, *two])
    )
    return clean != first and second != both and clean != second and first != both


def _state(draw: Draw, family: str, source: TemplateSpec, findings: bool) -> tuple[list[Fact], str]:
    """A restricted record's facts and text in one state: holding `source`'s material findings,
    or clean (one of the family's no-findings phrasings)."""
    if findings:
        facts, sentences = draw.findings(source.findings_by_slot["material"])
        return facts, " ".join(sentences)
    assert draw.spec.hard is not None
    return [], draw.text(draw.spec.hard.no_findings[family])


_DAY_ONE = date(2026, 1, 1)
_VERSION, _DAY, _GAP = 3, 12, 10
"""The bits of one record's draw: its current version (2 + 0-7), the day of 2026 it was issued
(1 April + 0-273), and how many days earlier the version before it was (14 + 0-76)."""


@functools.cache
def _shown(day: int) -> str:
    """Day `day` of 2026 (0: 1 January), as `14 March 2026`."""
    when = _DAY_ONE + timedelta(days=day)
    return f"{when.day} {when:%B %Y}"


def hard_task(spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int) -> Task:
    hard = spec.hard
    assert hard is not None
    draw = Draw(spec, f"{spec.id}|{template.id}|{seed}|hard")
    rng = draw.rng
    layout = _layout(spec, template, seed, rng)
    homes = spec.home_scopes
    m1, s1 = template.material.evidence_family, template.material.scope
    records = _records(spec)
    m2 = rng.choice(records.seconds[template.id])
    s2 = homes[m2]
    scopes, weights = _decoys(spec)[s1, s2]
    decoy = rng.choices(scopes, weights)[0]
    stale = {m1: layout.stale in ("m1", "both"), m2: layout.stale in ("m2", "both")}
    missing_scopes = [homes[f] for f in (m1, m2) if stale[f]]

    # Every record's current version (2-9) and its date, and the version before it (one lower)
    # and its date (2 to 13 weeks earlier), all in 2026, from one draw of bits. The register
    # lists both for every record, and a copy shows the one it is: a current copy the current
    # version, an out-of-date copy the one before. So every number and month a copy shows, the
    # register shows too, in the same words (`version V of D`, checked by `_problems`), whether
    # the copy is current or not, and only comparing a copy's stamp with its record's line in
    # the register tells which. One stamp and one register line phrasing per task, as one
    # document-control office would write them, and the register in the family's order.
    width = _VERSION + _DAY + _GAP
    bits = rng.getrandbits(width * len(spec.evidence_families))
    versions, dates, earlier = {}, {}, {}
    for i, e in enumerate(spec.evidence_families):
        field = bits >> width * i
        day = 90 + (field >> _VERSION) % (1 << _DAY) % 274
        versions[e.id] = 2 + field % (1 << _VERSION)
        dates[e.id] = _shown(day)
        earlier[e.id] = _shown(day - 14 - (field >> (_VERSION + _DAY)) % (1 << _GAP) % 77)
    stamp_text, line_text = rng.choice(hard.stamps), rng.choice(hard.register_lines)

    def stamp(family: str, old: bool = False) -> str:
        return stamp_text.format(
            version=versions[family] - old, date=(earlier if old else dates)[family]
        )

    slots = spec.slots_by_role
    visible = spec.user_scopes[0]
    documents: list[DocumentData] = []
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

    # The restricted records (M1, M2): a visible copy of each (with a stamp; perhaps a sentence
    # on supersession) and the hidden master, current, in its home scope. A record is in one of
    # two states: clean (a no-findings body) or holding findings (M1: the template's material
    # findings; M2: those of a template whose material record it is). The copy's state is drawn
    # alike whether it is current or out of date, so its text tells nothing of which: a current
    # copy holds its master's state and text, an out-of-date one the other state, the record as
    # it stood before (`_records` makes sure either state changes the answer). A record is
    # titled as its copy's state was filed: by its findings' titles, or clean by what it is.
    current = [f for f in (m1, m2) if not stale[f]]
    speaks = rng.choice(current) if layout.supersession == "decoy" else None
    for family in (m1, m2):
        source = template if family == m1 else rng.choice(records.sources[family])
        holds = rng.random() < 0.5
        if holds:
            title = draw.text(source.material.titles)
        else:
            title = spec.requirements[family].description.rstrip(".")
        own, body = _state(draw, family, source, holds)
        facts, master_body = (
            _state(draw, family, source, not holds) if stale[family] else (own, body)
        )
        master: DocumentData = {
            "doc_id": draw.doc_id(),
            "title": title,
            "role": "material",
            "scope": homes[family],
            "evidence_family": family,
            "body": f"{master_body} {stamp(family)}",
            "facts": facts,
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
        copy: DocumentData = {
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
    register = spec.registers[line_text].format(
        *versions.values(),
        *dates.values(),
        *(v - 1 for v in versions.values()),
        *earlier.values(),
    )
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
    contract = build_contract(spec, template, [*map(str, required), m1, m2], rng)
    documents.append(draw.distractor(decoy))
    for _ in range(distractors):
        extra = draw.distractor()
        extra["body"] += f" {stamp(extra['evidence_family'])}"
        documents.append(extra)
    rng.shuffle(documents)
    authorized = [d for d in documents if d["scope"] in spec.user_scopes]
    oracles = build_oracles(spec, contract, documents, authorized)
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


_FORMS = {
    "stamps": ("version {version} of {date}",),
    "register_lines": ("version {version} of {date}", "version {old} of {old_date}"),
}
"""How stamps and register lines write a version and its date: in the same words, so that every
word next to a number a copy shows is next to it in the register too."""


def _problems(spec: ScenarioFile) -> Iterable[str]:
    """What the hard tier needs of a family that declares [hard] (its text is checked with every
    other text): stamps and register lines that write versions in one form (`_FORMS`), a
    no-finding body for each restricted family, one scope per restricted family, and for every
    template a second restricted record (`_Records.seconds`)."""
    hard = spec.hard
    assert hard is not None
    for part, forms in _FORMS.items():
        for j, text in enumerate(getattr(hard, part)):
            names = [name for _, name, _, _ in string.Formatter().parse(text) if name]
            for form in forms:
                fields = placeholders(form)
                if text.lower().count(form) != 1 or any(names.count(f) != 1 for f in fields):
                    yield (
                        f"hard.{part}[{j}]: expected {form!r} once, its placeholders nowhere "
                        "else: a stamp shows a version and its date in the register's words, so "
                        "that only comparing the two tells a current copy from an out-of-date one"
                    )
    restricted = spec.restricted_families
    for family in restricted:
        if family not in hard.no_findings:
            yield f"hard.no_findings: no phrasings for restricted family {family!r}"
    for family in hard.no_findings:
        if family not in restricted:
            yield f"hard.no_findings: {family!r} is not a restricted family; " + one_of(restricted)
    if spec.distractors is None:
        yield "hard: the hard tier needs [distractors] (its decoy documents are drawn from them)"
    for family in restricted:
        kept = {t.material.scope for t in spec.templates if t.material.evidence_family == family}
        if len(kept) > 1:
            yield f"templates: restricted family {family!r} is kept in scopes {sorted(kept)}"
    # Which answers findings imply is only known once every effect is in the vocabulary (the
    # templates' own checks report any that is not).
    if any(
        name not in spec.answer or not set(values) <= set(spec.answer[name].values)
        for t in spec.templates
        for f in t.findings
        for name, values in f.effect_lists.items()
    ):
        return
    seconds = _records(spec).seconds
    for i, template in enumerate(spec.templates):
        if not seconds[template.id]:
            yield (
                f"templates[{i}]: the hard tier finds no second restricted family for it: one "
                "kept in another scope than its material record, leaving a third scope outside "
                "user_scopes, such that either record's material findings change the answer "
                "whether or not the other's are in the evidence"
            )


def _unsupported(spec: ScenarioFile) -> str | None:
    return None if spec.hard is not None else "it declares no [hard] text"


HARD = register_tier(
    TierSpec(
        name="hard",
        description="the same rules over evidence surface cues cannot read: version stamps, a "
        "register, silent gaps and decoys",
        build=hard_task,
        unsupported=_unsupported,
        problems=_problems,
        sections=("hard",),
    )
)
