"""A family's vocabulary as prose names it: every phrase that states each answer value, names each
answer field, each requirement (evidence family) and each scope, from the vocabulary itself and
the family's `[prose]` section (`ProseSpec`). The prose reader (`peb_core.reading`) reads messages
with it, and the loader refuses a family where one phrase stands for two of a kind."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ._scenario import ScenarioFile

WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
"""A word as the prose reader sees it (lower case; `can't`, `it's` and `coordinator's` one
word each)."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})


def phrase_words(text: str) -> tuple[str, ...]:
    """The words of a phrase, lower-cased: what two phrasings must share to be the same phrase
    (case, spaces, hyphens, underscores and punctuation aside)."""
    return tuple(WORD.findall(text.lower().translate(_APOSTROPHES)))


def spelled(identifier: str) -> str:
    """An id as words: `not_required` is "not required"."""
    return identifier.replace("_", " ")


@dataclass(frozen=True)
class ProseVocabulary:
    """Each thing a message can name, with the phrases (as words) that name it, in file order:
    `values[field][value]`, `fields[field]`, `requirements[id]`, `scopes[id]`."""

    values: Mapping[str, Mapping[str, tuple[tuple[str, ...], ...]]]
    fields: Mapping[str, tuple[tuple[str, ...], ...]]
    requirements: Mapping[str, tuple[tuple[str, ...], ...]]
    scopes: Mapping[str, tuple[tuple[str, ...], ...]]


_ARTICLES = frozenset({"the", "a", "an"})


def _bare(words: tuple[str, ...]) -> tuple[str, ...]:
    """A phrase without its leading article ("the security operations console")."""
    return words[1:] if len(words) > 1 and words[0] in _ARTICLES else words


def _distinct(phrases: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    return tuple(dict.fromkeys(_bare(w) for w in map(phrase_words, phrases) if w))


def prose_vocabulary(spec: ScenarioFile) -> ProseVocabulary:
    """The family's `ProseVocabulary`: a value by its id spelled out, its signals (but those
    `[prose].unread` lists) and its `[prose].values`; a field by its name spelled out and its
    `[prose].fields`; a requirement by its id spelled out, its description and its
    `[prose].evidence`; a scope by its id spelled out, its description and its
    `[prose].scopes`."""
    prose = spec.prose
    unread = {phrase_words(p) for p in prose.unread}
    values = {
        name: {
            value: tuple(
                w
                for w in _distinct(
                    [
                        spelled(value),
                        *field.signals.get(value, ()),
                        *prose.values.get(name, {}).get(value, ()),
                    ]
                )
                if w not in unread
            )
            for value in field.values
        }
        for name, field in spec.answer.items()
    }
    return ProseVocabulary(
        values=values,
        fields={
            name: _distinct([spelled(name), *prose.fields.get(name, ())]) for name in spec.answer
        },
        requirements={
            e.id: _distinct([spelled(e.id), e.description, *prose.evidence.get(e.id, ())])
            for e in spec.evidence_families
        },
        scopes={
            scope: _distinct([spelled(scope), description, *prose.scopes.get(scope, ())])
            for scope, description in spec.scopes.items()
        },
    )


def _collisions(
    where: str, named: Mapping[str, tuple[tuple[str, ...], ...]], what: str
) -> Iterator[str]:
    owners: dict[tuple[str, ...], list[str]] = {}
    for owner, phrases in named.items():
        for words in phrases:
            owners.setdefault(words, []).append(owner)
    for words, who in owners.items():
        if len(who) > 1:
            yield (
                f"{where}: the phrase {' '.join(words)!r} {what} both {who[0]} and {who[1]}; a "
                "phrase may stand for one of them only"
            )


def prose_problems(spec: ScenarioFile) -> Iterator[str]:
    """What is wrong with a family's `[prose]` section, one `field: problem` line each: a name
    it does not declare, a signal to leave unread that is no signal, a topic that phrases no
    value, and a phrase that stands for two values of one field, two fields, two requirements
    or two scopes."""
    prose = spec.prose
    for name in prose.fields:
        if name not in spec.answer:
            yield f"prose.fields.{name}: not an answer field; expected one of: " + ", ".join(
                spec.answer
            )
    for name, values in prose.values.items():
        if name not in spec.answer:
            yield f"prose.values.{name}: not an answer field; expected one of: " + ", ".join(
                spec.answer
            )
            continue
        for value in values:
            if value not in spec.answer[name].values:
                yield f"prose.values.{name}.{value}: not a value of {name}; expected one of: " + (
                    ", ".join(spec.answer[name].values)
                )
    families = [e.id for e in spec.evidence_families]
    for family in prose.evidence:
        if family not in families:
            yield f"prose.evidence.{family}: not an evidence family; expected one of: " + (
                ", ".join(families)
            )
    for scope in prose.scopes:
        if scope not in spec.scopes:
            yield f"prose.scopes.{scope}: not a scope; expected one of: " + ", ".join(spec.scopes)
    signals = {
        phrase_words(s)
        for field in spec.answer.values()
        for phrases in field.signals.values()
        for s in phrases
    }
    for j, phrase in enumerate(prose.unread):
        if phrase_words(phrase) not in signals:
            yield f"prose.unread[{j}]: {phrase!r} is not a signal of any answer value"
    vocabulary = prose_vocabulary(spec)
    stated = {w for values in vocabulary.values.values() for ws in values.values() for w in ws}
    for j, phrase in enumerate(prose.topics):
        if _bare(phrase_words(phrase)) not in stated:
            yield f"prose.topics[{j}]: {phrase!r} is not a phrasing of any answer value"
    for name, phrasings in vocabulary.values.items():
        yield from _collisions(f"prose.values.{name}", phrasings, "states")
    yield from _collisions("prose.fields", vocabulary.fields, "names")
    yield from _collisions("prose.evidence", vocabulary.requirements, "names")
    yield from _collisions("prose.scopes", vocabulary.scopes, "names")
