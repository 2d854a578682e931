"""What the prose reader matches in a message: the English cues (`peb_core/data/prose_cues.toml`)
and a family's phrasings (`tasks.prose_vocabulary`), as one table of phrases matched whole word
by whole word, longest first, left to right (so "not required", a value, is never the negation
"not"). A family phrase's words also match their plural or possessive."""

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
    qualified: frozenset[Words]
    frames: frozenset[Words]
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
        qualified=_phrases(raw["claims"]["qualified"]),
        frames=_phrases(raw["frames"]["before"]),
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

        for name, values in vocabulary.values.items():
            for value, phrases in values.items():
                add(phrases, Tag("value", value, name), True)
        for name, phrases in vocabulary.fields.items():
            add(phrases, Tag("field", name), True)
        for rid, phrases in vocabulary.requirements.items():
            add(phrases, Tag("requirement", rid), True)
        for sid, phrases in vocabulary.scopes.items():
            add(phrases, Tag("scope", sid), True)
        for kind, phrases in cues().phrases.items():
            add(phrases, Tag("cue", kind), False)
        self.vocabulary = vocabulary
        self._first: dict[str, list[_Entry]] = {}
        for words, tags in found.items():
            entry = _Entry(words, tuple(dict.fromkeys(tags)), words in family)
            self._first.setdefault(words[0], []).append(entry)
        for entries in self._first.values():
            entries.sort(key=lambda e: (-len(e.words), e.words))

    @staticmethod
    def _same(token: str, word: str, inflects: bool) -> bool:
        if token == word:
            return True
        return inflects and len(word) >= 3 and token in (word + "s", word + "es", word + "'s")

    def _stems(self, token: str) -> list[str]:
        stems = [token]
        for suffix in ("'s", "es", "s"):
            if token.endswith(suffix) and len(token) - len(suffix) >= 3:
                stems.append(token[: -len(suffix)])
        return stems

    def match(self, norm: str, words: list[Word]) -> list[Match]:
        """The phrases of `words` (the words of `norm`), leftmost first, each the longest
        phrase starting there; matches never overlap."""
        out: list[Match] = []
        i = 0
        while i < len(words):
            best: _Entry | None = None
            for stem in self._stems(words[i].text):
                for entry in self._first.get(stem, ()):
                    if best is not None and len(entry.words) <= len(best.words):
                        break
                    if self._fits(norm, words, i, entry):
                        best = entry
                        break
            if best is None:
                i += 1
                continue
            last = i + len(best.words) - 1
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

    def _fits(self, norm: str, words: list[Word], i: int, entry: _Entry) -> bool:
        if i + len(entry.words) > len(words):
            return False
        for k, word in enumerate(entry.words):
            token = words[i + k]
            if not self._same(token.text, word, entry.inflects):
                return False
            if k and not _GAP.fullmatch(norm, words[i + k - 1].end, token.start):
                return False
        return True


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
