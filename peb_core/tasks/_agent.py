"""The `agent` tier (docs/benchmark.md §9): each task is a corpus that an agent searches and
opens through tools (`peb_core.access`), instead of a bundle handed over in one prompt.

Facts first, as on every tier. Every document is a record with a reference (`RECORD_REF`) and a
version stamp; a register lists each kind of record with its reference, current version and the
scope its master is kept in. Besides the template's material record (M1) the contract requires a
second restricted record (M2, kept in another scope), whose masters stay hidden. The visible
corpus holds, for each, the current copy or not (half the tasks complete) and earlier versions
that hold an earlier state of the record (different facts: relying on them gives another answer).
Visible notes may say that the decisive figure is in a record named by its reference (multi-hop
evidence), whether or not a current copy is visible. The rest is a haystack: related records of
the kinds the contract does not require (hidden masters, current and earlier copies), notes that
point at them, and routine documents, visible or in restricted scopes. The titles of restricted
records repeat no word of the contract. The corpus holds exactly `corpus_size` documents (plus
`distractors`), and the records the contract needs are the same at every size."""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from ._checks import one_of
from ._draw import DocumentData, Draw, build_contract
from ._scenario import ROLES, FindingSpec, ScenarioFile, TemplateSpec
from ._task import Fact, Task
from ._tiers import CorpusSizes, TierSpec
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
    scheduled,
    spread,
    tracker_notice,
)

RECORD_REF = re.compile(r"\b[A-Z]{2}\d{5}\b")
"""A record's reference as an agent corpus writes it: two capital letters and five digits."""
_OWN_REF = re.compile(r"\[([A-Z]{2}\d{5})\]")


def record_ref(body: str) -> str | None:
    """The reference a document's stamp opens with (`[QT48213] ...`), or None (the register)."""
    match = _OWN_REF.match(body)
    return match.group(1) if match else None


AGENT_CORPUS = CorpusSizes(default=60, minimum=20, maximum=500)
"""Documents per agent task: 60 unless asked, from 20 (the contract's records, the register and
the notes that point at them always fit) to 500."""


@dataclass(frozen=True)
class _Layout:
    """Which restricted records have no current visible copy (`stale`), and whether the tracker
    names an excluded scope: a missing one (`real`) or one holding nothing required (`decoy`)."""

    stale: Stale
    notice: Signal


@functools.cache
def _schedule(family: str, n: int) -> tuple[_Layout, ...]:
    """The layouts of a family's `n` canonical agent tasks (templates x canonical seeds, in
    order): half complete, the incomplete half split evenly among M1, M2 and both missing, and
    the tracker naming a scope in half of either half (on an incomplete task as often a decoy
    as a missing scope)."""
    layouts: list[_Layout] = []
    for notice in (False, True):
        layouts += [_Layout("none", "decoy" if notice else "none")] * 3
        for i, stale in enumerate(STALE):
            kind: Signal = ("real", "decoy")[i % 2] if notice else "none"
            layouts.append(_Layout(stale, kind))
    return spread(layouts, n, f"{family}|agent-schedule")


def _layout(spec: ScenarioFile, template: TemplateSpec, seed: int, rng: random.Random) -> _Layout:
    """A canonical seed's layout from the family's schedule; a fresh seed's drawn at the same
    rates."""
    layout = scheduled(spec, template, seed, _schedule)
    if layout is not None:
        return layout
    stale = draw_stale(rng)
    notice: Signal = "none"
    if rng.random() < 0.5:
        notice = "decoy" if stale == "none" or rng.random() < 0.5 else "real"
    return _Layout(stale, notice)


_shown = dates_from(date(2026, 1, 5))
"""Day `day` after 5 January 2026, as `14 March 2026`."""


_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


