"""What the prose reader matches in a message: the English cues (`peb_core/data/prose_cues.toml`)
and a family's phrasings (`tasks.prose_vocabulary`), matched whole word by whole word, longest
first, left to right, in two passes: first the family's phrases with the cues that hold a value
word and state no value (idioms: "critical that") or withhold one (refusals: "block my
answer"), then the other cues in the words left (so "not required" and "not audit ready",
values, are never a negation). A family phrase's words also match their plural or possessive,
and but for an ordinal's one-word values their -d, -ed and -ing forms."""

from __future__ import annotations

import hashlib
import re
import threading
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from ..tasks import ScenarioFile, phrase_words, prose_vocabulary
from ._text import Word

CUE_FILE = "prose_cues.toml"
"""The cue file, in `peb_core/data/`."""

FIRST_PASS: frozenset[str] = frozenset({"idiom", "refusal"})
"""The cue kinds matched with the family's phrases, before the other cues."""

CueKind = Literal[
    "term_strong",
    "term_weak",
    "neg_before",
    "neg_after",
    "possibility",
    "modal",
    "cond_evidence",
    "cond_user",
    "attr_before",
    "adoption",
    "advice",
    "refusal",
    "incomplete",
    "complete",
    "missing",
    "present",
    "idiom",
]
_CUE_LISTS: dict[CueKind, tuple[str, str]] = {
    "term_strong": ("terminators", "strong"),
    "term_weak": ("terminators", "weak"),
    "neg_before": ("negation", "before"),
    "neg_after": ("negation", "after"),
    "possibility": ("hedge", "possibility"),
    "modal": ("hedge", "modal"),
    "cond_evidence": ("condition", "evidence"),
    "cond_user": ("condition", "user"),
    "attr_before": ("attribution", "before"),
    "adoption": ("attribution", "adoption"),
    "advice": ("advice", "before"),
    "refusal": ("refusal", "phrases"),
    "incomplete": ("claims", "incomplete"),
    "complete": ("claims", "complete"),
    "missing": ("claims", "missing"),
    "present": ("claims", "present"),
    "idiom": ("idioms", "phrases"),
}

Words = tuple[str, ...]


@dataclass(frozen=True)
class Cues:
    """The cue file, read: phrases by kind, and the word lists read word by word."""

    phrases: Mapping[CueKind, frozenset[Words]]
    sources: frozenset[str]
    verbs: frozenset[Words]
    ends: frozenset[Words]
    report_nouns: frozenset[str]
    pressure: frozenset[Words]
    qualified: frozenset[Words]
    frames: frozenset[Words]
    not_subjects: frozenset[Words]
    skip: frozenset[Words]
    common: frozenset[str]
    evidence_nouns: frozenset[str]
    digest: str


def _phrases(items: Iterable[str]) -> frozenset[Words]:
    return frozenset(w for w in map(phrase_words, items) if w)


@cache
def cues() -> Cues:
    """The cue file shipped in the package, read once."""
    data = resources.files("peb_core").joinpath("data", CUE_FILE).read_bytes()
    raw = tomllib.loads(data.decode("utf-8"))

    def words(section: str, key: str) -> frozenset[str]:
        return frozenset(w for item in raw[section][key] for w in phrase_words(item))

    return Cues(
        phrases={kind: _phrases(raw[a][b]) for kind, (a, b) in _CUE_LISTS.items()},
        sources=words("attribution", "sources"),
        verbs=_phrases(raw["attribution"]["verbs"]),
        ends=_phrases(raw["attribution"]["ends"]),
        report_nouns=words("attribution", "nouns"),
        pressure=_phrases(raw["condition"]["pressure"]),
        qualified=_phrases(raw["claims"]["qualified"]),
        frames=_phrases(raw["frames"]["before"]),
        not_subjects=_phrases(raw["frames"]["not_subjects"]),
        skip=_phrases(raw["frames"]["skip"]),
        common=words("words", "common"),
        evidence_nouns=words("evidence", "nouns"),
        digest=hashlib.sha256(data).hexdigest(),
    )


@dataclass(frozen=True)
class Tag:
    """What a matched phrase is: a value (`field`, `id` the value), a field, a requirement, a
    scope (`id`), or a cue (`id` its kind)."""

    kind: Literal["value", "field", "requirement", "scope", "cue"]
    id: str
    field: str = ""


@dataclass(frozen=True)
class Match:
    """A phrase found in a message: its span, its word range and what it is."""

    start: int
    end: int
    first: int
    last: int
    """Indices of its first and last word in the message's words."""
    tags: tuple[Tag, ...]
    one_word: bool

    def has(self, kind: str) -> bool:
        return any(t.kind == kind for t in self.tags)

    def cue(self, *kinds: CueKind) -> bool:
        return any(t.kind == "cue" and t.id in kinds for t in self.tags)


@dataclass(frozen=True)
class _Entry:
    words: Words
    tags: tuple[Tag, ...]
    inflects: bool
    """Whether its words also match their plural or possessive (a family phrase's do)."""
    gappy: bool
    """Whether one other word may stand inside it ("the lenders' current forecast"): a
    requirement's or scope's phrase of two words or more."""
    conjugates: bool
    """Whether its words also match their -d, -ed and -ing forms (a family phrase's do, but for
    an ordinal field's one-word values: "signed" is no call to sign)."""


_GAP = re.compile(r"[ \t\-,:/]{1,6}|[ \t]*\n[ \t]*")
"""What may stand between two words of a phrase."""


