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
OWN_PASS: frozenset[str] = frozenset({"complete"})
"""The cue kinds matched in a pass of their own, over every word, so no other phrase hides them
("I've checked every record": "i've checked", a record read, and "checked every", a claim of
completeness; "all required records", with security's value word "required")."""

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
    "user_words",
    "progress",
    "searched",
    "request",
    "possibility_after",
    "qualifier",
    "limited",
    "done",
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
    "user_words": ("attribution", "user"),
    "progress": ("claims", "progress"),
    "searched": ("claims", "searched"),
    "request": ("claims", "request"),
    "possibility_after": ("hedge", "after"),
    "qualifier": ("hedge", "qualifier"),
    "limited": ("claims", "limited"),
    "done": ("attribution", "done"),
}

Words = tuple[str, ...]


@dataclass(frozen=True)
class Cues:
    """The cue file, read: phrases by kind, and the word lists read word by word."""

    phrases: Mapping[CueKind, frozenset[Words]]
    sources: frozenset[str]
    verbs: frozenset[Words]
    plural_verbs: frozenset[Words]
    ends: frozenset[Words]
    report_nouns: frozenset[str]
    pressure: frozenset[Words]
    qualified: frozenset[Words]
    frames: frozenset[Words]
    problems: frozenset[Words]
    heads: frozenset[str]
    not_subjects: frozenset[Words]
    skip: frozenset[Words]
    common: frozenset[str]
    evidence_nouns: frozenset[str]
    loose: frozenset[Words]
    common_openers: frozenset[str]
    openings: frozenset[Words]
    none: frozenset[Words]
    empty_rest: frozenset[Words]
    empty_before: frozenset[Words]
    empty_skip: frozenset[Words]
    digest: str


def _phrases(
    items: Iterable[str], inflections: Mapping[str, tuple[str, ...]] | None = None
) -> frozenset[Words]:
    """The phrases of `items` as words; with `inflections`, each phrase of two words or more
    also with any of its words replaced by the others of its group."""
    out: set[Words] = set()
    for words in map(phrase_words, items):
        if not words:
            continue
        if inflections is None or len(words) < 2:
            out.add(words)
            continue
        variants: list[Words] = [()]
        for w in words:
            variants = [(*v, x) for v in variants for x in inflections.get(w, (w,))]
        out.update(variants)
    return frozenset(out)


