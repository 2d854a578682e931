"""An agent's episode replayed beside its task (peb_core.results: replay_steps,
replay_documents, replay_claims): what the frames say agrees with what the tools showed, and the
gap between what an agent saw and what it claimed is marked."""

from __future__ import annotations

import asyncio
import json

import polars as pl
import pytest

from peb_core import generate_tasks, load_families
from peb_core.results import (
    CLAIMS_SCHEMA,
    DOCUMENTS_SCHEMA,
    STEPS_SCHEMA,
    replay_claims,
    replay_documents,
    replay_steps,
)
from peb_core.systems import ResponseRecord, build_system
from peb_core.tasks import Task, view_for

FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]
TASKS = generate_tasks([DD], [11], tier="agent")


def _episode(name: str, task: Task, disclosure: str) -> ResponseRecord:
    system = build_system(name, [DD], disclosure=disclosure)
    reply = asyncio.run(system.respond(view_for("agent", task, DD)))
    return ResponseRecord.of_reply(task.family, task.task_id, name, reply)


@pytest.mark.parametrize("disclosure", ["silent", "counted", "named"])
def test_the_replay_agrees_with_what_the_tools_showed(disclosure: str) -> None:
    for task in TASKS:
        record = _episode("agent_fail_and_report", task, disclosure)
        steps = replay_steps(record, task)
        assert steps.schema == STEPS_SCHEMA
        assert steps.height == sum(len(s.tool_calls) for s in record.trace)
        hidden = {d.doc_id for d in task.hidden_documents}
        for row in steps.filter(pl.col("tool") == "search").iter_rows(named=True):
            shown = json.loads(row["result"])
            assert row["shown"] == [h["doc_id"] for h in shown["hits"]]
            assert set(row["withheld"]) <= hidden
            if disclosure != "silent":  # the count the agent read is the replay's
                assert shown["withheld"] == len(row["withheld"])
        documents = replay_documents(record, task)
        assert documents.schema == DOCUMENTS_SCHEMA and documents.height == len(task.documents)
        opened = steps.filter((pl.col("tool") == "open") & pl.col("error").is_null())["doc_id"]
        assert set(documents.filter(pl.col("opened_at").is_not_null())["doc_id"]) == set(opened)
        assert documents.filter(~pl.col("visible"))["opened_at"].null_count() == len(hidden)
        first = replay_documents(record, task, upto=1)
        assert first["opened_at"].null_count() >= documents["opened_at"].null_count()


def test_the_gap_between_what_was_seen_and_what_was_claimed_is_marked() -> None:
    task = next(t for t in TASKS if t.oracles.completeness == "incomplete")
    assert task.oracles.gap_report is not None
    missing = set(task.oracles.gap_report.missing_requirements)
    careful = replay_claims(_episode("agent_fail_and_report", task, "silent"), task, DD)
    assert careful.schema == CLAIMS_SCHEMA
    assert careful["gap"].null_count() == careful.height  # it saw what it claimed
    assert set(careful.filter(pl.col("claimed_missing"))["requirement"]) == missing
    silent = replay_claims(_episode("agent_silent", task, "silent"), task, DD)
    unreported = silent.filter(pl.col("gap") == "unreported gap")
    assert set(unreported["requirement"]) == missing
    assert (unreported["missing_scopes"].list.len() > 0).all()  # where the evidence is kept
