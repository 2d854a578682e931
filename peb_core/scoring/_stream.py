"""Scoring as a stream (docs/benchmark.md §3): a run is scored without holding its tasks or its
records, in three steps.

1. `read_replies(records, ...)`: a run's records read one at a time (as `runs.iter_run_records`
   gives them), each kept only as the rows scoring needs (`Replies`): its response and answer
   rows (`_frames.ResponseRows`); for an episode, its trace row (`_trace.trace_row`), its
   handoffs' reading (`_handoffs.handoff_reading`) and its follow-up row
   (`_followup.followup_row`); and, to be played again against a grant
   schedule, the calls that reached its session (`_grants.episode_calls`), kept compressed.
2. `judge(tasks, runs, families)`: the tasks, taken TASK_CHUNK at a time from a stream (a
   generator, say), turned into the frames they are judged by (`TaskFrames`), and each episode
   of `runs` on a task with a grant schedule played again while its task is in hand
   (`_grants.replayed_row`): the state its reply is judged against and what it opened while a
   grant held.
3. `score_replies(frames, replies, replayed)`: one run's per-task scores from both, in polars.

`score_runs` is the three in turn for runs over the same tasks (one stream of tasks for all);
`score_run` for one run. What is held at once: per record a few rows and its calls'
arguments; per task its frames' rows; TASK_CHUNK tasks.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from itertools import islice

import polars as pl

from .._gc import gc_paused
from ..access import DEFAULT_INTERFACE, task_index
from ..systems import ResponseRecord
from ..tasks import ScenarioFile, Task, owners_of
from ._followup import FollowupRow, followup_row, with_followup
from ._frames import (
    RESPONSE_SCHEMA,
    Asks,
    ResponseRows,
    expected_answers,
    score_frames,
    task_frame,
    vocabularies,
    with_repeats,
)
from ._grants import (
    REPLAYED_SCHEMA,
    UNANSWERED_SCHEMA,
    episode_calls,
    judged_state,
    platform_checks,
    replayed_row,
    user_pushes,
    with_grant_states,
)
from ._handoffs import HandoffReading, handoff_reading, with_handoffs
from ._key import KEY
from ._prose import ProseRow, prose_row, with_prose
from ._trace import TRACE_SCHEMA, TraceRow, episode_frame, trace_row, with_episodes

TASK_CHUNK = 64
"""Tasks turned into frames at a time by `judge` (a task of a 500-document corpus holds about
0.7 MB; its frames' rows a few KB)."""


def _packed(calls: list[tuple[str, str]]) -> bytes | None:
    """An episode's calls as kept until its task is judged: JSON, compressed (an agent's calls
    repeat their tool names and arguments: about a fifth of the size); None for none."""
    return zlib.compress(json.dumps(calls).encode()) if calls else None


def _unpacked(packed: bytes | None) -> list[tuple[str, str]]:
    return [] if packed is None else [(n, a) for n, a in json.loads(zlib.decompress(packed))]


@dataclass(frozen=True)
class RunReading:
    """How a run's replies are read (`Replies`; `results.run_reading` makes it from a run
    folder's manifest).

    Args:
        run: the run's name, as the per-task scores name it.
        system: the run's system.
        episodes: an agent's run: each record's trace is scored (`_trace.episode_columns`).
        replays: each reply to a task with a grant schedule is judged against the state in
            force at its submit, found by playing its episode's calls again (`_grants`).
        repeats: the replies each task is due (`peb run --repeats`).
        protocol: the run's prompt protocol (its config's; None: none), whose response parts
            are read and whose handoffs to a human are scored (`_frames.Asks`).
        interface: how the run's system answered (`--interface`): under `chat` a reply in
            prose is read as prose.
        seen: whether the run's records hold what its agent said to the user (an MCP
            client's do not: the server sees only tool calls), so its messages are scored
            (`_prose`).
    """

    run: str
    system: str
    _: KW_ONLY
    episodes: bool = False
    replays: bool = False
    repeats: int = 1
    protocol: str | None = None
    interface: str = DEFAULT_INTERFACE
    seen: bool = True


class Replies:
    """One run's records read one at a time (`add`) as `reading` says, each kept only as the
    rows scoring needs; `families`: the families scored (a record of any other is left out)."""

    def __init__(self, families: Mapping[str, ScenarioFile], reading: RunReading) -> None:
        self.reading = reading
        asks = Asks.of(reading.protocol, reading.episodes)
        self.vocab = vocabularies(families, asks.parts)
        self.families = families
        self.rows = ResponseRows(self.vocab, asks, prose=reading.interface == "chat")
        self.prose: list[ProseRow] = []
        self.traces: list[TraceRow] = []
        self.handoffs: list[tuple[str, str, int, HandoffReading]] = []
        self.followups: list[FollowupRow] = []
        self.calls: dict[
            tuple[str, str], list[tuple[int, bool, bytes | None, int, tuple[str, ...]]]
        ] = {}
        """Per task, each of its replies' repeat, whether it is readable, its packed calls, how
        often its user pushed back on a submit and the platform's checks that answered one
        (with `replays`)."""

    def add(self, record: ResponseRecord) -> None:
        """Read `record` and keep what scoring needs of it."""
        if record.family not in self.vocab:
            return
        reading = self.reading
        read = self.rows.add(record)
        readable = read is not None
        if reading.episodes:
            self.traces.append(trace_row(record))
        spec = self.families[record.family]
        said = prose_row(record, spec, read, interface=reading.interface, seen=reading.seen)
        if said is not None:
            self.prose.append(said)
        if record.trace:
            handoff = handoff_reading(record, self.vocab[record.family])
            self.handoffs.append((record.family, record.task_id, record.repeat, handoff))
            followup = followup_row(record, self.vocab[record.family], reading.interface)
            self.followups.append(followup)
        if reading.replays:
            calls = _packed(episode_calls(record.trace))
            self.calls.setdefault((record.family, record.task_id), []).append(
                (
                    record.repeat,
                    readable,
                    calls,
                    user_pushes(record.trace),
                    platform_checks(record.trace),
                )
            )


def read_replies(
    records: Iterable[ResponseRecord], families: Mapping[str, ScenarioFile], reading: RunReading
) -> Replies:
    """`records` (a list, or a stream as `runs.iter_run_records` reads them) read one at a time
    into `Replies(families, reading)`; each record is let go once read."""
    replies = Replies(families, reading)
    with gc_paused():
        for record in records:
            replies.add(record)
    return replies


@dataclass(frozen=True)
class TaskFrames:
    """What the replies to a set of tasks are judged against: `tasks` (`task_frame`),
    `expected` (`expected_answers`), for agents' runs `episodes` (`_trace.episode_frame`; None
    when no run judged is an agent's), and `unanswered`, the state each task with a grant
    schedule is judged in without a record (UNANSWERED_SCHEMA)."""

    tasks: pl.DataFrame
    expected: pl.DataFrame
    episodes: pl.DataFrame | None
    unanswered: pl.DataFrame


def judge(
    tasks: Iterable[Task], runs: Sequence[Replies], families: Mapping[str, ScenarioFile]
) -> tuple[TaskFrames, list[pl.DataFrame | None]]:
    """The `TaskFrames` of `tasks` (in their order; the episode frame if any of `runs` is an
    agent's), and for each of `runs` its REPLAYED_SCHEMA frame: each of its replies to a task
    with a grant schedule, played again against the schedule (None for a run without
    `replays`). The tasks are taken TASK_CHUNK at a time from `tasks`, so only that many are
    held at once, however many there are."""
    episodes = any(r.reading.episodes for r in runs)
    parts: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]] = []
    unanswered: list[tuple[str, str, int]] = []
    replayed: list[list[tuple[str, str, int, int, list[str]]]] = [[] for _ in runs]
    stream = iter(tasks)
    while True:
        chunk = list(islice(stream, TASK_CHUNK))
        if parts and not chunk:
            break
        parts.append(
            (
                task_frame(chunk, families),
                expected_answers(chunk),
                episode_frame(chunk, families) if episodes else None,
            )
        )
        for task in chunk:
            if not task.grants:
                continue
            unanswered.append((task.family, task.task_id, judged_state(task, None, False)))
            index = task_index(task)
            spec = families.get(task.family)
            owners = owners_of(spec) if spec is not None and spec.owners is not None else None
            for rows, run in zip(replayed, runs, strict=True):
                for repeat, readable, packed, pushed, checks in run.calls.get(
                    (task.family, task.task_id), ()
                ):
                    calls = _unpacked(packed)
                    rows.append(
                        replayed_row(
                            task,
                            repeat,
                            calls,
                            readable,
                            index,
                            pushed,
                            run.reading.interface,
                            checks,
                            owners,
                        )
                    )
        del chunk  # the tasks go before the next are made
    frames, expected, judged = zip(*parts, strict=True)
    return TaskFrames(
        pl.concat(frames, rechunk=True),
        pl.concat(expected, rechunk=True),
        pl.concat(judged, rechunk=True) if episodes else None,
        pl.DataFrame(unanswered, schema=UNANSWERED_SCHEMA, orient="row"),
    ), [
        pl.DataFrame(rows, schema=REPLAYED_SCHEMA, orient="row") if run.reading.replays else None
        for rows, run in zip(replayed, runs, strict=True)
    ]


