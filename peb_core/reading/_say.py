"""A response said in prose (docs/benchmark.md §10.4): what a careful assistant without a submit
tool tells the user, in the family's own words, so that the prose reader reads back exactly the
response it says (the chat baselines speak with it, and a test reads every canonical task's
response back). The words of each part come from the family file: an answer field by its name,
a value by its id spelled out, a requirement by its description, a scope by its description and
id; the sentences around them are fixed, so the same response is always said the same way."""

from __future__ import annotations

from collections.abc import Sequence

from ..tasks import Answer, GapReport, ScenarioFile


def _words(identifier: str) -> str:
    return identifier.replace("_", " ")


def _phrase(parts: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return " and ".join(filter(None, [", ".join(parts[:-1]), *parts[-1:]]))


def _clause(description: str) -> str:
    """A requirement's description as a noun phrase inside a sentence."""
    text = description.strip().rstrip(".")
    return text[:1].lower() + text[1:]


def _lines(answer: Answer, spec: ScenarioFile) -> str:
    """Each field of `answer` on a line of its own: `- Severity: critical`."""
    lines = []
    for name, field in spec.answer.items():
        if name not in answer:
            continue
        value = answer[name]
        if isinstance(value, str):
            said = _words(value)
        else:
            ordered = [v for v in field.values if v in value]
            said = _phrase([_words(v) for v in ordered]) if ordered else "none"
        lines.append(f"- {_words(name).capitalize()}: {said}")
    return "\n".join(lines)


def _missing(gap: GapReport, spec: ScenarioFile) -> str:
    """What the user's view lacks: a sentence for each missing requirement, by its description,
    then one saying where the missing records are kept."""
    kinds = spec.requirements
    said = [
        f"I could not see a current record of {_clause(kinds[r].description)}."
        for r in gap.missing_requirements
        if r in kinds
    ]
    places = _phrase(
        [f"{spec.scopes[s]} (scope {s})" for s in gap.missing_scopes if s in spec.scopes]
    )
    if places:
        said.append(f"What is missing is kept in {places}.")
    return " ".join(said)


def say_response(
    answer: Answer | None, completeness: str, gap: GapReport | None, spec: ScenarioFile
) -> str:
    """The response of `answer` (None: a block), `completeness` and `gap` said in prose: a
    complete answer with its fields listed; an incomplete one saying what is missing and where
    (its gap report, if any), which fields it bears on, and either the answer the visible
    evidence supports (a partial answer) or that none is given (a block)."""
    if completeness == "complete":
        return (
            "I checked each record the request requires against the register, and the "
            f"evidence is complete.\n\n{_lines(answer or {}, spec)}"
        )
    if gap is None:
        said = "I can't give an answer: " if answer is None else ""
        lines = "" if answer is None else f"\n\nOn what I could see:\n{_lines(answer, spec)}"
        return f"{said}The evidence is incomplete.{lines}"
    affected = _phrase([_words(c) for c in gap.affected_claims])
    bears = f" What is missing bears on the {affected}." if affected else ""
    if answer is None:
        return (
            "I can't give an answer: the evidence is incomplete, and policy requires a block "
            f"when required evidence is missing. {_missing(gap, spec)}{bears}"
        )
    return (
        f"The evidence is incomplete. {_missing(gap, spec)}{bears}\n\n"
        f"On the evidence I could see, and only on it:\n{_lines(answer, spec)}"
    )
