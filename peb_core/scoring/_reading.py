"""How a reply is read (docs/benchmark.md §2): for what it decides, even when its form is off.

A reply is text. Its JSON object is found whole, fenced, or among prose; with none at all the
reply is `unreadable`. Keys match case-insensitively, enum-like strings fold to the family's
vocabulary (case, spaces, dashes), and a string where a list belongs is a one-item list. The
answer is read field by field and the gap report part by part, so a malformed field costs that
field only and never hides the decision beside it:

- the answer: an object = answered (a field missing or of the wrong type scores 0; a value
  outside the vocabulary is kept and simply does not match); null or absent = blocked; any
  other value = answered, every field 0;
- the completeness claim: `complete`, `incomplete`, or unstated (`None`);
- the gap report: an object that names at least one of the family's requirement or scope ids
  among its missing ones; anything else (null, absent, a string, an object naming nothing the
  family knows) reports no gap, so boilerplate cannot stand in for a report.

Under a protocol that adds parts to the response (docs/benchmark.md §2.2; `Vocabulary.parts`)
they are read too: the gap report's `next_step` (an object: its `action`, one of the next
actions, and `to`, one of the family's roles) and the reply's `confidence` (a number from 0 to
1; out of range or not finite it is an unknown value and none is read). Under a protocol that
adds none they are extra keys, read as any other (the reply of §2 with extra keys reads as
before).

Every way the reply departs from the family's response schema is recorded as a violation
`<kind>: <where>`; a reply with none is format-compliant.

A reply in prose (`--interface chat`, docs/benchmark.md §2.1) is read by the prose reader
(`peb_core.reading`) unless it holds a response's JSON object: the values it states are its
answer, a block where it states none and refuses or says something is missing; its claim of
completeness; and, where it names a requirement or scope as missing, a gap report of those,
its status and reason following from whether it answers, its affected claims the fields it
says what is missing bears on. A message that decides nothing is unreadable (`no_decision`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .._json import read_json, read_json_at
from ..reading import ProseReading, read_prose
from ..systems import Platform
from ..tasks import (
    COMPLETENESS,
    GAP_LISTS,
    GAP_VALUES,
    NEXT_ACTIONS,
    Answer,
    Completeness,
    Owners,
    ScenarioFile,
    Task,
    fold,
    gap_vocabulary,
    owners_of,
)

ViolationKind = Literal[
    "no_json_object",
    "no_decision",
    "surrounding_text",
    "missing_field",
    "extra_key",
    "miscased_key",
    "unnormalised_value",
    "unknown_value",
    "wrong_type",
]
VIOLATION_KINDS: dict[ViolationKind, str] = {
    "no_json_object": "the reply holds no JSON object at all (the reply is unreadable)",
    "no_decision": "a reply in prose that decides nothing: no value, claim, gap or refusal "
    "(the reply is unreadable)",
    "surrounding_text": "the JSON object is fenced or surrounded by other text",
    "missing_field": "a key the schema requires is absent",
    "extra_key": "a key the schema does not define",
    "miscased_key": "a key that matches only ignoring case, spaces or dashes",
    "unnormalised_value": "a value matching the vocabulary only ignoring case, spaces or dashes",
    "unknown_value": "a value outside the vocabulary (kept; it matches nothing)",
    "wrong_type": "a value of the wrong JSON type (a string for a list, a list for a value, ...)",
}
"""Every kind of schema violation, with what it means. Stable names: they are stored in scores."""

_TOP = ("answer", "completeness", "gap_report")
"""The keys of the response of §2 (a protocol may add its parts: `Vocabulary.parts`)."""
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_MAX_OPENINGS = 64
"""How many `{` a search for the JSON object tries before giving up (bounded work per reply)."""


@dataclass(frozen=True)
class Vocabulary:
    """What a family's replies are read against: each answer field's kind and values, the
    values each part of a gap report may take (`tasks.gap_vocabulary`), the parts a protocol
    adds to the response (`tasks.RESPONSE_PARTS`; none: the response of §2) and the family's
    owners (None: it names none; the roles a next step and an escalation may name), and the
    family itself (`spec`, whose phrasings read a reply in prose)."""

    fields: Mapping[str, tuple[Literal["ordinal", "set"], tuple[str, ...]]]
    gap: Mapping[str, tuple[str, ...]]
    parts: tuple[str, ...] = ()
    owners: Owners | None = None
    spec: ScenarioFile | None = field(default=None, compare=False, repr=False)
    """The family, for a reply in prose (its phrasings); None: such a reply is unreadable."""

    @classmethod
    def of(cls, spec: ScenarioFile, parts: Sequence[str] = ()) -> Vocabulary:
        """`spec`'s vocabulary, reading the response `parts` a protocol adds."""
        return cls(
            fields={name: (f.kind, tuple(f.values)) for name, f in spec.answer.items()},
            gap=gap_vocabulary(spec),
            parts=tuple(parts),
            owners=owners_of(spec) if spec.owners is not None else None,
            spec=spec,
        )

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles a next step may name (none without owners)."""
        return self.owners.roles if self.owners is not None else ()


@dataclass(frozen=True)
class ReadStep:
    """A next step as read: its action and its role (None where missing or unusable; a value
    outside the vocabulary is kept folded and matches nothing)."""

    action: str | None
    to: str | None


@dataclass(frozen=True)
class ReadGap:
    """A gap report as read, part by part: None where the part is missing or unusable (the
    next step: also where the protocol asks for none)."""

    status: str | None
    reason: str | None
    missing_requirements: tuple[str, ...] | None
    missing_scopes: tuple[str, ...] | None
    affected_claims: tuple[str, ...] | None
    next_step: ReadStep | None = None


@dataclass(frozen=True)
class ReadReply:
    """What a reply decides. `readable` False: no JSON object was found (then nothing else
    holds). `answer` None: blocked; otherwise the fields read (a field absent scores 0).
    `confidence`: the one it states, under a protocol that asks for one (None: none usable)."""

    readable: bool
    answer: Answer | None
    completeness: Completeness | None
    gap_report: ReadGap | None
    violations: tuple[str, ...]
    confidence: float | None = None

    @property
    def compliant(self) -> bool:
        return not self.violations

    @classmethod
    def unread(cls, violation: str) -> ReadReply:
        """A reply nothing is read from (not `readable`), for `violation`."""
        return cls(
            readable=False, answer=None, completeness=None, gap_report=None, violations=(violation,)
        )


UNREADABLE = ReadReply.unread("no_json_object: reply")


def find_object(text: str) -> tuple[dict[str, Any], bool] | None:
    """The reply's JSON object and whether it stood alone (the whole text), or None. Tried in
    order: the whole text, each fenced block, then each object that decodes from a `{`; among
    several, the first that has a key of a response (answer, completeness, gap_report, in any
    case), else the first."""
    try:
        whole = read_json(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return whole, True
    found: list[dict[str, Any]] = []
    for block in _FENCE.findall(text):
        try:
            value = read_json(block)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    start = text.find("{")
    for _ in range(_MAX_OPENINGS):
        if start == -1:
            break
        try:
            value, end = read_json_at(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    known = {fold(k) for k in _TOP}
    for value in found:
        if any(fold(str(k)) in known for k in value):
            return value, False
    return (found[0], False) if found else None


def _responds(data: dict[str, Any]) -> bool:
    """Whether a JSON object has a key of a response (in any case)."""
    known = {fold(k) for k in _TOP}
    return any(fold(str(k)) in known for k in data)


class _Reader:
    """One reply's reading, collecting violations as it goes."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.violations: list[str] = []

    def flag(self, kind: ViolationKind, where: str) -> None:
        self.violations.append(f"{kind}: {where}")

    def keys(self, data: dict[str, Any], expected: Iterable[str], where: str) -> dict[str, Any]:
        """`data` keyed by the expected names they fold to; other keys are extra."""
        wanted = {fold(k): k for k in expected}
        out: dict[str, Any] = {}
        for key, value in data.items():
            name = wanted.get(fold(key))
            if name is None:
                self.flag("extra_key", f"{where}{key}")
                continue
            if name in out:  # "Answer" beside "answer": the first one read stands
                self.flag("extra_key", f"{where}{key}")
                continue
            if key != name:
                self.flag("miscased_key", f"{where}{name}")
            out[name] = value
        for name in wanted.values():
            if name not in out:
                self.flag("missing_field", f"{where}{name}")
        return out

    def term(self, value: str, vocab: tuple[str, ...], where: str) -> str:
        """A string folded to the vocabulary term it names, else kept (folded) as unknown."""
        if value in vocab:
            return value
        folded = fold(value)
        if folded in vocab:
            self.flag("unnormalised_value", where)
            return folded
        self.flag("unknown_value", where)
        return folded

    def one(self, value: Any, vocab: tuple[str, ...], where: str) -> str | None:
        """A single vocabulary value (a one-item list is taken as its item)."""
        if isinstance(value, list) and len(value) == 1:
            self.flag("wrong_type", where)
            value = value[0]
        if not isinstance(value, str):
            self.flag("wrong_type", where)
            return None
        return self.term(value, vocab, where)

    def many(self, value: Any, vocab: tuple[str, ...], where: str) -> tuple[str, ...] | None:
        """A list of vocabulary values, distinct, in the order given (a string is one item)."""
        if isinstance(value, str):
            self.flag("wrong_type", where)
            value = [value]
        if not isinstance(value, list):
            self.flag("wrong_type", where)
            return None
        items: dict[str, None] = {}
        for item in value:
            if isinstance(item, str):
                items[self.term(item, vocab, where)] = None
            else:
                self.flag("wrong_type", where)
        return tuple(items)

    def answer(self, value: Any, present: bool) -> Answer | None:
        if not present or value is None:
            return None
        if not isinstance(value, dict):
            self.flag("wrong_type", "answer")
            return {}
        fields = self.vocabulary.fields
        given = self.keys(value, fields, "answer.")
        answer: Answer = {}
        for name, raw in given.items():
            kind, vocab = fields[name]
            where = f"answer.{name}"
            if kind == "ordinal":
                one = self.one(raw, vocab, where)
                if one is not None:
                    answer[name] = one
            else:
                many = self.many(raw, vocab, where)
                if many is not None:
                    answer[name] = list(many)
        return answer

    def completeness(self, value: Any, present: bool) -> Completeness | None:
        if not present:
            return None
        claim = self.one(value, COMPLETENESS, "completeness")
        return next((c for c in COMPLETENESS if c == claim), None)

    def gap(self, value: Any, present: bool) -> ReadGap | None:
        if not present or value is None:
            return None
        if not isinstance(value, dict):
            self.flag("wrong_type", "gap_report")
            return None
        stepped = "next_step" in self.vocabulary.parts
        expected = [*GAP_VALUES, *GAP_LISTS, *(["next_step"] if stepped else [])]
        given = self.keys(value, expected, "gap_report.")
        vocab = self.vocabulary.gap
        parts: dict[str, Any] = {}
        for part in GAP_VALUES:
            parts[part] = (
                self.one(given[part], vocab[part], f"gap_report.{part}") if part in given else None
            )
        for part in GAP_LISTS:
            parts[part] = (
                self.many(given[part], vocab[part], f"gap_report.{part}") if part in given else None
            )
        if "next_step" in given:
            parts["next_step"] = self.step(given["next_step"])
        gap = ReadGap(**parts)
        names_a_gap = any(
            item in vocab[part]
            for part in ("missing_requirements", "missing_scopes")
            for item in getattr(gap, part) or ()
        )
        return gap if names_a_gap else None

    def step(self, value: Any) -> ReadStep | None:
        """A next step: an object of an action and a role."""
        where = "gap_report.next_step"
        if not isinstance(value, dict):
            self.flag("wrong_type", where)
            return None
        given = self.keys(value, ["action", "to"], f"{where}.")
        action = None
        if "action" in given:
            action = self.one(given["action"], NEXT_ACTIONS, f"{where}.action")
        return ReadStep(action=action, to=self.role(given["to"]) if "to" in given else None)

    def role(self, value: Any) -> str | None:
        """One of the family's roles, as the family writes it (a role matched only ignoring
        case, spaces and dashes is unnormalised; another is kept folded and matches nothing)."""
        roles = self.vocabulary.roles
        if isinstance(value, str) and value in roles:
            return value
        folded = self.one(value, tuple(fold(r) for r in roles), "gap_report.next_step.to")
        return next((r for r in roles if fold(r) == folded), folded)

    def confidence(self, value: Any, present: bool) -> float | None:
        """A probability: a finite number from 0 to 1."""
        if not present:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.flag("wrong_type", "confidence")
            return None
        if not (math.isfinite(value) and 0 <= value <= 1):
            self.flag("unknown_value", "confidence")
            return None
        return float(value)


