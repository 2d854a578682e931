"""The runner: a system over tasks into a run folder, resumable. Each finished task is appended
and flushed at once, so an interrupted run loses at most the requests in flight, and running it
again skips what is recorded."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from itertools import islice
from pathlib import Path

from ..systems import ResponseRecord, System
from ..tasks import ScenarioFile, Task, Tier, count_tasks, iter_tasks, scenario_hash, view_for
from ._store import (
    MANIFEST,
    RESPONSES,
    RunCounts,
    RunError,
    RunManifest,
    count_records,
    now,
    package_version,
    read_manifest,
    read_records,
    write_manifest,
)

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
    tier: Tier = "paper",
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
        tier: `paper` (the paper's tasks) or `hard` (docs/benchmark.md §7); recorded in the
            manifest.
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
            tier=tier,
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
    tier: Tier = "paper",
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
        tier=tier,
        limit=limit,
        package_version=package_version(),
        scenario_hash=scenario_hash(families),
        started_at=now(),
        counts=RunCounts(n_tasks=n_tasks),
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    if (run_dir / MANIFEST).exists():
        old = read_manifest(run_dir)
        same = ("system", "config", "families", "seeds", "distractors", "tier", "scenario_hash")
        if old.model_dump(include=set(same)) != manifest.model_dump(include=set(same)):
            raise RunError(
                f"{run_dir}: holds a different run ({old.system}, {', '.join(old.families)}, "
                f"distractors {old.distractors}, tier {old.tier}, "
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
                reply = await system.respond(view_for(system.view, task, specs[task.family]))
            record = ResponseRecord(
                family=task.family, task_id=task.task_id, system=system.name, **dict(reply)
            )
            out.write(record.model_dump_json() + "\n")
            out.flush()
            finished += 1
            if progress:
                progress(record, finished, n_tasks)

        pending = []
        for task in islice(iter_tasks(families, seeds, distractors, tier), n_tasks):
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
        update={"finished_at": now(), "counts": count_records(covered, records)}
    )
    write_manifest(run_dir, manifest)
    return manifest


def run_folder_name(
    system: System,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    tier: Tier = "paper",
) -> str:
    """The folder a run of `system` over `families` at `seeds` on `tier` is saved in (below a
    runs root): readable, and the same for the same system, config, families, seeds and tier,
    so asking for the same run again resumes it (an unchanged run costs nothing)."""
    what: dict[str, object] = {
        "system": system.name,
        "config": system.config(),
        "families": [f.id for f in families],
        "seeds": list(seeds) if seeds is not None else None,
    }
    if tier != "paper":  # paper-tier folders keep the names they had before tiers
        what["tier"] = tier
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.@-]+", "_", system.name).strip("_")
    return f"{slug}-{'' if tier == 'paper' else tier + '-'}{digest[:10]}"


async def launch_run_async(
    system: System,
    families: Sequence[ScenarioFile],
    root: Path,
    *,
    seeds: Sequence[int] | None = None,
    tier: Tier = "paper",
    concurrency: int = 8,
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[Path, RunManifest]:
    """Run `system` into `root / run_folder_name(...)`, resuming what is already recorded there
    (so the same request twice costs nothing the second time; model replies are also cached by
    the model system). `on_progress(done, total)` is called after each new record."""
    run_dir = Path(root) / run_folder_name(system, families, seeds, tier)
    manifest = await run_system_async(
        system,
        families,
        run_dir,
        seeds=seeds,
        tier=tier,
        concurrency=concurrency,
        progress=(lambda _r, done, total: on_progress(done, total)) if on_progress else None,
    )
    return run_dir, manifest