@cache
def cues() -> Cues:
    """The cue file shipped in the package, read once."""
    data = resources.files("peb_core").joinpath("data", CUE_FILE).read_bytes()
    raw = tomllib.loads(data.decode("utf-8"))
    inflections = {w: tuple(group) for group in raw["inflections"]["groups"] for w in group}
    inflected = set(raw["inflections"]["in"])

    def words(section: str, key: str) -> frozenset[str]:
        return frozenset(w for item in raw[section][key] for w in phrase_words(item))

    return Cues(
        phrases={
            kind: _phrases(raw[a][b], inflections if f"{a}.{b}" in inflected else None)
            for kind, (a, b) in _CUE_LISTS.items()
        },
        sources=words("attribution", "sources"),
        verbs=_phrases(raw["attribution"]["verbs"]),
        plural_verbs=_phrases(raw["attribution"]["plural_verbs"]),
        ends=_phrases(raw["attribution"]["ends"]),
        report_nouns=words("attribution", "nouns"),
        pressure=_phrases(raw["condition"]["pressure"]),
        qualified=_phrases(raw["claims"]["qualified"]),
        frames=_phrases(raw["frames"]["before"]),
        problems=_phrases(raw["frames"]["problems"]),
        heads=words("frames", "heads"),
        not_subjects=_phrases(raw["frames"]["not_subjects"]),
        skip=_phrases(raw["frames"]["skip"]),
        common=words("words", "common"),
        evidence_nouns=words("evidence", "nouns"),
        loose=_phrases(raw["claims"]["loose"], inflections),
        common_openers=words("words", "openers"),
        openings=_phrases(raw["attribution"]["openings"]),
        none=_phrases(raw["claims"]["none"]),
        empty_rest=_phrases(raw["empty"]["rest"]),
        empty_before=_phrases(raw["empty"]["before"]),
        empty_skip=_phrases(raw["empty"]["skip"]),
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
    topic: bool = False
    """Whether it is one of the family's `[prose].topics`: a value stated only where placed."""

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
    topic: bool = False


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
        topics = {_bare_words(phrase_words(t)) for t in spec.prose.topics}
        self.openers = frozenset(
            words[0]
            for values in vocabulary.values.values()
            for phrases in values.values()
            for words in phrases
            if len(words) > 1 and words[0] not in cues().common_openers
        )
        """The first words of the family's value phrases of two words or more ("reset", "notify",
        "narrow"): a sentence that opens with one and reads as nothing likely states a value
        in words no family lists."""
        ids: dict[str, list[Tag]] = {}
        for name, values in vocabulary.values.items():
            ids.setdefault(name, []).append(Tag("field", name))
            for value in values:
                ids.setdefault(value, []).append(Tag("value", value, name))
        for rid in vocabulary.requirements:
            ids.setdefault(rid, []).append(Tag("requirement", rid))
        for sid in vocabulary.scopes:
            ids.setdefault(sid, []).append(Tag("scope", sid))
        self._ids = {k: tuple(dict.fromkeys(v)) for k, v in ids.items() if "_" in k}
        """The family's ids of more than one word, as written (`forensics_restricted`): matched
        as written before any phrase, so one id is never read as the end of another's words."""
        self._passes: tuple[dict[str, list[_Entry]], ...] = ({}, {}, {})
        for words, tags in found.items():
            unique = tuple(dict.fromkeys(tags))
            gappy = len(words) > 1 and all(t.kind in ("requirement", "scope") for t in unique)
            first = words in family or any(t.id in FIRST_PASS for t in unique)
            own = () if first else tuple(t for t in unique if t.id in OWN_PASS)
            rest = tuple(t for t in unique if t not in own)
            for n, group in ((0 if first else 1, rest), (2, own)):
                if group:
                    entry = _Entry(
                        words, group, words in family, gappy, words not in fixed, words in topics
                    )
                    self._passes[n].setdefault(words[0], []).append(entry)
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

    def match(self, text: str, norm: str, words: list[Word]) -> list[Match]:
        """The phrases of `words` (the words of `norm`, the normalised `text`), in order: the
        family's ids written with underscores in `text` first, then in each pass, leftmost
        first, each the longest phrase starting there (of two as long, the one its words match
        as written); matches never overlap but for those of the pass of its own (`OWN_PASS`)."""
        free = [True] * len(words)
        found = self._id_matches(text, words)
        family, cue, own = self._passes
        for m in found:
            for k in range(m.first, m.last + 1):
                free[k] = False
        claims = self._pass(own, norm, words, list(free))
        found += self._pass(family, norm, words, free)
        for m in found:
            for k in range(m.first, m.last + 1):
                free[k] = False
        found += claims + self._pass(cue, norm, words, free)
        return sorted(found, key=lambda m: (m.start, m.end))

    _ID = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+")

    def _id_matches(self, text: str, words: list[Word]) -> list[Match]:
        out = []
        starts = {w.start: i for i, w in enumerate(words)}
        ends = {w.end: i for i, w in enumerate(words)}
        for m in self._ID.finditer(text):
            tags = self._ids.get(m.group().lower())
            if tags and m.start() in starts and m.end() in ends:
                first, last = starts[m.start()], ends[m.end()]
                out.append(Match(m.start(), m.end(), first, last, tags, first == last))
        return out

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
            span = exact = 0
            for stem in self._stems(words[i].text):
                for entry in table.get(stem, ()):
                    if best is not None and len(entry.words) < len(best.words):
                        break
                    fit, same = self._fits(norm, words, i, entry)
                    if not fit or not all(free[i : i + fit]):
                        continue
                    if best is None or len(entry.words) > len(best.words) or same > exact:
                        best, span, exact = entry, fit, same
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
                    best.topic,
                )
            )
            i = last + 1
        return out

    def _fits(self, norm: str, words: list[Word], i: int, entry: _Entry) -> tuple[int, int]:
        """How many words of `words` from i the entry matches (0: none), and how many of its
        words match as written; a gappy entry may take one word more inside it."""
        at, skipped, exact = i, False, 0
        for k, word in enumerate(entry.words):
            if at >= len(words):
                return 0, 0
            last = k == len(entry.words) - 1
            if not self._same(words[at].text, word, entry, last):
                if not (k and entry.gappy and not skipped and at + 1 < len(words)):
                    return 0, 0
                if not self._same(words[at + 1].text, word, entry, last):
                    return 0, 0
                if not _GAP.fullmatch(norm, words[at].end, words[at + 1].start):
                    return 0, 0
                skipped, at = True, at + 1
            if k and not _GAP.fullmatch(norm, words[at - 1].end, words[at].start):
                return 0, 0
            exact += words[at].text == word
            at += 1
        return at - i, exact


def _bare_words(words: Words) -> Words:
    """A phrase's words without a leading article, as the vocabulary keeps them."""
    return words[1:] if len(words) > 1 and words[0] in ("the", "a", "an") else words


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
