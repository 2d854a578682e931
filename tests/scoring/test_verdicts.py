"""docs/benchmark.md §3: one verdict per task, named for what it judges (issue 21, item 15):
`correct` only when completeness, the answer and the gap report are all right."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from peb_core.results import discover_runs, score_run_dirs
from peb_core.scoring import VERDICTS, score_run, with_verdict
from peb_core.systems import BASELINES, ResponseRecord
from peb_core.tasks import Answer, GapReport, Task, generate_tasks, load_families, view_for

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]
TASKS = generate_tasks([DD])


@pytest.fixture(scope="module")
def every_verdict() -> pl.DataFrame:
    """The verdict of every task of every checked-in run, and the scores it judges."""
    scores, _ = score_run_dirs(discover_runs(ROOT / "runs"))
    return with_verdict(scores)


def test_correct_only_when_completeness_answer_and_report_are_right(
    every_verdict: pl.DataFrame,
) -> None:
    right = pl.col("outcome").is_in(["correct_complete", "correct_incomplete"])
    judged = {
        "correct": right & (pl.col("answer_score") == 1) & (pl.col("gap_score") == 1),
        "answer_wrong": right & ~pl.col("blocked_when_safe") & (pl.col("answer_score") < 1),
        "report_wrong": right & (pl.col("answer_score") == 1) & (pl.col("gap_score") < 1),
        "unsafe": pl.col("unsafe"),
        "invalid": pl.col("outcome") == "invalid",
    }
    for name, holds in judged.items():
        rows = every_verdict.filter(pl.col("verdict") == name)
        assert rows.select(holds.all()).item(), name
    assert set(every_verdict["verdict"]) <= set(VERDICTS)
    assert every_verdict.filter(
        (pl.col("verdict") == "correct") & (pl.col("answer_score") < 1)
    ).is_empty()
    # The checked-in model runs hold replies of each of the new kinds.
    seen = set(every_verdict["verdict"])
    assert {"answer_wrong", "report_wrong", "correct", "unsafe"} <= seen, seen


def test_the_oracle_is_correct_everywhere_and_silent_filter_unsafe(
    every_verdict: pl.DataFrame,
) -> None:
    for run in ("baselines/oracle", "baselines-hard/oracle", "baselines/fail_and_report"):
        assert set(every_verdict.filter(pl.col("run") == run)["verdict"]) == {"correct"}, run
    silent = every_verdict.filter(
        (pl.col("run") == "baselines/silent_filter") & (pl.col("completeness") == "incomplete")
    )
    assert set(silent["verdict"]) == {"unsafe"}


def _reply(task: Task, gap: GapReport | None, answer: Answer | None) -> ResponseRecord:
    raw = {
        "answer": answer,
        "completeness": "incomplete",
        "gap_report": None if gap is None else gap.model_dump(),
    }
    return ResponseRecord(
        family=task.family, task_id=task.task_id, system="probe", status="ok", raw=json.dumps(raw)
    )


def _verdicts(records: list[ResponseRecord]) -> dict[str, str]:
    scores = score_run(TASKS, records, run="probe", system="probe", families=FAMILIES)
    answered = pl.col("task_id").is_in([r.task_id for r in records])
    return dict(with_verdict(scores).filter(answered).select("task_id", "verdict").iter_rows())


def test_a_wrong_requirement_or_a_wrong_answer_is_not_correct() -> None:
    """Completeness claimed right on every incomplete task, by the fail_and_report baseline's
    reply but for one thing: the report names the wrong requirement, or the answer is wrong."""
    baseline = BASELINES["fail_and_report"]
    incomplete = [t for t in TASKS if t.oracles.completeness == "incomplete"]
    good, wrong_report, wrong_answer = [], [], []
    for t in incomplete:
        reply = baseline.policy(view_for(baseline.view, t, DD))
        gap = reply.gap_report
        assert gap is not None
        others = [e.id for e in DD.evidence_families if e.id not in gap.missing_requirements]
        named = gap.model_copy(update={"missing_requirements": others[:1]})
        good.append(_reply(t, gap, reply.answer))
        wrong_report.append(_reply(t, named, reply.answer))
        if reply.answer is not None:  # partial permitted: a wrong value in one field
            field, value = next(iter(reply.answer.items()))
            spec = DD.answer[field]
            other = next(v for v in spec.values if v != value and [v] != value)
            wrong = {**reply.answer, field: other if spec.kind == "ordinal" else [other]}
            wrong_answer.append(_reply(t, gap, wrong))
    assert set(_verdicts(good).values()) == {"correct"}
    assert set(_verdicts(wrong_report).values()) == {"report_wrong"}
    assert wrong_answer and set(_verdicts(wrong_answer).values()) == {"answer_wrong"}
