"""Runs on disk: `<dir>/manifest.json` and `<dir>/responses.jsonl` (one record per task).

Each finished task is appended and flushed at once, so an interrupted run loses at most the
requests in flight, and running it again skips what is recorded. Scores are never stored: they are
recomputed from the responses.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from itertools import islice
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ._gc import gc_paused
from .generate import count_tasks, generate_tasks, iter_tasks
from .responses import ResponseRecord
from .scenarios import ScenarioFile, scenario_hash
from .systems import System
from .tasks import Task
from .views import boundary_view, model_view, system_view

MANIFEST = "manifest.json"
RESPONSES = "responses.jsonl"


class RunCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n_tasks: int
    ok: int = 0
    invalid: int = 0
    error: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


class RunManifest(BaseModel):
    """What a run was: enough to regenerate its tasks and rescore its responses."""

    model_config = ConfigDict(extra="forbid")

    system: str
    config: dict[str, Any] = {}
    families: list[str]
    seeds: list[int] | None
    """None: each family's canonical seeds."""
    distractors: int = 0
    """Neutral authorized documents added to each task (a generation parameter)."""
    limit: int | None = None
    """Only the first `limit` tasks (a smoke run); a later run into the folder may extend it."""
    package_version: str
    scenario_hash: str
    started_at: str
    finished_at: str | None = None
    counts: RunCounts


class RunError(ValueError):
    """A run folder that cannot be used as asked; one line."""


def package_version() -> str:
    try:
        return version("partial-evidence-bench")
    except PackageNotFoundError:
        return "0+unknown"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_manifest(run_dir: Path) -> RunManifest:
    path = run_dir / MANIFEST
    try:
        return RunManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise RunError(f"{run_dir}: not a run folder (no {MANIFEST})") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"])) or "<file>"
        raise RunError(f"{path}: {where}: {err['msg']}") from None


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    tmp = run_dir / (MANIFEST + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, run_dir / MANIFEST)


def read_records(path: Path) -> tuple[list[ResponseRecord], list[str]]:
    """The records of a responses file, and one line per corrupt or repeated record skipped."""
    records: list[ResponseRecord] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    if not path.exists():
        return records, problems
    with path.open("rb") as handle, gc_paused():
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = ResponseRecord.model_validate_json(line)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(map(str, err["loc"]))
                detail = f"{where}: {err['msg']}" if where else err["msg"]
                problems.append(f"{path}:{number}: corrupt record skipped ({detail})")
                continue
            key = (record.family, record.task_id)
            if key in seen:
                problems.append(f"{path}:{number}: repeated record for {record.task_id} skipped")
                continue
            seen.add(key)
            records.append(record)
    return records, problems


