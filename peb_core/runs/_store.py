"""Run folders on disk: `<dir>/manifest.json` (what the run was) and `<dir>/responses.jsonl`
(one record per task, appended as each task finishes), with `<dir>/.lock` held by the process
writing it and `<dir>/responses.jsonl.torn` keeping any torn last line set aside."""

from __future__ import annotations

import fcntl
import os
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationError,
    model_validator,
)

from .._gc import gc_paused
from .._provenance import PACKAGE
from ..systems import MAX_REPEATS, ResponseRecord
from ..tasks import (
    DEFAULT_CONTRACT,
    DEFAULT_TIER,
    MAX_DISTRACTORS,
    MAX_SEED,
    ContractSource,
    ScenarioFile,
    Task,
    Tier,
    format_seeds,
    iter_tasks,
    load_families,
    task_keys,
)

RunState = Literal["running", "finished", "interrupted"]
RunKind = Literal["one_shot", "episodes"]
"""What each reply of a run is: a system's answer to a view of the task (`one_shot`), or an
agent's episode over the task's tools (`episodes`, each record with its trace)."""

MANIFEST = "manifest.json"
RESPONSES = "responses.jsonl"
LOCK = ".lock"
SETTINGS = frozenset({"timeout_s", "retries"})
"""Config fields that say how patiently a system asked, not what it asked: recorded in the
manifest, but a run resumed with other values is the same run (so tasks that timed out can be
retried with a longer timeout)."""


class RunCounts(BaseModel):
    """How a run went: tasks, replies obtained (`ok`), errors and agent episodes that ended
    without a submit (`no_submit`), tokens and cost (None when any reply's price is unknown)."""

    model_config = ConfigDict(extra="forbid")

    n_tasks: int
    ok: int = 0
    error: int = 0
    no_submit: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _earlier_counts(cls, data: Any) -> Any:
        """Manifests written before replies were read at scoring time counted `invalid` replies
        apart; they were replies, so they count as `ok`."""
        if isinstance(data, dict) and "invalid" in data:
            data = dict(data)
            data["ok"] = data.get("ok", 0) + data.pop("invalid")
        return data


class RunManifest(BaseModel):
    """What a run was: enough to regenerate its tasks and rescore its responses."""

    model_config = ConfigDict(extra="forbid")

    system: str
    config: dict[str, Any] = {}
    families: list[str]
    seeds: list[Annotated[int, Field(ge=0, le=MAX_SEED)]] | None
    """None: each family's canonical seeds."""
    distractors: Annotated[int, Field(ge=0, le=MAX_DISTRACTORS)] = 0
    """Neutral authorized documents added to each task (a generation parameter)."""
    tier: Tier = DEFAULT_TIER
    """A registered tier (a generation parameter)."""
    kind: RunKind = "one_shot"
    """Whether each reply is an agent's episode (recorded by the writer; manifests written
    before it was are read by `_earlier_kind`)."""
    corpus_size: Annotated[int, Field(ge=1)] | None = None
    """Documents per task on a tier with corpora (a generation parameter); None: the tier's
    default, or a tier without corpora."""
    contract: ContractSource | None = None
    """Where the tasks' contract is found on a tier with corpora (a generation parameter,
    `--contract`): `given` or `corpus`; None on another tier (and in manifests written before
    it was recorded), read as `given`."""
    limit: PositiveInt | None = None
    """Only the first `limit` tasks (a smoke run); a later run into the folder may extend it."""
    repeats: Annotated[int, Field(ge=1, le=MAX_REPEATS)] = 1
    """How many times each task is answered (`--repeats`; 1 in manifests written before)."""
    package_version: str
    versions: dict[str, str] = {}
    """Python's version and each `VERSIONED` package's (those installed) in the process that last
    wrote the run; empty in manifests written before versions were recorded."""
    earlier_versions: list[dict[str, str]] = []
    """`made_with` of each earlier writer whose versions differed, oldest first: a run resumed
    under other versions keeps what made its first records."""
    digests: dict[str, str] = {}
    """sha256 of what the replies depend on beyond `config` (`System.digests`): `protocol_text`,
    the prompt protocol's own text; `model_file`, an embedded model's GGUF file. A different one
    is a different run. Empty for baselines and in manifests written before digests were."""
    scenario_hash: str
    started_at: str
    finished_at: str | None = None
    state: RunState = "finished"
    """As the writer last left it: `running` while it runs (read it through `run_state`, which
    knows a writer that died), `interrupted` when it stopped early (Stop, Ctrl-C, a failure)."""
    counts: RunCounts

    @model_validator(mode="before")
    @classmethod
    def _earlier_kind(cls, data: Any) -> Any:
        """Manifests written before runs recorded their kind: an agent's run is the one whose
        config records a disclosure mode (every agent system's did), or an MCP client's."""
        if isinstance(data, dict) and "kind" not in data:
            config = data.get("config") or {}
            system = str(data.get("system", ""))
            agent = "disclosure" in config or system.startswith("mcp:")
            data = {**data, "kind": "episodes" if agent else "one_shot"}
        return data

    @model_validator(mode="before")
    @classmethod
    def _earlier_state(cls, data: Any) -> Any:
        """Manifests written before runs recorded their state: finished if they say when."""
        if isinstance(data, dict) and "state" not in data:
            data = {**data, "state": "finished" if data.get("finished_at") else "interrupted"}
        return data


