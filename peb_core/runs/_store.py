"""Run folders on disk: `<dir>/manifest.json` (what the run was) and `<dir>/responses.jsonl`
(one record per task, appended as each task finishes), with `<dir>/.lock` held by the process
writing it and `<dir>/responses.jsonl.torn` keeping any torn last line set aside.

Every file of a run folder is opened through `open_run_file`: a regular file or a RunError, never
a symbolic link followed into another run, a FIFO waited on or a device read without end. Records
are read as a stream (`iter_records`, `iter_run_records`) in bounded memory: a line longer than
`MAX_RECORD_BYTES` is read through and skipped, not held, and a file of corrupt lines reports the
first `MAX_REPORTED_LINES` of them and counts the rest."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from itertools import count as itertools_count
from itertools import islice
from pathlib import Path
from shutil import copyfileobj
from typing import IO, Annotated, Any, BinaryIO, Literal, TextIO, overload

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


MCP_PREFIX = "mcp:"
"""How the system of a run served over MCP is named (`mcp:<client>:<protocol>`): its episodes
hold the client's tool calls and none of its messages, which the server never sees."""


class RunCounts(BaseModel):
    """How a run went: tasks, replies obtained (`ok`), errors, agent episodes that ended
    without a submit (`no_submit`) and agent episodes handed to a human (`escalated`; left out
    of the JSON when 0, so manifests of runs without are as before), tokens and cost (None when
    any reply's price is unknown)."""

    model_config = ConfigDict(extra="forbid")

    n_tasks: int
    ok: int = 0
    error: int = 0
    no_submit: int = 0
    escalated: int = Field(default=0, exclude_if=lambda n: n == 0)
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
            agent = "disclosure" in config or system.startswith(MCP_PREFIX)
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


MAX_RECORD_BYTES = 64 * 2**20
"""The longest line of a responses file read as a record (64 MiB): over a thousand times the
largest record an agent baseline writes on 500-document corpora (about 52 KB, a whole trace of
searches and opens), and far above a model agent's within its step and token budgets. A longer
line is read through without being held, reported and skipped."""
MAX_MANIFEST_BYTES = 16 * 2**20
"""The largest manifest read (16 MiB; one listing 100,000 seeds takes about 1.2 MB)."""
MAX_REPORTED_LINES = 10
"""Lines of a responses file reported one by one (corrupt, too long, repeated); past these, one
line counts the rest."""

_MODES = {
    "rb": os.O_RDONLY,
    "r+b": os.O_RDWR,
    "ab": os.O_WRONLY | os.O_APPEND | os.O_CREAT,
    "a": os.O_WRONLY | os.O_APPEND | os.O_CREAT,
    "a+": os.O_RDWR | os.O_APPEND | os.O_CREAT,
    "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
}
RunFileMode = Literal["rb", "r+b", "ab", "a", "a+", "wb", "w"]


