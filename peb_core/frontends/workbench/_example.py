"""The worked example of one reply to one task, as the workbench and the task explorer both
show it: the task (regenerated exactly as its run made it), the reply's record, and why it
scored what it did (`scoring.explain`); and keeping a table's picked row."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ...access import DEFAULT_INTERFACE
from ...results import run_reading, run_record
from ...runs import read_manifest
from ...scoring import Explanation, RunReading, answer_target, explain, task_table
from ...systems import ResponseRecord
from ...tasks import (
    DEFAULT_CONTRACT,
    ScenarioFile,
    Task,
    generate_task,
    load_families,
    parse_task_id,
)


@dataclass(frozen=True)
class WorkedExample:
    """One reply (`record`; None: the run holds none) to one task, read for a person. `target`:
    what the answer is judged against (`complete_answer`, `authorized_answer` or `block`);
    `explanation`: the reply scored field by field and part by part, with the task's row of
    scores and its messages judged; `interface`: how its system answered (`--interface`)."""

    task: Task
    spec: ScenarioFile
    record: ResponseRecord | None
    run: str
    system: str
    target: str
    explanation: Explanation
    interface: str = DEFAULT_INTERFACE


def worked_example(
    task: Task, spec: ScenarioFile, record: ResponseRecord | None, reading: RunReading
) -> WorkedExample:
    """`record`'s reply to `task` laid out for reading, scored as its run reads its replies
    (`reading`: `scoring.explain`; on a task with a grant schedule, against the state it is
    judged in)."""
    explanation = explain(task, record, spec, reading)
    return WorkedExample(
        task=task,
        spec=spec,
        record=record,
        run=reading.run,
        system=reading.system,
        target=answer_target(task.in_state(explanation.scores["grant_state"]))[0],
        explanation=explanation,
        interface=reading.interface,
    )


def run_example(
    run_dir: Path, run: str, family: str, task_id: str, repeat: int = 0
) -> WorkedExample:
    """The worked example of a run folder's reply to one task in one of its repeats (`run`: the
    run's label): the task regenerated with the run's own generation parameters (tier from the
    id, distractors from the manifest, its corpus size and contract source), scored as the run
    is (its interface, whether its messages were seen)."""
    manifest = read_manifest(run_dir)
    spec = load_families()[family]
    ref = parse_task_id(task_id)
    task = generate_task(
        spec,
        ref.template,
        ref.seed,
        manifest.distractors,
        ref.tier,
        manifest.corpus_size,
        manifest.contract or DEFAULT_CONTRACT,
    )
    record = run_record(run_dir, family, task_id, repeat)
    return worked_example(task, spec, record, run_reading(run, manifest))


def picked_row(
    selection: pl.DataFrame | None, shown: pl.DataFrame
) -> tuple[dict[str, Any], bool] | None:
    """The row a person picked in a single-selection table (`selection`: its value, None or
    empty when nothing is picked), else the first row `shown`, and whether it was picked; None
    when there is no row at all."""
    if selection is not None and not selection.is_empty():
        return selection.row(0, named=True), True
    if shown.is_empty():
        return None
    return shown.row(0, named=True), False


def task_rows(scores: pl.DataFrame) -> pl.DataFrame:
    """The per-task table to pick a worked example from (`scoring.task_table`), with each
    row's `repeat` after `task_id` when the scores hold a run with repeats (one row per task
    and repeat)."""
    rows = task_table(scores)
    if "repeat" not in scores.columns or not scores["repeat"].max():
        return rows
    at = rows.columns.index("task_id") + 1
    return rows.insert_column(at, scores["repeat"].cast(pl.Int64))


ROW_KEY = ("run", "family", "task_id", "repeat")
"""What tells the rows of a per-task table apart (a table without `repeat`: repeat 0)."""


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(k, 0) if k == "repeat" else row[k] for k in ROW_KEY)


def row_key(selection: pl.DataFrame | None) -> tuple[Any, ...] | None:
    """The `ROW_KEY` of the row picked in a single-selection table, None if none is."""
    if selection is None or selection.is_empty():
        return None
    return _key(selection.row(0, named=True))


def row_position(frame: pl.DataFrame, key: tuple[Any, ...] | None) -> list[int] | None:
    """Where the row of `key` is in `frame`, as a table's `initial_selection` (so a pick is
    kept when the table is rebuilt); None if it is not there."""
    if key is None:
        return None
    if "repeat" not in frame.columns:
        frame = frame.with_columns(repeat=pl.lit(0, dtype=pl.Int64))
    match = pl.all_horizontal(pl.col(k) == v for k, v in zip(ROW_KEY, key, strict=True))
    found = frame.with_row_index("_i").filter(match)["_i"]
    return [int(found[0])] if found.len() else None
