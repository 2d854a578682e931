"""The one writer of run folders: `peb run`, `peb mcp serve` and `peb import inspect` all build a
run's manifest with `new_manifest` and write its records through a `RunWriter`, under the
folder's lock, by one resume rule (`RunWriter.resume`)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from .._provenance import installed_versions, package_version
from ..systems import ResponseRecord, sections_read
from ..tasks import ContractSource, ScenarioFile, Tier, scenario_hash
from ._store import (
    MANIFEST,
    RESPONSES,
    RecordTally,
    RunCounts,
    RunError,
    RunKind,
    RunManifest,
    RunState,
    drop_error_records,
    iter_run_records,
    made_with,
    now,
    open_run_file,
    read_manifest,
    run_differences,
    run_lock,
    set_aside_torn_tail,
    task_set,
    version_changes,
    write_manifest,
)


def new_manifest(
    *,
    system: str,
    config: Mapping[str, Any],
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    tier: Tier,
    kind: RunKind,
    n_tasks: int,
    distractors: int = 0,
    corpus_size: int | None = None,
    contract: ContractSource | None = None,
    limit: int | None = None,
    repeats: int = 1,
    digests: Mapping[str, str] | None = None,
    versions: Mapping[str, str] | None = None,
) -> RunManifest:
    """The manifest of a run that starts now (`running`): what it is (its system, config,
    tasks, kind) and what made it (this package's version, Python's and the `VERSIONED`
    packages', and any `versions` the front-end adds, such as the mcp SDK's; the scenario files'
    hash). The one place a manifest is made."""
    return RunManifest(
        system=system,
        config=dict(config),
        families=[spec.id for spec in families],
        seeds=list(seeds) if seeds is not None else None,
        distractors=distractors,
        tier=tier,
        kind=kind,
        corpus_size=corpus_size,
        contract=contract,
        limit=limit,
        repeats=repeats,
        package_version=package_version(),
        versions={**installed_versions(), **(versions or {})},
        digests=dict(digests or {}),
        scenario_hash=scenario_hash(families, tier, sections_read(config.get("protocol"))),
        started_at=now(),
        state="running",
        counts=RunCounts(n_tasks=n_tasks),
    )


class RunWriter:
    """A run folder being written: its manifest, the tally of the records that count (their
    keys, statuses and usage: `RecordTally`, never the records), and the responses file open
    for appending. Made by `RunWriter.resume` (or `write_run` for a whole run at once),
    only with the folder's lock held.

    Records are appended and flushed one by one, so a stopped run loses nothing it recorded;
    `checkpoint` writes the manifest with the counts so far; `close` ends the run (`finished`
    or `interrupted`)."""

    def __init__(
        self,
        run_dir: Path,
        manifest: RunManifest,
        keys: Collection[tuple[str, str]],
        tally: RecordTally,
        problems: list[str],
    ) -> None:
        self.run_dir = run_dir
        self.manifest = manifest
        self.keys = keys
        self.tally = tally
        self.problems = problems
        """What resuming met that a user should hear of (a torn line set aside, corrupt or
        foreign records, versions that changed), one line each."""
        self._out: TextIO | None = None
        """The responses file open for appending; None until the run has a system (a
        front-end that learns it once a task starts: until then nothing is written, so a
        server stopped before any task leaves no file)."""
        if manifest.system:
            self._out = open_run_file(run_dir / RESPONSES, "a")

    @property
    def done(self) -> set[tuple[str, str, int]]:
        """The (family, task id, repeat) of every record that counts."""
        return set(self.tally.keys)

    @property
    def complete(self) -> bool:
        """Whether every task has a record for each of its repeats."""
        return len(self.tally.keys) >= len(self.keys) * self.manifest.repeats

    @classmethod
    @contextmanager
    def resume(
        cls,
        run_dir: Path,
        manifest: RunManifest,
        families: Sequence[ScenarioFile],
        *,
        retry_errors: bool = True,
        any_system: str | None = None,
    ) -> Iterator[RunWriter]:
        """Lock `run_dir` and open it for `manifest`'s run: a new folder is started; a folder
        holding the same run is resumed (its first start and its records kept, its limit
        widened to cover both, a warning for versions that changed) after setting aside a torn
        last line and, with `retry_errors`, dropping its error records (run again); a folder
        holding another run, or replies without a manifest, is a RunError. The run's tasks are
        those of `manifest` over `families`; records that do not count (corrupt, repeated,
        another system's, of other tasks) are warned of and kept. The records that count are read
        as a stream and tallied (`RecordTally`), never held.

        `any_system`: a prefix such that a folder whose system starts with it is the same run
        whatever follows (an MCP run: `mcp:`, whichever client). If the body raises, the run
        is left `interrupted`. What it met on the way is in the writer's `problems`."""
        with run_lock(run_dir):
            manifest, problems = _adopted(run_dir, manifest, any_system)
            if manifest.system:  # else written once a system claims it
                write_manifest(run_dir, manifest)
            keys = set(task_set(run_dir, manifest, {spec.id: spec for spec in families}))
            path = run_dir / RESPONSES
            torn = set_aside_torn_tail(path)
            problems += [torn] if torn else []
            tally = RecordTally(iter_run_records(run_dir, manifest, keys, problems))
            if retry_errors and tally.failed:
                drop_error_records(path, tally.failed)
                tally = RecordTally(iter_run_records(run_dir, manifest, keys, []))
            writer = cls(run_dir, manifest, keys, tally, problems)
            try:
                yield writer
            except BaseException:  # stopped early: say so if we can
                with contextlib.suppress(OSError, RunError):
                    writer.close("interrupted")
                raise
            finally:
                if writer._out is not None:
                    writer._out.close()

    def claim(self, system: str) -> None:
        """Name the run's system (a front-end that learns it once the run has started: an MCP
        client's name); a RunError if the folder records another."""
        if self.manifest.system and self.manifest.system != system:
            raise RunError(f"{self.run_dir}: records the system {self.manifest.system!r}")
        if not self.manifest.system:
            self.manifest = self.manifest.model_copy(update={"system": system})
            write_manifest(self.run_dir, self.manifest)
            self._out = open_run_file(self.run_dir / RESPONSES, "a")

    def append(self, record: ResponseRecord) -> None:
        """Append `record` to the responses file, flushed at once (a RunError before the run
        has a system: `claim`)."""
        if self._out is None:
            raise RunError(f"{self.run_dir}: no system has claimed this run; nothing to record")
        self._out.write(record.model_dump_json() + "\n")
        self._out.flush()
        self.tally.add(record)

    def checkpoint(self) -> None:
        """Write the manifest with the counts so far."""
        self.manifest = self.manifest.model_copy(
            update={"counts": self.tally.counts(len(self.keys))}
        )
        write_manifest(self.run_dir, self.manifest)

    def close(self, state: RunState | None = None) -> RunManifest:
        """End the run: `finished` (the default when every task has its records) or
        `interrupted`, with its counts; the manifest as written (not written for a run no
        system has claimed: nothing was recorded)."""
        state = state or ("finished" if self.complete else "interrupted")
        self.manifest = self.manifest.model_copy(
            update={
                "finished_at": now() if state == "finished" else None,
                "state": state,
                "counts": self.tally.counts(len(self.keys)),
            }
        )
        if self.manifest.system:
            write_manifest(self.run_dir, self.manifest)
        return self.manifest


def _adopted(
    run_dir: Path, manifest: RunManifest, any_system: str | None
) -> tuple[RunManifest, list[str]]:
    """`manifest` as it continues the run already in `run_dir` (or as given, for a new run),
    and a line naming the versions that changed: the resume rule."""
    if not (run_dir / MANIFEST).exists() and not _empty(run_dir / RESPONSES):
        raise RunError(
            f"{run_dir}: holds {RESPONSES} but no {MANIFEST}: replies of an unknown run, not "
            "adopted; choose another --out"
        )
    if not (run_dir / MANIFEST).exists():
        return manifest, []
    old = read_manifest(run_dir)
    system = manifest.system
    if any_system is not None and old.system.startswith(any_system):
        system = old.system
    differences = run_differences(old, manifest.model_copy(update={"system": system}))
    if any_system is not None and not old.system.startswith(any_system):
        differences.insert(0, f"system {old.system} -> {any_system}<client>")
    if differences:
        raise RunError(
            f"{run_dir}: holds a different run: {'; '.join(differences)}; choose another --out"
        )
    changes = version_changes(old, manifest)
    problems = (
        [f"{run_dir}: resuming a run made with other versions: {'; '.join(changes)}"]
        if changes
        else []
    )
    earlier = old.earlier_versions
    if made_with(old) != made_with(manifest):
        earlier = [*earlier, made_with(old)]
    limit = manifest.limit
    covered = None if old.limit is None or limit is None else max(old.limit, limit)
    adopted = manifest.model_copy(
        update={
            "system": system,
            "started_at": old.started_at,
            "limit": covered,
            "earlier_versions": earlier,
        }
    )
    return adopted, problems


def _empty(path: Path) -> bool:
    """Whether `path` is missing or an empty regular file (it holds no replies: a server
    stopped before any task once left one, without a manifest)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def write_run(
    run_dir: Path,
    manifest: RunManifest,
    families: Sequence[ScenarioFile],
    records: Sequence[ResponseRecord],
    state: RunState | None = None,
) -> RunManifest:
    """Write a whole run folder at once (an import from another harness): `records` of the
    run's tasks (over `families`), then the manifest with their counts, left `state` (default:
    `finished` if every task has its records, else `interrupted`), through a `RunWriter`. A
    RunError if `run_dir` already holds a run or another process is writing it."""
    if (run_dir / MANIFEST).exists() or (run_dir / RESPONSES).exists():
        raise RunError(f"{run_dir}: holds a run already; choose another --out")
    with RunWriter.resume(run_dir, manifest, families) as writer:
        for record in records:
            writer.append(record)
        return writer.close(state)