class _Corpus:
    """One agent task's draws beyond `Draw`: record references, stamps, and documents. The
    haystack's routine texts are rendered once per task and drawn by index."""

    def __init__(self, spec: ScenarioFile, draw: Draw) -> None:
        assert spec.hard is not None and spec.agent is not None and spec.distractors is not None
        self.spec, self.draw, self.rng = spec, draw, draw.rng
        self.hard, self.agent, self.neutral = spec.hard, spec.agent, spec.distractors
        self.stamp_text = self.rng.choice(self.hard.stamps)
        self.refs: set[str] = set()
        self.visible = spec.user_scopes[0]
        variables = draw.variables
        self.routine = [
            (title.format_map(variables), body.format_map(variables))
            for title in self.neutral.titles
            for body in self.neutral.bodies
        ]
        self.routine += self._other_matters()

    def _other_matters(self) -> list[tuple[str, str]]:
        """Routine records of two other matters (other names and figures from the family's
        pools, nothing found), as each slot but the tracker would write them: they look like
        the task's records and are not."""
        spec, rng = self.spec, self.rng
        texts = []
        for _ in range(2):
            variables = {}
            for name, values in sorted(spec.pools.items()):
                others = [v for v in values if v != self.draw.variables[name]] or values
                variables[name] = rng.choice(others)
            for name, (low, high) in sorted(spec.numbers.items()):
                variables[name] = f"{rng.randint(low, high):,}"
            for role in ("overview", "primary_evidence", "context_note", "advisor_note"):
                slot = spec.slots_by_role[role]
                found = rng.choice(slot.no_findings).format_map(variables)
                title = rng.choice(slot.titles).format_map(variables)
                body = rng.choice(slot.bodies).format_map({**variables, "findings": found})
                texts.append((title, body))
        return texts

    def ref(self) -> str:
        """A record reference not yet used in the task."""
        while True:
            bits = self.rng.getrandbits(32)
            letters = _LETTERS[bits % 24] + _LETTERS[(bits >> 5) % 24]
            ref = f"{letters}{10_000 + (bits >> 10) % 90_000}"
            if ref not in self.refs:
                self.refs.add(ref)
                return ref

    def header(self, ref: str, version: int, day: int) -> str:
        """A record's reference and version stamp, as the document-control office writes it."""
        return f"[{ref}] {self.stamp_text.format(version=version, date=_shown(day))}"

    def neutral_doc(self, scope: str, text: str = "") -> DocumentData:
        """A routine document (no facts, a family no contract requires: a routine note of the
        matter, or a record of another matter) in `scope`, with its own reference, and `text`
        after its body."""
        bits = self.rng.getrandbits(32)
        header = self.header(self.ref(), 1 + bits % 9, (bits >> 4) % 321)
        title, body = self.routine[(bits >> 13) % len(self.routine)]
        return {
            "doc_id": self.draw.doc_id(),
            "title": title,
            "role": "distractor",
            "scope": scope,
            "evidence_family": self.neutral.evidence_family,
            "body": f"{header} {body} {text}" if text else f"{header} {body}",
            "facts": [],
        }

    def pointer(self, target: str) -> DocumentData:
        """A visible note saying the decisive figure is in record `target` (multi-hop)."""
        doc = self.neutral_doc(self.neutral.scope, self.draw.text(self.agent.pointers, ref=target))
        doc["role"] = "pointer"
        return doc


@dataclass(frozen=True)
class _Series:
    """One kind of record: its family, reference, current version, its day and the days
    between its versions."""

    family: str
    ref: str
    version: int
    day: int
    gap: int


def _states(
    corpus: _Corpus, family: str, findings: Sequence[FindingSpec]
) -> tuple[tuple[list[Fact], str], tuple[list[Fact], str]]:
    """A restricted record's current state and the other state its versions alternate with
    (facts and text). With `findings` the current state states them and the other is the record
    without them (its no-findings text); without, the current state finds nothing and the other
    held a finding since resolved: the material findings of a template whose record this is."""
    spec, draw = corpus.spec, corpus.draw
    assert spec.hard is not None
    quiet: tuple[list[Fact], str] = ([], draw.text(spec.hard.no_findings[family]))
    if not findings:
        earlier = draw.rng.choice(
            [t for t in spec.templates if t.material.evidence_family == family]
        )
        facts, sentences = draw.findings(earlier.findings_by_slot["material"])
        return quiet, (facts, " ".join(sentences))
    facts, sentences = draw.findings(findings)
    return (facts, " ".join(sentences)), quiet


def _record(
    corpus: _Corpus,
    series: _Series,
    findings: Sequence[FindingSpec],
    current: bool,
    archive: str,
) -> list[DocumentData]:
    """A restricted record's documents: the hidden master (current, in its home scope) and the
    visible versions: the current copy if `current`, and the versions before it down to two or
    three in all. Versions alternate between the current state and the other one, so the last
    out-of-date version holds facts that differ from the master's, and both states are visible
    whether or not the current copy is: only a version number set against the register tells.
    An out-of-date version may say what superseded it and where its master is; a version may
    say it replaces the one before it, archived in `archive`."""
    spec, draw, rng = corpus.spec, corpus.draw, corpus.rng
    hard = corpus.hard
    home = spec.home_scopes[series.family]
    states = _states(corpus, series.family, findings)
    title = draw.text(corpus.agent.record_titles, ref=series.ref)
    bits = rng.getrandbits(32)
    latest = series.version if current else series.version - 1
    shown = range(latest, latest - 2 - (bits >> 5) % 2, -1)

    def day(version: int) -> int:
        return series.day - series.gap * (series.version - version)

    master = states[0]
    documents: list[DocumentData] = [
        {
            "doc_id": draw.doc_id(),
            "title": title,
            "role": "material",
            "scope": home,
            "evidence_family": series.family,
            "body": f"{corpus.header(series.ref, series.version, series.day)} {master[1]}",
            "facts": master[0],
        }
    ]
    for i, version in enumerate(shown):
        facts, text = states[(series.version - version) % 2]
        body = f"{corpus.header(series.ref, version, day(version))} {text}"
        said = (bits >> (8 + 2 * i)) % 4
        if version < series.version and said & 1:
            body += " " + draw.text(
                hard.superseded_by,
                version=str(series.version),
                date=_shown(series.day),
                old=str(version),
                old_date=_shown(day(version)),
                scope=home,
                scope_description=spec.scopes[home],
            )
        if version > shown[-1] and said & 2:
            body += " " + draw.text(
                hard.supersedes,
                version=str(version),
                date=_shown(day(version)),
                old=str(version - 1),
                old_date=_shown(day(version - 1)),
                scope=archive,
                scope_description=spec.scopes[archive],
            )
        documents.append(
            {
                "doc_id": draw.doc_id(),
                "title": title,
                "role": "material",
                "scope": corpus.visible,
                "evidence_family": series.family,
                "body": body,
                "facts": facts,
                "superseded": version < series.version,
            }
        )
    return documents


