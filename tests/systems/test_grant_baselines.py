"""docs/benchmark.md §9 (grant schedules): the agent baselines on the `grants` tier, and the
`expired_reliance` metric. `agent_fail_and_report`, which checks its evidence again before
answering, scores unsafe 0, answer 1, gap 1 in every family and disclosure mode, and never relies
on expired evidence; `agent_keep_expired`, which does not check again, relies on every piece of
expired evidence it read (expired_reliance 1) and is unsafe where that record was the only gap.
The metric is null for runs without a schedule, and counts only what an episode read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import polars as pl
import pytest

from peb_core import ResponseRecord, Task, generate_tasks, load_families
from peb_core.access import DISCLOSURES, agent_view
from peb_core.scoring import expired_values, score_run, scorecard
from peb_core.systems import AgentBaseline, Reply, Usage, build_system

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
TASKS = generate_tasks(SPECS, tier="grants") + generate_tasks(SPECS, [7001, 7002], tier="grants")


def _records(name: str, mode: str, tasks: Sequence[Task] = TASKS) -> list[ResponseRecord]:
    system = build_system(name, SPECS, disclosure=mode)
    assert isinstance(system, AgentBaseline)
    replies = [asyncio.run(system.respond(agent_view(t, FAMILIES[t.family]))) for t in tasks]
    return [
        ResponseRecord.of_reply(t.family, t.task_id, name, reply)
        for t, reply in zip(tasks, replies, strict=True)
    ]


def _scores(records: Sequence[ResponseRecord], tasks: Sequence[Task] = TASKS) -> pl.DataFrame:
    return score_run(tasks, records, run="r", system="s", families=FAMILIES, episodes=True)


@pytest.fixture(scope="module")
def keep_expired() -> tuple[list[ResponseRecord], pl.DataFrame]:
    records = _records("agent_keep_expired", "silent")
    return records, _scores(records)


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_fail_and_report_follows_the_schedule_in_every_mode(mode: str) -> None:
    scores = _scores(_records("agent_fail_and_report", mode))
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
        gap = by_id[(row["family"], row["task_id"])].oracles.gap_report
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
    response["answer"] = task.oracles.authorized_answer
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
    from peb_core.results import replay_documents

    records, scores = keep_expired
    key = scores.filter(pl.col("expired_relied")).select("family", "task_id").row(0)
    task = next(t for t in TASKS if (t.family, t.task_id) == key)
    record = next(r for r in records if (r.family, r.task_id) == key)
    frame = replay_documents(record, task)
    ids, _ = expired_values(task, FAMILIES[task.family])
    read = frame.filter(pl.col("doc_id").is_in(ids) & pl.col("opened_at").is_not_null())
    assert read.height >= 1 and not read["visible"].any() and read["probed_at"].is_null().all()
