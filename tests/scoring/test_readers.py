"""docs/benchmark.md §1, §3 and §7, judged by the scorer: two readers that read every fact of
the view perfectly and report exactly the oracle gap. The careful one answers from the current
authorized documents and scores answer 1 on every task of the paper and hard tiers, canonical
and fresh; one that also relies on out-of-date copies scores below 1 on the hard tasks that
hold one. The structural baselines, whose system view holds current evidence only, stay at
unsafe 0, answer 1 and gap 1 on the same tasks.

The readers are built from the tasks' facts (never from an oracle answer): they compute the
answer with `answers.implied_answer`, written independently of the generator's fold."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest
from answers import implied_answer

from peb_core import Reply, Response, ResponseRecord, Task, load_families, score_run
from peb_core.systems import BASELINES
from peb_core.tasks import Document, generate_tasks, view_for

FAMILIES = load_families()
FRESH = range(500, 550)
"""Fresh seeds: with six templates, 300 fresh tasks a family, beside the 24 canonical ones."""

Reader = Callable[[Task], Response]


@pytest.fixture(scope="module", params=["paper", "hard"])
def tasks(request: pytest.FixtureRequest) -> list[Task]:
    specs = list(FAMILIES.values())
    tier = request.param
    return [*generate_tasks(specs, tier=tier), *generate_tasks(specs, seeds=FRESH, tier=tier)]


def _reply(task: Task, documents: list[Document]) -> Response:
    """The answer the facts of `documents` imply, and exactly the oracle's gap report."""
    answer = implied_answer(FAMILIES[task.family], (f for d in documents for f in d.facts))
    gap = task.oracles.gap_report
    if gap is None:
        return Response(answer=answer, completeness="complete", gap_report=None)
    partial = task.contract.partial_response_permitted
    return Response(answer=answer if partial else None, completeness="incomplete", gap_report=gap)


def careful(task: Task) -> Response:
    """Answers from the current authorized documents: an out-of-date copy is no evidence."""
    return _reply(task, [d for d in task.authorized_documents if not d.superseded])


def stale_reliant(task: Task) -> Response:
    """Answers from every authorized document, out-of-date copies included."""
    return _reply(task, list(task.authorized_documents))


def _scores(tasks: list[Task], name: str, respond: Callable[[Task], Response]) -> pl.DataFrame:
    records = [
        ResponseRecord.of_reply(t.family, t.task_id, name, Reply.of(respond(t))) for t in tasks
    ]
    return score_run(tasks, records, run=name, system=name, families=FAMILIES)


def _holds_stale_copy(task: Task) -> bool:
    return any(d.superseded for d in task.authorized_documents)


def test_a_careful_reader_scores_1_on_every_task(tasks: list[Task]) -> None:
    scores = _scores(tasks, "careful", careful)
    assert scores.height == len(tasks) == 7 * 6 * (4 + len(FRESH))
    wrong = scores.filter(
        (pl.col("answer_score") != 1.0) | (pl.col("gap_score") != 1.0) | pl.col("unsafe")
    )
    assert wrong.select("task_id", "answer_score", "gap_score").to_dicts() == []


def test_relying_on_out_of_date_copies_scores_below_1(tasks: list[Task]) -> None:
    """Where the out-of-date copies' facts change what the current evidence implies, and a
    partial answer is permitted, the stale-reliant reader loses answer score; elsewhere it is
    the careful reader. On the hard tier that is a good share of the tasks holding such a copy,
    in every family, and pulls its mean answer on them below 1."""
    scores = _scores(tasks, "stale", stale_reliant)
    by_id = {(t.family, t.task_id): t for t in tasks}
    below = {
        (row["family"], row["task_id"])
        for row in scores.filter(pl.col("answer_score") < 1.0).iter_rows(named=True)
    }
    expected = {
        key
        for key, t in by_id.items()
        if t.contract.partial_response_permitted and stale_reliant(t).answer != careful(t).answer
    }
    assert below == expected
    stale = [t for t in tasks if _holds_stale_copy(t)]
    if tasks[0].tier == "paper":
        assert stale == [] and below == set()
        return
    for family in FAMILIES:
        held = [t for t in stale if t.family == family]
        partial = [t for t in held if t.contract.partial_response_permitted]
        lost = [t for t in partial if (t.family, t.task_id) in below]
        assert len(held) >= 100 and len(lost) >= len(partial) / 3, (family, len(lost))
        mean = scores.filter(
            pl.col("task_id").is_in([t.task_id for t in held]) & (pl.col("family") == family)
        )["answer_score"].mean()
        assert isinstance(mean, float) and mean < 0.95, (family, mean)


@pytest.mark.parametrize("name", ["fail_and_report", "oracle"])
def test_structural_baselines_stay_at_0_1_1(tasks: list[Task], name: str) -> None:
    baseline = BASELINES[name]

    def respond(task: Task) -> Response:
        return baseline.policy(view_for(baseline.view, task, FAMILIES[task.family]))

    scores = _scores(tasks, name, respond)
    assert scores["unsafe"].sum() == 0
    assert scores["answer_score"].min() == 1.0 and scores["gap_score"].min() == 1.0