def score_replies(
    frames: TaskFrames, replies: Replies, replayed: pl.DataFrame | None
) -> pl.DataFrame:
    """One run's per-task scores, one row per task of `frames` and repeat (its reading's
    `repeats` of each; a (task, repeat) without a record is scored as `missing`, records of
    other tasks are left out), with the trace columns for an agent's run
    (`_trace.episode_columns`, else null), the handoff columns, the follow-up columns
    (`_followup.FOLLOWUP_COLUMNS`) and the repeat columns (`with_repeats`). `replayed`: the
    run's frame from `judge`."""
    run, system = replies.reading.run, replies.reading.system
    responses, answers = replies.rows.frames(run=run, system=system)
    due = (
        frames.tasks.select(KEY)
        .unique(maintain_order=True)
        .join(
            pl.DataFrame({"repeat": range(replies.reading.repeats)}, schema={"repeat": pl.Int64}),
            how="cross",
        )
    )
    recorded = responses.join(due, on=[*KEY, "repeat"], how="semi")
    missing = due.join(
        recorded.select(*KEY, "repeat"), on=[*KEY, "repeat"], how="anti"
    ).with_columns(run=pl.lit(run), system=pl.lit(system), status=pl.lit("missing"))
    asks = replies.rows.asks
    responses = (
        pl.concat([recorded, missing], how="diagonal_relaxed")
        .with_columns(  # a missing record's row too: what the run's protocol asks
            asks_next_step=pl.lit("next_step" in asks.parts),
            asks_confidence=pl.lit("confidence" in asks.parts),
            offers_escalate=pl.lit(asks.escalates),
        )
        .select(list(RESPONSE_SCHEMA))
    )
    responses = with_grant_states(responses, replayed, frames.unanswered)
    scores = score_frames(frames.tasks, frames.expected, responses, answers)
    return with_record_columns(scores, frames, replies, answers, replayed)


