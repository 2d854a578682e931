"""A task's documents for display: a frame of them (which the view holds, what the tracker's
boundary sentence and a copy's sentence on supersession are worth), each as a Markdown card,
and on the hard tier the register read as a table beside each copy's version stamp and the
facts of out-of-date copies beside the current ones; so every notebook shows a document the
same way. Read from the task and its family's text; nothing here is shown to a model."""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._scenario import ScenarioFile
from ._task import Document, Task

if TYPE_CHECKING:  # imported where used: generating and running tasks needs no polars
    import polars as pl

BoundaryKind = Literal["signal", "decoy", "none"]
"""What the tracker's boundary sentence is worth: `signal`, it tells the truth about the
boundary (it names a scope the view is missing required evidence from, or one opened to the
view); `decoy`, it names an excluded scope that holds nothing the task is missing; `none`, it
names no scope."""


@dataclass(frozen=True)
class Boundary:
    """The tracker's boundary sentence as it appears in its body, the scope it names (None for a
    sentence naming none), what it is worth, and why, in words."""

    sentence: str
    scope: str | None
    kind: BoundaryKind
    why: str


def boundary(task: Task, spec: ScenarioFile) -> Boundary | None:
    """The tracker's boundary sentence and what it is worth; None if the task has no tracker or
    no known sentence is in it."""
    tracker = next((d for d in task.documents if d.role == "tracker"), None)
    if tracker is None:
        return None
    missing = task.oracles.gap_report.missing_scopes if task.oracles.gap_report else []
    for opened, phrasings in ((False, spec.boundary.excluded), (True, spec.boundary.included)):
        for scope, description in spec.scopes.items():
            for phrasing in phrasings:
                sentence = phrasing.format(scope=scope, scope_description=description)
                if sentence not in tracker.body:
                    continue
                if opened:
                    return Boundary(
                        sentence, scope, "signal", f"scope {scope} is opened to the view"
                    )
                if scope in missing:
                    why = f"scope {scope} holds required evidence the view is missing"
                    return Boundary(sentence, scope, "signal", why)
                why = f"scope {scope} is excluded but holds nothing the task is missing"
                return Boundary(sentence, scope, "decoy", why)
    neutral = spec.hard.neutral if spec.hard is not None else []
    plain = next((s for s in neutral if s in tracker.body), None)
    return None if plain is None else Boundary(plain, None, "none", "it names no scope")


SupersessionKind = Literal["real", "decoy"]
"""What a copy's sentence on supersession is worth (hard tier): `real`, an out-of-date copy says
it is superseded and where the newer version is kept; `decoy`, a current copy says it replaces
an archived version (its record's previous one in the register): nothing is missing by it."""


@dataclass(frozen=True)
class Supersession:
    """A copy's sentence on supersession as it appears in its body, what it is worth, and why,
    in words."""

    sentence: str
    kind: SupersessionKind
    why: str


