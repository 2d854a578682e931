"""Sweeps (`peb sweep FILE.toml`): a matrix of runs declared in one file, every run a `RunSpec`.
The file's `[base]` holds options every run shares and `[matrix]` lists values of any options to
cross (systems x tiers x protocols x disclosure modes x repeats, ...); each combination is a run
checked as any front-end's (`plan_run`), made into its own folder below the sweep's folder
(every distinct run its own: an option that is not part of what a run is may not be crossed),
all runs at once under one concurrency budget and per-provider limits. Asked again, the sweep
resumes every run (the runner's resume rule), so a sweep stopped anywhere, even killed, is
finished by the same command. The sweep's folder is a folder of runs, so `peb score SWEEP/`,
`peb compare` and the notebooks read it as one table; its listing (`sweep.json`) only grows, and
names folders inside it. inspect's `eval-set` is the model."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import reprlib
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
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
    options,
    plan_run,
    read_values,
)
from ._store import MANIFEST, RunError, RunManifest

SWEEP = "sweep.json"
"""The file in a sweep's folder that lists its runs (written each time a sweep is made there,
keeping every run listed before)."""
MAX_RUNS = 1_000
"""The most runs one sweep may expand to."""
MAX_PATH_BYTES = 4_095
"""The longest path of a run's file Linux takes (PATH_MAX, its final NUL aside)."""


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

    model_config = ConfigDict(extra="forbid", strict=True)

    concurrency: Annotated[int, Ge(1), Le(1_024)] = 8
    limits: dict[str, Annotated[int, Ge(1), Le(1_024)]] = {}
    base: dict[str, Any] = {}
    matrix: dict[str, Annotated[list[Any], Field(min_length=1)]] = {}


@dataclass(frozen=True)
class Sweep:
    """A sweep checked and planned: each run's plan and its folder, the budget and limits, and
    the runs its folder listed before (`sweep.json`'s entries, kept when it is written)."""

    runs: tuple[tuple[RunPlan, Path], ...]
    concurrency: int
    limits: dict[str, int]
    listed: tuple[dict[str, Any], ...] = ()

    def listing(self, out: Path) -> list[dict[str, Any]]:
        """What the sweep's folder `out` lists once it is made (`sweep.json`'s entries): every
        run listed before, in its place, then this sweep's other runs."""
        merged = {entry["folder"]: entry for entry in self.listed}
        for plan, folder in self.runs:
            name = folder.relative_to(out).as_posix()
            merged[name] = {"folder": name, "spec": plan.spec.model_dump(mode="json")}
        return list(merged.values())


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
        if err["type"] == "extra_forbidden":
            what = f"not a key of a sweep file; valid: {', '.join(SweepFile.model_fields)}"
        else:
            what = f"{err['msg']}, got {reprlib.repr(err['input'])}"
        raise SweepError([f"{path}: {where}: {what}"]) from None


def expand(sweep: SweepFile, path: Path) -> list[RunSpec]:
    """Each run of `sweep`: every combination of the matrix's values over the base, as a
    RunSpec. An option that does not apply to a combination (a protocol for a baseline, a
    disclosure mode for a one-shot system) is left at its default there when it applies to
    another combination, so combinations that then coincide are one run; one that applies to
    none is refused. A SweepError lists every value refused and every combination that cannot
    run, named by where it stands in the file."""
    n_runs = math.prod(len(values) for values in sweep.matrix.values())
    if n_runs > MAX_RUNS:  # counted before anything is built
        raise SweepError([f"{path}: the matrix makes {n_runs:,} runs; at most {MAX_RUNS:,}"])
    problems = []
    named = {n: f"base.{n}" for n in sweep.base}
    base, refused = read_values(sweep.base, named, strict=True)
    problems += [f"{path}: {p}" for p in refused]
    declared = options()
    columns: list[list[tuple[str, Any]]] = []
    for name, values in sweep.matrix.items():
        if name not in declared:
            problems.append(
                f"{path}: matrix.{name}: not a run option; valid: {', '.join(declared)}"
            )
            continue
        if name in sweep.base:
            problems.append(f"{path}: matrix.{name}: also in base; give it in one of them")
        if not declared[name].identity and len(values) > 1:
            problems.append(
                f"{path}: matrix.{name}: {name} is not part of what a run is (it says how a run "
                "is made, not what it measures), so runs that differ only in it would be one "
                "run in one folder; give it once, in base"
            )
        column = []
        for i, raw in enumerate(values):
            fields, refused = read_values({name: raw}, {name: f"matrix.{name}[{i}]"}, strict=True)
            problems += [f"{path}: {p}" for p in refused]
            column.append((name, fields.get(name, default(name))))
        columns.append(column)
    if problems:
        raise SweepError(problems)
    specs = [RunSpec.of(**(base | dict(choice))) for choice in itertools.product(*columns)]
    somewhere = {n for n in declared if any(applies_to(n, spec) for spec in specs)}
    kept = [_applying(spec, somewhere) for spec in specs]
    return list({spec.model_dump_json(): spec for spec in kept}.values())


def _applying(spec: RunSpec, somewhere: set[str]) -> RunSpec:
    """`spec` with each option given that does not apply to it but does to another run of the
    sweep (among `somewhere`, those that apply to some run) left at its default."""
    kept = {}
    for name in spec.model_fields_set:
        if not applies_to(name, spec) and name in somewhere:
            continue
        kept[name] = getattr(spec, name)
    return RunSpec.of(**kept)


