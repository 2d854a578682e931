"""`cue_reader`: the strongest shortcut we could write that reads only the model view, as a model
does, and decides by surface cues alone: boundary words, scope ids named near them, keyword
coverage of the contract, and answer values named in the text. It never weighs what a document
says against another (versions, which record a notice is about). It stands for every
template-learning wrapper: a benchmark it solves measures surface reading, not care.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..tasks import Answer, GapReport, ModelView, RequiredEvidence
from ._reply import Response

BOUNDARY = re.compile(
    r"exclud|withh[eo]ld|not (?:been )?(?:reviewed|provided|shared|made available)"
    r"|supersed|out of date|no longer current|replac",
    re.IGNORECASE,
)
"""Words that announce a boundary or a stale record."""
SCOPE = re.compile(r"\(scope (\w+)\)|scope (\w+)")
SENTENCE = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"[a-z]{4,}")
_STOP_WORDS = """that this with from their they what which whether about been have into over
show shows were will than there these those when where while more most such only also each other
target"""
STOP = frozenset(_STOP_WORDS.split())
CATALOGUE = 3
"""A document naming this many scope ids is a catalogue, not evidence: left out of coverage."""


def _words(text: str) -> set[str]:
    """Content words, crudely stemmed (a trailing s dropped)."""
    return {w.rstrip("s") for w in WORD.findall(text.lower()) if w not in STOP}


def _scopes(text: str) -> list[str]:
    return [a or b for a, b in SCOPE.findall(text)]


def _coverage(req: RequiredEvidence, texts: Iterable[str]) -> float:
    """The share of the requirement's words (from its id and description) the texts hold."""
    wanted = _words(req.id.replace("_", " ") + " " + req.description)
    found: set[str] = set().union(*map(_words, texts))
    return len(wanted & found) / len(wanted)


def _answer(view: ModelView, text: str) -> Answer:
    """Each value whose words appear in the text; an ordinal field's most severe such value."""
    low = text.lower()
    answer: Answer = {}
    for field in view.answer_schema:
        named = [v for v in field.values if v.replace("_", " ") in low]
        if field.kind == "ordinal":
            answer[field.name] = named[-1] if named else field.values[0]
        else:
            answer[field.name] = named
    return answer


def cue_reader(view: ModelView) -> Response:
    """A reply decided by surface cues (see the module docstring)."""
    docs = view.documents
    visible = {d.scope for d in docs}
    evidence = [d for d in docs if len(set(_scopes(d.body))) < CATALOGUE]
    catalogue = [d for d in docs if d not in evidence]
    texts = [f"{d.title}. {d.body}" for d in evidence]
    required = view.contract.required_evidence

    # Boundary sentences that name a scope the view does not show, with the title of the
    # document that holds each.
    named: dict[str, str] = {}
    for doc, text in zip(evidence, texts, strict=True):
        for sentence in SENTENCE.split(text):
            if BOUNDARY.search(sentence):
                for scope in _scopes(sentence):
                    if scope not in visible:
                        named.setdefault(scope, doc.title)
    coverage = {r.id: _coverage(r, texts) for r in required}
    uncovered = [r for r in required if coverage[r.id] == 0]
    if not named and not uncovered:
        answer = _answer(view, " ".join(texts))
        return Response(answer=answer, completeness="complete", gap_report=None)

    missing: list[RequiredEvidence] = list(uncovered)
    for scope, title in named.items():
        if missing:
            break
        # What the catalogue says is kept in the scope, else the title of the document naming
        # it; failing both, the requirement the view covers least.
        lines = [s for d in catalogue for s in SENTENCE.split(d.body) if f"scope {scope}" in s]
        for source in (" ".join(lines), title):
            best = max(required, key=lambda r: _coverage(r, [source]))
            if source and _coverage(best, [source]) >= 0.3:
                missing.append(best)
                break
    if not missing:
        # Each document stands for the requirement it matches best; one nobody stands for, the
        # least covered, is missing.
        claimed = {max(required, key=lambda r: _coverage(r, [text])).id for text in texts}
        unclaimed = [r for r in required if r.id not in claimed] or list(required)
        missing = [min(unclaimed, key=lambda r: coverage[r.id])]
    scopes = list(named)
    if not scopes:
        for req in missing:
            for d in catalogue:
                for line in SENTENCE.split(d.body):
                    if _coverage(req, [line]) >= 0.5 and _scopes(line):
                        scopes.append(_scopes(line)[0])
                        break
    partial = view.contract.partial_response_permitted
    gap = GapReport.of(missing, scopes, partial=partial)
    partial_answer = _answer(view, " ".join(texts)) if partial else None
    return Response(answer=partial_answer, completeness="incomplete", gap_report=gap)
