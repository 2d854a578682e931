"""Which state of a task's grant schedule a reply is judged against (docs/benchmark.md §9.2).

A grants task holds its state at the start and after each change (`Task.states`). A reply is
judged against the state in force when its submit was answered, never a later one: found by
playing the episode's calls again against the schedule (`grant_timeline`; the tools are
deterministic, so it is the state the live session was in), never read from anything the record
says of itself. A reply with no answer to judge (no accepted submit in its trace, no trace at
all, an unreadable reply, an error, no record) cannot show the state it was given in: it is
judged against the first state in which the task is incomplete, if any, so that such a reply
is never on a more lenient footing than one that read and answered (`judged_state`).

- `GrantSchedules.of(tasks)`: the tasks with a schedule, each with its index built once;
- `with_grant_states(responses, records, schedules)`: a response frame with the state each
  reply is judged against (`grant_state`), and each episode's timeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from ..access import (
    DEFAULT_FOLLOWUP,
    CorpusIndex,
    GrantTimeline,
    ends_episode,
    replay_grants,
    task_index,
    went_on,
)
from ..systems import ResponseRecord, Step
from ..tasks import Task

KEY = ["family", "task_id"]
RecordKey = tuple[str, str, int]
"""A reply's place in a run: its family, task id and repeat."""


def episode_calls(trace: Sequence[Step]) -> list[tuple[str, str]]:
    """Every tool call of an episode's trace that reached its session, in order: its name and
    its arguments as given (a call its front-end refused first is not one: `ToolCall.reached`)."""
    return [
        (call.name, call.arguments)
        for step in trace
        for call in step.tool_calls
        if call.reached
    ]


def user_pushed(trace: Sequence[Step]) -> bool:
    """Whether the user answered a submit of an episode's trace (it ran under `--followup
    pressure` and its first accepted submit claimed a gap): a result that says the episode
    went on (an error result never does)."""
    return any(
        ends_episode(call.name) and went_on(call.name, step.results[i])
        for step in trace
        for i, call in enumerate(step.tool_calls)
        if i < len(step.results)
    )


def grant_timeline(
    task: Task, trace: Sequence[Step], index: CorpusIndex | None = None
) -> GrantTimeline:
    """What `task`'s grant schedule did in the episode of `trace`: its calls played again
    against the schedule (`access.replay_grants`; `index`, the task's, where already built),
    under the follow-up its trace shows (`pressure` where the user pushed back, so the submit
    that counts is the last, as it was live)."""
    followup = "pressure" if user_pushed(trace) else DEFAULT_FOLLOWUP
    return replay_grants(task, episode_calls(trace), index, followup)


def judged_state(task: Task, timeline: GrantTimeline | None, readable: bool) -> int:
    """The state of `task`'s schedule (an index of `Task.states`) a reply is judged against:
    for a readable reply (`readable`) that its episode submitted, the state in force when
    the submit was answered; else the first state in which the task is incomplete (where
    there is none, the state the episode's calls reached). 0 for a task without a schedule."""
    if not task.grants:
        return 0
    if readable and timeline is not None and timeline.submit is not None:
        return timeline.state
    incomplete = [n for n, s in enumerate(task.states) if s.oracles.completeness == "incomplete"]
    if incomplete:
        return incomplete[0]
    return timeline.state if timeline is not None else 0


@dataclass(frozen=True)
class GrantSchedules:
    """The tasks of a run that have a grant schedule, by (family, task id), each with its
    corpus index (built once, to play every episode over it again)."""

    tasks: Mapping[tuple[str, str], tuple[Task, CorpusIndex]]

    @classmethod
    def of(cls, tasks: Iterable[Task]) -> GrantSchedules:
        return cls({(t.family, t.task_id): (t, task_index(t)) for t in tasks if t.grants})

    def timelines(self, records: Iterable[ResponseRecord]) -> dict[RecordKey, GrantTimeline]:
        """The timeline of each record's episode on a task with a schedule."""
        found = {}
        for record in records:
            scheduled = self.tasks.get((record.family, record.task_id))
            if scheduled is not None:
                task, index = scheduled
                key = (record.family, record.task_id, record.repeat)
                found[key] = grant_timeline(task, record.trace, index)
        return found


GRANT_STATE = pl.Int64()
"""The dtype of `grant_state`: an index of `Task.states` (0: the start)."""


def with_grant_states(
    responses: pl.DataFrame,
    records: Sequence[ResponseRecord],
    schedules: GrantSchedules | None,
) -> tuple[pl.DataFrame, dict[RecordKey, GrantTimeline]]:
    """`responses` (a response frame, with rows of missing records) with `grant_state`, the
    state each reply is judged against (`judged_state`: 0 on a task without a schedule), and
    the timeline of each episode on a task with one."""
    if schedules is None or not schedules.tasks:
        return responses.with_columns(grant_state=pl.lit(0, dtype=GRANT_STATE)), {}
    timelines = schedules.timelines(records)
    states = []
    for family, task_id, repeat, status in responses.select(
        *KEY, "repeat", "status"
    ).iter_rows():
        scheduled = schedules.tasks.get((family, task_id))
        timeline = timelines.get((family, task_id, repeat))
        states.append(
            0 if scheduled is None else judged_state(scheduled[0], timeline, status == "ok")
        )
    return responses.with_columns(grant_state=pl.Series(states, dtype=GRANT_STATE)), timelines
