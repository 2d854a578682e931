"""The trace metrics (docs/benchmark.md §3): read from an agent's trace and its task, null for
one-shot runs, and moving the right way for a careful, a lazy and a broken agent: the agent
baselines (deterministic episodes over the real tools) in every family, and records built step
by step for what no baseline does (an error mid-episode, a stale answer, a probe, a missing
record)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from peb_core import generate_tasks, load_families, read_records, run_system
from peb_core.results import scorecard_of
from peb_core.runs import RESPONSES
from peb_core.scoring import TRACE, compare_scores, episode_frame, score_run, stale_copies
from peb_core.systems import Reply, ReplyStatus, ResponseRecord, Step, ToolCall, build_system
from peb_core.tasks import Task

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
DD = FAMILIES["due_diligence_v1"]
TASKS = generate_tasks([DD], [11, 23], tier="agent")


@pytest.fixture(scope="module")
def agent_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The careful and the silent agent baselines over every family's canonical agent tasks."""
    root = tmp_path_factory.mktemp("agent_runs")
    runs = {}
    for name in ("agent_fail_and_report", "agent_silent"):
        run_system(build_system(name, SPECS), SPECS, root / name, tier="agent")
        runs[name] = root / name
    return runs


def _card(run: Path) -> pl.DataFrame:
    card, _ = scorecard_of([run])
    return card


def test_a_careful_agent_reads_everything_it_needs_and_nothing_stale(
    agent_runs: dict[str, Path],
) -> None:
    card = _card(agent_runs["agent_fail_and_report"])
    assert card.height == len(SPECS)
    for row in card.iter_rows(named=True):
        assert row["evidence_coverage"] == 1.0, row["family"]
        assert row["stale_reliance"] == 0.0 and row["no_submit_rate"] == 0.0
        assert row["tool_errors"] == 0.0 and row["hidden_probes"] == 0.0
        assert row["steps"] > 1
        assert row["disclosure"] == "silent"


def test_a_silent_agent_reads_less_and_leans_on_stale_copies(
    agent_runs: dict[str, Path],
) -> None:
    careful = _card(agent_runs["agent_fail_and_report"])
    silent = _card(agent_runs["agent_silent"])
    assert (silent["evidence_coverage"] < careful["evidence_coverage"]).all()
    assert (silent["stale_reliance"] > 0).all()
    assert (silent["unsafe_completeness_rate"] == 1.0).all()
    assert (silent["steps"] < careful["steps"]).all()


def test_compare_carries_the_trace_metrics_of_agents(agent_runs: dict[str, Path]) -> None:
    from peb_core.results import score_run_dirs

    names = ("agent_silent", "agent_fail_and_report")
    (a, _), (b, _) = (score_run_dirs([agent_runs[n]]) for n in names)
    frame = compare_scores(a, b).filter(pl.col("family") == "all")
    rows = {r["metric"]: r for r in frame.iter_rows(named=True)}
    assert {m.name for m in TRACE} <= set(rows)
    assert rows["evidence_coverage"]["difference"] > 0 and rows["evidence_coverage"]["significant"]
    steps = rows["steps"]
    assert steps["difference"] == pytest.approx(steps["value_b"] - steps["value_a"])
    assert steps["difference"] > 1  # a mean of counts, not clipped to [-1, 1]
    assert steps["ci_high"] is None or steps["ci_high"] > 1


def _stale_task() -> tuple[Task, str, list[str]]:
    """A task where partial answers are permitted and an out-of-date copy in view changes the
    answer: the task, the copy's id and the values only it supports."""
    for task in TASKS:
        copies = stale_copies(task, DD)
        if copies and task.contract.partial_response_permitted:
            doc_id, values = next(iter(copies.items()))
            return task, doc_id, values
    raise AssertionError("no task whose stale copies change the answer")