def with_record_columns(
    scores: pl.DataFrame,
    frames: TaskFrames,
    replies: Replies,
    answers: pl.DataFrame,
    replayed: pl.DataFrame | None,
) -> pl.DataFrame:
    """`scores` (`score_frames` of the replies `answers` belong to) with what `replies` kept of
    their records besides the replies: the trace columns for an agent's run
    (`_trace.episode_columns`, else null), the handoff columns, the follow-up columns
    (`_followup.FOLLOWUP_COLUMNS`) and the repeat columns (`with_repeats`)."""
    scores = with_episodes(
        scores,
        frames.episodes if replies.reading.episodes else None,
        pl.DataFrame(replies.traces, schema=TRACE_SCHEMA, orient="row"),
        answers,
        replayed if replayed is not None else pl.DataFrame(schema=REPLAYED_SCHEMA),
    )
    scores = with_handoffs(scores, replies.handoffs, frames.tasks)
    scores = with_prose(scores, replies.prose)
    return with_repeats(with_followup(scores, replies.followups))


def score_runs(
    tasks: Iterable[Task], runs: Sequence[Replies], families: Mapping[str, ScenarioFile]
) -> list[pl.DataFrame]:
    """The per-task scores of each of `runs` (`score_replies`), all over `tasks`, which are
    generated once for all of them and judged TASK_CHUNK at a time (`judge`)."""
    frames, replayed = judge(tasks, runs, families)
    return [score_replies(frames, r, p) for r, p in zip(runs, replayed, strict=True)]


def score_run(
    tasks: Iterable[Task],
    records: Iterable[ResponseRecord],
    *,
    run: str,
    system: str,
    families: Mapping[str, ScenarioFile],
    episodes: bool = False,
    repeats: int = 1,
    protocol: str | None = None,
    interface: str = DEFAULT_INTERFACE,
) -> pl.DataFrame:
    """Per-task scores of one run, one row per task and repeat (`repeats` of each). A (task,
    repeat) without a record is scored as `missing`; records for tasks outside `tasks` are
    ignored. With `episodes` (an agent's run) the trace columns (`_trace.episode_columns`) are
    scored too, and each reply is judged against the state of its task's grant schedule in
    force at its submit; else they are null. `protocol`: the run's prompt protocol, whose
    response parts are read (docs/benchmark.md §2.2). `interface`: how the system answered (a
    reply in prose is read as prose under `chat`). Both may be streams: the records are read
    first, then the tasks judged a chunk at a time (`score_runs`)."""
    reading = RunReading(
        run,
        system,
        episodes=episodes,
        replays=episodes,
        repeats=repeats,
        protocol=protocol,
        interface=interface,
    )
    return score_runs(tasks, [read_replies(records, families, reading)], families)[0]
