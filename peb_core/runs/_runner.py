"""The runner: a system over tasks into a run folder, resumable. Each finished task is appended
and flushed at once (through the one `RunWriter`), so an interrupted run loses at most the
requests in flight, and running it again skips what is recorded (and retries what ended in
error). One process writes a run folder at a time (its lock)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from .._warn import warn
from ..systems import ResponseRecord, System, answering_repeat
from ..tasks import DEFAULT_TIER, ScenarioFile, Task, Tier, count_tasks, iter_tasks, view_for
from ._spec import RunPlan, plan_for
from ._store import RunError, RunManifest
from ._writer import RunWriter, new_manifest

Progress = Callable[[ResponseRecord, int, int], None]
"""Called after each record with (record, done, total)."""


async def run_async(
    plan: RunPlan,
    run_dir: Path,
    *,
    progress: Progress | None = None,
    gates: Sequence[asyncio.Semaphore] | None = None,
) -> RunManifest:
    """Run `plan`'s system over its tasks into `run_dir`, resuming a run already there (from
    inside an event loop: a notebook cell, a server; `run` starts its own).

    The folder is written by a `RunWriter` (the resume rule: the same run is resumed, its
    error records run again unless the spec's `retry_errors` is off; another run, or a file
    that cannot be read or written, is a RunError). Each (task, repeat) without a record is
    answered, at most the spec's `concurrency` at once (or, given `gates`, holding each of them:
    a sweep's budget shared by its runs, a provider's limit), and its record appended as it
    ends; `progress` is called after each."""
    system = plan.system
    if system is None:
        raise ValueError("a run plan without a system of ours is run by its front-end")
    spec = plan.spec
    families = plan.selection.families
    n_every = count_tasks(families, plan.seeds)
    manifest = new_manifest(
        system=system.name,
        config=system.config(),
        families=families,
        seeds=plan.seeds,
        tier=plan.tier,
        kind="episodes" if plan.episodes else "one_shot",
        n_tasks=n_every if spec.limit is None else min(spec.limit, n_every),
        distractors=plan.selection.distractors,
        corpus_size=plan.corpus_size,
        limit=spec.limit,
        repeats=spec.repeats,
        digests=system.digests(),
    )
    try:
        with RunWriter.resume(
            run_dir, manifest, families, retry_errors=spec.retry_errors
        ) as writer:
            for line in writer.problems:
                warn(line)
            held = [asyncio.Semaphore(spec.concurrency)] if gates is None else list(gates)
            await _run_tasks(system, families, writer, progress, held)
            return writer.close("finished")
    except OSError as exc:  # a full disk, a read-only folder, a file where a folder should be
        raise RunError(f"{exc.filename or run_dir}: {exc.strerror or exc}") from None


async def _run_tasks(
    system: System,
    families: Sequence[ScenarioFile],
    writer: RunWriter,
    progress: Progress | None,
    gates: Sequence[asyncio.Semaphore],
) -> None:
    """Every (task, repeat) of the run without a record, appended as it ends, each answered
    holding every one of `gates`, with its repeat index in context (`answering_repeat`)."""
    specs = {spec.id: spec for spec in families}
    manifest = writer.manifest
    done = writer.done
    finished = 0
    n_replies = len(writer.keys) * manifest.repeats

    async def one(task: Task, repeat: int) -> None:
        nonlocal finished
        async with contextlib.AsyncExitStack() as held:
            for gate in gates:
                await held.enter_async_context(gate)
            with answering_repeat(repeat):
                reply = await system.respond(view_for(system.view, task, specs[task.family]))
        record = ResponseRecord.of_reply(task.family, task.task_id, system.name, reply, repeat)
        writer.append(record)
        finished += 1
        if progress:
            progress(record, finished, n_replies)

    pending = []
    tasks = iter_tasks(
        families, manifest.seeds, manifest.distractors, manifest.tier, manifest.corpus_size
    )
    for task in islice(tasks, len(writer.keys)):
        for repeat in range(manifest.repeats):
            if (task.family, task.task_id, repeat) in done:
                finished += 1
                continue
            pending.append(asyncio.ensure_future(one(task, repeat)))
        # Let the first requests go out while the later tasks are generated.
        await asyncio.sleep(0)
    try:
        await asyncio.gather(*pending)
    finally:  # a write failed, or the run was stopped: stop the rest before the file closes
        for future in pending:
            future.cancel()


def run(plan: RunPlan, run_dir: Path, *, progress: Progress | None = None) -> RunManifest:
    """`run_async` in an event loop of its own."""
    return asyncio.run(run_async(plan, run_dir, progress=progress))


def run_system(
    system: System,
    families: Sequence[ScenarioFile],
    run_dir: Path,
    *,
    progress: Progress | None = None,
    **options: Any,
) -> RunManifest:
    """Run a system object (one built by hand, as a library user or a test does) over
    `families` into `run_dir`: `options` are RunSpec fields (`seeds` as a list or text,
    `tier`, `limit`, `repeats`, `concurrency`, `corpus_size`, `distractors`, `retry_errors`),
    checked as any front-end's (a RunSpecError names what is refused)."""
    return run(plan_for(system, families, **options), run_dir, progress=progress)


async def run_system_async(
    system: System,
    families: Sequence[ScenarioFile],
    run_dir: Path,
    *,
    progress: Progress | None = None,
    **options: Any,
) -> RunManifest:
    """`run_system` from inside an event loop."""
    return await run_async(plan_for(system, families, **options), run_dir, progress=progress)


def run_folder_name(
    system: System,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    tier: Tier = DEFAULT_TIER,
    corpus_size: int | None = None,
    repeats: int = 1,
) -> str:
    """The folder a run of `system` over `families` at `seeds` on `tier` is saved in (below a
    runs root): readable, and the same for the same system, config, families, seeds, tier,
    corpus size and repeats, so asking for the same run again resumes it (an unchanged run
    costs nothing)."""
    what: dict[str, object] = {
        "system": system.name,
        "config": system.config(),
        "families": [f.id for f in families],
        "seeds": list(seeds) if seeds is not None else None,
    }
    if tier != DEFAULT_TIER:  # paper-tier folders keep the names they had before tiers
        what["tier"] = tier
    if corpus_size is not None:
        what["corpus_size"] = corpus_size
    if repeats != 1:  # folders of runs without repeats keep the names they had
        what["repeats"] = repeats
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.@-]+", "_", system.name).strip("_")
    return f"{slug}-{'' if tier == DEFAULT_TIER else tier + '-'}{digest[:10]}"


_NAME = re.compile(r"[A-Za-z0-9_.@-]+")


def is_run_name(name: str) -> bool:
    """Whether `name` can name a run folder: letters, digits and `. _ @ -`, not only dots."""
    return bool(_NAME.fullmatch(name)) and name.strip(".") != ""


def launch_folder(plan: RunPlan, name: str = "", *, several: bool = False) -> Path:
    """Where a launched run goes, below the launch root: `name` if given (for one of `several`
    systems launched together, `name/<run_folder_name>`), else `run_folder_name`."""
    assert plan.system is not None
    folder = run_folder_name(
        plan.system,
        plan.selection.families,
        plan.seeds,
        plan.tier,
        plan.corpus_size,
        plan.spec.repeats,
    )
    if not name:
        return Path(folder)
    return Path(name) / folder if several else Path(name)