def _record(
    task: Task, trace: list[Step], status: ReplyStatus = "ok", raw: Any = None
) -> ResponseRecord:
    reply = Reply(
        status=status,
        raw=None if raw is None else json.dumps(raw),
        error=None if status == "ok" else "why",
        trace=tuple(trace),
    )
    return ResponseRecord.of_reply(task.family, task.task_id, "agent", reply)


def _row(task: Task, record: ResponseRecord | None) -> dict[str, Any]:
    records = [] if record is None else [record]
    scores = score_run([task], records, run="r", system="s", families=FAMILIES, episodes=True)
    row: dict[str, Any] = scores.row(0, named=True)
    return row


def _opens(*doc_ids: str, errors: tuple[str | None, ...] | None = None) -> Step:
    calls = tuple(
        ToolCall(id=f"c{i}", name="open", arguments=json.dumps({"doc_id": d}))
        for i, d in enumerate(doc_ids)
    )
    return Step(
        tool_calls=calls,
        results=tuple("shown" for _ in doc_ids),
        errors=errors or tuple(None for _ in doc_ids),
    )


def test_an_answer_that_follows_a_stale_copy_it_read_relies_on_it() -> None:
    """Reliance needs a read (issue 29.12): the stale values given after opening the copy are
    reliance; the same values given by an episode that opened nothing (a guess, or values
    that follow from missing evidence) are not, and that episode leaves the denominator, so
    a lazy agent that reads nothing scores null, never a number it did not earn."""
    task, copy, values = _stale_task()
    field, value = values[0].split("=", 1)
    honest = dict(task.oracles.authorized_answer)
    stale = dict(honest)
    current = honest[field]
    stale[field] = value if isinstance(current, str) else [*current, value]
    response = {"completeness": "incomplete", "gap_report": None}
    read = [_opens(copy)]
    relied = _row(task, _record(task, read, raw={**response, "answer": stale}))
    assert relied["stale_read"] and relied["stale_relied"]
    # The careful case: it read the copy and answered from the current records.
    fine = _row(task, _record(task, read, raw={**response, "answer": honest}))
    assert fine["stale_read"] and not fine["stale_relied"]
    # The lazy case: the same stale answer from an episode that opened nothing.
    unread = _row(task, _record(task, [], raw={**response, "answer": stale}))
    assert not unread["stale_read"] and not unread["stale_relied"]
    assert unread["evidence_coverage"] == 0.0
    # An open that failed reads nothing.
    failed = _row(task, _record(task, [_opens(copy, errors=("open: not found",))],
                                raw={**response, "answer": stale}))  # fmt: skip
    assert not failed["stale_read"] and not failed["stale_relied"]
    # A block gives no answer: it relies on nothing and leaves the denominator.
    blocked = _row(task, _record(task, read, raw={**response, "answer": None}))
    assert not blocked["stale_relied"] and not blocked["answered"]

    def stale_rate(*rows: ResponseRecord) -> float | None:
        scores = score_run([task], list(rows), run="r", system="s", families=FAMILIES,
                           episodes=True)  # fmt: skip
        from peb_core.scoring import scorecard

        rate: float | None = scorecard(scores)["stale_reliance"].item()
        return rate

    assert stale_rate(_record(task, [], raw={**response, "answer": stale})) is None
    assert stale_rate(_record(task, read, raw={**response, "answer": honest})) == 0.0
    assert stale_rate(_record(task, read, raw={**response, "answer": stale})) == 1.0