def file_kind(mode: int) -> str:
    """What a file that is not regular is, by its `st_mode`, for a message."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: Path, mode: int) -> RunError:
    return RunError(f"{path}: is {file_kind(mode)}, not a regular file; a run's files must be")


@overload
def open_run_file(path: Path, mode: Literal["rb", "r+b", "ab", "wb"] = "rb") -> BinaryIO: ...


@overload
def open_run_file(path: Path, mode: Literal["a", "a+", "w"]) -> TextIO: ...


def open_run_file(path: Path, mode: RunFileMode = "rb") -> IO[Any]:
    """A file of a run folder opened in `mode` (text modes in UTF-8; `a`, `ab`, `a+`, `w` and
    `wb` create it), if it is a regular file: never a symbolic link followed (into another run's
    file, or /dev/zero), never a FIFO waited on, never a device or folder read. Anything else
    is a RunError naming the file in one line, as is a file that cannot be opened;
    FileNotFoundError (NotADirectoryError) if it, or its folder, is missing (a file) and `mode`
    does not create it."""
    flags = _MODES[mode] | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):  # a symlink, a FIFO with no
            # reader (for writing), a folder (for writing)
            with suppress(OSError):
                raise _not_regular(path, os.lstat(path).st_mode) from None
        raise RunError(f"{path}: cannot open ({exc.strerror or exc})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _not_regular(path, info.st_mode)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    if "b" in mode:
        return os.fdopen(fd, mode)
    return os.fdopen(fd, mode, encoding="utf-8")


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
    """The manifest of `run_dir`; a RunError (one line) if it is missing, not a regular file,
    larger than MAX_MANIFEST_BYTES or not a manifest."""
    path = run_dir / MANIFEST
    try:
        with open_run_file(path) as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            raise RunError(f"{path}: larger than {MAX_MANIFEST_BYTES:,} bytes; not a manifest")
        return RunManifest.model_validate_json(data)
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
        f"{name} {a.get(name, '-')} -> {b.get(name, '-')}" + _why(name, new)
        for name in dict.fromkeys([*a, *b])
        if a.get(name) != b.get(name)
    ]


def _why(name: str, manifest: RunManifest) -> str:
    """Why field `name` of a run may have changed where no option did: the prompt's text."""
    if name != "protocol text":
        return ""
    if manifest.kind == "episodes":
        return (
            " (what the agent is told changed: its prompt names every registered tool, so a "
            "tool registered or removed since the run was recorded changes it, as a new "
            "protocol text or prompt option does)"
        )
    return " (what the model is told changed: a new protocol text or prompt option)"


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold `<run_dir>/.lock` exclusively (the folder is created if need be) while the body runs,
    with this process's pid in it; the lock goes with the process, however it ends. A RunError
    naming the holder's pid if another process holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with open_run_file(run_dir / LOCK, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read(100).strip() or "unknown"
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
    """Whether a writer (in this process or another) holds `<run_dir>/.lock` now; a RunError if
    the lock is there but not a regular file."""
    try:
        handle = open_run_file(run_dir / LOCK)
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
    escalated: int = 0
    """Agent episodes handed to a human (`escalate`): a finished task, its decision a handoff."""
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
        if self.escalated:
            parts.append(f"{self.escalated} escalated")
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
    statuses: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for r in iter_run_records(run_dir, manifest, keys, []):
        statuses[r.status] += 1
        if r.status == "error":
            errors[((r.error or "").strip().splitlines() or ["(no reason given)"])[0][:200]] += 1
    return RunStatus(
        state=run_state(run_dir, manifest),
        n_tasks=len(keys),
        repeats=manifest.repeats,
        ok=statuses["ok"],
        errors=statuses["error"],
        no_submit=statuses["no_submit"],
        escalated=statuses["escalated"],
        missing=len(keys) * manifest.repeats - statuses.total(),
        reasons=errors.most_common(3),
    )


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    """`manifest` into `run_dir` atomically (a temporary file, then a rename)."""
    tmp = run_dir / (MANIFEST + ".tmp")
    with open_run_file(tmp, "w") as out:
        out.write(manifest.model_dump_json(indent=2) + "\n")
    os.replace(tmp, run_dir / MANIFEST)


def read_records(path: Path, system: str | None = None) -> tuple[list[ResponseRecord], list[str]]:
    """The records of a responses file (`iter_records`, held in a list), and one line per
    problem met."""
    problems: list[str] = []
    with gc_paused():
        records = list(iter_records(path, system, problems))
    return records, problems