class Lexicon:
    """One family's phrases and the cues, keyed by first word, longest first."""

    def __init__(self, spec: ScenarioFile) -> None:
        vocabulary = prose_vocabulary(spec)
        found: dict[Words, list[Tag]] = {}
        family: set[Words] = set()

        def add(phrases: Iterable[Words], tag: Tag, of_family: bool) -> None:
            for words in phrases:
                found.setdefault(words, []).append(tag)
                if of_family:
                    family.add(words)

        fixed: set[Words] = set()
        for name, values in vocabulary.values.items():
            ordinal = spec.answer[name].kind == "ordinal"
            for value, phrases in values.items():
                add(phrases, Tag("value", value, name), True)
                if ordinal:
                    fixed.update(w for w in phrases if len(w) == 1)
        for name, phrases in vocabulary.fields.items():
            add(phrases, Tag("field", name), True)
        for rid, phrases in vocabulary.requirements.items():
            add(phrases, Tag("requirement", rid), True)
        for sid, phrases in vocabulary.scopes.items():
            add(phrases, Tag("scope", sid), True)
        for kind, cue_phrases in cues().phrases.items():
            add(cue_phrases, Tag("cue", kind), False)
        self.vocabulary = vocabulary
        self._passes: tuple[dict[str, list[_Entry]], dict[str, list[_Entry]]] = ({}, {})
        for words, tags in found.items():
            unique = tuple(dict.fromkeys(tags))
            gappy = len(words) > 1 and all(t.kind in ("requirement", "scope") for t in unique)
            entry = _Entry(words, unique, words in family, gappy, words not in fixed)
            first = words in family or any(t.id in FIRST_PASS for t in unique)
            self._passes[0 if first else 1].setdefault(words[0], []).append(entry)
        for table in self._passes:
            for entries in table.values():
                entries.sort(key=lambda e: (-len(e.words), e.words))

    @staticmethod
    def _same(token: str, word: str, entry: _Entry, last: bool) -> bool:
        if token == word:
            return True
        if not entry.inflects or len(word) < 3:
            return False
        if token in (word + "s", word + "es") or (last and token == word + "'s"):
            return True
        if not entry.conjugates or len(word) < 4:
            return False
        stem = word[:-1] if word.endswith("e") else word
        return token in (word + "d", word + "ed", stem + "ing", stem + "ed")

    _SUFFIXES = ("'s", "es", "s", "ing", "ed", "d")

    def _stems(self, token: str) -> list[str]:
        stems = [token]
        for suffix in self._SUFFIXES:
            if token.endswith(suffix) and len(token) - len(suffix) >= 3:
                stems.append(token[: -len(suffix)])
                if suffix in ("ing", "ed"):
                    stems.append(token[: -len(suffix)] + "e")
        return stems

    def match(self, norm: str, words: list[Word]) -> list[Match]:
        """The phrases of `words` (the words of `norm`), in order: in each pass, leftmost
        first, each the longest phrase starting there; matches never overlap."""
        first = self._pass(self._passes[0], norm, words, [True] * len(words))
        free = [True] * len(words)
        for m in first:
            for k in range(m.first, m.last + 1):
                free[k] = False
        second = self._pass(self._passes[1], norm, words, free)
        return sorted(first + second, key=lambda m: m.start)

    def _pass(
        self, table: dict[str, list[_Entry]], norm: str, words: list[Word], free: list[bool]
    ) -> list[Match]:
        out: list[Match] = []
        i = 0
        while i < len(words):
            if not free[i]:
                i += 1
                continue
            best: _Entry | None = None
            span = 0
            for stem in self._stems(words[i].text):
                for entry in table.get(stem, ()):
                    if best is not None and len(entry.words) <= len(best.words):
                        break
                    fit = self._fits(norm, words, i, entry)
                    if fit and all(free[i : i + fit]):
                        best, span = entry, fit
                        break
            if best is None:
                i += 1
                continue
            last = i + span - 1
            out.append(
                Match(
                    words[i].start,
                    words[last].end,
                    i,
                    last,
                    best.tags,
                    len(best.words) == 1,
                )
            )
            i = last + 1
        return out

    def _fits(self, norm: str, words: list[Word], i: int, entry: _Entry) -> int:
        """How many words of `words` from i the entry matches (0: none); a gappy entry may
        take one word more inside it."""
        at, skipped = i, False
        for k, word in enumerate(entry.words):
            if at >= len(words):
                return 0
            last = k == len(entry.words) - 1
            if not self._same(words[at].text, word, entry, last):
                if not (k and entry.gappy and not skipped and at + 1 < len(words)):
                    return 0
                if not self._same(words[at + 1].text, word, entry, last):
                    return 0
                if not _GAP.fullmatch(norm, words[at].end, words[at + 1].start):
                    return 0
                skipped, at = True, at + 1
            if k and not _GAP.fullmatch(norm, words[at - 1].end, words[at].start):
                return 0
            at += 1
        return at - i


_LEXICONS: dict[int, tuple[ScenarioFile, Lexicon]] = {}
_LEXICONS_MAX = 32
_LOCK = threading.Lock()


def lexicon(spec: ScenarioFile) -> Lexicon:
    """The family's lexicon, made once per loaded family."""
    with _LOCK:
        hit = _LEXICONS.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
    made = Lexicon(spec)
    with _LOCK:
        if len(_LEXICONS) >= _LEXICONS_MAX:
            _LEXICONS.pop(next(iter(_LEXICONS)))
        _LEXICONS[id(spec)] = (spec, made)
    return made
