"""Scenario families as data: the schema of a `scenarios/*.toml` file, loading and validation.

A family file declares everything the generic generator needs: the answer fields and their
vocabularies, the evidence families a contract can require, the scopes, the six document slots
with their phrasings, the pools that entity names and figures are drawn from, and six templates
(hidden-evidence patterns). The generator knows no family by name.
"""

from __future__ import annotations

import hashlib
import os
import string
import tomllib
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

Role = Literal[
    "overview",
    "primary_evidence",
    "context_note",
    "advisor_note",
    "material",
    "tracker",
    "distractor",
]
ROLES: tuple[Role, ...] = (
    "overview",
    "primary_evidence",
    "context_note",
    "advisor_note",
    "material",
    "tracker",
)
"""The six document slots of every task, in the order the paper lists them. A task may also hold
`distractor` documents (neutral, authorized, never required; see `DistractorSpec`)."""

MIN_PHRASINGS = 3
"""Every title, body, no-findings, boundary and finding text offers at least this many
phrasings, so that fresh seeds give fresh text."""

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
Phrasings = Annotated[list[str], Field(min_length=MIN_PHRASINGS)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AnswerFieldSpec(_Spec):
    """One answer field. `ordinal`: one value, the most severe contributed (last in `values`);
    `set`: the union of contributed values. Both default to "nothing found" (first ordinal value,
    empty set)."""

    kind: Literal["ordinal", "set"]
    values: Annotated[list[Identifier], Field(min_length=1)]
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
    pools: dict[Identifier, Annotated[list[str], Field(min_length=1)]] = {}
    numbers: dict[Identifier, tuple[int, int]] = {}
    templates: Annotated[list[TemplateSpec], Field(min_length=1)]

    def slot(self, role: Role) -> SlotSpec:
        return next(s for s in self.slots if s.role == role)

    def evidence_family(self, family_id: str) -> EvidenceFamilySpec:
        return next(e for e in self.evidence_families if e.id == family_id)

    def template(self, template_id: str) -> TemplateSpec:
        return next(t for t in self.templates if t.id == template_id)


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message is one line naming file and field."""


def scenarios_dir() -> Path:
    """The folder of families: `$PEB_SCENARIOS_DIR`, else `scenarios/` beside the package."""
    override = os.environ.get("PEB_SCENARIOS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "scenarios"


def load_scenario(path: Path) -> ScenarioFile:
    """Parse and validate one family file, or raise ScenarioError with one line."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
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
            if slot.scope not in spec.user_scopes:
                yield f"{where}.scope: {slot.scope!r} is not a user scope; " + _one_of(
                    spec.user_scopes
                )
            if slot.evidence_family not in families:
                yield (
                    f"{where}.evidence_family: {slot.evidence_family!r} is not declared; "
                    + _one_of(families)
                )
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
        if d.scope not in spec.user_scopes:
            yield f"distractors.scope: {d.scope!r} is not a user scope; " + _one_of(
                spec.user_scopes
            )
        if d.evidence_family not in families:
            yield (
                f"distractors.evidence_family: {d.evidence_family!r} is not declared; "
                + _one_of(families)
            )
        elif d.evidence_family in required:
            yield (
                f"distractors.evidence_family: {d.evidence_family!r} is required by a slot or "
                "template; distractors need a family no contract requires"
            )
    ids = [t.id for t in spec.templates]
    if len(set(ids)) != len(ids):
        yield "templates: template ids must be unique"
    for i, t in enumerate(spec.templates):
        where = f"templates[{i}]"
        if t.material.scope not in spec.scopes or t.material.scope in spec.user_scopes:
            outside = [s for s in spec.scopes if s not in spec.user_scopes]
            yield (
                f"{where}.material.scope: {t.material.scope!r} must be a declared scope outside "
                f"user_scopes; {_one_of(outside)}"
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


@cache
def _load_dir(folder: str) -> dict[str, ScenarioFile]:
    paths = sorted(Path(folder).glob("*.toml"))
    if not paths:
        raise ScenarioError(f"{folder}: no scenario files (*.toml) found")
    return {spec.id: spec for spec in map(load_scenario, paths)}


def load_families(folder: Path | None = None) -> dict[str, ScenarioFile]:
    """All families in `folder` (default `scenarios_dir()`), keyed by id, in file-name order."""
    return _load_dir(str(folder or scenarios_dir()))


def families_with_template(
    families: Iterable[ScenarioFile], template_id: str
) -> list[ScenarioFile]:
    """The families that define a template id (normally one)."""
    return [f for f in families if any(t.id == template_id for t in f.templates)]


def scenario_hash(folder: Path | None = None) -> str:
    """sha256 over the family files' names and bytes, to tie a run to the scenarios it used."""
    digest = hashlib.sha256()
    for path in sorted((folder or scenarios_dir()).glob("*.toml")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
