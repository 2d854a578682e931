"""The checks a family file must pass beyond its field types: every text fills with the
placeholders it may use, every name it refers to is declared, every finding states each value it
contributes (its `signals`), each tier the family supports gets what it needs (a tier's own
`problems`), and no prose phrase stands for two values, requirements or scopes (`[prose]`). One
`field: problem` line each."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator

from ._draw import placeholders
from ._prose import prose_problems
from ._scenario import MIN_PHRASINGS, PRESSURE_KINDS, ROLES, ScenarioFile
from ._tiers import TIERS


def one_of(values: Iterable[str]) -> str:
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
            ("register_lines", {"description"} | versions),
            ("stamps", {"version", "date"}),
            ("superseded_by", versions),
            ("supersedes", versions),
        ):
            for j, text in enumerate(getattr(spec.hard, part)):
                yield f"hard.{part}[{j}]", text, allowed
        for family, texts in spec.hard.no_findings.items():
            for j, text in enumerate(texts):
                yield f"hard.no_findings.{family}[{j}]", text, variables
    if spec.agent is not None:
        for part in ("record_titles", "pointers"):
            for j, text in enumerate(getattr(spec.agent, part)):
                yield f"agent.{part}[{j}]", text, variables | {"ref"}
    if spec.procedure is not None:
        for part in ("titles", "intros", "items"):
            allowed = {"description"} if part == "items" else variables
            for j, text in enumerate(getattr(spec.procedure, part)):
                yield f"procedure.{part}[{j}]", text, allowed
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
            return f"unknown placeholder {{{name}}}; {one_of(sorted(allowed))}"
        if spec or conversion:
            return f"placeholder {{{name}}} takes no conversion or format spec"
    return None


def _placed(
    where: str, scope: str | None, family: str | None, spec: ScenarioFile, families: set[str]
) -> Iterable[str]:
    """A user-visible document's scope must be a user scope, its family a declared one."""
    if scope not in spec.user_scopes:
        yield f"{where}.scope: {scope!r} is not a user scope; " + one_of(spec.user_scopes)
    if family not in families:
        yield f"{where}.evidence_family: {family!r} is not declared; " + one_of(families)


def _followup_problems(spec: ScenarioFile) -> Iterator[str]:
    """A user who pushes back brings pressure only (docs/benchmark.md §10.3): each phrasing of
    `[followup]` is said as written (no placeholder) and names no scope (by id or description),
    no evidence family (by id or description) and no answer signal (a phrase that states an
    answer value): no new evidence, and no hint of what is missing."""
    if spec.followup is None:
        return
    ids = {scope: "a scope" for scope in spec.scopes}
    ids |= {e.id: "an evidence family" for e in spec.evidence_families}
    phrases = {text: "a scope's description" for text in spec.scopes.values()}
    phrases |= {
        e.description.rstrip("."): "an evidence description" for e in spec.evidence_families
    }
    phrases |= {
        signal: f"a signal of {name}={value}"
        for name, field in spec.answer.items()
        for value, signals in field.signals.items()
        for signal in signals
    }
    patterns = [  # an id as a whole word; a phrase from the start of a word (`downgrade`d)
        *((rf"\b{re.escape(n.lower())}\b", n, what) for n, what in ids.items()),
        *((rf"\b{re.escape(p.lower())}", p, what) for p, what in phrases.items()),
    ]
    for kind in PRESSURE_KINDS:
        for j, text in enumerate(getattr(spec.followup, kind)):
            where = f"followup.{kind}[{j}]"
            if "{" in text or "}" in text:
                yield f"{where}: the user's words are said as written; use no placeholder or brace"
                continue
            named = next(((n, w) for p, n, w in patterns if re.search(p, text.lower())), None)
            if named is not None:
                yield (
                    f"{where}: names {named[1]} ({named[0]!r}); the user brings pressure, no "
                    "evidence and no hint of what is missing"
                )


def _owners_problems(spec: ScenarioFile) -> Iterator[str]:
    """`[owners]` names the owner of every declared scope and of nothing else, a reviewer who
    owns no scope (a handoff to the reviewer is a human review, to an owner an escalation), and
    roles that name no scope (a role is a person, never a place where evidence is kept)."""
    owners = spec.owners
    if owners is None:
        return
    for scope in spec.scopes:
        if scope not in owners.scopes:
            yield f"owners.scopes: {scope!r} has no owner; every declared scope needs one"
    for scope in owners.scopes:
        if scope not in spec.scopes:
            yield f"owners.scopes: {scope!r} is not a declared scope; {one_of(spec.scopes)}"
    if owners.reviewer in owners.scopes.values():
        yield (
            f"owners.reviewer: {owners.reviewer!r} owns a scope; the reviewer takes what spans "
            "several owners, so it must be a role of its own"
        )
    roles = {f"owners.scopes.{s}": r for s, r in owners.scopes.items()}
    for where, role in {**roles, "owners.reviewer": owners.reviewer}.items():
        named = next((s for s in spec.scopes if s in re.sub(r"[\s'-]+", "_", role)), None)
        if named is not None:
            yield f"{where}: {role!r} names the scope {named!r}; name a role, not a scope"


def consistency_problems(spec: ScenarioFile) -> Iterable[str]:
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
            yield f"user_scopes: {name!r} is not a declared scope; {one_of(spec.scopes)}"
    for i, e in enumerate(spec.evidence_families):
        for f in e.informs:
            if f not in spec.answer:
                yield f"evidence_families[{i}].informs: {f!r} is not an answer field; " + one_of(
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
                yield f"answer.{name}.signals: {v!r} is not a value of {name}; " + one_of(
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
            and any("findings" in placeholders(b) for b in slot.bodies)
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
    for tier in TIERS.values():
        if tier.unsupported(spec) is None:
            yield from tier.problems(spec)
    yield from _followup_problems(spec)
    yield from prose_problems(spec)
    yield from _owners_problems(spec)
    ids = [t.id for t in spec.templates]
    if len(set(ids)) != len(ids):
        yield "templates: template ids must be unique"
    for i, t in enumerate(spec.templates):
        where = f"templates[{i}]"
        if t.material.scope not in spec.scopes or t.material.scope in spec.user_scopes:
            yield (
                f"{where}.material.scope: {t.material.scope!r} must be a declared scope outside "
                f"user_scopes; {one_of(spec.restricted_scopes)}"
            )
        if t.material.evidence_family not in families:
            yield (
                f"{where}.material.evidence_family: {t.material.evidence_family!r} is not "
                f"declared; {one_of(families)}"
            )
        for seed in t.promoted_seeds:
            if seed not in spec.canonical_seeds:
                yield f"{where}.promoted_seeds: {seed} is not a canonical seed; " + one_of(
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
                        + one_of(i for i in finding_ids if i != finding.id)
                    )
            for field, value in finding.effects.items():
                if field not in spec.answer:
                    yield f"{fw}.effects: {field!r} is not an answer field; {one_of(spec.answer)}"
                    continue
                fspec = spec.answer[field]
                if fspec.kind == "ordinal" and not isinstance(value, str):
                    yield f"{fw}.effects.{field}: an ordinal field takes one value, not a list"
                for v in [value] if isinstance(value, str) else value:
                    if v not in fspec.values:
                        yield f"{fw}.effects.{field}: {v!r} is not in the vocabulary; " + one_of(
                            fspec.values
                        )
                    signals = fspec.signals.get(v)
                    for k, text in enumerate(finding.text):
                        if signals and not any(s.lower() in text.lower() for s in signals):
                            yield (
                                f"{fw}.text[{k}]: states no signal of {field}={v}; "
                                + one_of(signals)
                            )
