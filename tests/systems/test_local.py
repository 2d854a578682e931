"""Smoke test of every embedded model (`peb run --model local/<name>` over 3 tasks), and the pid
file: never a signal to a process it does not name."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from peb_core import read_manifest, read_records
from peb_core.runs import RESPONSES
from peb_core.systems import REGISTRY
from peb_core.systems._local import file_sha256, gguf_path

ROOT = Path(__file__).resolve().parents[2]

needs_llama_cpp = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama_cpp is not installed (pip install 'partial-evidence-bench[local]')",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@needs_llama_cpp
@pytest.mark.parametrize("name", list(REGISTRY))
def test_local_model_smoke_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    env = dict(os.environ)
    port = str(_free_port())

    def peb(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "peb_core", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )

    try:
        run = peb(
            "run", "--model", f"local/{name}", "--local-port", port, "--seeds", "11",
            "--family", "due_diligence_v1", "--limit", "3", "--out", str(tmp_path / "run"),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert "running" in peb("local-model", "status", name).stdout
    finally:
        assert "stopped" in peb("local-model", "stop", name).stdout
    records, problems = read_records(tmp_path / "run" / RESPONSES)
    assert not problems
    assert len(records) == 3
    assert {r.status for r in records} <= {"ok", "invalid"}
    assert {r.system for r in records} == {f"local/{name}:structured_gap@1"}
    # The GGUF file's digest, as the run cached it (not hashed again here).
    weights = gguf_path(REGISTRY[name])
    assert read_manifest(tmp_path / "run").digests["model_file"] == file_sha256(weights)


@needs_llama_cpp
def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [sys.executable, "-m", "peb_core", "local-model", "serve", "--port", port],
            cwd=ROOT,
            env={**os.environ, "PEB_CACHE_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert f"port {port} is already in use" in done.stderr


def _local_model(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "peb_core", "local-model", *args],
        cwd=ROOT,
        env={**os.environ, "PEB_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]


SERVER_LIKE = [sys.executable, "-c", "import time; time.sleep(60)", "-m", "llama_cpp.server"]
"""A process with `llama_cpp.server` on its command line, as our server has."""


@pytest.mark.parametrize(
    ("command", "content"),
    [
        ([sys.executable, "-c", "import time; time.sleep(60)"], lambda pid: f"{pid} 8765\n"),
        (
            [sys.executable, "-c", "import time; time.sleep(60)"],
            lambda pid: f"{pid} 8765 {_start_time(pid)}\n",
        ),
        (SERVER_LIKE, lambda pid: f"{pid} 8765 {int(_start_time(pid)) - 1}\n"),
    ],
    ids=["old_format", "another_program", "started_at_another_time"],
)
def test_a_reused_pid_is_never_signalled(
    tmp_path: Path, command: list[str], content: Callable[[int], str]
) -> None:
    """The pid file names a pid that another process now has: it is stale, and no signal is
    sent (only a process with our server's command line and start time would get one)."""
    other = subprocess.Popen(command)
    try:
        pid_file = tmp_path / "local" / "smollm2.pid"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(content(other.pid))
        done = _local_model(tmp_path, "stop", "smollm2")
        assert (done.returncode, done.stdout, done.stderr) == (
            0,
            "local/smollm2: was not running\n",
            "",
        )
        assert other.poll() is None  # still running: no signal was sent
        assert not pid_file.exists()  # the stale pid file is gone
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize("garbage", ["", "garbage\n", "12 x 3\n", "\udcff", "1 2 3 4\n"])
def test_a_garbage_pid_file_is_stale(tmp_path: Path, garbage: str) -> None:
    pid_file = tmp_path / "local" / "smollm2.pid"
    pid_file.parent.mkdir(parents=True)
    pid_file.write_bytes(garbage.encode("utf-8", "surrogateescape"))
    status = _local_model(tmp_path, "status", "smollm2")
    assert (status.returncode, status.stdout, status.stderr) == (0, "local/smollm2: stopped\n", "")
    assert not pid_file.exists()
    done = _local_model(tmp_path, "stop", "smollm2")
    assert (done.returncode, done.stdout) == (0, "local/smollm2: was not running\n")


def test_the_server_a_pid_file_names_is_stopped(tmp_path: Path) -> None:
    server = subprocess.Popen(SERVER_LIKE)
    try:
        pid_file = tmp_path / "local" / "smollm2.pid"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(f"{server.pid} 8765 {_start_time(server.pid)}\n")
        status = _local_model(tmp_path, "status", "smollm2")
        assert (
            status.stdout
            == f"local/smollm2: running at http://127.0.0.1:8765/v1 (pid {server.pid})\n"
        )
        done = _local_model(tmp_path, "stop", "smollm2")
        assert (done.returncode, done.stdout) == (0, "local/smollm2: stopped\n")
        assert server.wait(timeout=10) == -signal.SIGTERM
    finally:
        server.kill()
        server.wait()