def iter_records(path: Path, system: str | None, problems: list[str]) -> Iterator[ResponseRecord]:
    """The records of a responses file as it is read, one at a time; a RunError if the file is
    there but cannot be read or is not a regular file (a FIFO, a device, a symbolic link; a
    missing file holds no records). Corrupt lines, lines longer than MAX_RECORD_BYTES (read
    through without being held) and repeated records (the first counts) are skipped, each
    reported in a line added to `problems`, the first MAX_REPORTED_LINES of them one by one and
    the rest counted once the file is read. Given the run's `system`, records of any other system
    are set aside first (one line, once the file is read, says how many): they are not this
    run's replies, and a record of the run's own system for the same task still counts."""
    seen: set[tuple[str, str, int]] = set()
    others = 0
    first_other = (0, "")
    skipped = 0

    def reported() -> bool:
        """Count a line skipped: whether it is among those reported one by one (what is wrong
        with it is worked out only then: a million corrupt lines cost no million messages)."""
        nonlocal skipped
        skipped += 1
        return skipped <= MAX_REPORTED_LINES

    try:
        handle = open_run_file(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    with handle:
        for number, line in _lines(handle, path):
            where = f"{path}:{number}"
            if isinstance(line, int):
                if reported():
                    problems.append(
                        f"{where}: record of {line:,} bytes skipped (at most {MAX_RECORD_BYTES:,})"
                    )
                continue
            text = line.lstrip()  # the line itself (no copy) unless it starts with a space
            if not text:
                continue
            if text[:1] != b"{":  # no record, and a parse costs: skipped at once
                if reported():
                    problems.append(f"{where}: corrupt record skipped (not a JSON object)")
                continue
            try:
                record = ResponseRecord.model_validate_json(line)
            except ValidationError as exc:
                if reported():
                    problems.append(f"{where}: corrupt record skipped ({_first_error(exc)})")
                continue
            if system is not None and record.system != system:
                others += 1
                first_other = first_other if others > 1 else (number, record.system)
                continue
            key = record.key
            if key in seen:
                again = f" (repeat {record.repeat})" if record.repeat else ""
                if reported():
                    problems.append(f"{where}: repeated record for {record.task_id}{again} skipped")
                continue
            seen.add(key)
            yield record
    if skipped > MAX_REPORTED_LINES:
        problems.append(
            f"{path}: {skipped - MAX_REPORTED_LINES:,} more corrupt, overlong or repeated "
            f"line(s) skipped ({skipped:,} in all; the first {MAX_REPORTED_LINES} are listed)"
        )
    if others:
        number, other = first_other
        problems.append(
            f"{path}: {others} record(s) of another system set aside, not scored (e.g. "
            f"line {number}: {other!r}; this run's system is {system!r})"
        )


def _first_error(exc: ValidationError) -> str:
    """`<where>: <what>` of a validation error's first error."""
    err = exc.errors()[0]
    where = ".".join(map(str, err["loc"]))
    return f"{where}: {err['msg']}" if where else err["msg"]


def _lines(handle: IO[bytes], path: Path) -> Iterator[tuple[int, bytes | int]]:
    """Each line of a responses file with its number: its bytes, or for a line longer than
    MAX_RECORD_BYTES its length, read through in pieces and never held whole."""
    try:
        for number in itertools_count(1):
            line = handle.readline(MAX_RECORD_BYTES + 1)
            if not line:
                return
            if _overlong(line):
                size = len(line)
                del line
                yield number, size + _rest_of_line(handle)
            else:
                yield number, line
    except OSError as exc:
        raise RunError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _overlong(line: bytes) -> bool:
    """Whether `line`, as `readline(MAX_RECORD_BYTES + 1)` read it, is the start of a longer
    line."""
    return len(line) > MAX_RECORD_BYTES and not line.endswith(b"\n")


def _rest_of_line(handle: IO[bytes], sink: Callable[[bytes], object] | None = None) -> int:
    """The length of the rest of the line `handle` is in, read in 1 MiB pieces (each given to
    `sink`, if any)."""
    size = 0
    while True:
        piece = handle.readline(1 << 20)
        size += len(piece)
        if sink is not None:
            sink(piece)
        if not piece or piece.endswith(b"\n"):
            return size


def set_aside_torn_tail(path: Path) -> str | None:
    """If the responses file `path` does not end with a newline (a write cut short by a crash or
    a full disk), append its partial last line to `<path>.torn` after a line naming where it came
    from, cut it from `path`, and return one line saying so; else None."""
    try:
        handle = open_run_file(path, "r+b")
    except (FileNotFoundError, NotADirectoryError):
        return None
    with handle:
        lines = end = position = 0
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            if b"\n" in chunk:
                lines += chunk.count(b"\n")
                end = position + chunk.rindex(b"\n") + 1
            position += len(chunk)
        if end == position:
            return None
        handle.seek(end)
        side = path.with_name(path.name + ".torn")
        with open_run_file(side, "ab") as out:
            out.write(f"# {path.name} line {lines + 1}, set aside {now()}\n".encode())
            copyfileobj(handle, out, 1 << 20)
            out.write(b"\n")
            out.flush()
            os.fsync(out.fileno())
        handle.truncate(end)
    return (
        f"{path}:{lines + 1}: torn last line ({position - end} bytes of a write cut short) "
        f"set aside in {side}"
    )


def drop_error_records(path: Path, keys: Collection[tuple[str, str, int]]) -> None:
    """Rewrite the responses file `path` without the error records of the (family, task id,
    repeat) `keys`, every other line kept as it is (a line too long to be a record is copied
    through in pieces); atomically (a temporary file, then a rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with open_run_file(path) as source, open_run_file(tmp, "wb") as target:
        while line := source.readline(MAX_RECORD_BYTES + 1):
            if _overlong(line):
                target.write(line)
                _rest_of_line(source, target.write)
                continue
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


def iter_run_records(
    run_dir: Path, manifest: RunManifest, keys: Collection[tuple[str, str]], problems: list[str]
) -> Iterator[ResponseRecord]:
    """The records of a run folder that count, as they are read: those of the run's system for
    its tasks `keys` (`task_set`) and its repeats. Each problem met is a line added to `problems`
    (`iter_records`: corrupt, too long, repeated, another system's), and once the file is read
    one line for the records of tasks outside the run and one for repeats beyond its own
    (ignored: they do not count and are not scored)."""
    path = run_dir / RESPONSES
    n_outside = n_beyond = 0
    outside = beyond = ("", "", 0)  # the first record of each kind
    for record in iter_records(path, manifest.system, problems):
        if (record.family, record.task_id) not in keys:
            n_outside += 1
            outside = outside if n_outside > 1 else record.key
        elif record.repeat >= manifest.repeats:
            n_beyond += 1
            beyond = beyond if n_beyond > 1 else record.key
        else:
            yield record
    if n_outside:
        problems.append(
            f"{path}: {n_outside} record(s) for tasks outside this run ignored "
            f"(e.g. {outside[0]}/{outside[1]})"
        )
    if n_beyond:
        problems.append(
            f"{path}: {n_beyond} record(s) for repeats beyond this run's {manifest.repeats} "
            f"ignored (e.g. {beyond[0]}/{beyond[1]} repeat {beyond[2]})"
        )


def _specs(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[ScenarioFile]:
    missing = [f for f in manifest.families if f not in families]
    if missing:
        raise RunError(f"{run_dir}: family {missing[0]!r} is not among the loaded scenarios")
    return [families[f] for f in manifest.families]


def iter_run_tasks(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> Iterator[Task]:
    """The tasks a run covers, and only those, generated one at a time as they are asked for: a
    run limited to 5 tasks over a hundred thousand seeds generates 5."""
    specs = _specs(run_dir, manifest, families)
    tasks = iter_tasks(
        specs,
        manifest.seeds,
        manifest.distractors,
        manifest.tier,
        manifest.corpus_size,
        manifest.contract or DEFAULT_CONTRACT,
    )
    return islice(tasks, manifest.limit)


def run_tasks(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[Task]:
    """The tasks a run covers (`iter_run_tasks`), held in a list."""
    with gc_paused():
        return list(iter_run_tasks(run_dir, manifest, families))


class RecordTally:
    """What a run's counts need of its records, taken one record at a time (`add`): the key of
    each (family, task id, repeat), the keys of its errors, and its statuses, tokens and cost
    summed; never the records themselves, so a writer holds a few bytes a record however long
    its traces."""

    def __init__(self, records: Iterable[ResponseRecord] = ()) -> None:
        self.keys: set[tuple[str, str, int]] = set()
        self.failed: set[tuple[str, str, int]] = set()
        """The keys of the error records."""
        self._statuses: Counter[str] = Counter()
        self._prompt_tokens = self._completion_tokens = 0
        self._cost: float | None = 0.0
        with gc_paused():
            for record in records:
                self.add(record)

    def add(self, record: ResponseRecord) -> None:
        """Count `record`."""
        self.keys.add(record.key)
        if record.status == "error":
            self.failed.add(record.key)
        self._statuses[record.status] += 1
        usage = record.usage
        self._prompt_tokens += usage.prompt_tokens or 0
        self._completion_tokens += usage.completion_tokens or 0
        cost = usage.cost_usd
        self._cost = None if self._cost is None or cost is None else self._cost + cost

    def counts(self, n_tasks: int) -> RunCounts:
        """The run's counts over its `n_tasks` tasks: its replies by status, tokens and cost
        (None when any reply's price is unknown)."""
        return RunCounts(
            n_tasks=n_tasks,
            ok=self._statuses["ok"],
            error=self._statuses["error"],
            no_submit=self._statuses["no_submit"],
            escalated=self._statuses["escalated"],
            prompt_tokens=self._prompt_tokens,
            completion_tokens=self._completion_tokens,
            cost_usd=self._cost,
        )