def plan_sweep(path: Path, out: Path) -> Sweep:
    """The sweep file at `path` read, expanded, each run checked and planned into its folder
    below `out` (named as the workbench names a launched run; runs whose folders coincide are
    one run). The runs `out` lists already (`sweep.json`, a sweep made there before, from this
    file or another) are kept in its listing. Nothing is written and no embedded model is
    started unless every run passes its checks. A SweepError lists every problem."""
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
    runs: dict[Path, RunPlan] = {}
    try:
        for spec in specs:
            try:
                plan = plan_run(spec, names)
            except RunSpecError as exc:
                raise SweepError([f"{path}: {_label(spec)}: {p}" for p in exc.problems]) from None
            folder = out / launch_folder(plan)
            if folder in runs:  # the same run, as its folder tells it
                plan.release()
                continue
            runs[folder] = plan
            problem = _unmakeable(folder)
            if problem:
                raise SweepError([f"{path}: {_label(spec)}: {problem}"])
        listed = _listed_before(out)
        providers = sorted({provider(plan) for plan in runs.values()})
        unknown = [p for p in sweep.limits if p not in providers]
        if unknown:
            raise SweepError(
                [
                    f"{path}: limits.{unknown[0]}: no run of this sweep goes to provider "
                    f"{unknown[0]!r}; its runs go to: {', '.join(providers)}"
                ]
            )
    except BaseException:
        for made in runs.values():
            made.release()
        raise
    limits = dict(sweep.limits)
    if "local" in providers:
        limits.setdefault("local", EMBEDDED_CONCURRENCY)
    planned = tuple((plan, folder) for folder, plan in runs.items())
    return Sweep(planned, sweep.concurrency, limits, tuple(listed))


def _listed_before(out: Path) -> list[dict[str, Any]]:
    """The entries of the listing in `out` made by earlier sweeps (none if there is none); a
    SweepError for one that cannot be read, which would be replaced."""
    try:
        if not (out / SWEEP).exists():
            return []
        return _listing(out)
    except (OSError, RunError) as exc:
        why = f"{out / SWEEP}: {exc.strerror}" if isinstance(exc, OSError) else str(exc)
        raise SweepError([f"{why}; it would be replaced: choose another --out"]) from None


def _unmakeable(folder: Path) -> str | None:
    """Why a run's `folder` cannot be made (a path too long for the file system), or None."""
    whole = len(os.fsencode(folder.absolute() / MANIFEST))
    if whole > MAX_PATH_BYTES:
        return (
            f"its manifest's path would be {whole:,} bytes, at most {MAX_PATH_BYTES:,}; "
            "choose a shorter --out"
        )
    return None


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
    run's progress callback. The listing keeps every run listed before (`Sweep.listing`)."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (SWEEP + ".tmp")
    tmp.write_text(json.dumps({"runs": sweep.listing(out)}, indent=2) + "\n", encoding="utf-8")
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


def sweep_runs(folder: Path, problems: list[str] | None = None) -> list[Path]:
    """The run folders a sweep's folder lists (`sweep.json`), in the sweep's order, each once
    and only those made (holding a manifest), with a line in `problems` for each listed twice
    or not made. A RunError if the listing cannot be read, lists no run, or names a folder
    outside the sweep's (`_listing`)."""
    where = folder / SWEEP
    told = problems if problems is not None else []
    found: dict[Path, Path] = {}
    for entry in _listing(folder):
        run = folder / entry["folder"]
        if run.resolve() in found:
            told.append(f"{where}: lists the run {entry['folder']} twice; it counts once")
        elif not (run / MANIFEST).is_file():
            told.append(
                f"{where}: lists the run {entry['folder']}, which was not made (no "
                f"{MANIFEST}); the same peb sweep makes it"
            )
        else:
            found[run.resolve()] = run
    return list(found.values())


def _listing(folder: Path) -> list[dict[str, Any]]:
    """The entries of the listing in a sweep's `folder` (`{"folder": ..., "spec": ...}`, the
    folder relative to the sweep's); a RunError (one line) for a listing that cannot be read,
    lists no run, or names a folder that is not one inside the sweep's (an absolute path, a
    `..`, a link leading out, a control character)."""
    where = folder / SWEEP
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise RunError(f"{where}: not a sweep's listing ({why})") from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list) or not all(
        isinstance(run, dict) and isinstance(run.get("folder"), str) for run in runs
    ):
        raise RunError(f'{where}: not a sweep\'s listing; expected {{"runs": [{{"folder": ...}}]}}')
    if not runs:
        raise RunError(f"{where}: lists no run")
    inside = folder.resolve()
    for run in runs:
        name = run["folder"]
        parts = PurePosixPath(name).parts
        if not name.isprintable() or not parts:
            raise RunError(f"{where}: lists {name!r}, not a folder's path inside the sweep")
        if (
            PurePosixPath(name).is_absolute()
            or ".." in parts
            or not (folder / name).resolve().is_relative_to(inside)
        ):
            raise RunError(
                f"{where}: lists {name!r}, outside the sweep's folder; a sweep lists only the "
                "runs inside it"
            )
    return runs
