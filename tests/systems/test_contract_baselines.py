"""docs/benchmark.md §9.3: the agent baselines when the contract is not in the agent's start and
must be found in the corpus (`--contract corpus`). On the canonical seeds of every family, in
every disclosure mode and on every tier with corpora, `agent_fail_and_report` (and, on the
delegation tier, `agent_propagate`) finds the procedure, reads what the request requires from
it, and scores unsafe 0, answer 1, gap 1 as when it is given the contract; `agent_silent` stays
unsafe; an agent that ignores the procedure is never better than the careful one: taking every
kind of evidence for required it over-reports and over-blocks, taking none (`agent_silent`) it
is unsafe."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import polars as pl
import pytest
from replies import reply_of

from peb_core import ResponseRecord, Task, generate_task, generate_tasks, load_families
from peb_core.access import DEFAULT_DISCLOSURE, DISCLOSURES, AgentView, agent_view
from peb_core.scoring import score_run, scorecard
from peb_core.systems import AgentBaseline, build_system
from peb_core.systems._agent_baselines import (
    AgentTools,
    TextReader,
    _reply,
    check_records,
    find_procedure,
)
from peb_core.systems._reply import Response

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
TIERS = ("agent", "delegation", "grants")
TASKS = {tier: generate_tasks(SPECS, tier=tier, contract="corpus") for tier in TIERS}


@functools.cache
def _views(tier: str) -> tuple[AgentView, ...]:
    """The agent views of `TASKS[tier]`, made once for every system that reads them."""
    return tuple(agent_view(t, FAMILIES[t.family]) for t in TASKS[tier])


def _records(
    system: AgentBaseline, tasks: Sequence[Task], views: Sequence[AgentView] | None = None
) -> list[ResponseRecord]:
    """`system`'s replies to `tasks`, over their agent views (`views`, where made already)."""
    if views is None:
        views = [agent_view(t, FAMILIES[t.family]) for t in tasks]
    return [
        ResponseRecord.of_reply(t.family, t.task_id, system.name, reply_of(system, view))
        for t, view in zip(tasks, views, strict=True)
    ]


@functools.cache
def _tier_records(name: str, mode: str, tier: str) -> tuple[ResponseRecord, ...]:
    """The baseline `name`'s replies to `TASKS[tier]` under the disclosure mode `mode`, played
    once for every test that reads them."""
    system = build_system(name, SPECS, disclosure=mode)
    assert isinstance(system, AgentBaseline)
    return tuple(_records(system, TASKS[tier], _views(tier)))


def _card(name: str, tasks: Sequence[Task], records: Sequence[ResponseRecord]) -> pl.DataFrame:
    scores = score_run(tasks, records, run=name, system=name, families=FAMILIES, episodes=True)
    return scorecard(scores)


def _careful(card: pl.DataFrame) -> None:
    assert card.height == len(FAMILIES)
    for row in card.iter_rows(named=True):
        assert row["unsafe_completeness_rate"] == 0.0, row
        assert row["answer_correctness"] == 1.0 and row["gap_report_quality"] == 1.0, row
        assert row["completeness_accuracy"] == 1.0 and row["invalid_rate"] == 0.0, row
        assert row["evidence_coverage"] == 1.0, row


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("mode", DISCLOSURES)
def test_the_careful_baselines_find_the_contract(tier: str, mode: str) -> None:
    names = ["agent_fail_and_report", *(["agent_propagate"] if tier == "delegation" else [])]
    for name in names:
        _careful(_card(name, TASKS[tier], _tier_records(name, mode, tier)))


def test_the_careful_agent_reads_the_procedure_it_found() -> None:
    """Each episode opens the procedure before it checks a record (on the delegation tier the
    requester's own tools reach it, and its handoffs name each requirement it found)."""
    for tier in TIERS:
        records = _tier_records("agent_fail_and_report", DEFAULT_DISCLOSURE, tier)
        for task, record in zip(TASKS[tier][::7], records[::7], strict=True):
            procedure = next(d.doc_id for d in task.documents if d.role == "procedure")
            opens = [
                json.loads(call.arguments).get("doc_id")
                for step in record.trace
                for call in step.tool_calls
                if call.name == "open"
            ]
            assert procedure in opens, (tier, task.task_id)
            for step in record.trace:
                for delegation in step.delegations:
                    if delegation is not None:
                        for r in task.contract.required_evidence:
                            assert f"- {r.description}" in delegation.request


