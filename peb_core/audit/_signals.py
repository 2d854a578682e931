"""The explicit-signal reader: which stated signals a model view holds, found by the phrasings its
family's file declares for them, and the completeness they stand for, learned from training views.

A stated signal is a sentence that says where the view's evidence stops: the tracker's boundary
notice (`boundary.excluded`: a scope is excluded from the view; `boundary.included`: it was
opened to it) or, on the hard tier, a copy's sentence on supersession (`hard.superseded_by`: this
copy is out of date; `hard.supersedes`: this copy replaces an archived version). The reader sees
only which of these are present, nothing else of the text: for each combination it answers the
completeness most training tasks with that combination had. It is the most any reader of the
stated signals alone can get from them on the task distribution, so a text classifier doing better
reads something else.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..tasks import Completeness, ModelView, ScenarioFile

SIGNALS = ("excluded", "included", "superseded_by", "supersedes")
"""The stated signals, in the order a view's signals are given: the two boundary notices and the
two sentences on supersession."""

Signals = tuple[bool, ...]
"""Which of `SIGNALS` a view states, in their order."""

_NUMBER = r"\d+"
_DATE = r"[^.;]+?"  # a date (14 March 2026) never holds a full stop or a semicolon


def _alternatives(values: Iterable[str]) -> str:
    """A regex matching any of `values` (longest first, so none stops at a prefix of another)."""
    return "(?:" + "|".join(map(re.escape, sorted(values, key=len, reverse=True))) + ")"


def _phrasing_regex(phrasing: str, fields: Mapping[str, str]) -> str:
    """A regex matching every filling of `phrasing`: its literal text, and each placeholder as
    `fields` says (any text for a placeholder it does not name)."""
    out = []
    for literal, name, _, _ in string.Formatter().parse(phrasing):
        out.append(re.escape(literal))
        if name is not None:
            out.append(fields.get(name, ".+?"))
    return "".join(out)


@dataclass(frozen=True)
class SignalReader:
    """Finds the stated signals of one family's views (`read`)."""

    family: str
    patterns: tuple[re.Pattern[str] | None, ...]
    """One pattern per signal of `SIGNALS`: any of its declared phrasings, filled; None where
    the family declares no phrasing for it (no [hard] text)."""

    @classmethod
    def of(cls, spec: ScenarioFile) -> SignalReader:
        fields = {
            "scope": _alternatives(spec.scopes),
            "scope_description": _alternatives(spec.scopes.values()),
            "version": _NUMBER,
            "old": _NUMBER,
            "date": _DATE,
            "old_date": _DATE,
        }
        hard = spec.hard
        phrasings: dict[str, Sequence[str]] = {
            "excluded": spec.boundary.excluded,
            "included": spec.boundary.included,
            "superseded_by": hard.superseded_by if hard else (),
            "supersedes": hard.supersedes if hard else (),
        }
        patterns = tuple(
            re.compile("|".join(_phrasing_regex(p, fields) for p in phrasings[s]))
            if phrasings[s]
            else None
            for s in SIGNALS
        )
        return cls(spec.id, patterns)

    def read(self, view: ModelView) -> Signals:
        """Which signals of `SIGNALS` the view's documents state."""
        if view.family != self.family:
            raise ValueError(f"a view of family {view.family} read as {self.family}")
        text = "\n".join(d.body for d in view.documents)
        return tuple(p is not None and p.search(text) is not None for p in self.patterns)


@dataclass(frozen=True)
class SignalRule:
    """The explicit-signal reader fitted to training views: the completeness most of them had
    for each combination of stated signals, and the commonest completeness overall (for a
    combination no training view had, or a tie)."""

    answers: Mapping[Signals, Completeness]
    default: Completeness

    @classmethod
    def fit(cls, signals: Sequence[Signals], labels: Sequence[Completeness]) -> SignalRule:
        overall = Counter(labels)
        default: Completeness = (
            "incomplete" if overall["incomplete"] > overall["complete"] else "complete"
        )
        counts: dict[Signals, Counter[Completeness]] = {}
        for combination, label in zip(signals, labels, strict=True):
            counts.setdefault(combination, Counter())[label] += 1
        answers: dict[Signals, Completeness] = {}
        for combination, seen in sorted(counts.items()):
            if seen["complete"] == seen["incomplete"]:
                answers[combination] = default
            else:
                answers[combination] = seen.most_common(1)[0][0]
        return cls(answers, default)

    def predict(self, signals: Sequence[Signals]) -> list[Completeness]:
        return [self.answers.get(s, self.default) for s in signals]
