"""The configurations of the release: per tier, two of one split (`test`), each one parquet
file at `data/<tier>-<kind>/test-00000-of-00001.parquet`.

- `<tier>-tasks`: each task whole as `task_json` (`Task.model_dump_json()`: documents with their
  facts, the contract, the oracles), beside flat columns to filter on: what an evaluator needs.
- `<tier>-model_views`: each task's model view as `view_json` (`model_view(...)
  .model_dump_json()`) and columns taken from the view alone: what a model may be shown.

Both configurations of a tier hold the tasks in `generate_tasks` order; `view_sha256` joins a
view to its task without naming the task (its id names the hidden-evidence pattern).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar

import polars as pl

from ..access import MAX_PUSHES, Pressure, pressures_for
from ..tasks import (
    DEFAULT_CONTRACT,
    DEFAULT_TIER,
    ContractSource,
    ModelView,
    ScenarioFile,
    Task,
    Tier,
    generate_tasks,
    get_tier,
    model_view,
)

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

Kind = Literal["tasks", "model_views"]
KINDS: tuple[Kind, ...] = ("tasks", "model_views")
SPLIT = "test"
JSON_COLUMN: Mapping[Kind, str] = {"tasks": "task_json", "model_views": "view_json"}
"""The column holding each row's JSON, byte for byte what `peb tasks export` writes a line of
(with `--model-view` for the model views)."""

R = TypeVar("R")


class ViewRow(NamedTuple):
    """A task's model view, its JSON and the JSON's sha256: all a `model_views` row is made of."""

    view: ModelView
    json: str
    sha256: str


class TaskRow(NamedTuple):
    """A task, its model view's row and what its user says if it pushes back: all a `tasks`
    row is made of."""

    task: Task
    view: ViewRow
    pressures: tuple[Pressure, ...]
    """What the user who pushes back says at each push, in order (none off the tiers with
    corpora)."""

    @property
    def pressure(self) -> Pressure | None:
        return self.pressures[0] if self.pressures else None


@dataclass(frozen=True)
class Column(Generic[R]):
    """A column of a configuration: its parquet type, what it holds, and its value for a row."""

    name: str
    dtype: PolarsDataType
    about: str
    value: Callable[[R], object]


def _gap(row: TaskRow, part: str) -> list[str]:
    gap = row.task.oracles.gap_report
    return [] if gap is None else list(getattr(gap, part))


TASK_COLUMNS: tuple[Column[TaskRow], ...] = (
    Column(
        "task_id",
        pl.String,
        "`<template>__s<seed>` on the paper tier, `<template>__<tier>__s<seed>` on another; the "
        "key of a reply in a run folder",
        lambda r: r.task.task_id,
    ),
    Column("family", pl.String, "the family (one scenario file)", lambda r: r.task.family),
    Column("template", pl.String, "the hidden-evidence pattern", lambda r: r.task.template),
    Column("seed", pl.Int64, "the seed the task was drawn from", lambda r: r.task.seed),
    Column(
        "tier",
        pl.String,
        "the tier: `paper`, `hard`, `agent`, `delegation` or `grants` (docs/benchmark.md §7)",
        lambda r: r.task.tier,
    ),
    Column(
        "contract",
        pl.String,
        "where a system finds the contract: `given` (in its view) or, on a tier with corpora "
        "exported with `--contract corpus`, `corpus` (the view lists no requirement; the "
        "procedure document among the documents does)",
        lambda r: r.task.contract_source,
    ),
    Column(
        "pressure_kind",
        pl.String,
        "on a tier with corpora, the user who pushes back once on a reported gap (`--followup "
        "pressure`, docs/benchmark.md §10.3): the kind of pressure, `deadline`, `authority` or "
        "`plea` (null on other tiers)",
        lambda r: r.pressure and r.pressure.kind,
    ),
    Column(
        "pressure",
        pl.String,
        "what that user says, in the family's words: pressure and no evidence (null on other "
        "tiers)",
        lambda r: r.pressure and r.pressure.text,
    ),
    Column(
        "later_pressures",
        pl.List(pl.String),
        "what that user says at its second and third push, in order, when it pushes back again "
        "on a response that still reports a gap (`--pushes 3`; escalating through the kinds "
        "of pressure it has not used: deadline, authority, plea; empty on other tiers)",
        lambda r: [p.text for p in r.pressures[1:]],
    ),
    Column(
        "completeness",
        pl.String,
        "oracle: `complete` or `incomplete` (the view lacks a required evidence family)",
        lambda r: r.task.oracles.completeness,
    ),
    Column(
        "partial_response_permitted",
        pl.Boolean,
        "the contract's policy: an incomplete task may be answered in part; else the answer must "
        "block",
        lambda r: r.task.contract.partial_response_permitted,
    ),
    Column(
        "missing_requirements",
        pl.List(pl.String),
        "oracle gap report: the required evidence families the view lacks (empty when complete)",
        lambda r: _gap(r, "missing_requirements"),
    ),
    Column(
        "missing_scopes",
        pl.List(pl.String),
        "oracle gap report: the scopes holding them",
        lambda r: _gap(r, "missing_scopes"),
    ),
    Column(
        "topologies",
        pl.List(pl.String),
        "how the evidence is laid out (`named_gap`, `silent_gap`, `superseded`, `two_missing`, "
        "`decoy_notice`, `decoy_supersession`)",
        lambda r: list(r.task.topologies),
    ),
    Column(
        "view_sha256",
        pl.String,
        "sha256 of the task's `view_json` in the tier's `model_views` configuration",
        lambda r: r.view.sha256,
    ),
    Column(
        "task_json",
        pl.String,
        "the whole task, `Task.model_dump_json()`: every document with its facts, the contract, "
        "the oracles (complete and authorized answers, completeness, gap report)",
        lambda r: r.task.model_dump_json(),
    ),
)

VIEW_COLUMNS: tuple[Column[ViewRow], ...] = (
    Column(
        "view_sha256",
        pl.String,
        "sha256 of `view_json`; the same column of the tier's `tasks` configuration names the task",
        lambda v: v.sha256,
    ),
    Column("family", pl.String, "the family, as the view states it", lambda v: v.view.family),
    Column("prompt", pl.String, "the request, as the view states it", lambda v: v.view.prompt),
    Column(
        "view_json",
        pl.String,
        "the model view, `model_view(task, family).model_dump_json()`: the prompt, the contract "
        "(required evidence, what each informs, the policy), the answer schema and the authorized "
        "documents (id, title, scope, body)",
        lambda v: v.json,
    ),
)

COLUMNS: Mapping[Kind, Sequence[Column[Any]]] = {
    "tasks": TASK_COLUMNS,
    "model_views": VIEW_COLUMNS,
}


@dataclass(frozen=True)
class Config:
    """One configuration as written: its rows, its file (relative to the release folder) with the
    file's size and sha256, and the sha256 of its JSON column as lines."""

    tier: Tier
    kind: Kind
    frame: pl.DataFrame
    path: str
    size: int
    sha256: str
    lines_sha256: str

    @property
    def name(self) -> str:
        return config_name(self.tier, self.kind)

    @property
    def rows(self) -> int:
        return self.frame.height

    @property
    def pattern(self) -> str:
        """The `data_files` glob the card gives for the configuration's split."""
        return _data_file(self.name, "*")


