"""The task explorer's index: every task of a selection with how its evidence is laid out, the
filters find exactly the tasks that have what is asked for, and a picked row opens its task."""

from __future__ import annotations

import polars as pl

from peb_core.frontends.workbench import (
    contract_frame,
    filter_index,
    index_choices,
    task_index,
    task_ref,
)
from peb_core.tasks import generate_task, generate_tasks, load_families, select_tasks

FAMILIES = load_families()


def test_the_index_holds_every_task_of_the_selection_as_generated() -> None:
    index = task_index(select_tasks(None, "11,23,400-409", ("paper", "hard")))
    generated = {
        t.task_id: t
        for tier in ("paper", "hard")
        for t in generate_tasks(FAMILIES.values(), [11, 23, *range(400, 410)], tier=tier)
    }
    assert index.height == len(generated)
    for row in index.iter_rows(named=True):
        task = generated[row["task_id"]]
        assert row["topologies"] == ", ".join(task.topologies)
        assert row["completeness"] == task.oracles.completeness
        assert row["policy"] == ("partial" if task.contract.partial_response_permitted else "block")
        assert row["visible"] + row["hidden"] == len(task.documents)


def test_filters_find_exactly_the_tasks_asked_for() -> None:
    index = task_index(select_tasks(None, "0-19", ("hard",)))
    choices = index_choices(index)
    assert "silent_gap" in choices["topologies"] and choices["tracker"] == [
        "decoy",
        "none",
        "signal",
    ]
    silent = filter_index(index, topologies=["silent_gap"], policies=["block"])
    assert silent.height > 0
    expected = index.filter(
        pl.col("topologies").str.contains(r"\bsilent_gap\b") & (pl.col("policy") == "block")
    )
    assert silent["task_id"].to_list() == expected["task_id"].to_list()
    both = filter_index(index, topologies=["silent_gap", "decoy_notice"], trackers=["decoy"])
    assert both.height > 0
    assert all({"silent_gap", "decoy_notice"} <= set(t.split(", ")) for t in both["topologies"])
    assert set(both["tracker"]) == {"decoy"}
    assert filter_index(index).height == index.height
    complete = filter_index(index, completeness=["complete"])
    assert set(complete["completeness"]) == {"complete"}


def test_a_picked_row_opens_its_task_and_its_contract_marks_what_is_missing() -> None:
    index = task_index(select_tasks(["due_diligence_v1"], "11", ("hard",)))
    incomplete = filter_index(index, completeness=["incomplete"])
    ref = task_ref(incomplete.head(1))
    assert ref["tier"] == "hard" and ref["seed"] == "11"
    spec = FAMILIES[ref["family"]]
    task = generate_task(spec, ref["template"], int(ref["seed"]), tier=ref["tier"])
    assert task.task_id == incomplete["task_id"][0]
    contract = contract_frame(task)
    gap = task.oracles.gap_report
    assert gap is not None
    assert contract.filter(pl.col("missing"))["requirement"].to_list() == gap.missing_requirements
