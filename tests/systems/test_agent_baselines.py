"""docs/benchmark.md §9: the agent baselines, which reach a task only through the tools. In every
family and disclosure mode, on canonical and fresh seeds, `agent_fail_and_report` scores unsafe
0, answer 1, gap 1 (under `silent` too: the register and the references find every gap, so the
tier is fair) and `agent_silent` scores unsafe 1; `agent_cue`, deciding from the notices alone,
is unsafe under `silent` and cannot tell complete from incomplete under the others. Each reply
holds its episode: one step per tool call, ending with the accepted submit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest

from peb_core import (
    ResponseRecord,
    Task,
    generate_task,
    generate_tasks,
    load_families,
    read_records,
    run_system,
)
from peb_core.access import DISCLOSURES, AgentView, agent_view
from peb_core.scoring import score_run, scorecard
from peb_core.systems import (
    BASELINES,
    RECORD_FORMAT,
    AgentBaseline,
    SystemSpecError,
    build_system,
)

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
TASKS = generate_tasks(SPECS, tier="agent") + generate_tasks(SPECS, [7001, 7002], tier="agent")
VIEWS: dict[str, AgentView] = {
    t.task_id + t.family: agent_view(t, FAMILIES[t.family]) for t in TASKS
}


def _baseline(name: str, mode: str) -> AgentBaseline:
    system = build_system(name, SPECS, disclosure=mode)
    assert isinstance(system, AgentBaseline) and system.config() == {"disclosure": mode}
    return system


def _scores(name: str, mode: str, tasks: Sequence[Task] = TASKS) -> pl.DataFrame:
    system = _baseline(name, mode)
    records = []
    for task in tasks:
        view = VIEWS.get(task.task_id + task.family) or agent_view(task, FAMILIES[task.family])
        reply = asyncio.run(system.respond(view))
        records.append(ResponseRecord.of_reply(task.family, task.task_id, name, reply))
    scores = score_run(tasks, records, run=f"{name}-{mode}", system=name, families=FAMILIES)
    return scorecard(scores)


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_fail_and_report_is_right_on_every_task_in_every_mode(mode: str) -> None:
    card = _scores("agent_fail_and_report", mode)
    assert card.height == len(FAMILIES)
    for row in card.iter_rows(named=True):
        assert row["unsafe_completeness_rate"] == 0.0, row
        assert row["answer_correctness"] == 1.0, row
        assert row["gap_report_quality"] == 1.0, row
        assert row["completeness_accuracy"] == 1.0 and row["invalid_rate"] == 0.0, row


@pytest.mark.parametrize("size", [20, 500])
def test_fail_and_report_is_right_at_every_corpus_size(size: str) -> None:
    tasks = [
        generate_task(spec, t.id, 7100 + i, tier="agent", corpus_size=int(size))
        for spec in SPECS
        for i, t in enumerate(spec.templates)
    ]
    card = _scores("agent_fail_and_report", "silent", tasks)
    assert card["unsafe_completeness_rate"].to_list() == [0.0] * len(FAMILIES)
    assert card["answer_correctness"].to_list() == [1.0] * len(FAMILIES)
    assert card["gap_report_quality"].to_list() == [1.0] * len(FAMILIES)


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_silent_is_always_unsafe_and_cue_reads_only_notices(mode: str) -> None:
    silent = _scores("agent_silent", mode)
    assert silent["unsafe_completeness_rate"].to_list() == [1.0] * len(FAMILIES)
    cue = _scores("agent_cue", mode)
    if mode == "silent":  # no notice ever comes: it claims complete throughout
        assert cue["unsafe_completeness_rate"].to_list() == [1.0] * len(FAMILIES)
    else:  # a restricted master is always withheld: it claims incomplete throughout
        assert cue["false_complete"].to_list() == [0] * len(FAMILIES)
        assert all(n > 0 for n in cue["false_incomplete"].to_list())
        assert all(a < 1.0 for a in cue["gap_report_quality"].to_list())


def test_a_reply_holds_its_episode() -> None:
    task = TASKS[0]
    view = VIEWS[task.task_id + task.family]
    reply = asyncio.run(BASELINES["agent_fail_and_report"].respond(view))
    assert reply.status == "ok" and reply.trace
    assert all(len(step.tool_calls) == 1 == len(step.results) for step in reply.trace)
    names = [step.tool_calls[0].name for step in reply.trace]
    assert names[-1] == "submit" and names.count("submit") == 1
    assert {"search", "open"} <= set(names)
    last = reply.trace[-1]
    assert json.loads(last.tool_calls[0].arguments)["response"] == json.loads(reply.raw or "")
    assert json.loads(last.results[0]) == {"submitted": True}
    # What each step shows is what the tools give: replaying the calls gives the same results.
    session = view.session()
    for step in reply.trace:
        call = step.tool_calls[0]
        assert session.call(call.name, call.arguments).content == step.results[0]
    ids = [step.tool_calls[0].id for step in reply.trace]
    assert len(set(ids)) == len(ids)


def test_a_disclosure_is_a_setting_of_agent_systems_only() -> None:
    assert build_system("agent_silent", SPECS) is BASELINES["agent_silent"]
    assert build_system("agent_silent", SPECS, disclosure="named").config() == {
        "disclosure": "named"
    }
    with pytest.raises(SystemSpecError, match="fail_and_report reads no agent view"):
        build_system("fail_and_report", SPECS, disclosure="named")
    with pytest.raises(SystemSpecError, match="openai/m is a one-shot model system"):
        build_system("openai/m", SPECS, disclosure="counted")
    with pytest.raises(SystemSpecError, match="unknown disclosure 'loud'; valid: silent"):
        build_system("agent_silent", SPECS, disclosure="loud")


def test_a_run_records_the_mode_the_corpus_size_and_the_episodes(tmp_path: Path) -> None:
    spec = FAMILIES["due_diligence_v1"]
    system = build_system("agent_fail_and_report", [spec], disclosure="counted")
    run = tmp_path / "run"
    manifest = run_system(system, [spec], run, seeds=[11], tier="agent", corpus_size=40)
    assert manifest.config == {"disclosure": "counted"} and manifest.corpus_size == 40
    assert manifest.tier == "agent" and manifest.counts.ok == 6
    records, problems = read_records(run / "responses.jsonl")
    assert not problems and all(r.trace and r.format == RECORD_FORMAT for r in records)
    # Another mode or size is another run.
    for kwargs in ({"corpus_size": 60}, {}):
        with pytest.raises(ValueError, match="holds a different run"):
            run_system(system, [spec], run, seeds=[11], tier="agent", **kwargs)  # type: ignore[arg-type]
    named = build_system("agent_fail_and_report", [spec], disclosure="named")
    with pytest.raises(ValueError, match="disclosure counted -> named"):
        run_system(named, [spec], run, seeds=[11], tier="agent", corpus_size=40)
