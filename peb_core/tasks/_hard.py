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
from datetime import date

from ._answers import answer_schema, fold_answer, live_effects
from ._checks import one_of
from ._draw import DocumentData, Draw, build_contract, placeholders
from ._scenario import ROLES, AnswerField, FindingSpec, ScenarioFile, SlotRole, TemplateSpec
from ._task import Fact, Task
from ._tiers import TierSpec
from ._toolkit import (
    STALE,
    Signal,
    Stale,
    dates_from,
    draw_stale,
    gap_topologies,
    needs,
    new_task,
    out_of_date,
    per_family,
    scheduled,
    spread,
    tracker_notice,
)


@dataclass(frozen=True)
class _Layout:
    """How a hard task's evidence is laid out: which restricted copies are out of date, and the
    two surface signals. `notice`: the tracker names an excluded scope, a missing one (`real`)
    or one holding nothing required (`decoy`). `supersession`: the out-of-date copies say so
    (`real`), or a current copy says it replaces an archived version (`decoy`)."""

    stale: Stale
    notice: Signal
    supersession: Signal


@functools.cache
def _schedule(family: str, n: int) -> tuple[_Layout, ...]:
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
            for stale in STALE:
                layouts.append(
                    _Layout(
                        stale,
                        present("notice") if notice else "none",
                        present("supersession", stale != "both") if sup else "none",
                    )
                )
    return spread(layouts, n, f"{family}|hard-schedule")


def _layout(spec: ScenarioFile, template: TemplateSpec, seed: int, rng: random.Random) -> _Layout:
    """A canonical seed's layout from the family's schedule; a fresh seed's drawn at the same
    rates (half complete; each signal present half the time, a decoy or, on an incomplete
    task, as often a real one)."""
    layout = scheduled(spec, template, seed, _schedule)
    if layout is not None:
        return layout
    stale = draw_stale(rng)

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


@per_family
def _records(spec: ScenarioFile) -> _Records:
    """`_Records` of a family."""
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


@per_family
def _decoys(spec: ScenarioFile) -> Decoys:
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


_VERSION, _DAY, _GAP = 3, 12, 10
"""The bits of one record's draw: its current version (2 + 0-7), the day of 2026 it was issued
(1 April + 0-273), and how many days earlier the version before it was (14 + 0-76)."""
_shown = dates_from(date(2026, 1, 1))
"""Day `day` of 2026 (0: 1 January), as `14 March 2026`."""
_SLOTS: tuple[SlotRole, ...] = (
    "overview",
    "primary_evidence",
    "context_note",
    "advisor_note",
    "tracker",
)
"""The visible slots, in the order their documents are drawn."""


@dataclass(frozen=True)
class _Versions:
    """Every record's current version and its date, the version before it (one lower) and its
    date, and the task's phrasings of a stamp and of a register line."""

    current: dict[str, int]
    dates: dict[str, str]
    earlier: dict[str, str]
    stamp_text: str
    line_text: str

    def stamp(self, family: str, old: bool = False) -> str:
        """The stamp of a copy of `family`'s record: current, or the version before (`old`)."""
        return self.stamp_text.format(
            version=self.current[family] - old, date=(self.earlier if old else self.dates)[family]
        )

    def pair(self, family: str) -> dict[str, str]:
        """The fills of a sentence on supersession: both versions of `family` and their dates."""
        return {
            "version": str(self.current[family]),
            "date": self.dates[family],
            "old": str(self.current[family] - 1),
            "old_date": self.earlier[family],
        }


