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

`with_handoffs(scores, records, vocabularies, tasks)` adds HANDOFF_COLUMNS; they are null for a
task whose trace made no handoff that reported a gap (one-shot runs, agents that never hand off,
complete tasks, tasks without a record), never 0.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import polars as pl

from ..systems import Reply, ResponseRecord
from ._reading import ReadReply, Vocabulary, read_reply

KEY = ["family", "task_id"]

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


def _reached(gap: frozenset[str], final: ReadReply | None) -> bool:
    if final is None or not final.readable or final.completeness != "incomplete":
        return False
    listed = final.gap_report.missing_requirements if final.gap_report is not None else None
    return final.gap_report is not None and gap <= set(listed or ())


def handoff_gaps(
    record: ResponseRecord, vocabulary: Vocabulary, missing: Collection[str] | None
) -> list[tuple[frozenset[str] | None, bool | None]]:
    """Each handoff of `record`'s trace, in order: the requirements its reply reports missing
    (None: it reports none and claims no gap), and whether its gap reached the final report
    (None: it reported no gap). `missing`: the requirements the user's view misses (the
    task's oracle); None on a complete task, where no handoff reports a gap."""
    gaps = [
        _gap(_read(d.reply, vocabulary))
        for step in record.trace
        for d in step.delegations
        if d is not None
    ]
    if missing is None:
        return [(g, None) for g in gaps]
    final = _read(record, vocabulary) if any(g is not None for g in gaps) else None
    return [(g, None if g is None else _reached(g & set(missing), final)) for g in gaps]


def handoff_scores(
    record: ResponseRecord, vocabulary: Vocabulary, missing: Collection[str] | None
) -> tuple[int, int, float | None, bool | None]:
    """(handoffs, handoffs that reported a gap, gap propagation, laundered) of one record, on a
    task whose user's view misses `missing` (None: a complete task)."""
    gaps = handoff_gaps(record, vocabulary, missing)
    reached = [r for _, r in gaps if r is not None]
    if not reached:
        return len(gaps), 0, None, None
    final = _read(record, vocabulary)
    laundered = final is None or not final.readable or final.completeness != "incomplete"
    return len(gaps), len(reached), sum(reached) / len(reached), laundered


_SCHEMA = pl.Schema(
    {"family": pl.String(), "task_id": pl.String(), "repeat": pl.Int64(), **HANDOFF_COLUMNS}
)


def with_handoffs(
    scores: pl.DataFrame,
    records: Sequence[ResponseRecord],
    vocab: Mapping[str, Vocabulary],
    tasks: pl.DataFrame,
) -> pl.DataFrame:
    """`scores` (one run's per-task scores) with HANDOFF_COLUMNS added from its records'
    traces (null for a task without a record or a trace), repeat by repeat. `tasks`: the
    task frame (`task_frame`), whose oracle says what each task's user's view misses."""
    missing: dict[tuple[str, str], frozenset[str] | None] = {
        (family, task): None if completeness == "complete" else frozenset(requirements or ())
        for family, task, completeness, requirements in tasks.select(
            *KEY, "completeness", "exp_requirements"
        ).iter_rows()
    }
    rows = [
        (r.family, r.task_id, r.repeat,
         *handoff_scores(r, vocab[r.family], missing.get((r.family, r.task_id))))
        for r in records
        if r.trace and r.family in vocab
    ]  # fmt: skip
    frame = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    return scores.join(frame, on=[*KEY, "repeat"], how="left")