def agent_task(
    spec: ScenarioFile,
    template: TemplateSpec,
    seed: int,
    distractors: int,
    *,
    corpus_size: int = AGENT_CORPUS.default,
) -> Task:
    hard, agent = spec.hard, spec.agent
    assert hard is not None and agent is not None
    draw = Draw(spec, f"{spec.id}|{template.id}|{seed}|agent")
    rng = draw.rng
    corpus = _Corpus(spec, draw)
    layout = _layout(spec, template, seed, rng)
    homes = spec.home_scopes
    m1, s1 = template.material.evidence_family, template.material.scope
    m2 = rng.choice([f for f in spec.restricted_families if f != m1 and homes[f] != s1])
    s2 = homes[m2]
    decoy = rng.choice([s for s in spec.restricted_scopes if s not in (s1, s2)])
    missing = out_of_date(layout.stale, m1, m2)
    missing_scopes = [homes[f] for f in (m1, m2) if missing[f]]
    notice_names: set[str] = set()

    # Every kind of record: a reference, a current version (4-9: three earlier ones may be
    # shown), its day and 14-45 days between versions.
    series = {}
    for e in spec.evidence_families:
        bits = rng.getrandbits(16)
        series[e.id] = _Series(
            e.id, corpus.ref(), 4 + bits % 6, 120 + (bits >> 3) % 201, 14 + (bits >> 11) % 32
        )

    slots = spec.slots_by_role
    documents: list[DocumentData] = []
    for role in ("overview", "primary_evidence", "context_note", "advisor_note", "tracker"):
        slot = slots[role]
        facts, fills = draw.slot(slot, template.findings_by_slot[role])
        if role == "tracker":
            named, fills["boundary"] = tracker_notice(
                spec, rng, layout.notice, missing_scopes, decoy
            )
            notice_names = {f for f in (m1, m2) if missing[f] and homes[f] == named}
        family = str(slot.evidence_family)
        record = series[family]
        header = corpus.header(record.ref, record.version, record.day)
        documents.append(
            {
                "doc_id": draw.doc_id(),
                "title": draw.text(slot.titles),
                "role": role,
                "scope": str(slot.scope),
                "evidence_family": family,
                "body": f"{header} {rng.choice(slot.bodies).format_map(fills)}",
                "facts": facts,
            }
        )

    material = template.findings_by_slot["material"]
    for family in (m1, m2):
        documents += _record(
            corpus, series[family], material if family == m1 else (), not missing[family], decoy
        )
    pointed = [f for f in (m1, m2) if rng.random() < 0.5]
    documents += [corpus.pointer(series[f].ref) for f in pointed]

    tracker = slots["tracker"]
    line_text = rng.choice(hard.register_lines)
    lines = []
    for e in spec.evidence_families:
        record = series[e.id]
        scope = homes.get(e.id, str(tracker.scope))
        text = line_text.format(
            description=e.description,
            version=record.version,
            date=_shown(record.day),
            old=record.version - 1,
            old_date=_shown(record.day - record.gap),
            scope=scope,
            scope_description=spec.scopes[scope],
        )
        lines.append(f"[{record.ref}] {text}")
    documents.append(
        {
            "doc_id": draw.doc_id(),
            "title": draw.text(hard.register_titles),
            "role": "register",
            "scope": str(tracker.scope),
            "evidence_family": str(tracker.evidence_family),
            "body": "\n".join([draw.text(hard.register_intros), *lines]),
            "facts": [],
        }
    )
    required = [
        str(slots[r].evidence_family) for r in ROLES if r != "material" and slots[r].required
    ]
    contract = build_contract(spec, template, [*required, m1, m2], rng)
    documents.append(corpus.neutral_doc(decoy))

    # The haystack, drawn after everything the oracles depend on, so that a task is the same
    # task at every corpus size.
    documents += _haystack(corpus, series, (m1, m2), decoy, corpus_size - len(documents))
    for _ in range(distractors):
        documents.append(corpus.neutral_doc(corpus.neutral.scope))
    rng.shuffle(documents)
    topologies = _topologies(missing, layout, pointed, notice_names)
    return new_task(spec, template, seed, draw, documents=documents, contract=contract,
                    topologies=topologies)  # fmt: skip