def _versions(spec: ScenarioFile, rng: random.Random) -> _Versions:
    """Every record's current version (2-9) and its date, and the version before it (one lower)
    and its date (2 to 13 weeks earlier), all in 2026, from one draw of bits. The register lists
    both for every record, and a copy shows the one it is: a current copy the current version,
    an out-of-date copy the one before. So every number and month a copy shows, the register
    shows too, in the same words (`version V of D`, checked by `_problems`), whether the copy is
    current or not, and only comparing a copy's stamp with its record's line in the register
    tells which. One stamp and one register line phrasing per task, as one document-control
    office would write them, and the register in the family's order."""
    assert spec.hard is not None
    width = _VERSION + _DAY + _GAP
    bits = rng.getrandbits(width * len(spec.evidence_families))
    current, dates, earlier = {}, {}, {}
    for i, e in enumerate(spec.evidence_families):
        field = bits >> width * i
        day = 90 + (field >> _VERSION) % (1 << _DAY) % 274
        current[e.id] = 2 + field % (1 << _VERSION)
        dates[e.id] = _shown(day)
        earlier[e.id] = _shown(day - 14 - (field >> (_VERSION + _DAY)) % (1 << _GAP) % 77)
    stamp_text, line_text = rng.choice(spec.hard.stamps), rng.choice(spec.hard.register_lines)
    return _Versions(current, dates, earlier, stamp_text, line_text)


@dataclass(frozen=True)
class _Matter:
    """One hard task's draws before its documents: its layout, its two restricted records (M1
    the template's material record, M2 drawn from `_Records.seconds`), the decoy scope (drawn by
    `_decoys`' weights), which records are out of date, and the versions."""

    draw: Draw
    layout: _Layout
    m1: str
    m2: str
    decoy: str
    stale: dict[str, bool]
    versions: _Versions

    @property
    def missing_scopes(self) -> list[str]:
        """The home scopes of the records with no current visible copy (M1's first)."""
        homes = self.draw.spec.home_scopes
        return [homes[f] for f in (self.m1, self.m2) if self.stale[f]]


def _matter(spec: ScenarioFile, template: TemplateSpec, seed: int) -> _Matter:
    draw = Draw(spec, f"{spec.id}|{template.id}|{seed}|hard")
    rng = draw.rng
    layout = _layout(spec, template, seed, rng)
    m1, s1 = template.material.evidence_family, template.material.scope
    m2 = rng.choice(_records(spec).seconds[template.id])
    scopes, weights = _decoys(spec)[s1, spec.home_scopes[m2]]
    decoy = rng.choices(scopes, weights)[0]
    stale = out_of_date(layout.stale, m1, m2)
    return _Matter(draw, layout, m1, m2, decoy, stale, _versions(spec, rng))


def _slot_documents(
    spec: ScenarioFile, template: TemplateSpec, matter: _Matter
) -> list[DocumentData]:
    """The visible slots' documents, each with the current stamp of its record; the tracker
    names an excluded scope (a missing record's, or the decoy) or says nothing of one."""
    draw, rng = matter.draw, matter.draw.rng
    documents: list[DocumentData] = []
    for role in _SLOTS:
        slot = spec.slots_by_role[role]
        facts, fills = draw.slot(slot, template.findings_by_slot[role])
        if role == "tracker":
            _, fills["boundary"] = tracker_notice(
                spec, rng, matter.layout.notice, matter.missing_scopes, matter.decoy
            )
        family = str(slot.evidence_family)
        body = f"{rng.choice(slot.bodies).format_map(fills)} {matter.versions.stamp(family)}"
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
    return documents