NO_DECISION = ReadReply.unread("no_decision: reply")


def prose_reply(reading: ProseReading, vocabulary: Vocabulary) -> ReadReply:
    """A prose reading as a reply's decision (see the module docstring)."""
    if not reading.placed:
        return NO_DECISION
    requirements = tuple(g for g in reading.gaps if g in vocabulary.gap["missing_requirements"])
    scopes = tuple(g for g in reading.gaps if g in vocabulary.gap["missing_scopes"])
    gap = None
    if requirements or scopes:
        blocked = reading.answer is None
        gap = ReadGap(
            status="blocked" if blocked else "partial",
            reason="policy_requires_block" if blocked else "partial_answer_permitted",
            missing_requirements=requirements,
            missing_scopes=scopes,
            affected_claims=reading.affected,
        )
    return ReadReply(
        readable=True,
        answer=None if reading.answer is None else dict(reading.answer),
        completeness=reading.completeness,
        gap_report=gap,
        violations=(),
    )


def read_reply(text: str, vocabulary: Vocabulary, *, prose: bool = False) -> ReadReply:
    """What `text` decides, read against a family's vocabulary (see the module docstring); with
    `prose` (a reply in a chat), read by the prose reader unless it holds a response's JSON
    object."""
    found = find_object(text)
    if prose and vocabulary.spec is not None and (found is None or not _responds(found[0])):
        return prose_reply(read_prose(text, vocabulary.spec), vocabulary)
    if found is None:
        return UNREADABLE
    data, alone = found
    reader = _Reader(vocabulary)
    if not alone:
        reader.flag("surrounding_text", "reply")
    top = [*_TOP, *(["confidence"] if "confidence" in vocabulary.parts else [])]
    given = reader.keys(data, top, "")
    return ReadReply(
        readable=True,
        answer=reader.answer(given.get("answer"), "answer" in given),
        completeness=reader.completeness(given.get("completeness"), "completeness" in given),
        gap_report=reader.gap(given.get("gap_report"), "gap_report" in given),
        confidence=reader.confidence(given.get("confidence"), "confidence" in given),
        violations=tuple(reader.violations),
    )