class RunError(ValueError):
    """A run folder that cannot be used as asked; one line."""


def made_with(manifest: RunManifest) -> dict[str, str]:
    """Every version a manifest records, this package's first."""
    return {PACKAGE: manifest.package_version, **manifest.versions}


def version_changes(old: RunManifest, new: RunManifest) -> list[str]:
    """`<name> <old> -> <new>` for each version in which the process resuming a run (`new`)
    differs from the one that last wrote it (`old`), and for each digest `old` did not record:
    worth a warning, not a different run."""
    a, b = made_with(old), made_with(new)
    missing = "not installed" if old.versions else "unrecorded"
    changes = [
        f"{name} {a.get(name, missing)} -> {b.get(name, 'not installed')}"
        for name in dict.fromkeys([*a, *b])
        if a.get(name) != b.get(name)
    ]
    return changes + [
        f"{key.replace('_', ' ')} digest unrecorded -> {digest[:12]}"
        for key, digest in new.digests.items()
        if key not in old.digests
    ]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_manifest(run_dir: Path) -> RunManifest:
    path = run_dir / MANIFEST
    try:
        return RunManifest.model_validate_json(path.read_bytes())
    except (FileNotFoundError, NotADirectoryError):
        raise RunError(f"{run_dir}: not a run folder (no {MANIFEST})") from None
    except OSError as exc:
        raise RunError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"])) or "<file>"
        raise RunError(f"{path}: {where}: {err['msg']}") from None


def run_differences(old: RunManifest, new: RunManifest) -> list[str]:
    """`<field> <old> -> <new>` for each field in which two manifests are different runs: the
    system, each config field but the SETTINGS (a timeout, retries), families, seeds,
    distractors, tier, corpus size, contract source, repeats, (for the same families) the
    scenario files, and
    each digest
    both record (a different prompt text or model file). Versions are not among them
    (`version_changes`)."""

    def fields(m: RunManifest) -> dict[str, str]:
        return {
            "system": m.system,
            **{k: str(v) for k, v in m.config.items() if k not in SETTINGS},
            "families": ",".join(m.families),
            "seeds": format_seeds(m.seeds),
            "distractors": str(m.distractors),
            "tier": m.tier,
            "corpus size": "default" if m.corpus_size is None else str(m.corpus_size),
            "contract": m.contract or DEFAULT_CONTRACT,
            "repeats": str(m.repeats),
            "scenario files": m.scenario_hash[:12],
        }

    a, b = fields(old), fields(new)
    if old.families != new.families:  # other families: their files differ as a matter of course
        a.pop("scenario files"), b.pop("scenario files")
    for key in sorted(old.digests.keys() & new.digests.keys()):  # older manifests lack some
        name = key.replace("_", " ")
        a[name], b[name] = old.digests[key][:12], new.digests[key][:12]
    return [
        f"{name} {a.get(name, '-')} -> {b.get(name, '-')}"
        for name in dict.fromkeys([*a, *b])
        if a.get(name) != b.get(name)
    ]


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold `<run_dir>/.lock` exclusively (the folder is created if need be) while the body runs,
    with this process's pid in it; the lock goes with the process, however it ends. A RunError
    naming the holder's pid if another process holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / LOCK).open("a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise RunError(
                f"{run_dir}: another process (pid {holder}) is writing this run; "
                "wait for it to finish or choose another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield


def is_locked(run_dir: Path) -> bool:
    """Whether a writer (in this process or another) holds `<run_dir>/.lock` now."""
    try:
        handle = (run_dir / LOCK).open("rb")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def run_state(run_dir: Path, manifest: RunManifest | None = None) -> RunState:
    """A run's state now: its manifest's, except that a run whose writer is gone (killed, the
    machine restarted) is `interrupted`."""
    manifest = manifest or read_manifest(run_dir)
    if manifest.state == "running" and not is_locked(run_dir):
        return "interrupted"
    return manifest.state