def _record_documents(
    spec: ScenarioFile, template: TemplateSpec, matter: _Matter
) -> list[DocumentData]:
    """The restricted records (M1, M2): a visible copy of each (with a stamp; perhaps a sentence
    on supersession) and the hidden master, current, in its home scope. A record is in one of
    two states: clean (a no-findings body) or holding findings (M1: the template's material
    findings; M2: those of a template whose material record it is). The copy's state is drawn
    alike whether it is current or out of date, so its text tells nothing of which: a current
    copy holds its master's state and text, an out-of-date one the other state, the record as
    it stood before (`_records` makes sure either state changes the answer). A record is
    titled as its copy's state was filed: by its findings' titles, or clean by what it is."""
    hard = spec.hard
    assert hard is not None
    draw, rng, layout, versions = matter.draw, matter.draw.rng, matter.layout, matter.versions
    homes, stale, decoy = spec.home_scopes, matter.stale, matter.decoy
    current = [f for f in (matter.m1, matter.m2) if not stale[f]]
    speaks = rng.choice(current) if layout.supersession == "decoy" else None
    documents: list[DocumentData] = []
    for family in (matter.m1, matter.m2):
        source = template if family == matter.m1 else rng.choice(_records(spec).sources[family])
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
            "body": f"{master_body} {versions.stamp(family)}",
            "facts": facts,
        }
        copy_text = f"{body} {versions.stamp(family, old=stale[family])}"
        if stale[family] and layout.supersession == "real":
            copy_text += " " + draw.text(
                hard.superseded_by,
                scope=homes[family],
                scope_description=spec.scopes[homes[family]],
                **versions.pair(family),
            )
        elif family == speaks:
            copy_text += " " + draw.text(
                hard.supersedes,
                scope=decoy,
                scope_description=spec.scopes[decoy],
                **versions.pair(family),
            )
        copy: DocumentData = {
            "doc_id": draw.doc_id(),
            "title": title,
            "role": "material",
            "scope": spec.user_scopes[0],
            "evidence_family": family,
            "body": copy_text,
            "facts": own,
            "superseded": stale[family],
        }
        documents += [copy, master]
    return documents


def _register(spec: ScenarioFile, matter: _Matter) -> DocumentData:
    """The register: every record's two versions and their dates, in the family's order."""
    hard = spec.hard
    assert hard is not None
    draw, versions = matter.draw, matter.versions
    tracker = spec.slots_by_role["tracker"]
    lines = spec.registers[versions.line_text].format(
        *versions.current.values(),
        *versions.dates.values(),
        *(v - 1 for v in versions.current.values()),
        *versions.earlier.values(),
    )
    return {
        "doc_id": draw.doc_id(),
        "title": draw.text(hard.register_titles),
        "role": "register",
        "scope": str(tracker.scope),
        "evidence_family": str(tracker.evidence_family),
        "body": f"{draw.text(hard.register_intros)} {lines}",
        "facts": [],
    }


def _topologies(layout: _Layout, missing_scopes: list[str]) -> list[str]:
    """A gap is named by a real notice (one missing scope) or by the out-of-date copies saying
    so (every missing scope); otherwise it is silent. Decoys are named as such."""
    missing = len(missing_scopes)
    named = missing if layout.supersession == "real" else int(layout.notice == "real")
    topologies = gap_topologies(missing, named)
    if layout.notice == "decoy":
        topologies.append("decoy_notice")
    if layout.supersession == "decoy":
        topologies.append("decoy_supersession")
    return topologies


def hard_task(spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int) -> Task:
    matter = _matter(spec, template, seed)
    draw, rng = matter.draw, matter.draw.rng
    documents = [
        *_slot_documents(spec, template, matter),
        *_record_documents(spec, template, matter),
        _register(spec, matter),
    ]
    slots = spec.slots_by_role
    required = [
        str(slots[r].evidence_family) for r in ROLES if r != "material" and slots[r].required
    ]
    contract = build_contract(spec, template, [*required, matter.m1, matter.m2], rng)
    documents.append(draw.distractor(matter.decoy))
    for _ in range(distractors):
        extra = draw.distractor()
        extra["body"] += f" {matter.versions.stamp(extra['evidence_family'])}"
        documents.append(extra)
    rng.shuffle(documents)
    topologies = _topologies(matter.layout, matter.missing_scopes)
    return new_task(spec, template, seed, draw, documents=documents, contract=contract,
                    topologies=topologies)  # fmt: skip


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


HARD = TierSpec(
    name="hard",
    description="the same rules over evidence surface cues cannot read: version stamps, a "
    "register, silent gaps and decoys",
    build=hard_task,
    unsupported=needs("hard"),
    problems=_problems,
    sections=("hard",),
)