def run_tasks(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[Task]:
    """Regenerate the tasks a run covers."""
    missing = [f for f in manifest.families if f not in families]
    if missing:
        raise RunError(f"{run_dir}: family {missing[0]!r} is not among the loaded scenarios")
    return generate_tasks(
        [families[f] for f in manifest.families], manifest.seeds, manifest.distractors
    )[: manifest.limit]


def _view(system: System, task: Task, spec: ScenarioFile) -> Any:
    if system.view == "model":
        return model_view(task, spec)
    if system.view == "boundary":
        return boundary_view(task, spec)
    if system.view == "system":
        return system_view(task, spec)
    return task


Progress = Callable[[ResponseRecord, int, int], None]
"""Called after each record with (record, done, total)."""


def run_system(
    system: System,
    families: Sequence[ScenarioFile],
    run_dir: Path,
    *,
    seeds: Sequence[int] | None = None,
    concurrency: int = 8,
    progress: Progress | None = None,
    limit: int | None = None,
    distractors: int = 0,
) -> RunManifest:
    """Run `system` over every task of `families` at `seeds`, resuming a run already in `run_dir`.

    Args:
        system: the system to run.
        families: the scenario families to cover.
        run_dir: the run folder; created if missing. An existing run must have the same system,
            config, families and seeds.
        seeds: integer seeds; None for each family's canonical seeds.
        concurrency: how many tasks may be in flight at once.
        progress: called after each finished task.
        limit: run only the first `limit` tasks (a smoke run); recorded in the manifest, so
            only those are scored, and a later run into the folder may extend it.
        distractors: neutral authorized documents added to each task; recorded in the
            manifest, so a resumed run must ask for the same number.
    """
    return asyncio.run(
        run_system_async(
            system,
            families,
            run_dir,
            seeds=seeds,
            concurrency=concurrency,
            progress=progress,
            limit=limit,
            distractors=distractors,
        )
    )


async def run_system_async(
    system: System,
    families: Sequence[ScenarioFile],
    run_dir: Path,
    *,
    seeds: Sequence[int] | None = None,
    concurrency: int = 8,
    progress: Progress | None = None,
    limit: int | None = None,
    distractors: int = 0,
) -> RunManifest:
    """`run_system` for callers already inside an event loop (a notebook cell, a server)."""
    specs = {spec.id: spec for spec in families}
    n_every = count_tasks(families, seeds)
    n_tasks = n_every if limit is None else min(limit, n_every)
    manifest = RunManifest(
        system=system.name,
        config=system.config(),
        families=list(specs),
        seeds=list(seeds) if seeds is not None else None,
        distractors=distractors,
        limit=limit,
        package_version=package_version(),
        scenario_hash=scenario_hash(),
        started_at=_now(),
        counts=RunCounts(n_tasks=n_tasks),
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    if (run_dir / MANIFEST).exists():
        old = read_manifest(run_dir)
        same = ("system", "config", "families", "seeds", "distractors", "scenario_hash")
        if old.model_dump(include=set(same)) != manifest.model_dump(include=set(same)):
            raise RunError(
                f"{run_dir}: holds a different run ({old.system}, {', '.join(old.families)}, "
                f"distractors {old.distractors}, "
                f"scenarios {old.scenario_hash[:12]}); choose another --out"
            )
        covered = None if old.limit is None or limit is None else max(old.limit, limit)
        manifest = manifest.model_copy(update={"started_at": old.started_at, "limit": covered})
    write_manifest(run_dir, manifest)

    path = run_dir / RESPONSES
    done_records, _ = read_records(path)
    done = {(r.family, r.task_id) for r in done_records}
    gate = asyncio.Semaphore(max(1, concurrency))
    finished = 0

    with path.open("a", encoding="utf-8") as out:

        async def one(task: Task) -> None:
            nonlocal finished
            async with gate:
                reply = await system.respond(_view(system, task, specs[task.family]))
            record = ResponseRecord(
                family=task.family, task_id=task.task_id, system=system.name, **dict(reply)
            )
            out.write(record.model_dump_json() + "\n")
            out.flush()
            finished += 1
            if progress:
                progress(record, finished, n_tasks)

        pending = []
        for task in islice(iter_tasks(families, seeds, distractors), n_tasks):
            if (task.family, task.task_id) in done:
                finished += 1
                continue
            pending.append(asyncio.ensure_future(one(task)))
            # Let the first requests go out while the later tasks are generated.
            await asyncio.sleep(0)
        await asyncio.gather(*pending)

    records, _ = read_records(path)
    covered = n_every if manifest.limit is None else min(manifest.limit, n_every)
    manifest = manifest.model_copy(
        update={"finished_at": _now(), "counts": count_records(covered, records)}
    )
    write_manifest(run_dir, manifest)
    return manifest


def count_records(n_tasks: int, records: Sequence[ResponseRecord]) -> RunCounts:
    costs = [r.usage.cost_usd for r in records]
    return RunCounts(
        n_tasks=n_tasks,
        ok=sum(r.status == "ok" for r in records),
        invalid=sum(r.status == "invalid" for r in records),
        error=sum(r.status == "error" for r in records),
        prompt_tokens=sum(r.usage.prompt_tokens or 0 for r in records),
        completion_tokens=sum(r.usage.completion_tokens or 0 for r in records),
        cost_usd=sum(c for c in costs if c is not None) if None not in costs else None,
    )
