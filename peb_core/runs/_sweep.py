"""Sweeps (`peb sweep FILE.toml`): a matrix of runs declared in one file, every run a `RunSpec`.
The file's `[base]` holds options every run shares and `[matrix]` lists values of any options to
cross (systems x tiers x protocols x disclosure modes x repeats, ...); each combination is a run
checked as any front-end's (`plan_run`), made into its own folder below the sweep's folder,
all runs at once under one concurrency budget and per-provider limits. Asked again, the sweep
resumes every run (the runner's resume rule), so a sweep stopped anywhere, even killed, is
finished by the same command. The sweep's folder is a folder of runs, so `peb score SWEEP/`,
`peb compare` and the notebooks read it as one table. inspect's `eval-set` is the model."""

from __future__ import annotations

import asyncio
import itertools
import json
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge, Le
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..systems import AGENT_PREFIX
from ._runner import Progress, launch_folder, run_async
from ._spec import (
    EMBEDDED_CONCURRENCY,
    RunPlan,
    RunSpec,
    RunSpecError,
    applies_to,
    check_spec,
    default,
    naming,
    plan_run,
    read_values,
)
from ._store import RunError, RunManifest

SWEEP = "sweep.json"
"""The file in a sweep's folder that lists its runs (written each time the sweep is made)."""
MAX_RUNS = 1_000
"""The most runs one sweep may expand to."""


class SweepError(ValueError):
    """A sweep file that cannot be run as written: every problem, one line each (the first
    is the message)."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(problems[0])
        self.problems = tuple(problems)


class SweepFile(BaseModel):
    """What a sweep file holds (TOML): `concurrency` (tasks in flight across every run at
    once), `limits` (tasks in flight at once per provider: the part of a model string before
    its `/`, e.g. `openai`, `local`; `baseline` for the baselines; `local`, the embedded
    models, is `EMBEDDED_CONCURRENCY` unless given, as for `peb run`), `base` (run options
    every run takes) and `matrix` (for each option crossed, its values)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: Annotated[int, Ge(1), Le(1_024)] = 8
    limits: dict[str, Annotated[int, Ge(1), Le(1_024)]] = {}
    base: dict[str, Any] = {}
    matrix: dict[str, Annotated[list[Any], Field(min_length=1)]] = {}


@dataclass(frozen=True)
class Sweep:
    """A sweep checked and planned: each run's plan and its folder, the budget and limits."""

    runs: tuple[tuple[RunPlan, Path], ...]
    concurrency: int
    limits: dict[str, int]


