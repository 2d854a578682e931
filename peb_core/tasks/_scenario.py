"""Scenario families as data: the schema of a `scenarios/*.toml` file (loaded and checked in
`_families.py` and `_checks.py`).

A family file declares everything the generic generator needs: the answer fields and their
vocabularies, the evidence families a contract can require, the scopes, the six document slots
with their phrasings, the pools that entity names and figures are drawn from, and six templates
(hidden-evidence patterns). The generator knows no family by name.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

from ._task import RequiredEvidence

SlotRole = Literal[
    "overview",
    "primary_evidence",
    "context_note",
    "advisor_note",
    "material",
    "tracker",
]
Role = SlotRole | Literal["distractor", "register", "procedure"]
ROLES: tuple[SlotRole, ...] = get_args(SlotRole)
"""The six document slots of every task, in the order the paper lists them. A task may also hold
`distractor` documents (neutral, authorized, never required; see `DistractorSpec`), a hard or
agent task a `register` (see `HardSpec`), an agent task `pointer` notes (`AgentSpec`) and, when
its contract is found in the corpus, a `procedure` (`ProcedureSpec`)."""

MIN_PHRASINGS = 3
"""Every title, body, no-findings, boundary and finding text offers at least this many
phrasings, so that fresh seeds give fresh text."""

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
Phrasings = Annotated[list[str], Field(min_length=MIN_PHRASINGS)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Signal = Annotated[str, Field(pattern=r"\S")]


class AnswerFieldSpec(_Spec):
    """One answer field. `ordinal`: one value, the most severe contributed (last in `values`);
    `set`: the union of contributed values. Both default to "nothing found" (first ordinal value,
    empty set).

    `signals` maps a value to the phrases that state it to a reader ("high severity", "forensics
    team"). Every value some finding contributes must have signals, and every phrasing of such a
    finding must contain one of them (case-insensitive), so a model reading only the text can
    derive the oracle's answer."""

    kind: Literal["ordinal", "set"]
    values: Annotated[list[Identifier], Field(min_length=1)]
    description: str
    signals: dict[Identifier, Annotated[list[Signal], Field(min_length=1)]] = {}


class AnswerField(BaseModel):
    """One answer field as a model is shown it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: Literal["ordinal", "set"]
    values: tuple[str, ...]
    description: str


class EvidenceFamilySpec(_Spec):
    id: Identifier
    description: str
    informs: Annotated[list[Identifier], Field(min_length=1)]


class SlotSpec(_Spec):
    """A document slot. Bodies may use `{findings}` (the rendered facts), pool names and, in the
    tracker, `{boundary}`. `scope`, `evidence_family` and `titles` are omitted for the material
    slot, whose template sets them. `no_findings` (what `{findings}` renders to when the slot
    carries no finding) may be omitted only by the tracker, which carries none."""

    role: Role
    scope: Identifier | None = None
    evidence_family: Identifier | None = None
    required: bool = True
    titles: list[str] = []
    bodies: Phrasings
    no_findings: list[str] = []


class FindingSpec(_Spec):
    """A fact placed in a slot: its rendered sentence(s) and its effect on the answer fields.

    `retracts` names findings of the same template that this one contradicts: wherever both are
    in the evidence, the retracted findings' effects are dropped (a hidden audit showing that a
    visible "remediation verified" was falsified, say). Alone, a retracted finding counts."""

    id: Identifier
    slot: Role
    text: Phrasings
    effects: dict[Identifier, Identifier | list[Identifier]]
    retracts: list[Identifier] = []

    @functools.cached_property
    def effect_lists(self) -> Mapping[str, list[str]]:
        """`effects` with every value a list (an ordinal's one value a one-item list)."""
        return {k: [v] if isinstance(v, str) else list(v) for k, v in self.effects.items()}


class MaterialSpec(_Spec):
    """The hidden material document of a template."""

    evidence_family: Identifier
    scope: Identifier
    titles: Phrasings


class TemplateSpec(_Spec):
    id: Identifier
    prompt: str
    partial_response_permitted: bool
    promoted_seeds: list[int] = []
    material: MaterialSpec
    findings: Annotated[list[FindingSpec], Field(min_length=1)]

    @functools.cached_property
    def findings_by_slot(self) -> Mapping[Role, tuple[FindingSpec, ...]]:
        return {role: tuple(f for f in self.findings if f.slot == role) for role in ROLES}


class DistractorSpec(_Spec):
    """Neutral authorized documents that `--distractors N` adds to each task: no facts, a user
    scope, and an evidence family no contract requires, so no oracle changes."""

    scope: Identifier
    evidence_family: Identifier
    titles: Phrasings
    bodies: Phrasings


class BoundarySpec(_Spec):
    """Tracker sentences stating the view's boundary, with `{scope}` and `{scope_description}`."""

    excluded: Phrasings
    included: Phrasings


class HardSpec(_Spec):
    """The text the hard tier (docs/benchmark.md §7) adds to a family. Every visible document
    carries a version stamp; a register lists each kind of record with its current version, the
    version before it, and where it is kept; a copy of a restricted record may be out of date
    (it is then the version before), may say so, or may say that it replaces an archived
    version; the tracker may name an excluded scope or none.

    Placeholders: `stamps` {version} {date}, written `version {version} of {date}`;
    `register_lines` {description} {version} {date} {old} {old_date} {scope}
    {scope_description}, written `version {version} of {date}` and `version {old} of
    {old_date}` (a stamp shows its numbers in the register's words, so that they tell nothing
    but by comparison: see `_hard.py`); `superseded_by` (a stale copy) and `supersedes` (a
    current copy) {version} {date} {old} {old_date} {scope} {scope_description}, where {version}
    is the newer version; `neutral` (a tracker sentence naming no scope) none; titles and intros
    the pools.
    `no_findings` gives, per restricted evidence family (every template's material family), the
    body of a record of it in its clean state, holding no finding."""

    neutral: Phrasings
    register_titles: Phrasings
    register_intros: Phrasings
    register_lines: Phrasings
    stamps: Phrasings
    superseded_by: Phrasings
    supersedes: Phrasings
    no_findings: dict[Identifier, Phrasings]


class AgentSpec(_Spec):
    """The text the agent tier (docs/benchmark.md §9) adds to a family, beside its [hard] text.
    Every document of an agent corpus is a record with a reference (`{ref}`: two capital
    letters and five digits) that the register lists for each kind of record.

    `record_titles`: the titles of restricted records and their copies, with `{ref}` and the
    pools; they repeat no word of the family's evidence descriptions, so that searching a
    contract's words does not find the record by its title. `pointers`: a sentence of a visible
    note saying that the decisive figure is in another record, `{ref}` (multi-hop evidence)."""

    record_titles: Phrasings
    pointers: Phrasings


PressureKind = Literal["deadline", "authority", "plea"]
PRESSURE_KINDS: tuple[PressureKind, ...] = get_args(PressureKind)
"""The kinds of pressure a user who pushes back applies (docs/benchmark.md §10.3): a deadline,
an authority, a plea to just give the answer."""


class FollowupSpec(_Spec):
    """What the family's user says, under `--followup pressure`, to a response that reports a
    gap (docs/benchmark.md §10.3, a user who pushes back): at least three phrasings of each kind
    of pressure, in the family's terms (its decision-maker, its deadline, the answer it wants).
    Pressure and nothing else: a phrasing uses no placeholder and names no scope, evidence
    family, evidence description, record reference or answer signal (checked when the family
    loads), so it brings no new evidence and no hint of what is missing."""

    deadline: Phrasings
    authority: Phrasings
    plea: Phrasings


class ProcedureSpec(_Spec):
    """The organisation's procedure for a family's requests (docs/benchmark.md §9.3): on a tier
    with corpora, under `--contract corpus`, a visible record of the corpus that says in prose
    what such a request requires, in place of the contract an agent is otherwise given.

    `description`: the procedure as the register lists it (a kind of record, with its own
    reference and version). `titles` and `intros` name the subject of the family's requests in
    the family's words (with the pools), so that searching a request finds its procedure; an
    intro opens the document and is how a reader tells it is the procedure. `items`: one
    requirement, with `{description}` (the evidence family's own description), each on its own
    line. The procedure lists the task's required evidence and nothing of what is missing."""

    description: Annotated[str, Field(pattern=r"\S")]
    titles: Phrasings
    intros: Phrasings
    items: Phrasings


OwnerRole = Annotated[str, Field(pattern=r"^[a-z][a-z0-9' -]*[a-z0-9]$")]
"""A human role named as an owner or a reviewer (`privacy office`, `lead counsel`): lower-case
words."""


class OwnersSpec(_Spec):
    """Who owns each scope of a family, and who reviews what no single owner can resolve
    (docs/benchmark.md §2.2, the next step): `scopes` names the owner of every scope (a role,
    several scopes may share one), `reviewer` the role a gap spanning several owners goes to. Read
    by the protocols that ask for a next step (`structured_gap@2`) and the `escalate` tool; a
    family without it stays loadable and is refused, in one line, where they need it."""

    reviewer: OwnerRole
    scopes: dict[Identifier, OwnerRole]


Phrase = Annotated[str, Field(pattern=r"[A-Za-z0-9]")]


class ProseSpec(_Spec):
    """How a person writes, in prose, about the family's decisions: what the prose reader
    (`peb_core.reading`, docs/benchmark.md §2.1) reads a message with, beyond the vocabulary
    itself (each value id spelled out, its `signals`, each requirement's id and description,
    each scope's id and description), which it reads too. Phrases match case-insensitively,
    as whole words, a plural or possessive allowed; no phrase may stand for two values of one
    field, two requirements or two scopes (checked when the family loads).

    `fields`: phrasings that name an answer field ("severity", "how severe"). `values`: per
    field, per value, further phrasings that state it ("no disclosure needed"). `evidence`:
    per evidence family (requirement) id, phrasings that name it ("the forensic analysis").
    `scopes`: per scope id, phrasings that name it. `unread`: signals that state no value in
    a message (phrases the family's documents use as a value but prose uses otherwise).
    `topics`: phrasings of a value that name its topic ("governing law", "working capital") and
    state it only where the message places them as a value (under the field's label, with the
    field named, in a frame or as advice), as a one-word value always needs."""

    fields: dict[Identifier, list[Phrase]] = {}
    values: dict[Identifier, dict[Identifier, list[Phrase]]] = {}
    evidence: dict[Identifier, list[Phrase]] = {}
    scopes: dict[Identifier, list[Phrase]] = {}
    unread: list[Phrase] = []
    topics: list[Phrase] = []


class ScenarioFile(_Spec):
    """The whole of one `scenarios/<family>.toml` file."""

    id: Identifier
    title: str
    decision_setting: str
    hidden_pattern: str
    canonical_seeds: Annotated[list[NonNegativeInt], Field(min_length=1)]
    user_scopes: Annotated[list[Identifier], Field(min_length=1)]
    scopes: dict[Identifier, str]
    answer: dict[Identifier, AnswerFieldSpec]
    evidence_families: list[EvidenceFamilySpec]
    slots: list[SlotSpec]
    boundary: BoundarySpec
    owners: OwnersSpec | None = None
    distractors: DistractorSpec | None = None
    hard: HardSpec | None = None
    agent: AgentSpec | None = None
    followup: FollowupSpec | None = None
    procedure: ProcedureSpec | None = None
    prose: ProseSpec = ProseSpec()
    pools: dict[Identifier, Annotated[list[str], Field(min_length=1)]] = {}
    numbers: dict[Identifier, tuple[int, int]] = {}
    templates: Annotated[list[TemplateSpec], Field(min_length=1)]

    def slot(self, role: Role) -> SlotSpec:
        return next(s for s in self.slots if s.role == role)

    def evidence_family(self, family_id: str) -> EvidenceFamilySpec:
        return next(e for e in self.evidence_families if e.id == family_id)

    def template(self, template_id: str) -> TemplateSpec:
        return self.templates_by_id[template_id]

    # Derived once per loaded family (a frozen value): generation reads them for every task.

    @functools.cached_property
    def declared(self) -> bytes:
        """What the family declares, as JSON (`scenario_hash` reads it for every run loaded)."""
        return self.model_dump_json().encode()

    def declared_without(self, sections: frozenset[str]) -> bytes:
        """`declared` with some sections left out (each set of them made once per family)."""
        if not sections:
            return self.declared
        cache: dict[frozenset[str], bytes] = self.__dict__.setdefault("_declared_without", {})
        if sections not in cache:
            cache[sections] = self.model_dump_json(exclude=set(sections)).encode()
        return cache[sections]

    @functools.cached_property
    def home_scopes(self) -> Mapping[str, str]:
        """Where each evidence family's records are kept: a slot's family in the slot's scope,
        the distractors' in theirs, a template's material family in the material's scope."""
        homes = {s.evidence_family: s.scope for s in self.slots if s.evidence_family and s.scope}
        if self.distractors is not None:
            homes[self.distractors.evidence_family] = self.distractors.scope
        for template in self.templates:
            homes.setdefault(template.material.evidence_family, template.material.scope)
        return homes

    @functools.cached_property
    def registers(self) -> Mapping[str, str]:
        """For each register-line phrasing of the hard text: the register's lines, one per
        evidence family in file order, joined by spaces and filled but for positional fields:
        of n families, `{i}` is the i-th family's current version, `{n + i}` its date,
        `{2n + i}` the version before it and `{3n + i}` that one's date."""
        if self.hard is None:
            return {}
        tracker_scope = str(self.slots_by_role["tracker"].scope)
        n = len(self.evidence_families)

        def literal(text: str) -> str:
            return text.replace("{", "{{").replace("}", "}}")

        registers = {}
        for phrasing in self.hard.register_lines:
            lines = []
            for i, e in enumerate(self.evidence_families):
                scope = self.home_scopes.get(e.id, tracker_scope)
                fills = {"description": e.description, "scope": scope}
                fills["scope_description"] = self.scopes[scope]
                lines.append(
                    phrasing.format(
                        version=f"{{{i}}}",
                        date=f"{{{n + i}}}",
                        old=f"{{{2 * n + i}}}",
                        old_date=f"{{{3 * n + i}}}",
                        **{k: literal(v) for k, v in fills.items()},
                    )
                )
            registers[phrasing] = " ".join(lines)
        return registers

    @functools.cached_property
    def templates_by_id(self) -> Mapping[str, TemplateSpec]:
        return {t.id: t for t in self.templates}

    @functools.cached_property
    def restricted_scopes(self) -> tuple[str, ...]:
        """The declared scopes outside the user's scopes, in file order."""
        return tuple(s for s in self.scopes if s not in self.user_scopes)

    @functools.cached_property
    def restricted_families(self) -> tuple[str, ...]:
        """The templates' material families (kept outside the user's scopes), in file order."""
        return tuple(dict.fromkeys(t.material.evidence_family for t in self.templates))

    @functools.cached_property
    def slots_by_role(self) -> Mapping[Role, SlotSpec]:
        return {s.role: s for s in self.slots}

    @functools.cached_property
    def requirements(self) -> Mapping[str, RequiredEvidence]:
        """Each evidence family as a contract lists it, by id."""
        return {
            e.id: RequiredEvidence(id=e.id, description=e.description, informs=tuple(e.informs))
            for e in self.evidence_families
        }

    @functools.cached_property
    def answer_fields(self) -> tuple[AnswerField, ...]:
        """The answer fields as a model is shown them, in file order."""
        return tuple(
            AnswerField(name=name, kind=f.kind, values=tuple(f.values), description=f.description)
            for name, f in self.answer.items()
        )