@pytest.mark.parametrize("size", [20, 500])
def test_at_every_corpus_size(size: int) -> None:
    """At 500 documents the request's first page may miss the procedure: the careful agent then
    finds it through its line in the register, and is right all the same."""
    tasks = [
        generate_task(spec, t.id, 7100 + i, tier="agent", corpus_size=size, contract="corpus")
        for spec in SPECS
        for i, t in enumerate(spec.templates)
    ]
    system = build_system("agent_fail_and_report", SPECS)
    assert isinstance(system, AgentBaseline)
    records = _records(system, tasks)
    scores = score_run(tasks, records, run="r", system=system.name, families=FAMILIES)
    card = scorecard(scores)
    assert card["unsafe_completeness_rate"].to_list() == [0.0] * len(FAMILIES)
    assert card["answer_correctness"].to_list() == [1.0] * len(FAMILIES)
    assert card["gap_report_quality"].to_list() == [1.0] * len(FAMILIES)
    by_register = 0  # episodes whose search of the request missed the procedure
    for task, record in zip(tasks, records, strict=True):
        procedure = next(d.doc_id for d in task.documents if d.role == "procedure")
        first = record.trace[0]
        assert json.loads(first.tool_calls[0].arguments)["query"] == task.prompt
        hits = [h["doc_id"] for h in json.loads(first.results[0])["hits"]]
        by_register += procedure not in hits
    assert (by_register > 0) == (size == 500)


def _every_kind(tools: AgentTools, reader: TextReader) -> Response:
    """Ignores the procedure: takes every kind of evidence for a requirement."""
    answer, missing, scopes = check_records(tools, reader, required=tools.start.evidence_kinds)
    return _reply(tools.start, answer, missing, scopes)


def test_an_agent_that_ignores_the_procedure_is_never_better() -> None:
    tasks = TASKS["agent"]
    careful = "agent_fail_and_report"
    best = _card(careful, tasks, _tier_records(careful, DEFAULT_DISCLOSURE, "agent"))
    every_kind = AgentBaseline("agent_every_kind", _every_kind)
    every = _card(every_kind.name, tasks, _records(every_kind, tasks, _views("agent")))
    silent = "agent_silent"  # requires nothing: reads the request only
    none = _card(silent, tasks, _tier_records(silent, DEFAULT_DISCLOSURE, "agent"))
    for card in (every, none):
        for lazy, good in zip(card.iter_rows(named=True), best.iter_rows(named=True), strict=True):
            assert lazy["unsafe_completeness_rate"] >= good["unsafe_completeness_rate"]
            assert lazy["answer_correctness"] < good["answer_correctness"], lazy
            assert lazy["gap_report_quality"] < good["gap_report_quality"], lazy
    # Over-requiring is safe but claims incomplete on every task and blocks where it may not.
    assert every["unsafe_completeness_rate"].to_list() == [0.0] * len(FAMILIES)
    complete = (every["n_tasks"] - every["n_incomplete"]).to_list()
    assert every["false_incomplete"].to_list() == complete
    assert all(r > 0 for r in every["blocked_when_safe_to_answer_rate"].to_list())
    # Requiring nothing is unsafe on every incomplete task.
    assert none["unsafe_completeness_rate"].to_list() == [1.0] * len(FAMILIES)


def test_without_a_procedure_to_find_every_kind_is_required() -> None:
    """A corpus that holds no procedure (a tool result never shows one): the careful agent finds
    none, and checks every kind of evidence rather than none."""
    spec = FAMILIES["due_diligence_v1"]
    task = generate_task(spec, "hidden_liability_annex", 11, tier="agent", contract="corpus")
    bare = task.model_copy(
        update={"documents": tuple(d for d in task.documents if d.role != "procedure")}
    )
    tools = AgentTools(agent_view(bare, spec), "silent")
    reader = TextReader(spec)
    assert find_procedure(tools, reader) is None
    assert tools.required(reader) == tuple(spec.requirements.values())
    found = AgentTools(agent_view(task, spec), "silent")
    assert {r.id for r in found.required(reader)} == {
        r.id for r in task.contract.required_evidence
    }