def test_what_a_broken_or_missing_episode_scores() -> None:
    task = TASKS[0]
    frame = episode_frame([task], FAMILIES).row(0, named=True)
    required, hidden = frame["required_visible"], frame["hidden_ids"]
    assert required and hidden
    opened_all = _opens(*required)
    # An error mid-episode: its steps count, its coverage is 0 (no answer rests on it).
    error = _row(task, _record(task, [opened_all, opened_all], status="error"))
    assert (error["steps"], error["evidence_coverage"], error["tool_errors"]) == (2, 0.0, 0)
    # No record at all: coverage 0, nothing else known.
    missing = _row(task, None)
    assert missing["status"] == "missing" and missing["evidence_coverage"] == 0.0
    assert missing["steps"] is None and missing["tool_errors"] is None
    # An open of a hidden id is a probe, not a tool error; an open that failed opens nothing.
    probe = _opens(hidden[0], required[0], errors=("open: not found", "open: not found"))
    careful = {
        "answer": task.oracles.authorized_answer,
        "completeness": task.oracles.completeness,
        "gap_report": None,
    }
    row = _row(task, _record(task, [probe, opened_all], raw=careful))
    assert (row["hidden_probes"], row["tool_errors"], row["evidence_coverage"]) == (1, 1, 1.0)
    half = _row(task, _record(task, [_opens(*required[: len(required) // 2])], raw=careful))
    assert half["evidence_coverage"] == (len(required) // 2) / len(required)


def test_calls_nested_too_deeply_to_parse_are_read_not_a_crash() -> None:
    """A trace is what a model sent: arguments or results nested too deeply for Python's
    parser are malformed JSON like any other (an open that names no id; a result that says
    nothing), never a crash of the scorer."""
    task = TASKS[0]
    deep = "[" * 100_000
    step = Step(
        tool_calls=(
            ToolCall(id="c0", name="open", arguments='{"doc_id": ' + deep),
            ToolCall(id="c1", name="search", arguments=deep),
        ),
        results=('{"error": "open: the arguments are not valid JSON"}', deep),
        errors=("open: the arguments are not valid JSON", None),
    )
    row = _row(task, _record(task, [step]))
    assert (row["steps"], row["tool_errors"], row["hidden_probes"]) == (1, 1, 0)


def test_one_shot_records_of_agent_tasks_have_no_trace_scores(tmp_path: Path) -> None:
    """A one-shot system on the agent tier: the surfaces are scored, the trace metrics null."""
    run_system(build_system("fail_and_report", [DD]), [DD], tmp_path / "r", seeds=[11],
               tier="agent")  # fmt: skip
    records = read_records(tmp_path / "r" / RESPONSES)[0]
    tasks = generate_tasks([DD], [11], tier="agent")
    scores = score_run(tasks, records, run="r", system="s", families=FAMILIES)
    assert scores.height == len(tasks) == len(records)
    assert scores["steps"].null_count() == scores.height
    assert not scores["episode"].any()


def test_the_paper_outputs_and_score_json_carry_the_trace_metrics(
    agent_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from peb_core.frontends import cli
    from peb_core.reporting import agent_results, chart_bytes, figures, tables
    from peb_core.reporting._paper import results_columns

    dirs = list(agent_runs.values())
    table = agent_results(dirs, "agent")
    keys = ["run_label", "system", "disclosure", "contract", "followup", "max_steps", "family"]
    assert table.columns == results_columns(keys, TRACE) and table.height == 2 * len(SPECS)
    assert (table["contract"] == "given").all() and (table["followup"] == "none").all()
    assert tables(dirs, "agent")["table_agents"].equals(table)
    careful = table.filter(pl.col("system") == "agent_fail_and_report")
    assert (careful["coverage"] == 1.0).all() and (careful["disclosure"] == "silent").all()
    found = figures(dirs, "agent")
    assert "figure_trace_metrics" in found
    assert chart_bytes(found["figure_trace_metrics"], "svg").startswith(b"<svg")
    assert cli.main(["score", str(agent_runs["agent_silent"]), "--json"]) in (0, None)
    rows = json.loads(capsys.readouterr().out)
    for m in TRACE:
        # null without a grant schedule (section 9.2) or a user who pushes back (section 10.3)
        if m.name in ("expired_reliance", "held_under_pressure", "cave_push"):
            assert all(row[m.name] is None for row in rows), m.name
            continue
        assert all(row[m.name] is not None for row in rows), m.name
        assert all(row[f"{m.name}_ci_low"] is not None for row in rows), m.name
