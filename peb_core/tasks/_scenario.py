"""Scenario families as data: the schema of a `scenarios/*.toml` file, loading and validation.

A family file declares everything the generic generator needs: the answer fields and their
vocabularies, the evidence families a contract can require, the scopes, the six document slots
with their phrasings, the pools that entity names and figures are drawn from, and six templates
(hidden-evidence patterns). The generator knows no family by name.
"""

from __future__ import annotations

import functools
import hashlib
import os
import string
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

if TYPE_CHECKING:
    from ._task import RequiredEvidence

SlotRole = Literal[
    "overview",
    "primary_evidence",
    "context_note",
    "advisor_note",
    "material",
    "tracker",
]
Role = SlotRole | Literal["distractor", "register"]
ROLES: tuple[SlotRole, ...] = get_args(SlotRole)
"""The six document slots of every task, in the order the paper lists them. A task may also hold
`distractor` documents (neutral, authorized, never required; see `DistractorSpec`), and a hard
task a `register` (see `HardSpec`)."""

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
    carries a version stamp; a register lists each kind of record with its current version and
    where it is kept; a copy of a restricted record may be out of date, may say so, or may say
    that it replaces an archived version; the tracker may name an excluded scope or none.

    Placeholders: `stamps` {version} {date}; `register_lines` {description} {version} {date}
    {scope} {scope_description}; `superseded_by` (a stale copy) and `supersedes` (a current copy)
    {version} {date} {old} {old_date} {scope} {scope_description}, where {version} is the newer
    version; `neutral` (a tracker sentence naming no scope) none; titles and intros the pools.
    `no_findings` gives, per restricted evidence family (every template's material family), the
    body of a copy of it that holds no finding."""

    neutral: Phrasings
    register_titles: Phrasings
    register_intros: Phrasings
    register_lines: Phrasings
    stamps: Phrasings
    superseded_by: Phrasings
    supersedes: Phrasings
    no_findings: dict[Identifier, Phrasings]


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
    distractors: DistractorSpec | None = None
    hard: HardSpec | None = None
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
        `{i}` is the i-th family's version and `{n + i}` its date, of n families."""
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
        from ._task import RequiredEvidence

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


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message is one line naming file and field."""


def scenarios_dir() -> Path:
    """The folder of families: `$PEB_SCENARIOS_DIR`, else `scenarios/` beside the package."""
    override = os.environ.get("PEB_SCENARIOS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "scenarios"


def load_scenario(path: Path) -> ScenarioFile:
    """Parse and validate one family file, or raise ScenarioError with one line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: not a readable TOML file ({exc})") from None
    return _parse(path, data)


def _parse(path: Path, data: bytes) -> ScenarioFile:
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: not a readable TOML file ({exc})") from None
    try:
        spec = ScenarioFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _loc(err["loc"]) or "<file>"
        got = f" (got {err['input']!r})" if not isinstance(err["input"], dict | list) else ""
        raise ScenarioError(f"{path}: {where}: {err['msg']}{got}") from None
    problems = list(_consistency_problems(spec))
    if problems:
        raise ScenarioError(f"{path}: {problems[0]}")
    if spec.id != path.stem:
        raise ScenarioError(f"{path}: id: expected the file name {path.stem!r}, got {spec.id!r}")
    return spec


def _loc(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _one_of(values: Iterable[str]) -> str:
    return "expected one of: " + ", ".join(values)


def _texts(spec: ScenarioFile) -> Iterator[tuple[str, str, set[str]]]:
    """Every text the generator formats, with where it is and the placeholders it may use."""
    variables = set(spec.pools) | set(spec.numbers)
    for i, slot in enumerate(spec.slots):
        body = variables | {"findings"} | ({"boundary"} if slot.role == "tracker" else set())
        for part, allowed in (("titles", variables), ("bodies", body), ("no_findings", variables)):
            for j, text in enumerate(getattr(slot, part)):
                yield f"slots[{i}].{part}[{j}]", text, allowed
    for part in ("excluded", "included"):
        for j, text in enumerate(getattr(spec.boundary, part)):
            yield f"boundary.{part}[{j}]", text, {"scope", "scope_description"}
    if spec.distractors is not None:
        for part in ("titles", "bodies"):
            for j, text in enumerate(getattr(spec.distractors, part)):
                yield f"distractors.{part}[{j}]", text, variables
    if spec.hard is not None:
        scope = {"scope", "scope_description"}
        versions = {"version", "date", "old", "old_date"} | scope
        for part, allowed in (
            ("neutral", set()),
            ("register_titles", variables),
            ("register_intros", variables),
            ("register_lines", {"description", "version", "date"} | scope),
            ("stamps", {"version", "date"}),
            ("superseded_by", versions),
            ("supersedes", versions),
        ):
            for j, text in enumerate(getattr(spec.hard, part)):
                yield f"hard.{part}[{j}]", text, allowed
        for family, texts in spec.hard.no_findings.items():
            for j, text in enumerate(texts):
                yield f"hard.no_findings.{family}[{j}]", text, variables
    for i, t in enumerate(spec.templates):
        yield f"templates[{i}].prompt", t.prompt, variables
        for j, text in enumerate(t.material.titles):
            yield f"templates[{i}].material.titles[{j}]", text, variables
        for j, finding in enumerate(t.findings):
            for k, text in enumerate(finding.text):
                yield f"templates[{i}].findings[{j}].text[{k}]", text, variables


def _format_problem(text: str, allowed: set[str]) -> str | None:
    """What stops `text.format(**values)` from filling `text` with plain `allowed` values."""
    try:
        fields = [f for f in string.Formatter().parse(text) if f[1] is not None]
    except ValueError as exc:  # an unbalanced brace
        return f"{exc} (write {{{{ or }}}} for a literal brace)"
    for _, name, spec, conversion in fields:
        if name not in allowed:
            return f"unknown placeholder {{{name}}}; {_one_of(sorted(allowed))}"
        if spec or conversion:
            return f"placeholder {{{name}}} takes no conversion or format spec"
    return None


def _placed(
    where: str, scope: str | None, family: str | None, spec: ScenarioFile, families: set[str]
) -> Iterable[str]:
    """A user-visible document's scope must be a user scope, its family a declared one."""
    if scope not in spec.user_scopes:
        yield f"{where}.scope: {scope!r} is not a user scope; " + _one_of(spec.user_scopes)
    if family not in families:
        yield f"{where}.evidence_family: {family!r} is not declared; " + _one_of(families)


def _consistency_problems(spec: ScenarioFile) -> Iterable[str]:
    """Cross-field checks that pydantic field types cannot express, as 'field: problem' lines."""
    roles = [s.role for s in spec.slots]
    if sorted(roles) != sorted(ROLES):
        yield f"slots: expected exactly one slot for each role {', '.join(ROLES)}; got {roles}"
        return
    texts = [(where, _format_problem(text, allowed)) for where, text, allowed in _texts(spec)]
    if any(problem for _, problem in texts):
        yield from (f"{where}: {problem}" for where, problem in texts if problem)
        return
    for name, (low, high) in spec.numbers.items():
        if low > high:
            yield f"numbers.{name}: expected [low, high] with low <= high, got [{low}, {high}]"
    families = {e.id for e in spec.evidence_families}
    for name in spec.user_scopes:
        if name not in spec.scopes:
            yield f"user_scopes: {name!r} is not a declared scope; {_one_of(spec.scopes)}"
    for i, e in enumerate(spec.evidence_families):
        for f in e.informs:
            if f not in spec.answer:
                yield f"evidence_families[{i}].informs: {f!r} is not an answer field; " + _one_of(
                    spec.answer
                )
    contributed = {
        (field, v)
        for t in spec.templates
        for f in t.findings
        for field, value in f.effects.items()
        for v in ([value] if isinstance(value, str) else value)
    }
    for name, fspec in spec.answer.items():
        for v in fspec.signals:
            if v not in fspec.values:
                yield f"answer.{name}.signals: {v!r} is not a value of {name}; " + _one_of(
                    fspec.values
                )
        for v in fspec.values:
            if (name, v) in contributed and v not in fspec.signals:
                yield (
                    f"answer.{name}.signals: value {v!r} is an effect of a finding but has no "
                    "signals"
                )
    for i, slot in enumerate(spec.slots):
        where = f"slots[{i}]"
        if slot.role == "material":
            if slot.scope or slot.evidence_family or slot.titles:
                yield (
                    f"{where}: the material slot takes its titles, scope and evidence_family "
                    "from each template"
                )
        else:
            if len(slot.titles) < MIN_PHRASINGS:
                yield f"{where}.titles: expected at least {MIN_PHRASINGS} titles"
            if slot.role != "tracker" and len(slot.no_findings) < MIN_PHRASINGS:
                yield f"{where}.no_findings: expected at least {MIN_PHRASINGS} phrasings"
            yield from _placed(where, slot.scope, slot.evidence_family, spec, families)
        if (
            slot.role == "tracker"
            and not slot.no_findings
            and any("findings" in _placeholders(b) for b in slot.bodies)
        ):
            yield f"{where}.bodies: the tracker carries no findings; use {{boundary}}"
    if spec.distractors is not None:
        d = spec.distractors
        required = {s.evidence_family for s in spec.slots if s.required and s.evidence_family}
        required |= {t.material.evidence_family for t in spec.templates}
        yield from _placed("distractors", d.scope, d.evidence_family, spec, families)
        if d.evidence_family in required:
            yield (
                f"distractors.evidence_family: {d.evidence_family!r} is required by a slot or "
                "template; distractors need a family no contract requires"
            )
    yield from _hard_problems(spec)
    ids = [t.id for t in spec.templates]
    if len(set(ids)) != len(ids):
        yield "templates: template ids must be unique"
    for i, t in enumerate(spec.templates):
        where = f"templates[{i}]"
        if t.material.scope not in spec.scopes or t.material.scope in spec.user_scopes:
            yield (
                f"{where}.material.scope: {t.material.scope!r} must be a declared scope outside "
                f"user_scopes; {_one_of(spec.restricted_scopes)}"
            )
        if t.material.evidence_family not in families:
            yield (
                f"{where}.material.evidence_family: {t.material.evidence_family!r} is not "
                f"declared; {_one_of(families)}"
            )
        for seed in t.promoted_seeds:
            if seed not in spec.canonical_seeds:
                yield f"{where}.promoted_seeds: {seed} is not a canonical seed; " + _one_of(
                    map(str, spec.canonical_seeds)
                )
        if not any(f.slot == "material" for f in t.findings):
            yield f"{where}.findings: expected at least one finding in the material slot"
        finding_ids = [f.id for f in t.findings]
        if len(set(finding_ids)) != len(finding_ids):
            yield f"{where}.findings: finding ids must be unique within a template"
        for j, finding in enumerate(t.findings):
            fw = f"{where}.findings[{j}]"
            if finding.slot in ("tracker", "distractor"):
                yield f"{fw}.slot: the {finding.slot} is neutral and carries no findings"
            for other in finding.retracts:
                if other == finding.id or other not in finding_ids:
                    yield (
                        f"{fw}.retracts: {other!r} is not another finding of this template; "
                        + _one_of(i for i in finding_ids if i != finding.id)
                    )
            for field, value in finding.effects.items():
                if field not in spec.answer:
                    yield f"{fw}.effects: {field!r} is not an answer field; {_one_of(spec.answer)}"
                    continue
                fspec = spec.answer[field]
                if fspec.kind == "ordinal" and not isinstance(value, str):
                    yield f"{fw}.effects.{field}: an ordinal field takes one value, not a list"
                for v in [value] if isinstance(value, str) else value:
                    if v not in fspec.values:
                        yield f"{fw}.effects.{field}: {v!r} is not in the vocabulary; " + _one_of(
                            fspec.values
                        )
                    signals = fspec.signals.get(v)
                    for k, text in enumerate(finding.text):
                        if signals and not any(s.lower() in text.lower() for s in signals):
                            yield (
                                f"{fw}.text[{k}]: states no signal of {field}={v}; "
                                + _one_of(signals)
                            )


def _hard_problems(spec: ScenarioFile) -> Iterable[str]:
    """What the hard tier needs of a family (its text is checked with every other text): a
    no-finding body for each restricted family, and enough restricted scopes that every template
    has a second restricted family in another scope and a decoy scope besides."""
    hard = spec.hard
    if hard is None:
        return
    restricted = spec.restricted_families
    for family in restricted:
        if family not in hard.no_findings:
            yield f"hard.no_findings: no phrasings for restricted family {family!r}"
    for family in hard.no_findings:
        if family not in restricted:
            yield f"hard.no_findings: {family!r} is not a restricted family; " + _one_of(restricted)
    if spec.distractors is None:
        yield "hard: the hard tier needs [distractors] (its decoy documents are drawn from them)"
    for i, template in enumerate(spec.templates):
        scopes = {template.material.scope}
        others = [
            spec.home_scopes[f]
            for f in restricted
            if f != template.material.evidence_family
            and template.material.scope != spec.home_scopes[f]
        ]
        outside = set(spec.restricted_scopes)
        if not others or not any(outside - (scopes | {o}) for o in others):
            yield (
                f"templates[{i}]: the hard tier needs another restricted family kept in another "
                "scope, and a third scope outside user_scopes"
            )
    for family in restricted:
        kept = {t.material.scope for t in spec.templates if t.material.evidence_family == family}
        if len(kept) > 1:
            yield f"templates: restricted family {family!r} is kept in scopes {sorted(kept)}"


_PARSED: dict[tuple[str, bytes], dict[str, ScenarioFile]] = {}
_PARSED_MAX = 8


def load_families(folder: Path | None = None) -> dict[str, ScenarioFile]:
    """All families in `folder` (default `scenarios_dir()`), keyed by id, in file-name order.

    The files are read on every call and parsed again whenever their bytes change (a parse is
    kept per folder content), so an edit to a scenario file takes effect in a running process,
    and what is loaded is always what `scenario_hash` describes."""
    where = folder or scenarios_dir()
    paths = sorted(Path(where).glob("*.toml"))
    if not paths:
        raise ScenarioError(f"{where}: no scenario files (*.toml) found")
    files: list[tuple[Path, bytes]] = []
    for path in paths:
        try:
            files.append((path, path.read_bytes()))
        except OSError as exc:
            raise ScenarioError(f"{path}: not a readable TOML file ({exc})") from None
    digest = hashlib.sha256()
    for path, data in files:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(data).digest())
    key = (str(where), digest.digest())
    hit = _PARSED.get(key)
    if hit is None:
        hit = {spec.id: spec for spec in (_parse(path, data) for path, data in files)}
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = hit
    return dict(hit)


def families_with_template(
    families: Iterable[ScenarioFile], template_id: str
) -> list[ScenarioFile]:
    """The families that define a template id (normally one)."""
    return [f for f in families if any(t.id == template_id for t in f.templates)]


def scenario_hash(families: Iterable[ScenarioFile] | None = None) -> str:
    """sha256 of what the given families declare (default: every family in the scenarios
    folder), in id order: it ties a run to the scenarios it used, and changes with anything
    that can change a task or its scoring, whatever the file's comments or layout."""
    specs = load_families().values() if families is None else families
    digest = hashlib.sha256()
    for spec in sorted(specs, key=lambda s: s.id):
        digest.update(spec.id.encode() + b"\0" + spec.declared + b"\0")
    return digest.hexdigest()