def read_sweep(path: Path) -> SweepFile:
    """The sweep file at `path`; a SweepError (one line) for one that cannot be read."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SweepError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SweepError([f"{path}: not TOML ({exc})"]) from None
    try:
        return SweepFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"])) or "<file>"
        raise SweepError([f"{path}: {where}: {err['msg']}"]) from None


def expand(sweep: SweepFile, path: Path) -> list[RunSpec]:
    """Each run of `sweep`: every combination of the matrix's values over the base, as a
    RunSpec. An option that does not apply to a combination (a protocol for a baseline, a
    disclosure mode for a one-shot system) is left at its default there when it applies to
    another combination, so combinations that then coincide are one run; one that applies to
    none is refused. A SweepError lists every value refused and every combination that cannot
    run, named by where it stands in the file."""
    problems = []
    base, refused = read_values(sweep.base, {n: f"base.{n}" for n in sweep.base})
    problems += [f"{path}: {p}" for p in refused]
    columns: list[list[tuple[str, Any]]] = []
    for name, values in sweep.matrix.items():
        if name in sweep.base:
            problems.append(f"{path}: matrix.{name}: also in base; give it in one of them")
        column = []
        for i, raw in enumerate(values):
            fields, refused = read_values({name: raw}, {name: f"matrix.{name}[{i}]"})
            problems += [f"{path}: {p}" for p in refused]
            column.append((name, fields.get(name, default(name))))
        columns.append(column)
    if problems:
        raise SweepError(problems)
    combos = [base | dict(choice) for choice in itertools.product(*columns)]
    if len(combos) > MAX_RUNS:
        raise SweepError([f"{path}: the matrix makes {len(combos):,} runs; at most {MAX_RUNS:,}"])
    specs = [RunSpec.of(**fields) for fields in combos]
    kept = [_applying(spec, specs) for spec in specs]
    return list({spec.model_dump_json(): spec for spec in kept}.values())


def _applying(spec: RunSpec, every: Sequence[RunSpec]) -> RunSpec:
    """`spec` with each option given that does not apply to it but does to another run of the
    sweep left at its default."""
    kept = {}
    for name in spec.model_fields_set:
        value = getattr(spec, name)
        if not applies_to(name, spec) and any(applies_to(name, other) for other in every):
            continue
        kept[name] = value
    return RunSpec.of(**kept)


def plan_sweep(path: Path, out: Path) -> Sweep:
    """The sweep file at `path` read, expanded, each run checked and planned into its folder
    below `out` (named as the workbench names a launched run). Nothing is written and no
    embedded model is started unless every run passes its checks. A SweepError lists every
    problem."""
    sweep = read_sweep(path)
    specs = expand(sweep, path)
    if not specs:
        raise SweepError([f"{path}: no run: give [base] a system or [matrix] systems"])
    names = naming("sweep")
    problems = []
    for spec in specs:
        if spec.system is None:
            problems.append(f"{path}: a run names no system; give base.system or matrix.system")
            break
        problems += [f"{path}: {_label(spec)}: {p}" for p in check_spec(spec, names)]
    if problems:
        raise SweepError(list(dict.fromkeys(problems)))
    runs: list[tuple[RunPlan, Path]] = []
    for spec in specs:
        try:
            plan = plan_run(spec, names)
        except RunSpecError as exc:
            for made, _ in runs:
                made.release()
            raise SweepError([f"{path}: {_label(spec)}: {p}" for p in exc.problems]) from None
        runs.append((plan, out / launch_folder(plan)))
    limits = dict(sweep.limits)
    if any(provider(plan) == "local" for plan, _ in runs):
        limits.setdefault("local", EMBEDDED_CONCURRENCY)
    return Sweep(tuple(runs), sweep.concurrency, limits)


def _label(spec: RunSpec) -> str:
    """A run of a sweep, as a message names it: what sets it apart."""
    set_apart = {n: getattr(spec, n) for n in sorted(spec.model_fields_set) if n != "system"}
    shown = ", ".join(f"{n}={v}" for n, v in set_apart.items())
    return f"run {spec.system}" + (f" ({shown})" if shown else "")


def provider(plan: RunPlan) -> str:
    """The provider a run's requests go to (`openai` for `openai/gpt-4o` or
    `agent:openai/gpt-4o`, `local` for an embedded model), `baseline` for a baseline's."""
    assert plan.system is not None
    name = plan.system.name.removeprefix(AGENT_PREFIX)
    model = getattr(plan.system, "model", None)
    if not isinstance(model, str):
        return "baseline"
    return (model or name).partition("/")[0]


async def run_sweep_async(
    sweep: Sweep, out: Path, *, progress: Callable[[Path], Progress] | None = None
) -> list[tuple[Path, RunManifest | RunError]]:
    """Make every run of `sweep` at once, each resumed from its folder: at most
    `sweep.concurrency` tasks in flight across them all and at most `sweep.limits[p]` for each
    provider `p`. Writes `sweep.json` (the runs and their options) in `out` first. A run that
    cannot be made (its folder holds another run, say) is reported as its RunError and the
    others go on; stopped, every run keeps what it recorded. `progress(folder)` gives each
    run's progress callback."""
    out.mkdir(parents=True, exist_ok=True)
    listing = [
        {"folder": str(folder.relative_to(out)), "spec": plan.spec.model_dump(mode="json")}
        for plan, folder in sweep.runs
    ]
    tmp = out / (SWEEP + ".tmp")
    tmp.write_text(json.dumps({"runs": listing}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / SWEEP)
    shared = asyncio.Semaphore(sweep.concurrency)
    per_provider = {p: asyncio.Semaphore(n) for p, n in sweep.limits.items()}

    async def one(plan: RunPlan, folder: Path) -> tuple[Path, RunManifest | RunError]:
        limit = per_provider.get(provider(plan))
        gates = [shared] if limit is None else [limit, shared]  # one order: no deadlock
        told = progress(folder) if progress is not None else None
        try:
            return folder, await run_async(plan, folder, progress=told, gates=gates)
        except RunError as exc:
            return folder, exc

    return list(await asyncio.gather(*(one(plan, folder) for plan, folder in sweep.runs)))


def sweep_runs(folder: Path) -> list[Path]:
    """The run folders a sweep's folder lists (`sweep.json`), in the sweep's order; a RunError
    if it lists none or cannot be read."""
    try:
        listing = json.loads((folder / SWEEP).read_text(encoding="utf-8"))
        return [folder / run["folder"] for run in listing["runs"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunError(f"{folder}: not a sweep's folder ({SWEEP}: {exc})") from None
