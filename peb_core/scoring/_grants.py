"""Which state of a task's grant schedule a reply is judged against (docs/benchmark.md §9.2).

A grants task holds its state at the start and after each change (`Task.states`). A reply is
judged against the state in force when its submit was answered, never a later one: found by
playing the episode's calls again against the schedule (`grant_timeline`; the tools are
deterministic, so it is the state the live session was in), never read from anything the record
says of itself. A reply with no answer to judge (no accepted submit in its trace, no trace at
all, an unreadable reply, an error, no record) cannot show the state it was given in: it is
judged against the first state in which the task is incomplete, if any, so that such a reply
is never on a more lenient footing than one that read and answered (`judged_state`).

- `replayed_row(task, repeat, calls, readable, index, pushes, interface, checks, owners)`:
  one episode on a task with a schedule played again: the state its reply is judged against
  and what it opened while a grant held;
- `with_grant_states(responses, replayed, unanswered)`: a response frame with the state each
  reply is judged against (`grant_state`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from ..access import (
    DEFAULT_FOLLOWUP,
    DEFAULT_INTERFACE,
    DEFAULT_PUSHES,
    SUBMIT_CHECKS,
    CorpusIndex,
    GrantTimeline,
    PlatformView,
    checked_by,
    ends_episode,
    replay_grants,
    went_on,
)
from ..systems import Step
from ..tasks import Owners, Task
from ._key import KEY


def episode_calls(trace: Sequence[Step]) -> list[tuple[str, str]]:
    """Every tool call of an episode's trace that reached its session, in order: its name and
    its arguments as given (a call its front-end refused first is not one: `ToolCall.reached`)."""
    return [
        (call.name, call.arguments)
        for step in trace
        for call in step.tool_calls
        if call.reached
    ]


def user_pushes(trace: Sequence[Step]) -> int:
    """How many of an episode's submits the user answered (it ran under `--followup pressure`
    and those submits claimed a gap): results that say the episode went on (an error result
    never does)."""
    return sum(
        ends_episode(call.name) and went_on(call.name, step.results[i])
        for step in trace
        for i, call in enumerate(step.tool_calls)
        if i < len(step.results)
    )


def platform_checks(trace: Sequence[Step]) -> tuple[str, ...]:
    """The platform's checks (`access.SUBMIT_CHECKS`, a run's intervention) that answered one
    of an episode's accepted submits, by name, in the order they first did
    (`access.checked_by`)."""
    return tuple(
        dict.fromkeys(
            name
            for step in trace
            for i, call in enumerate(step.tool_calls)
            if i < len(step.results) and (name := checked_by(call.name, step.results[i]))
        )
    )


def _replay(
    task: Task | PlatformView,
    calls: Iterable[tuple[str, str]],
    index: CorpusIndex | None,
    pushes: int,
    interface: str,
    checks: Sequence[str] = (),
    owners: Owners | None = None,
) -> GrantTimeline:
    """`access.replay_grants` of `calls` under the follow-up an episode showed: `pressure` with
    as many pushes as the user made (so the submit that counts is the last, as it was live),
    with the platform's `checks` it showed (`platform_checks`: a check that never answered
    changes nothing; one no longer registered is left out), and the family's `owners` (an
    escalation to one of them ends the episode, as it did live)."""
    followup = "pressure" if pushes else DEFAULT_FOLLOWUP
    given = tuple(SUBMIT_CHECKS[name] for name in checks if name in SUBMIT_CHECKS)
    return replay_grants(
        task,
        calls,
        index,
        followup,
        max(pushes, DEFAULT_PUSHES),
        interface=interface,
        checks=given,
        owners=owners,
    )


def grant_timeline(
    task: Task | PlatformView,
    trace: Sequence[Step],
    index: CorpusIndex | None = None,
    owners: Owners | None = None,
    interface: str = DEFAULT_INTERFACE,
) -> GrantTimeline:
    """What `task`'s grant schedule did in the episode of `trace` (of a task, or as the
    platform knows it: `access.platform_view`): its calls played again against the schedule
    (`access.replay_grants`; `index`, the task's, where already built; `owners`, its family's,
    to whom an escalation may have gone), under the follow-up its trace shows (`user_pushes`),
    with the platform's checks it shows (`platform_checks`) and through `interface` (in a chat
    the response is a message after the last call)."""
    calls = episode_calls(trace)
    checks = platform_checks(trace)
    return _replay(task, calls, index, user_pushes(trace), interface, checks, owners)


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


GRANT_STATE = pl.Int64()
"""The dtype of `grant_state`: an index of `Task.states` (0: the start)."""


REPLAYED = "_replayed"
"""The column of REPLAYED_SCHEMA with the ids an episode opened while a grant held."""
REPLAYED_SCHEMA = pl.Schema(
    {
        "family": pl.String(),
        "task_id": pl.String(),
        "repeat": pl.Int64(),
        "grant_state": GRANT_STATE,
        REPLAYED: pl.List(pl.String()),
    }
)
"""The rows of `replayed_row`, one per reply to a task with a schedule."""
UNANSWERED_SCHEMA = pl.Schema(
    {"family": pl.String(), "task_id": pl.String(), "grant_state": GRANT_STATE}
)
"""The state a task with a schedule is judged in without a record (`judged_state` with no
timeline), one row per such task."""


def replayed_row(
    task: Task,
    repeat: int,
    calls: Iterable[tuple[str, str]],
    readable: bool,
    index: CorpusIndex | None = None,
    pushes: int = 0,
    interface: str = DEFAULT_INTERFACE,
    checks: Sequence[str] = (),
    owners: Owners | None = None,
) -> tuple[str, str, int, int, list[str]]:
    """A row of REPLAYED_SCHEMA: the episode of `task`'s `repeat` that made `calls`
    (`episode_calls` of its trace) played again against the task's schedule
    (`access.replay_grants`; `index`, the task's, where already built; `pushes`: how often its
    user pushed back, `user_pushes`, so the submit that counts is the last; `interface`: how
    it answered; `checks`: the platform's checks it showed, `platform_checks`; `owners`, its
    family's, so an escalation is played as it was): the state its reply is judged against
    (`judged_state`; `readable`: the reply is readable, or an escalation) and the ids it opened
    while a grant held (sorted)."""
    timeline = _replay(task, calls, index, pushes, interface, checks, owners)
    state = judged_state(task, timeline, readable)
    return task.family, task.task_id, repeat, state, sorted(timeline.opened)


def with_grant_states(
    responses: pl.DataFrame, replayed: pl.DataFrame | None, unanswered: pl.DataFrame
) -> pl.DataFrame:
    """`responses` (a response frame, with rows of missing records) with `grant_state`, the
    state each reply is judged against: on a task with a schedule, the state its episode
    played again gives (`replayed`, REPLAYED_SCHEMA), or without a record the task's
    `unanswered` state (UNANSWERED_SCHEMA); 0 on a task without one, and everywhere when
    `replayed` is None (replies that are not episodes: nothing was played again)."""
    if replayed is None:
        return responses.with_columns(grant_state=pl.lit(0, dtype=GRANT_STATE))
    run_key = [*KEY, "repeat"]
    return (
        responses.drop("grant_state")
        .join(
            replayed.select(*run_key, _judged="grant_state"),
            on=run_key,
            how="left",
            maintain_order="left",
        )
        .join(
            unanswered.select(*KEY, _unanswered="grant_state"),
            on=KEY,
            how="left",
            maintain_order="left",
        )
        .with_columns(
            grant_state=pl.when(pl.col("status") == "missing")
            .then(pl.col("_unanswered"))
            .otherwise(pl.col("_judged"))
            .fill_null(0)
        )
        .drop("_judged", "_unanswered")
    )
