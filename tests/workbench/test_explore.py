"""The task explorer's index: every task of a selection with how its evidence is laid out, the
filters find exactly the tasks that have what is asked for, and a picked row opens its task."""

from __future__ import annotations

import polars as pl

from peb_core.frontends.workbench import (
    REGISTER_COLUMNS,
    contract_frame,
    contract_note,
    explored_task,
    filter_index,
    index_choices,
    register_rows,
    task_index,
    task_ref,
)
from peb_core.tasks import (
    generate_task,
    generate_tasks,
    load_families,
    register_frame,
    select_tasks,
)

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


def test_the_register_shows_required_records_first_and_no_empty_values() -> None:
    """Issue 29.15: the register table kept register order, with `None` and `False` cells. Now
    the records the contract requires come first (those missing first of all), each group in
    register order, and no cell is null or a bare boolean."""
    for task in generate_tasks(FAMILIES.values(), [11, 23], tier="hard"):
        register = register_frame(task, FAMILIES[task.family])
        assert register is not None
        rows = register_rows(register)
        assert rows.columns == list(REGISTER_COLUMNS) and rows.height == register.height
        assert rows.null_count().sum_horizontal().item() == 0
        assert all(rows.schema[c] != pl.Boolean for c in rows.columns)
        contract = rows["contract"].to_list()
        gap = task.oracles.gap_report
        missing = sorted(gap.missing_requirements) if gap is not None else []
        n_required = len(task.contract.required_evidence)
        assert contract == (
            ["missing"] * len(missing) + ["covered"] * (n_required - len(missing))
            + [""] * (rows.height - n_required)
        )  # fmt: skip
        assert sorted(rows["record"][: len(missing)]) == missing
        order = register["record"].to_list()
        for group in ("missing", "covered", ""):
            records = rows.filter(pl.col("contract") == group)["record"].to_list()
            assert records == [r for r in order if r in records]
        stale = register.filter(pl.col("copy_state") == "stale")["record"].to_list()
        assert rows.filter(pl.col("copy_state") == "stale")["record"].to_list() == [
            r for r in rows["record"] if r in stale
        ]


def test_the_explorer_shows_a_contract_found_in_the_corpus_and_a_corpus_register() -> None:
    """Issue 36: the explorer had no contract selector (a `--contract corpus` run's procedure
    never appeared in the task view) and the agent tier no register table. A task picked with
    its contract in the corpus is the one `peb run --contract corpus` makes, its procedure
    named; on a tier without corpora the contract is given; the register of an agent task is
    a table with each record's reference."""
    spec = FAMILIES["due_diligence_v1"]
    template = spec.templates[0].id
    found = explored_task(spec, template, 11, "agent", "corpus")
    assert found == generate_task(spec, template, 11, tier="agent", contract="corpus")
    (procedure,) = [d for d in found.documents if d.role == "procedure"]
    assert f"`{procedure.doc_id}`" in contract_note(found)
    given = explored_task(spec, template, 11, "agent", "given")
    assert given.contract_source == "given" and "given" in contract_note(given)
    assert explored_task(spec, template, 11, "paper", "corpus").contract_source == "given"
    register = register_frame(found, spec)
    assert register is not None
    rows = register_rows(register)
    assert rows.columns[:2] == ["record", "reference"]
    assert rows.columns[2:] == list(REGISTER_COLUMNS[1:])
    assert "procedure" in rows["record"].to_list()
    assert rows.null_count().sum_horizontal().item() == 0
