"""The runner: a system over tasks into a run folder, resumable. Each finished task is appended
and flushed at once, so an interrupted run loses at most the requests in flight, and running it
again skips what is recorded (and retries what ended in error). One process writes a run folder
at a time (`run_lock`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Coroutine, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, ParamSpec

from .._provenance import installed_versions, package_version
from .._warn import warn
from ..systems import ResponseRecord, System, answering_repeat
from ..tasks import ScenarioFile, Task, Tier, count_tasks, iter_tasks, scenario_hash, view_for
from ._store import (
    MANIFEST,
    RESPONSES,
    RunCounts,
    RunError,
    RunManifest,
    RunState,
    count_records,
    drop_error_records,
    made_with,
    now,
    open_run_file,
    read_manifest,
    records_of_run,
    run_differences,
    run_lock,
    set_aside_torn_tail,
    task_set,
    version_changes,
    write_manifest,
)

P = ParamSpec("P")
Progress = Callable[[ResponseRecord, int, int], None]
"""Called after each record with (record, done, total)."""


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
    corpus_size: int | None = None,
    retry_errors: bool = True,
    repeats: int = 1,
) -> RunManifest:
    """Run `system` over every task of `families` at `seeds`, resuming a run already in `run_dir`
    (from inside an event loop: a notebook cell, a server; `run_system` starts its own).

    Resuming sets aside a torn last line (`set_aside_torn_tail`), warns (PebWarning) about
    corrupt, repeated and foreign records, and runs again every task whose record is an error
    (the new record replaces it) unless `retry_errors` is False. Only records of the run's own
    system and tasks count. Another process writing `run_dir` at the time, a folder holding
    responses without a manifest (whose replies nothing vouches for), or a file that cannot be
    read or written, is a RunError.

    Args:
        system: the system to run.
        families: the scenario families to cover.
        run_dir: the run folder; created if missing. An existing run must have the same system,
            config (but its `SETTINGS`: a timeout, retries), digests, families and seeds.
        seeds: integer seeds; None for each family's canonical seeds.
        concurrency: how many tasks may be in flight at once.
        progress: called after each finished task.
        limit: run only the first `limit` tasks (a smoke run); recorded in the manifest, so
            only those are scored, and a later run into the folder may extend it.
        distractors: neutral authorized documents added to each task; recorded in the
            manifest, so a resumed run must ask for the same number.
        tier: a registered tier (`paper`, the paper's tasks; `hard`; `agent`, corpora behind
            tools: docs/benchmark.md §7-8); recorded in the manifest.
        corpus_size: documents per task on a tier with corpora (None: its default); recorded
            in the manifest.
        retry_errors: run again the tasks whose record is an error.
        repeats: answer each task this many times (docs/benchmark.md §3, repeats), each
            repeat its own record; recorded in the manifest (a different number is a different
            run). Resuming runs each missing (task, repeat) pair.
    """
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
        corpus_size=corpus_size,
        limit=limit,
        repeats=repeats,
        package_version=package_version(),
        versions=installed_versions(),
        digests=system.digests(),
        scenario_hash=scenario_hash(families, tier),
        started_at=now(),
        state="running",
        counts=RunCounts(n_tasks=n_tasks),
    )
    try:
        with run_lock(run_dir):
            return await _run_locked(
                system, specs, run_dir, manifest, progress, concurrency, retry_errors
            )
    except OSError as exc:  # a full disk, a read-only folder, a file where a folder should be
        raise RunError(f"{exc.filename or run_dir}: {exc.strerror or exc}") from None


async def _run_locked(
    system: System,
    specs: dict[str, ScenarioFile],
    run_dir: Path,
    manifest: RunManifest,
    progress: Progress | None,
    concurrency: int,
    retry_errors: bool,
) -> RunManifest:
    """The body of `run_system_async`, with the run folder locked."""
    if not (run_dir / MANIFEST).exists() and (run_dir / RESPONSES).exists():
        raise RunError(
            f"{run_dir}: holds {RESPONSES} but no {MANIFEST}: replies of an unknown run, not "
            "adopted; choose another --out"
        )
    if (run_dir / MANIFEST).exists():
        old = read_manifest(run_dir)
        differences = run_differences(old, manifest)
        if differences:
            raise RunError(
                f"{run_dir}: holds a different run: {'; '.join(differences)}; choose another --out"
            )
        changes = version_changes(old, manifest)
        if changes:
            warn(f"{run_dir}: resuming a run made with other versions: {'; '.join(changes)}")
        earlier = old.earlier_versions
        if made_with(old) != made_with(manifest):
            earlier = [*earlier, made_with(old)]
        limit = manifest.limit
        covered = None if old.limit is None or limit is None else max(old.limit, limit)
        manifest = manifest.model_copy(
            update={"started_at": old.started_at, "limit": covered, "earlier_versions": earlier}
        )
    write_manifest(run_dir, manifest)

    path = run_dir / RESPONSES
    keys = set(task_set(run_dir, manifest, specs))
    torn = set_aside_torn_tail(path)
    if torn:
        warn(torn)
    records, problems = records_of_run(run_dir, manifest, keys)
    for line in problems:
        warn(line)
    failed = {r.key for r in records if r.status == "error"}
    if retry_errors and failed:
        drop_error_records(path, failed)
        records, _ = records_of_run(run_dir, manifest, keys)

    def ended(state: RunState) -> RunManifest:
        records, _ = records_of_run(run_dir, manifest, keys)
        return manifest.model_copy(
            update={
                "finished_at": now() if state == "finished" else None,
                "state": state,
                "counts": count_records(len(keys), records),
            }
        )

    try:
        await _run_tasks(system, specs, path, manifest, records, progress, concurrency)
    except BaseException:  # stopped early (cancelled, Ctrl-C, a failure): say so if we can
        with contextlib.suppress(OSError, RunError):
            write_manifest(run_dir, ended("interrupted"))
        raise
    manifest = ended("finished")
    write_manifest(run_dir, manifest)
    return manifest


async def _run_tasks(
    system: System,
    specs: dict[str, ScenarioFile],
    path: Path,
    manifest: RunManifest,
    records: list[ResponseRecord],
    progress: Progress | None,
    concurrency: int,
) -> None:
    """Every (task, repeat) of the run without a record in `records`, appended to `path` as it
    ends, each with its repeat index in context (`answering_repeat`)."""
    done = {r.key for r in records}
    gate = asyncio.Semaphore(max(1, concurrency))
    finished = 0
    n_replies = manifest.counts.n_tasks * manifest.repeats

    with open_run_file(path, "a") as out:

        async def one(task: Task, repeat: int) -> None:
            nonlocal finished
            async with gate:
                with answering_repeat(repeat):
                    reply = await system.respond(view_for(system.view, task, specs[task.family]))
            record = ResponseRecord.of_reply(
                task.family, task.task_id, system.name, reply, repeat
            )
            out.write(record.model_dump_json() + "\n")
            out.flush()
            finished += 1
            if progress:
                progress(record, finished, n_replies)

        pending = []
        tasks = iter_tasks(
            specs.values(),
            manifest.seeds,
            manifest.distractors,
            manifest.tier,
            manifest.corpus_size,
        )
        for task in islice(tasks, manifest.counts.n_tasks):
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


def _in_own_loop(
    run: Callable[P, Coroutine[Any, Any, RunManifest]],
) -> Callable[P, RunManifest]:
    def blocking(*args: P.args, **kwargs: P.kwargs) -> RunManifest:
        return asyncio.run(run(*args, **kwargs))

    blocking.__doc__ = f"`{run.__name__}` (same arguments) in an event loop of its own."
    return blocking


run_system = _in_own_loop(run_system_async)


def run_folder_name(
    system: System,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    tier: Tier = "paper",
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
    if tier != "paper":  # paper-tier folders keep the names they had before tiers
        what["tier"] = tier
    if corpus_size is not None:
        what["corpus_size"] = corpus_size
    if repeats != 1:  # folders of runs without repeats keep the names they had
        what["repeats"] = repeats
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.@-]+", "_", system.name).strip("_")
    return f"{slug}-{'' if tier == 'paper' else tier + '-'}{digest[:10]}"


_NAME = re.compile(r"[A-Za-z0-9_.@-]+")


def is_run_name(name: str) -> bool:
    """Whether `name` can name a run folder: letters, digits and `. _ @ -`, not only dots."""
    return bool(_NAME.fullmatch(name)) and name.strip(".") != ""


def launch_folder(
    system: System,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    tier: Tier = "paper",
    name: str = "",
    *,
    several: bool = False,
    corpus_size: int | None = None,
    repeats: int = 1,
) -> Path:
    """Where a launched run goes, below the launch root: `name` if given (for one of `several`
    systems launched together, `name/<run_folder_name>`), else `run_folder_name`."""
    folder = run_folder_name(system, families, seeds, tier, corpus_size, repeats)
    if not name:
        return Path(folder)
    return Path(name) / folder if several else Path(name)