class RunStatus(BaseModel):
    """What a run folder holds now, for a person deciding whether to trust it."""

    state: RunState
    n_tasks: int
    repeats: int = 1
    """Replies each task is due (`--repeats`): a run holds n_tasks x repeats records."""
    ok: int
    errors: int
    missing: int
    """(Task, repeat) pairs without a record (pending while the run is running)."""
    no_submit: int = 0
    """Agent episodes that ended without a submit (a finished task: the system's failure, not
    the run's)."""
    reasons: list[tuple[str, int]]
    """The commonest error reasons (at most three) with their counts."""

    @property
    def clean(self) -> bool:
        """Finished with a reply for every task."""
        return self.state == "finished" and not self.errors and not self.missing

    def summary(self) -> str:
        """One line: `finished: 72 tasks, 66 replies, 6 errors (6 x timeout)`."""
        tasks = f"{self.n_tasks} tasks" + (f" x {self.repeats} repeats" if self.repeats > 1 else "")
        parts = [tasks, f"{self.ok} replies"]
        if self.no_submit:
            parts.append(f"{self.no_submit} without a submit")
        if self.errors:
            why = "; ".join(f"{n} x {reason}" for reason, n in self.reasons)
            parts.append(f"{self.errors} errors ({why})")
        if self.missing:
            parts.append(f"{self.missing} {'pending' if self.state == 'running' else 'missing'}")
        return f"{self.state}: {', '.join(parts)}"


def run_status(run_dir: Path) -> RunStatus:
    """`RunStatus` of a run folder, from its manifest, its records and its lock."""
    manifest = read_manifest(run_dir)
    keys = set(task_set(run_dir, manifest, load_families()))
    records, _ = records_of_run(run_dir, manifest, keys)
    errors = Counter(
        ((r.error or "").strip().splitlines() or ["(no reason given)"])[0][:200]
        for r in records
        if r.status == "error"
    )
    n_errors = sum(errors.values())
    no_submit = sum(r.status == "no_submit" for r in records)
    return RunStatus(
        state=run_state(run_dir, manifest),
        n_tasks=len(keys),
        repeats=manifest.repeats,
        ok=len(records) - n_errors - no_submit,
        errors=n_errors,
        no_submit=no_submit,
        missing=len(keys) * manifest.repeats - len(records),
        reasons=errors.most_common(3),
    )