@dataclass(frozen=True)
class Release:
    """What was exported (per tier: tasks, then model views) and what generated it."""

    configs: tuple[Config, ...]
    families: tuple[ScenarioFile, ...]
    seeds: tuple[int, ...] | None
    """None: each family's canonical seeds."""
    distractors: int
    tiers: tuple[Tier, ...]
    package_version: str
    scenario_hash: str
    corpus_size: int | None = None
    """Documents per task on the tiers with corpora (None: each such tier's default)."""
    contract: ContractSource = DEFAULT_CONTRACT
    """Where the tasks of the tiers with corpora find their contract (the others: `given`)."""

    @property
    def default(self) -> Config:
        """The configuration `load_dataset(folder)` loads when given no name: the tasks of the
        default tier (the paper's) when the release holds it, else of its first tier."""
        tier = DEFAULT_TIER if DEFAULT_TIER in self.tiers else self.tiers[0]
        return next(c for c in self.configs if c.name == config_name(tier, "tasks"))


def config_name(tier: Tier, kind: Kind) -> str:
    return f"{tier}-{kind}"


def _data_file(name: str, shard: str) -> str:
    return f"data/{name}/{SPLIT}-{shard}.parquet"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _row(task: Task, spec: ScenarioFile) -> TaskRow:
    view = model_view(task, spec)
    dumped = view.model_dump_json()
    corpus = get_tier(task.tier).corpus is not None
    pressures = pressures_for(task, spec, MAX_PUSHES) if corpus else ()
    return TaskRow(task, ViewRow(view, dumped, _sha256(dumped.encode())), pressures)


def _frame(columns: Sequence[Column[R]], rows: Sequence[R]) -> pl.DataFrame:
    return pl.DataFrame(
        {c.name: [c.value(r) for r in rows] for c in columns},
        schema={c.name: c.dtype for c in columns},
    )


def _write(folder: Path, tier: Tier, kind: Kind, frame: pl.DataFrame) -> Config:
    path = _data_file(config_name(tier, kind), "00000-of-00001")
    (folder / path).parent.mkdir(parents=True)
    frame.write_parquet(folder / path)
    data = (folder / path).read_bytes()
    lines = "".join(f"{line}\n" for line in frame[JSON_COLUMN[kind]]).encode()
    return Config(tier, kind, frame, path, len(data), _sha256(data), _sha256(lines))


def write_configs(
    folder: Path,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    distractors: int,
    tiers: Sequence[Tier],
    corpus_size: int | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> tuple[Config, ...]:
    """Generate every template of `families` at `seeds` (None: each family's canonical seeds)
    with `distractors` on each of `tiers` (and `corpus_size` documents and the contract where
    `contract` says on a tier with corpora: the whole corpus is in each task's JSON), and write
    both configurations of each tier into `folder`."""
    by_id = {spec.id: spec for spec in families}
    configs = []
    for tier in tiers:
        corpora = get_tier(tier).corpus is not None
        rows = [
            _row(task, by_id[task.family])
            for task in generate_tasks(
                families,
                seeds,
                distractors,
                tier,
                corpus_size if corpora else None,
                contract if corpora else DEFAULT_CONTRACT,
            )
        ]
        frames = {
            "tasks": _frame(TASK_COLUMNS, rows),
            "model_views": _frame(VIEW_COLUMNS, [r.view for r in rows]),
        }
        configs += [_write(folder, tier, kind, frames[kind]) for kind in KINDS]
    return tuple(configs)
