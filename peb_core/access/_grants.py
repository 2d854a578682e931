"""A task's grant schedule over one episode (docs/benchmark.md §9.2): which scopes the user holds
at each tool call. A change is set going by what the episode does (`GrantChange.trigger`: the
first open of a document in its scope answered with the document, the first search whose best
matches over the whole corpus hold one of its documents, or the start) and holds from `lag`
calls after the call that set it going. `GrantClock` is what a session asks before it answers
each call; `GrantTimeline` is what the schedule did in an episode, given by a session as it
runs and by `replay_grants` (`_view.py`) from an episode's calls alone (the tools are
deterministic, so the two agree). A call is described to the clock by its tool (`Tool.event`: a
`CallEvent`, the search it makes or the document it opens)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..tasks import GrantChange
from ._index import CorpusIndex


@dataclass(frozen=True)
class CallEvent:
    """What a well-formed call does that a grant trigger reads: the search it makes (`query`,
    `k`) or the document it opens (`doc_id`, as the access layer reads it)."""

    query: str | None = None
    k: int = 0
    doc_id: str | None = None


@dataclass(frozen=True)
class GrantTimeline:
    """What a grant schedule did in one episode: each change that took effect with the call
    (from 1) from which it held, in order; how many calls the episode made; the call of the
    decision that counts: its last accepted submit, or the escalation that ended it (None
    without either); and, for each document it opened, the first call that was answered with
    the document."""

    changes: tuple[tuple[int, GrantChange], ...]
    calls: int
    submit: int | None
    opened: Mapping[str, int]

    def state_at(self, call: int) -> int:
        """The state in force when call `call` (from 1) was answered: how many changes held."""
        return sum(at <= call for at, _ in self.changes)

    @property
    def state(self) -> int:
        """The state in force when the submit was answered; without one, after the last call."""
        return self.state_at(self.calls if self.submit is None else self.submit)


class GrantClock:
    """A schedule as an episode goes: the scopes in force and the changes that took effect.

    Args:
        index: the corpus, with each document's scope (what a trigger is checked against).
        scopes: the scopes the user holds at the start.
        schedule: the changes, in the order they take effect.
    """

    def __init__(
        self, index: CorpusIndex, scopes: tuple[str, ...], schedule: Sequence[GrantChange]
    ) -> None:
        self._index = index
        self._schedule = tuple(schedule)
        self.scopes = scopes
        self.allowed: np.ndarray = index.allowed(scopes)
        """Which documents the scopes in force let the user see (a boolean mask)."""
        self.changes: list[tuple[int, GrantChange]] = []
        self._set_going: int | None = self._at_start()

    def _at_start(self) -> int | None:
        """0 when the next change is set going at the start, else None (not yet set going)."""
        pending = self._pending()
        return 0 if pending is not None and pending.trigger == "start" else None

    def _pending(self) -> GrantChange | None:
        done = len(self.changes)
        return self._schedule[done] if done < len(self._schedule) else None

    def advance(self, call: int, event: CallEvent | None = None) -> list[GrantChange]:
        """The changes that hold from call `call` on, applied before it is answered. A call
        is described by what it does (`event`: the search it makes or the document it opens);
        a call that does neither (None) sets nothing going, but is counted."""
        due = []
        while (change := self._pending()) is not None:
            if self._set_going is None and event is not None and self._sets_going(change, event):
                self._set_going = call
            if self._set_going is None or self._set_going + change.lag > call:
                break
            self._apply(change, call)
            due.append(change)
        return due

    def _sets_going(self, change: GrantChange, event: CallEvent) -> bool:
        index = self._index
        query, doc_id = event.query, event.doc_id
        if change.trigger == "open" and doc_id is not None:
            position = index.positions.get(doc_id)
            return (
                position is not None
                and bool(self.allowed[position])
                and index.documents[position].scope == change.scope
            )
        if change.trigger == "search" and query is not None:
            everything = np.ones(len(index.documents), dtype=bool)
            best = index.rank(query, everything, event.k).visible
            return any(index.documents[p].scope == change.scope for p in best)
        return False

    def _apply(self, change: GrantChange, call: int) -> None:
        if change.ends:
            self.scopes = tuple(s for s in self.scopes if s != change.scope)
        elif change.scope not in self.scopes:
            self.scopes = (*self.scopes, change.scope)
        self.allowed = self._index.allowed(self.scopes)
        self.changes.append((call, change))
        self._set_going = self._at_start()