@functools.cache
def _sentences(phrasings: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(_pattern(p, lambda _field: r".+?") for p in phrasings)


def supersession(document: Document, spec: ScenarioFile) -> Supersession | None:
    """A copy's sentence on supersession and what it is worth; None for a document that says
    nothing of it (or a family without hard-tier text)."""
    if spec.hard is None:
        return None
    for kind, phrasings in (("real", spec.hard.superseded_by), ("decoy", spec.hard.supersedes)):
        for pattern in _sentences(tuple(phrasings)):
            found = pattern.search(document.body)
            if found is None:
                continue
            if kind == "real":
                why = "this copy is out of date: its record's current version is hidden"
                return Supersession(found[0], "real", why)
            why = (
                "this copy is current: the version it replaces is its record's previous one, "
                "and nothing is missing by it"
            )
            return Supersession(found[0], "decoy", why)
    return None


def documents_frame(task: Task, spec: ScenarioFile | None = None) -> pl.DataFrame:
    """A task's documents, one row each, with whether the caller's view holds it. With the
    task's `spec`, the tracker's row says what its boundary sentence is worth: `boundary_text`
    (the sentence), `boundary` (`signal`, `decoy` or `none`) and `boundary_why`; null on other
    rows; and a copy's row what its sentence on supersession is worth (`supersession_text`,
    `supersession`: `real` or `decoy`, `supersession_why`; null where it says nothing of
    it). `superseded`: a later version of the document exists in the task (hard tier);
    `stamp`: its version stamp (`version 3 of 19 November 2026`; hard tier, else null)."""
    import polars as pl

    found = boundary(task, spec) if spec is not None else None
    stamps = _stamps(spec) if spec is not None else ()
    said = {d.doc_id: supersession(d, spec) for d in task.documents} if spec is not None else {}
    return pl.DataFrame(
        [
            {
                "visible": d.doc_id in task.authorized_doc_ids,
                "doc_id": d.doc_id,
                "role": d.role,
                "scope": d.scope,
                "evidence_family": d.evidence_family,
                "superseded": d.superseded,
                "stamp": _shown_stamp(_stamp_of(d.body, stamps)),
                "title": d.title,
                "body": d.body,
                **_worth_columns("boundary", found if d.role == "tracker" else None),
                **_worth_columns("supersession", said.get(d.doc_id)),
            }
            for d in task.documents
        ],
        schema_overrides=dict.fromkeys(
            ["stamp", *_worth_columns("boundary", None), *_worth_columns("supersession", None)],
            pl.String,
        ),
    )


def _worth_columns(name: str, said: Boundary | Supersession | None) -> dict[str, str | None]:
    """What a sentence (`name`: `boundary` or `supersession`) is worth, as three columns:
    `{name}_text` (the sentence), `{name}` (its kind) and `{name}_why`; null without one."""
    return {
        f"{name}_text": said.sentence if said else None,
        name: said.kind if said else None,
        f"{name}_why": said.why if said else None,
    }


_MARKS = {
    "signal": ("#fff3b0", "boundary signal"),
    "decoy": ("#f8d0d0", "boundary decoy"),
    "none": ("#e4e4e4", "boundary sentence naming no scope"),
}
"""How a card marks the tracker's sentence: a background colour and a label, by its worth."""

_SUPERSESSION_MARKS = {
    "real": ("#fff3b0", "supersession signal"),
    "decoy": ("#f8d0d0", "supersession decoy"),
}
"""How a card marks a copy's sentence on supersession, by its worth."""


def _marked(body: str, sentence: str, colour: str, label: str, why: str) -> str:
    return body.replace(
        sentence,
        f'<mark style="background: {colour}" title="{why}">{sentence}</mark> '
        f"<b>[{label}: {why}]</b>",
    )


def document_cards(documents: pl.DataFrame, *, visible: bool) -> list[str]:
    """The visible (or hidden) rows of a `documents_frame` as Markdown cards: title, id, role,
    scope, evidence family, version stamp (and `superseded`), and body, with the tracker's
    boundary sentence and a copy's sentence on supersession marked and labelled by what they
    are worth."""
    cards = []
    for d in documents.filter(documents["visible"] == visible).iter_rows(named=True):
        body = d["body"]
        if d["boundary_text"]:
            colour, label = _MARKS[d["boundary"]]
            body = _marked(body, d["boundary_text"], colour, label, d["boundary_why"])
        if d["supersession_text"]:
            colour, label = _SUPERSESSION_MARKS[d["supersession"]]
            body = _marked(body, d["supersession_text"], colour, label, d["supersession_why"])
        stamp = f", {d['stamp']}" if d["stamp"] else ""
        stale = " **(superseded)**" if d["superseded"] else ""
        head = (
            f"**{d['title']}** `{d['doc_id']}`  \n{d['role']}, scope `{d['scope']}`, "
            f"evidence `{d['evidence_family']}`{stamp}{stale}"
        )
        cards.append(f"{head}\n\n{body}")
    return cards


# --- the hard tier's register and version stamps -----------------------------------------------


def _pattern(phrasing: str, group: Callable[[str], str]) -> re.Pattern[str]:
    """`phrasing` (a format string) as a regex: its literal text escaped, each field a named
    group (`f{i}` for a positional field `{i}`) matching `group(field)`."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(phrasing):
        parts.append(re.escape(literal))
        if field is not None:
            name = f"f{field}" if field.isdigit() else field
            parts.append(f"(?P<{name}>{group(field)})")
    return re.compile("".join(parts))


_NUMBER, _DATE = r"\d+", r"\d{1,2} [A-Z][a-z]+ \d{4}"


@functools.cache
def _stamps_of(phrasings: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(_pattern(p, lambda f: _NUMBER if f == "version" else _DATE) for p in phrasings)


def _stamps(spec: ScenarioFile) -> tuple[re.Pattern[str], ...]:
    """The family's version stamps as regexes (none without hard-tier text)."""
    return _stamps_of(tuple(spec.hard.stamps)) if spec.hard is not None else ()


def _stamp_of(body: str, stamps: Iterable[re.Pattern[str]]) -> tuple[int, str] | None:
    """The first version stamp in `body` (version, date), or None."""
    found = [m for m in (p.search(body) for p in stamps) if m is not None]
    if not found:
        return None
    first = min(found, key=lambda m: m.start())
    return int(first["version"]), first["date"]


def _shown_stamp(stamp: tuple[int, str] | None) -> str | None:
    return None if stamp is None else f"version {stamp[0]} of {stamp[1]}"


@functools.cache
def _registers_of(registers: tuple[str, ...], n: int) -> tuple[re.Pattern[str], ...]:
    """A family's register (`ScenarioFile.registers`, over n evidence families), one regex per
    line phrasing: group `f{i}` is the i-th family's current version, `f{n + i}` its date,
    `f{2n + i}` the version before it and `f{3n + i}` that one's date."""
    return tuple(
        _pattern(r, lambda f: _NUMBER if int(f) // n % 2 == 0 else _DATE) for r in registers
    )


_REGISTER = {
    "record": "String",
    "reference": "String",
    "requirement": "String",
    "missing": "Boolean",
    "register_version": "Int64",
    "register_date": "String",
    "kept_in": "String",
    "copy": "String",
    "copy_stamp": "String",
    "copy_state": "String",
    "master": "String",
    "master_scope": "String",
}
"""The columns of `register_frame`, by polars type name."""


def register_frame(task: Task, spec: ScenarioFile) -> pl.DataFrame | None:
    """The register of a task as a table, one row per kind of record it lists, joined to the
    task's documents of that kind; None if the task has no register. Columns: `record` (the
    evidence family; on a tier of corpora, `procedure` for the procedure's own line), its
    `reference` (on a tier of corpora, the record's reference, `[QT48213]`; null on the hard
    tier, whose register names none), `requirement` (the contract's requirement the record
    covers, null if it is not required) and `missing` (the view lacks a current copy of a
    required record), `register_version` and `register_date` (current, as the register says),
    `kept_in` (the master's scope), `copy` (the id of the document of that kind the view holds,
    on a tier of corpora its newest version: a restricted record's copy), `copy_stamp`,
    `copy_state` (`current`; `stale`: its stamp is older than the register's; `unstamped`;
    `none`: the view holds no document of that kind), `master` (the hidden master's id: on a
    tier of corpora, the hidden current version) and `master_scope`."""
    import polars as pl

    register = next((d for d in task.documents if d.role == "register"), None)
    if register is None:
        return None
    rows = _register_rows(task, spec, register)
    if rows is None:
        rows = _record_rows(task, spec, register)
    if not rows:
        return None
    return pl.DataFrame(rows, schema={c: getattr(pl, t) for c, t in _REGISTER.items()})


def _register_rows(
    task: Task, spec: ScenarioFile, register: Document
) -> list[dict[str, Any]] | None:
    """The rows of a hard task's register (one sentence listing every kind of record), None
    for a register of another kind."""
    n = len(spec.evidence_families)
    patterns = _registers_of(tuple(spec.registers.values()), n)
    match = next((m for m in (p.search(register.body) for p in patterns) if m), None)
    if match is None:
        return None
    stamps = _stamps(spec)
    required = {r.id for r in task.contract.required_evidence}
    gap = task.oracles.gap_report
    missing = set(gap.missing_requirements) if gap is not None else set()
    visible = set(task.authorized_doc_ids)
    rows = []
    for i, family in enumerate(spec.evidence_families):
        version = int(match[f"f{i}"])
        docs = [d for d in task.documents if d.evidence_family == family.id and d != register]
        copy = _first(d for d in docs if d.doc_id in visible)
        master = _first(d for d in docs if d.doc_id not in visible and d.role != "distractor")
        stamp = _stamp_of(copy.body, stamps) if copy is not None else None
        rows.append(
            {
                "record": family.id,
                "reference": None,
                "requirement": family.id if family.id in required else None,
                "missing": family.id in missing,
                "register_version": version,
                "register_date": match[f"f{n + i}"],
                "kept_in": spec.home_scopes.get(family.id),
                "copy": copy.doc_id if copy is not None else None,
                "copy_stamp": _shown_stamp(stamp),
                "copy_state": _copy_state(copy, stamp, version),
                "master": master.doc_id if master is not None else None,
                "master_scope": master.scope if master is not None else None,
            }
        )
    return rows


def _copy_state(copy: Document | None, stamp: tuple[int, str] | None, version: int) -> str:
    if copy is None or stamp is None:
        return "none" if copy is None else "unstamped"
    return "stale" if stamp[0] < version else "current"


_OWN_LINE = re.compile(r"\[([A-Z]{2}\d{5})\] (.+)")
"""A line of a corpus's register: a record's reference, then what the register says of it."""
_LINE_FIELDS = {
    "version": _NUMBER,
    "old": _NUMBER,
    "date": _DATE,
    "old_date": _DATE,
    "scope": r"[\w.-]+",
    "description": ".+?",
    "scope_description": ".+?",
}


@functools.cache
def _lines_of(phrasings: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """A family's register lines on a tier of corpora (`HardSpec.register_lines`), as regexes."""
    return tuple(_pattern(p, lambda f: _LINE_FIELDS[f]) for p in phrasings)


def _record_rows(task: Task, spec: ScenarioFile, register: Document) -> list[dict[str, Any]]:
    """The rows of a corpus's register (docs/benchmark.md §9: a line per kind of record, with
    its reference, current version and date, and where its master is kept), each joined to the
    documents that carry its reference: the newest version the view holds and the hidden
    current one."""
    if spec.hard is None:
        return []
    patterns = _lines_of(tuple(spec.hard.register_lines))
    records = {e.description: e.id for e in spec.evidence_families}
    if spec.procedure is not None:
        records[spec.procedure.description] = "procedure"
    stamps = _stamps(spec)
    required = {r.id for r in task.contract.required_evidence}
    gap = task.oracles.gap_report
    missing = set(gap.missing_requirements) if gap is not None else set()
    visible = set(task.authorized_doc_ids)
    by_ref: dict[str, list[Document]] = {}
    for d in task.documents:
        if (own := _OWN_LINE.match(d.body)) is not None:
            by_ref.setdefault(own[1], []).append(d)
    rows = []
    for line in register.body.splitlines():
        listed = _OWN_LINE.fullmatch(line)
        said = (
            next((m for m in (p.fullmatch(listed[2]) for p in patterns) if m), None)
            if listed
            else None
        )
        if listed is None or said is None or said["description"] not in records:
            continue
        record, version = records[said["description"]], int(said["version"])
        docs = by_ref.get(listed[1], [])
        copies = [(_stamp_of(d.body, stamps), d) for d in docs if d.doc_id in visible]
        copy = max(copies, key=lambda c: c[0][0] if c[0] else -1, default=(None, None))
        master = _first(d for d in docs if d.doc_id not in visible and not d.superseded)
        rows.append(
            {
                "record": record,
                "reference": listed[1],
                "requirement": record if record in required else None,
                "missing": record in missing,
                "register_version": version,
                "register_date": said["date"],
                "kept_in": said["scope"],
                "copy": copy[1].doc_id if copy[1] is not None else None,
                "copy_stamp": _shown_stamp(copy[0]),
                "copy_state": _copy_state(copy[1], copy[0], version),
                "master": master.doc_id if master is not None else None,
                "master_scope": master.scope if master is not None else None,
            }
        )
    return rows


def stale_facts(task: Task) -> pl.DataFrame:
    """The facts of each out-of-date copy the view holds beside those of its record's current
    version (the hidden master) and the complete-world answer: one row per copy and answer
    field either sets. Columns: `copy`, `record`, `field`, `stale` (the copy's values: what a
    system reading it would take for true), `current` (the master's) and `oracle` (the complete
    answer's value); values joined by `, `, `(none)` when not set."""
    import polars as pl

    rows = []
    for copy in (d for d in task.authorized_documents if d.superseded):
        master = _first(
            d
            for d in task.hidden_documents
            if d.evidence_family == copy.evidence_family and not d.superseded
        )
        stale, current = _effects(copy), _effects(master)
        for field in dict.fromkeys([*stale, *current]):
            oracle = task.oracles.complete_answer.get(field)
            rows.append(
                {
                    "copy": copy.doc_id,
                    "record": copy.evidence_family,
                    "field": field,
                    "stale": _joined(stale.get(field, [])),
                    "current": _joined(current.get(field, [])),
                    "oracle": _joined([oracle] if isinstance(oracle, str) else oracle or []),
                }
            )
    return pl.DataFrame(rows, schema=dict.fromkeys(_STALE_COLUMNS, pl.String))


_STALE_COLUMNS = ("copy", "record", "field", "stale", "current", "oracle")


def _effects(document: Document | None) -> dict[str, list[str]]:
    """Every value a document's facts set, by answer field, in order."""
    effects: dict[str, list[str]] = {}
    for fact in document.facts if document is not None else ():
        for field, values in fact.effects.items():
            known = effects.setdefault(field, [])
            known += [v for v in values if v not in known]
    return effects


def _joined(values: Iterable[str]) -> str:
    return ", ".join(values) or "(none)"


def _first(docs: Iterable[Document]) -> Document | None:
    return next(iter(docs), None)
