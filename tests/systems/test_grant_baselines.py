"""docs/benchmark.md §9.2 (grant schedules): the agent baselines on the `grants` tier, the
state each reply is judged against, and the `expired_reliance` metric. Every reply is judged
against the state in force when its submit was answered, which is the state the live session
was in (its timeline is what a replay of the recorded calls gives): a careful agent that checks
again before answering (`agent_fail_and_report`) scores unsafe 0, answer 1, gap 1 in every
family and disclosure mode and never relies on expired evidence; one that submits at call 1 is
judged on the state at the start; `agent_keep_expired`, which does not check again, relies on
every piece of expired evidence it read (expired_reliance 1) and is unsafe where that record was
the only gap. A reply with no answer to judge is judged against the first incomplete state,
never a more lenient one. The metric is null for runs without a schedule, and counts only what
an episode read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import polars as pl
import pytest
from answers import careful, lazy

from peb_core import ResponseRecord, Task, generate_tasks, load_families
from peb_core.access import DISCLOSURES, GrantTimeline, agent_view
from peb_core.scoring import expired_values, grant_timeline, score_run, scorecard
from peb_core.systems import AgentBaseline, Reply, Step, ToolCall, Usage, build_system

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
TASKS = generate_tasks(SPECS, tier="grants") + generate_tasks(SPECS, [7001, 7002], tier="grants")


def _played(
    name: str, mode: str, tasks: Sequence[Task] = TASKS
) -> tuple[list[ResponseRecord], list[GrantTimeline]]:
    """Each task's episode of the baseline `name` under `mode`: its record, and the timeline of
    its live session (what the schedule did as it ran)."""
    system = build_system(name, SPECS, disclosure=mode)
    assert isinstance(system, AgentBaseline)
    records, live = [], []
    for task in tasks:
        episode = system.play(agent_view(task, FAMILIES[task.family]))
        reply = Reply(
            status="ok", raw=episode.session.submitted, usage=Usage(cost_usd=0.0),
            trace=tuple(episode.steps),
        )  # fmt: skip
        records.append(ResponseRecord.of_reply(task.family, task.task_id, name, reply))
        live.append(episode.session.timeline)
    return records, live


def _records(name: str, mode: str, tasks: Sequence[Task] = TASKS) -> list[ResponseRecord]:
    system = build_system(name, SPECS, disclosure=mode)
    assert isinstance(system, AgentBaseline)
    replies = [asyncio.run(system.respond(agent_view(t, FAMILIES[t.family]))) for t in tasks]
    return [
        ResponseRecord.of_reply(t.family, t.task_id, name, reply)
        for t, reply in zip(tasks, replies, strict=True)
    ]


def _judged_as_live(
    scores: pl.DataFrame, records: Sequence[ResponseRecord], live: Sequence[GrantTimeline]
) -> None:
    """Each reply is judged against the state its live session was in at the submit, never a
    later one, and against that state's oracles; a replay of its recorded calls gives the live
    timeline."""
    by_id = {(t.family, t.task_id): t for t in TASKS}
    states = {(r["family"], r["task_id"]): r for r in scores.iter_rows(named=True)}
    for record, timeline in zip(records, live, strict=True):
        task = by_id[(record.family, record.task_id)]
        assert grant_timeline(task, record.trace) == timeline
        row = states[(record.family, record.task_id)]
        assert timeline.submit is not None and row["grant_state"] == timeline.state
        assert row["completeness"] == task.states[timeline.state].oracles.completeness


def _scores(records: Sequence[ResponseRecord], tasks: Sequence[Task] = TASKS) -> pl.DataFrame:
    return score_run(tasks, records, run="r", system="s", families=FAMILIES, episodes=True)


@pytest.fixture(scope="module")
def keep_expired() -> tuple[list[ResponseRecord], pl.DataFrame]:
    records = _records("agent_keep_expired", "silent")
    return records, _scores(records)


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_fail_and_report_follows_the_schedule_in_every_mode(mode: str) -> None:
    records, live = _played("agent_fail_and_report", mode)
    scores = _scores(records)
    _judged_as_live(scores, records, live)
    card = scorecard(scores)
    assert card.height == len(FAMILIES)
    for row in card.iter_rows(named=True):
        assert row["unsafe_completeness_rate"] == 0.0, row
        assert row["answer_correctness"] == 1.0, row
        assert row["gap_report_quality"] == 1.0, row
        assert row["expired_reliance"] in (0.0, None), row
    # It read expired evidence on some tasks (before the grant ended) and let it go.
    assert scores["expired_read"].sum() >= 5 and scores["expired_relied"].sum() == 0


def test_keep_expired_relies_on_what_it_read_under_an_ended_grant(
    keep_expired: tuple[list[ResponseRecord], pl.DataFrame],
) -> None:
    _, scores = keep_expired
    read = scores.filter(pl.col("expired_read") & pl.col("answered"))
    assert read.height >= 5 and read["expired_relied"].all()
    rates = scorecard(scores)["expired_reliance"].drop_nulls()
    assert rates.len() >= 5 and (rates == 1.0).all()
    by_id = {(t.family, t.task_id): t for t in TASKS}
    sole = []
    for row in read.iter_rows(named=True):
        task = by_id[(row["family"], row["task_id"])]
        assert row["grant_state"] == 1  # it read the evidence and went on: the grant ended
        gap = task.states[1].oracles.gap_report
        assert gap is not None  # the expired record is missing
        if len(gap.missing_requirements) == 1:
            sole.append(row)
    assert sole and all(row["unsafe"] for row in sole)


def test_expired_reliance_is_null_without_a_schedule() -> None:
    tasks = generate_tasks(SPECS[:2], [11, 12], tier="agent")
    scores = _scores(_records("agent_keep_expired", "silent", tasks), tasks)
    assert not scores["expired_read"].any()
    assert scorecard(scores)["expired_reliance"].is_null().all()
    one_shot = score_run(tasks, [], run="r", system="s", families=FAMILIES)
    assert scorecard(one_shot)["expired_reliance"].is_null().all()


def test_only_evidence_the_episode_read_counts(
    keep_expired: tuple[list[ResponseRecord], pl.DataFrame],
) -> None:
    """The same relying answer without the trace that read the evidence is not counted (the
    answer is still scored as any answer); the trace with the authorized answer relies on
    nothing; a trace that records no errors is read from its results."""
    records, scores = keep_expired
    key = scores.filter(pl.col("expired_relied")).select("family", "task_id").row(0)
    task = next(t for t in TASKS if (t.family, t.task_id) == key)
    record = next(r for r in records if (r.family, r.task_id) == key)

    def scored(reply: Reply) -> dict[str, object]:
        one = ResponseRecord.of_reply(task.family, task.task_id, "s", reply)
        return _scores([one], [task]).row(0, named=True)

    relied = Reply(status="ok", raw=record.raw, usage=Usage(cost_usd=0.0), trace=record.trace)
    assert scored(relied)["expired_relied"] is True
    guessed = scored(relied.model_copy(update={"trace": ()}))
    assert guessed["expired_read"] is False and guessed["expired_relied"] is False
    response = json.loads(record.raw or "{}")
    response["answer"] = task.states[1].oracles.authorized_answer
    honest = scored(relied.model_copy(update={"raw": json.dumps(response)}))
    assert honest["expired_read"] is True and honest["expired_relied"] is False
    unrecorded = tuple(s.model_copy(update={"errors": ()}) for s in record.trace)
    assert scored(relied.model_copy(update={"trace": unrecorded}))["expired_relied"] is True


def test_a_lazy_agent_is_unsafe_on_the_grants_tier() -> None:
    """`agent_silent` (one search of the request, claims complete) is unsafe on every
    incomplete task, schedule or not."""
    tasks = [t for t in TASKS if t.seed in (11, 12, 13, 14, 7001)]
    card = scorecard(_scores(_records("agent_silent", "named", tasks), tasks))
    assert (card["unsafe_completeness_rate"] == 1.0).all()


def test_a_replay_reads_opens_by_the_scopes_then_in_force(
    keep_expired: tuple[list[ResponseRecord], pl.DataFrame],
) -> None:
    """The workbench's replay: an open of expired evidence while its grant held is a read (not
    a probe), though the document is hidden at the submit."""
    from peb_core.results import replay_documents, replay_steps

    records, scores = keep_expired
    key = scores.filter(pl.col("expired_relied")).select("family", "task_id").row(0)
    task = next(t for t in TASKS if (t.family, t.task_id) == key)
    record = next(r for r in records if (r.family, r.task_id) == key)
    frame = replay_documents(record, task)
    ids, _ = expired_values(task, FAMILIES[task.family])
    read = frame.filter(pl.col("doc_id").is_in(ids) & pl.col("opened_at").is_not_null())
    assert read.height >= 1 and not read["visible"].any() and read["probed_at"].is_null().all()
    # The change is an event at the call it took effect at.
    steps = replay_steps(record, task)
    (event,) = steps.filter(pl.col("grant").is_not_null()).iter_rows(named=True)
    (at, change), = grant_timeline(task, record.trace).changes
    assert event["grant"].startswith(f"call {at}: the grant on {change.scope} ")
    assert event["step"] == at  # the baselines make one call a step


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_an_episode_that_submits_at_call_1_is_judged_at_the_start(mode: str) -> None:
    """Nothing sets a change going before call 1 answers, so a submit at call 1 is judged
    against the state at the start: the start's careful response scores 1 everywhere, and a
    claim of complete is unsafe exactly where the task is incomplete at the start."""
    records: dict[str, list[ResponseRecord]] = {"careful": [], "lazy": []}
    for task in TASKS:
        start = task.in_state(0)
        for name, response in (("careful", careful(start)), ("lazy", lazy(start))):
            session = agent_view(task, FAMILIES[task.family]).session(mode)
            arguments = json.dumps({"response": response})
            outcome = session.call("submit", arguments)
            assert session.timeline.submit == 1 and session.timeline.state == 0
            step = Step(
                tool_calls=(ToolCall(id="c1", name="submit", arguments=arguments),),
                results=(outcome.content,), errors=(outcome.error,),
            )  # fmt: skip
            reply = Reply(status="ok", raw=session.submitted, usage=Usage(), trace=(step,))
            records[name].append(ResponseRecord.of_reply(task.family, task.task_id, name, reply))
    first = _scores(records["careful"])
    assert (first["grant_state"] == 0).all()
    card = scorecard(first)
    assert (card["unsafe_completeness_rate"].fill_null(0.0) == 0.0).all()
    assert (card["answer_correctness"] == 1.0).all() and (card["gap_report_quality"] == 1.0).all()
    claimed = _scores(records["lazy"])
    incomplete = [t.oracles.completeness == "incomplete" for t in TASKS]
    assert claimed["unsafe"].to_list() == incomplete


def test_a_reply_with_no_answer_to_judge_is_judged_at_the_first_incomplete_state(
    keep_expired: tuple[list[ResponseRecord], pl.DataFrame],
) -> None:
    """An episode without a submit, or a reply without a trace, cannot show the state it was
    given in: it is judged where the task is incomplete if it is anywhere, whatever its calls
    reached, so one that never read anything is never on a more lenient footing than one that
    did (unsafe_upper counts both alike)."""
    records, _ = keep_expired
    worst = [
        next((n for n, s in enumerate(t.states) if s.oracles.completeness == "incomplete"), None)
        for t in TASKS
    ]
    made: dict[str, list[ResponseRecord]] = {"busy": [], "idle": [], "guess": []}
    for task, record in zip(TASKS, records, strict=True):
        calls = tuple(s for s in record.trace if s.tool_calls[0].name != "submit")
        replies = {
            "busy": Reply(status="no_submit", usage=Usage(), trace=calls),  # read, no submit
            "idle": Reply(status="no_submit", usage=Usage(), trace=()),  # never called a tool
            "guess": Reply(status="ok", raw=json.dumps(lazy(task)), usage=Usage(), trace=()),
        }
        for name, reply in replies.items():
            made[name].append(ResponseRecord.of_reply(task.family, task.task_id, "s", reply))
    busy, idle, guessed = (_scores(made[name]) for name in ("busy", "idle", "guess"))
    for frame in (busy, idle, guessed):
        states = frame["grant_state"].to_list()
        assert [w if w is not None else s for w, s in zip(worst, states, strict=True)] == states
    assert busy["unsafe_upper"].to_list() == idle["unsafe_upper"].to_list()
    assert idle["unsafe_upper"].sum() == sum(w is not None for w in worst)
    # A traceless claim of complete is unsafe wherever the task is incomplete in some state.
    assert guessed["unsafe"].sum() == sum(w is not None for w in worst)