def regular_file(path: Path) -> Path:
    """`path`, unless it is there as something other than a regular file (a link, a folder, a
    FIFO, a device): a RunError naming it, so a run never writes through a link into another
    run's file, nor blocks on a pipe."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        what = "a link" if path.is_symlink() else "not a regular file"
        raise RunError(f"{path}: is {what}; a run folder's files must be regular files")
    return path


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    tmp = run_dir / (MANIFEST + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, run_dir / MANIFEST)


def read_records(path: Path, system: str | None = None) -> tuple[list[ResponseRecord], list[str]]:
    """The records of a responses file, and one line per corrupt or repeated record skipped; a
    RunError if the file is there but cannot be read (a folder, say). Given the run's `system`,
    records of any other system are set aside first (one line says how many): they are not
    this run's replies, and a record of the run's own system for the same task still counts."""
    records: list[ResponseRecord] = []
    problems: list[str] = []
    seen: set[tuple[str, str, int]] = set()
    others: list[tuple[int, str]] = []
    if not path.exists():
        return records, problems
    with _opened(path) as handle, gc_paused():
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
            if system is not None and record.system != system:
                others.append((number, record.system))
                continue
            key = record.key
            if key in seen:
                again = f" (repeat {record.repeat})" if record.repeat else ""
                problems.append(
                    f"{path}:{number}: repeated record for {record.task_id}{again} skipped"
                )
                continue
            seen.add(key)
            records.append(record)
    if others:
        number, other = others[0]
        problems.append(
            f"{path}: {len(others)} record(s) of another system set aside, not scored (e.g. "
            f"line {number}: {other!r}; this run's system is {system!r})"
        )
    return records, problems


@contextmanager
def _opened(path: Path, mode: str = "rb") -> Iterator[Any]:
    """`path` opened in binary `mode`, or a RunError naming it (a folder, say)."""
    try:
        handle = path.open(mode)
    except OSError as exc:
        raise RunError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with handle:
        yield handle


def set_aside_torn_tail(path: Path) -> str | None:
    """If the responses file `path` does not end with a newline (a write cut short by a crash or
    a full disk), append its partial last line to `<path>.torn` after a line naming where it came
    from, cut it from `path`, and return one line saying so; else None."""
    if not path.exists():
        return None
    with _opened(path, "r+b") as handle:
        lines = end = position = 0
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            if b"\n" in chunk:
                lines += chunk.count(b"\n")
                end = position + chunk.rindex(b"\n") + 1
            position += len(chunk)
        if end == position:
            return None
        handle.seek(end)
        tail = handle.read()
        side = path.with_name(path.name + ".torn")
        with side.open("ab") as out:
            out.write(f"# {path.name} line {lines + 1}, set aside {now()}\n".encode())
            out.write(tail + b"\n")
            out.flush()
            os.fsync(out.fileno())
        handle.truncate(end)
    return (
        f"{path}:{lines + 1}: torn last line ({len(tail)} bytes of a write cut short) "
        f"set aside in {side}"
    )


def drop_error_records(path: Path, keys: Collection[tuple[str, str, int]]) -> None:
    """Rewrite the responses file `path` without the error records of the (family, task id,
    repeat) `keys`, every other line kept as it is; atomically (a temporary file, then a
    rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with _opened(path) as source, tmp.open("wb") as target:
        for line in source:
            try:
                record = ResponseRecord.model_validate_json(line)
            except ValidationError:
                record = None
            if record and record.status == "error" and record.key in keys:
                continue
            target.write(line)
        target.flush()
        os.fsync(target.fileno())
    os.replace(tmp, path)


def task_set(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[tuple[str, str]]:
    """The (family, task id) of each task a run covers, in order, without generating them."""
    specs = _specs(run_dir, manifest, families)
    return list(islice(task_keys(specs, manifest.seeds, manifest.tier), manifest.limit))


def records_of_run(
    run_dir: Path, manifest: RunManifest, keys: Collection[tuple[str, str]]
) -> tuple[list[ResponseRecord], list[str]]:
    """The records of a run folder that count, those of the run's system for its tasks `keys`
    (`task_set`) and its repeats, and one line per problem met: corrupt, repeated, another
    system's, or for a task or repeat outside the run (`read_records`, `records_within`)."""
    path = run_dir / RESPONSES
    records, problems = read_records(path, manifest.system)
    records, foreign = records_within(path, records, keys, manifest.repeats)
    return records, [*problems, *foreign]


def records_within(
    path: Path,
    records: Sequence[ResponseRecord],
    keys: Collection[tuple[str, str]],
    repeats: int = 1,
) -> tuple[list[ResponseRecord], list[str]]:
    """The records of tasks in `keys` and repeats below `repeats`, and one line reporting the
    others of each kind (ignored: they do not count and are not scored)."""
    outside = [r for r in records if (r.family, r.task_id) not in keys]
    beyond = [r for r in records if (r.family, r.task_id) in keys and r.repeat >= repeats]
    inside = [r for r in records if (r.family, r.task_id) in keys and r.repeat < repeats]
    problems = []
    if outside:
        problems.append(
            f"{path}: {len(outside)} record(s) for tasks outside this run ignored "
            f"(e.g. {outside[0].family}/{outside[0].task_id})"
        )
    if beyond:
        problems.append(
            f"{path}: {len(beyond)} record(s) for repeats beyond this run's {repeats} ignored "
            f"(e.g. {beyond[0].family}/{beyond[0].task_id} repeat {beyond[0].repeat})"
        )
    return inside, problems


def _specs(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[ScenarioFile]:
    missing = [f for f in manifest.families if f not in families]
    if missing:
        raise RunError(f"{run_dir}: family {missing[0]!r} is not among the loaded scenarios")
    return [families[f] for f in manifest.families]


def run_tasks(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[Task]:
    """Regenerate the tasks a run covers, and only those: a run limited to 5 tasks over a
    hundred thousand seeds generates 5."""
    specs = _specs(run_dir, manifest, families)
    tasks = iter_tasks(
        specs,
        manifest.seeds,
        manifest.distractors,
        manifest.tier,
        manifest.corpus_size,
        manifest.contract or DEFAULT_CONTRACT,
    )
    with gc_paused():
        return list(islice(tasks, manifest.limit))


def count_records(n_tasks: int, records: Sequence[ResponseRecord]) -> RunCounts:
    costs = [r.usage.cost_usd for r in records]
    return RunCounts(
        n_tasks=n_tasks,
        ok=sum(r.status == "ok" for r in records),
        error=sum(r.status == "error" for r in records),
        no_submit=sum(r.status == "no_submit" for r in records),
        prompt_tokens=sum(r.usage.prompt_tokens or 0 for r in records),
        completion_tokens=sum(r.usage.completion_tokens or 0 for r in records),
        cost_usd=sum(c for c in costs if c is not None) if None not in costs else None,
    )