def shown_reading(
    own: ReadReply, platform: Platform | None, vocabulary: Vocabulary, *, prose: bool = False
) -> ReadReply:
    """What the response the consumer is shown decides (docs/benchmark.md §11): the system's own
    reading (`own`), or, where a run's intervention put a response of the platform's in its
    place (`Platform.response`) and the system's own reply is readable, that response's
    reading, with the system's own violations (the format is the system's). An unreadable reply
    stays unreadable: no intervention makes an error, a reply without a decision or a missing
    record safe."""
    if platform is None or not own.readable:
        return own
    shown = read_reply(platform.response, vocabulary, prose=prose)
    return replace(shown, violations=own.violations) if shown.readable else own


def reply_decision(
    text: str, spec: ScenarioFile, *, task: Task | None = None
) -> tuple[dict[str, Any], ProseReading | None]:
    """What a reply decides, as `peb read` prints it: `{"answer", "completeness", "gaps"}` (the
    gaps: the family's requirement ids, then scope ids, that it names as missing); a reply
    holding a response's JSON object read by the reply reader (no prose reading), any other by
    the prose reader (against `task`'s contract where given), with its reading (its marks)."""
    found = find_object(text)
    if found is None or not _responds(found[0]):
        reading = read_prose(text, spec, task=task)
        return reading.to_json(), reading
    read = read_reply(text, Vocabulary.of(spec))
    named: set[str] = set()
    if read.gap_report is not None:
        named |= set(read.gap_report.missing_requirements or ())
        named |= set(read.gap_report.missing_scopes or ())
    gaps = [e.id for e in spec.evidence_families if e.id in named]
    gaps += [s for s in spec.scopes if s in named]
    return {"answer": read.answer, "completeness": read.completeness, "gaps": gaps}, None
