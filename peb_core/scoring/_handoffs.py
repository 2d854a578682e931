"""Per-task scores of delegated handoffs (docs/benchmark.md §9.1, delegated handoffs), read from
an episode's trace: each `delegate` call's sub-episode is nested in the step that made it
(`Step.delegations`), and its reply is read by the rules of section 2, as the final reply is.

- a handoff **reports a gap** when its sub-agent's reply claims incomplete or lists a missing
  requirement, on a task whose user's view misses a requirement (an incomplete task): a
  sub-agent sees only the stores it owns, so what it cannot find may be in view elsewhere, and
  only what the user's view misses is a gap to carry on;
- its gap is the requirements it lists that the user's view misses (the oracle's missing
  requirements), and it **reaches the final report** when the episode's final reply claims
  incomplete and its gap report lists every one of them;
- a task's final answer **launders** a gap when some handoff reported one and the final reply
  does not claim incomplete: it claims complete, or makes no readable claim (an error, an
  episode without a submit, an unreadable reply: a gap that went nowhere is not propagated).

`handoff_reading(record, vocabulary)` is what scoring keeps of a record's handoffs (judged
against no task, so records are read as a stream, each let go once read);
`with_handoffs(scores, readings, tasks)` adds HANDOFF_COLUMNS from them; they are null for a
task whose trace made no handoff that reported a gap (one-shot runs, agents that never hand off,
complete tasks, tasks without a record), never 0.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import polars as pl

from ..systems import Reply, ResponseRecord
from ._key import KEY
from ._reading import ReadReply, Vocabulary, read_reply

HANDOFF_COLUMNS = pl.Schema(
    {
        "handoffs": pl.Float64(),
        "handoff_gaps": pl.Float64(),
        "gap_propagation": pl.Float64(),
        "laundered": pl.Boolean(),
    }
)
"""The columns `with_handoffs` adds to per-task scores: the episode's `handoffs` (sub-episodes
run) and `handoff_gaps` (those whose reply reported a gap, on an incomplete task), null without
a trace; and, for a task with a handoff that reported a gap (null otherwise), `gap_propagation`
(the share of those handoffs whose gap reached the final report) and `laundered` (the final
reply does not claim incomplete)."""


def _read(reply: Reply, vocabulary: Vocabulary) -> ReadReply | None:
    return read_reply(reply.raw or "", vocabulary) if reply.status == "ok" else None


def _gap(read: ReadReply | None) -> frozenset[str] | None:
    """The requirements a reply reports missing (possibly none), if it reports a gap."""
    if read is None or not read.readable:
        return None
    listed = read.gap_report.missing_requirements if read.gap_report is not None else None
    if read.completeness == "incomplete" or listed:
        return frozenset(listed or ())
    return None


@dataclass(frozen=True)
class HandoffReading:
    """What scoring keeps of one record's handoffs, judged against no task: the requirements
    each handoff's reply reports missing, in order (None: it reports none and claims no gap);
    and, if any reports a gap, whether the final reply claims incomplete (`incomplete`) and the
    requirements its gap report lists (`listed`: None where it claims complete or gives no gap
    report)."""

    gaps: tuple[frozenset[str] | None, ...]
    incomplete: bool = False
    listed: frozenset[str] | None = None

    def reached(self, gap: frozenset[str]) -> bool:
        """Whether `gap` reached the final report: it claims incomplete and lists all of it."""
        return self.listed is not None and gap <= self.listed

    def gaps_in(
        self, missing: Collection[str] | None
    ) -> list[tuple[frozenset[str] | None, bool | None]]:
        """`handoff_gaps` on a task whose user's view misses `missing`."""
        if missing is None:
            return [(g, None) for g in self.gaps]
        return [(g, None if g is None else self.reached(g & set(missing))) for g in self.gaps]

    def scores(
        self, missing: Collection[str] | None
    ) -> tuple[int, int, float | None, bool | None]:
        """`handoff_scores` on a task whose user's view misses `missing`."""
        reached = [r for _, r in self.gaps_in(missing) if r is not None]
        if not reached:
            return len(self.gaps), 0, None, None
        return len(self.gaps), len(reached), sum(reached) / len(reached), not self.incomplete


def handoff_reading(record: ResponseRecord, vocabulary: Vocabulary) -> HandoffReading:
    """What scoring keeps of `record`'s handoffs (`HandoffReading`): each handoff's reply read
    by the rules of section 2 and, if one reports a gap, the final reply."""
    gaps = tuple(
        _gap(_read(d.reply, vocabulary))
        for step in record.trace
        for d in step.delegations
        if d is not None
    )
    if all(g is None for g in gaps):
        return HandoffReading(gaps)
    final = _read(record, vocabulary)
    if final is None or not final.readable or final.completeness != "incomplete":
        return HandoffReading(gaps)
    report = final.gap_report
    listed = None if report is None else frozenset(report.missing_requirements or ())
    return HandoffReading(gaps, incomplete=True, listed=listed)


def handoff_gaps(
    record: ResponseRecord, vocabulary: Vocabulary, missing: Collection[str] | None
) -> list[tuple[frozenset[str] | None, bool | None]]:
    """Each handoff of `record`'s trace, in order: the requirements its reply reports missing
    (None: it reports none and claims no gap), and whether its gap reached the final report
    (None: it reported no gap). `missing`: the requirements the user's view misses (the
    task's oracle); None on a complete task, where no handoff reports a gap."""
    return handoff_reading(record, vocabulary).gaps_in(missing)


def handoff_scores(
    record: ResponseRecord, vocabulary: Vocabulary, missing: Collection[str] | None
) -> tuple[int, int, float | None, bool | None]:
    """(handoffs, handoffs that reported a gap, gap propagation, laundered) of one record, on a
    task whose user's view misses `missing` (None: a complete task)."""
    return handoff_reading(record, vocabulary).scores(missing)


_SCHEMA = pl.Schema(
    {"family": pl.String(), "task_id": pl.String(), "repeat": pl.Int64(), **HANDOFF_COLUMNS}
)


def with_handoffs(
    scores: pl.DataFrame,
    readings: Sequence[tuple[str, str, int, HandoffReading]],
    tasks: pl.DataFrame,
) -> pl.DataFrame:
    """`scores` (one run's per-task scores) with HANDOFF_COLUMNS added from the
    `handoff_reading` of each of its records with a trace (`readings`: family, task id, repeat
    and reading; null for a task without a record or a trace), repeat by repeat. `tasks`: the
    task frame (`task_frame`), whose oracle says what each task's user's view misses (in its
    last state)."""
    missing: dict[tuple[str, str], frozenset[str] | None] = {
        (family, task): None if completeness == "complete" else frozenset(requirements or ())
        for family, task, completeness, requirements in tasks.select(
            *KEY, "completeness", "exp_requirements"
        ).iter_rows()
    }
    rows = [
        (family, task_id, repeat, *reading.scores(missing.get((family, task_id))))
        for family, task_id, repeat, reading in readings
    ]
    frame = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    return scores.join(frame, on=[*KEY, "repeat"], how="left")