def _haystack(
    corpus: _Corpus,
    series: dict[str, _Series],
    contract_records: tuple[str, str],
    decoy: str,
    n: int,
) -> list[DocumentData]:
    """`n` haystack documents: first the related records (each other restricted kind: its
    hidden master, a current copy half the time and earlier versions, and half the time a note
    pointing at it), then routine documents, two in three visible."""
    spec, rng = corpus.spec, corpus.rng

    def stream() -> Iterator[DocumentData]:
        related = [f for f in spec.restricted_families if f not in contract_records]
        rng.shuffle(related)
        for family in related:
            yield from _record(corpus, series[family], (), rng.random() < 0.5, decoy)
            if rng.random() < 0.5:
                yield corpus.pointer(series[family].ref)
        while True:  # two in three visible
            bits = rng.getrandbits(16)
            if bits % 3 < 2:
                yield corpus.neutral_doc(spec.user_scopes[(bits >> 2) % len(spec.user_scopes)])
            else:
                yield corpus.neutral_doc(
                    spec.restricted_scopes[(bits >> 2) % len(spec.restricted_scopes)]
                )

    documents: list[DocumentData] = []
    for doc in stream():
        if len(documents) >= n:
            break
        documents.append(doc)
    return documents


def _topologies(
    missing: dict[str, bool], layout: _Layout, pointed: Sequence[str], notice_names: set[str]
) -> list[str]:
    """How the task's evidence is laid out (docs/benchmark.md §9). `notice_names`: the contract
    records whose scope the tracker names. Statements of supersession are left out: versions
    make them throughout the corpus, current records and missing ones alike."""
    gaps = [f for f, gone in missing.items() if gone]
    topologies = gap_topologies(len(gaps), len([f for f in gaps if f in notice_names]))
    if layout.notice == "decoy":
        topologies.append("decoy_notice")
    if pointed:
        topologies.append("multi_hop")
    if any(missing[f] for f in pointed):
        topologies.append("hidden_hop")
    return topologies


def _title_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", text.lower())}


def _problems(spec: ScenarioFile) -> Iterable[str]:
    """What the agent tier needs of a family that declares [agent]: the hard tier's text (its
    register, stamps and no-finding bodies; `_hard._problems` checks them), stamps and register
    lines a reader can take a version and a scope from, and record titles that name the record
    by `{ref}` and repeat no word of an evidence description."""
    agent = spec.agent
    assert agent is not None
    if spec.hard is None:
        yield "agent: the agent tier needs the [hard] text too (register, stamps, no_findings)"
        return
    for j, text in enumerate(spec.hard.stamps):
        if "version {version}" not in text.lower():
            yield f"hard.stamps[{j}]: the agent tier needs 'version {{version}}' in each stamp"
    for j, text in enumerate(spec.hard.register_lines):
        for part in ("version {version}", "(scope {scope})", "{description}"):
            if part not in text.lower():
                yield f"hard.register_lines[{j}]: the agent tier needs {part!r} in each line"
    words = set().union(*(_title_words(e.description) for e in spec.evidence_families))
    for j, text in enumerate(agent.record_titles):
        if "{ref}" not in text:
            yield f"agent.record_titles[{j}]: a record title names the record by {{ref}}"
        literal = re.sub(r"\{[^}]*\}", " ", text)
        for word in sorted(_title_words(literal) & words):
            yield f"agent.record_titles[{j}]: {word!r} repeats a word of an evidence description"
    for j, text in enumerate(agent.pointers):
        if "{ref}" not in text:
            yield f"agent.pointers[{j}]: a pointer names the record it points at by {{ref}}"
    for family in spec.restricted_families:
        if not any(t.material.evidence_family == family for t in spec.templates):
            yield f"templates: restricted family {family!r} has no template; " + one_of(
                spec.restricted_families
            )


AGENT = TierSpec(
    name="agent",
    description="a corpus searched and opened through tools behind an access layer: "
    "registers, earlier versions, multi-hop references and a haystack",
    build=agent_task,
    unsupported=needs("agent", "hard"),
    problems=_problems,
    corpus=AGENT_CORPUS,
    sections=("hard", "agent"),
)
