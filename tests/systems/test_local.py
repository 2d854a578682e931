"""Smoke test of every embedded model (`peb run --model local/<name>` over 3 tasks); a server's
life: a run stops the server it started when it ends (however it ends: a `peb run` killed by
SIGTERM included), a server kept by `peb local-model serve` or held by another run serves on,
and `peb local-model` lists and stops every server (the `+tools` ones included); and the pid
file: never a signal to a process it does not name."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli import peb_process

from peb_core import read_manifest, read_records
from peb_core.runs import (
    DEFAULT_CONCURRENCY,
    EMBEDDED_CONCURRENCY,
    EMBEDDED_MAX_STEPS,
    RESPONSES,
    RunSpec,
    naming,
    plan_run,
    plan_sweep,
)
from peb_core.systems import (
    DEFAULT_MAX_STEPS,
    REGISTRY,
    Serving,
    get_server,
    hold_local,
    local_servers,
    local_status,
    serve_local,
    status_line,
)
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
            timeout=600,  # 3 tasks took over 240 s on 2 cores at load 8-12
        )

    try:
        run = peb(
            "run", "--model", f"local/{name}", "--local-port", port, "--seeds", "11",
            "--family", "due_diligence_v1", "--limit", "3", "--out", str(tmp_path / "run"),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        # The run started the server, so it stopped it as it ended.
        assert peb("local-model", "status", name).stdout == f"local/{name}: stopped\n"
    finally:
        peb("local-model", "stop", name)
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
        done = peb_process(
            "local-model", "serve", "--port", port, env={"PEB_CACHE_DIR": str(tmp_path)}
        )
    assert done.returncode == 2
    assert f"port {port} is already in use" in done.stderr


def _local_model(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return peb_process("local-model", *args, env={"PEB_CACHE_DIR": str(cache)})


def _start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended but not yet reaped by its new parent, does
    not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


SERVER_LIKE = [sys.executable, "-c", "import time; time.sleep(60)", "-m", "llama_cpp.server"]
"""A process with `llama_cpp.server` on its command line, as our server has."""


def _server_like() -> subprocess.Popen[bytes]:
    """A SERVER_LIKE process, once its command line is SERVER_LIKE's (a child that has not yet
    replaced the forked test process would be taken for another program, and its pid file for
    a stale one)."""
    server = subprocess.Popen(SERVER_LIKE)
    cmdline = Path(f"/proc/{server.pid}/cmdline")
    deadline = time.monotonic() + 30
    while b"llama_cpp.server" not in cmdline.read_bytes():
        assert time.monotonic() < deadline, "the server-like process did not start"
        time.sleep(0.01)
    return server


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
    server = _server_like()
    try:
        pid_file = tmp_path / "local" / "smollm2.pid"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(f"{server.pid} 8765 {_start_time(server.pid)}\n")
        status = _local_model(tmp_path, "status", "smollm2")
        assert status.stdout == (  # a pid file of three fields (an older peb's): kept
            f"local/smollm2: running at http://127.0.0.1:8765/v1 (pid {server.pid}; served "
            "until peb local-model stop)\n"
        )
        done = _local_model(tmp_path, "stop", "smollm2")
        assert (done.returncode, done.stdout) == (0, "local/smollm2: stopped\n")
        assert server.wait(timeout=10) == -signal.SIGTERM
    finally:
        server.kill()
        server.wait()


def _fake_server(cache: Path, name: str, keeper: str) -> subprocess.Popen[bytes]:
    """A process our pid file names as the server `name` (as `serve_local` or `hold_local`
    wrote it: `keeper` is `serve` or `runs`)."""
    server = _server_like()
    pid_file = cache / "local" / f"{name}.pid"
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(f"{server.pid} 8775 {_start_time(server.pid)} {keeper}\n")
    return server


def test_runs_share_a_server_started_for_runs_and_the_last_to_end_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs hold the server (a sweep's, or two processes'): the first to end leaves it
    serving the other, the last stops it; letting go again does nothing."""
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path))
    tools = get_server("smollm2+tools")
    server = _fake_server(tmp_path, "smollm2+tools", "runs")
    try:
        first, second = hold_local(tools), hold_local(tools)
        assert (first.port, second.port) == (8775, 8775)
        assert local_status(tools) == Serving(server.pid, 8775, kept=False, holds=2)
        assert "held by 2 runs; stops when they end" in status_line(tools)
        assert first.release() is False
        assert server.poll() is None  # still serving the second run
        assert local_status(tools) == Serving(server.pid, 8775, kept=False, holds=1)
        assert second.release() is True
        assert server.wait(timeout=10) == -signal.SIGTERM
        assert local_status(tools) is None
        assert (first.release(), second.release()) == (False, False)
        assert not list((tmp_path / "local" / "smollm2+tools.holds").iterdir())
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("how", ["kept", "served_while_held"])
def test_a_kept_server_is_never_stopped_by_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A server `peb local-model serve` started, or served while a run held it, serves on
    when the runs holding it end."""
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path))
    model = get_server("smollm2")
    server = _fake_server(tmp_path, "smollm2", "serve" if how == "kept" else "runs")
    try:
        hold = hold_local(model)
        if how == "served_while_held":
            assert serve_local(model) == (server.pid, 8775)  # reused, and kept from now on
        assert local_status(model) == Serving(server.pid, 8775, kept=True, holds=1)
        assert hold.release() is False
        assert server.poll() is None
        assert "served until peb local-model stop" in status_line(model)
    finally:
        server.kill()
        server.wait()


def test_the_hold_of_a_killed_process_counts_no_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed outright (SIGKILL) cannot let go: its hold names a process that has ended,
    so it no longer counts (and is removed); status says whose the server is, and the next run
    holding it stops it when it ends."""
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path))
    tools = get_server("smollm2+tools")
    server = _fake_server(tmp_path, "smollm2+tools", "runs")
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        holds = tmp_path / "local" / "smollm2+tools.holds"
        holds.mkdir()
        (holds / f"{killed.pid}-{_start_time(killed.pid)}-0").touch()
        assert local_status(tools) == Serving(server.pid, 8775, kept=False, holds=1)
        killed.kill()
        killed.wait()
        assert local_status(tools) == Serving(server.pid, 8775, kept=False, holds=0)
        assert not list(holds.iterdir())
        assert status_line(tools) == (
            f"local/smollm2+tools: running at http://127.0.0.1:8775/v1 (pid {server.pid}; left "
            "by a killed run; the next run stops it, or peb local-model stop smollm2+tools)"
        )
        assert hold_local(tools).release() is True
        assert server.wait(timeout=10) == -signal.SIGTERM
    finally:
        killed.kill()
        server.kill()
        killed.wait()
        server.wait()


def test_local_model_lists_and_stops_every_server(tmp_path: Path) -> None:
    """`status` without a name lists every server of every registered model, the agents'
    `+tools` ones included; `stop` takes any of them by name (or every one without); an unknown
    name is one line naming the valid ones."""
    server = _fake_server(tmp_path, "smollm2+tools", "runs")
    try:
        listed = _local_model(tmp_path, "status")
        every = [s.name for s in local_servers()]
        assert every == [n for m in REGISTRY for n in (m, f"{m}+tools")]
        assert listed.returncode == 0
        assert [line.split(":")[0] for line in listed.stdout.splitlines()] == [
            f"local/{n}" for n in every
        ]
        assert f"local/smollm2+tools: running at http://127.0.0.1:8775/v1 (pid {server.pid}" in (
            listed.stdout
        )
        assert "local/gemma3-270m+tools: stopped" in listed.stdout
        done = _local_model(tmp_path, "stop", "smollm2+tools")
        assert (done.returncode, done.stdout) == (0, "local/smollm2+tools: stopped\n")
        assert server.wait(timeout=10) == -signal.SIGTERM
        again = _local_model(tmp_path, "stop")
        assert again.stdout == "".join(f"local/{n}: was not running\n" for n in every)
        bad = _local_model(tmp_path, "stop", "smollm2+tool")
        assert (bad.returncode, bad.stdout) == (2, "")
        assert bad.stderr == (
            "peb: error: unknown local model 'smollm2+tool'; valid: " + ", ".join(every) + "\n"
        )
    finally:
        server.kill()
        server.wait()


@needs_llama_cpp
def test_a_killed_agent_run_stops_the_server_it_started(tmp_path: Path) -> None:
    """The issue's case: `peb run` of an embedded agent, killed by SIGTERM (as `timeout` does)
    while its first step is in flight, ends with 130, its manifest `interrupted`, and no server
    left: the `+tools` server it started is gone. Its progress showed the step in flight."""
    env = {**os.environ, "PEB_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "run"
    run = subprocess.Popen(
        [sys.executable, "-m", "peb_core", "run", "--model", "agent:local/smollm2", "--tier",
         "agent", "--family", "due_diligence_v1", "--limit", "1", "--local-port",
         str(_free_port()), "--out", str(out)],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert run.stderr is not None
        first = run.stderr.readline()  # written as the first step starts (a log: a line per %)
        assert first.startswith("0/1 tasks, 0 errors, 0 tokens, cost $0.0000 (episode 1: step 1/")
        pid = int((tmp_path / "cache" / "local" / "smollm2+tools.pid").read_text().split()[0])
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=60) == 130
        assert "peb: interrupted" in run.stderr.read()
    finally:
        run.kill()
        run.wait()
    assert not _alive(pid)
    assert read_manifest(out).state == "interrupted"
    status = _local_model(tmp_path / "cache", "status", "smollm2+tools")
    assert status.stdout == "local/smollm2+tools: stopped\n"


@needs_llama_cpp
def test_a_served_model_outlives_a_run(tmp_path: Path) -> None:
    """A server that was serving before the run (`peb local-model serve`) serves on after it."""
    cache = tmp_path / "cache"
    port = str(_free_port())
    served = _local_model(cache, "serve", "smollm2", "--port", port)
    try:
        assert served.returncode == 0, served.stderr
        run = subprocess.run(
            [sys.executable, "-m", "peb_core", "run", "--model", "local/smollm2", "--seeds",
             "11", "--family", "due_diligence_v1", "--limit", "1", "--out", str(tmp_path / "r")],
            cwd=ROOT, env={**os.environ, "PEB_CACHE_DIR": str(cache)}, capture_output=True,
            text=True, timeout=240,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        status = _local_model(cache, "status", "smollm2")
        assert f"running at http://127.0.0.1:{port}/v1" in status.stdout
        assert "served until peb local-model stop" in status.stdout
    finally:
        assert _local_model(cache, "stop", "smollm2").stdout == "local/smollm2: stopped\n"


@needs_llama_cpp
def test_an_embedded_agent_run_is_planned_with_its_own_defaults_and_holds_its_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planned without `--max-steps` or `--concurrency`, an embedded agent gets the embedded
    defaults (declared once, in runs._spec) where another agent model gets the general ones;
    asked for, they are what was asked. The plan holds the `+tools` server it started, and
    letting go of the plan stops it."""
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path))
    names = naming("cli")
    given = {"tier": "agent", "family": ("due_diligence_v1",), "local_port": _free_port()}
    plan = plan_run(RunSpec(system="agent:local/smollm2", **given), names)
    tools = get_server("smollm2+tools")
    try:
        assert (plan.max_steps, plan.concurrency) == (EMBEDDED_MAX_STEPS, EMBEDDED_CONCURRENCY)
        assert plan.system is not None and plan.system.config()["max_steps"] == EMBEDDED_MAX_STEPS
        serving = local_status(tools)
        assert serving is not None and (serving.kept, serving.holds) == (False, 1)
        asked = plan_run(
            RunSpec(system="agent:local/smollm2", max_steps=3, concurrency=2, **given), names
        )  # the same server, held twice
        assert (asked.max_steps, asked.concurrency) == (3, 2)
        asked.release()
        assert local_status(tools) is not None
        # A sweep's runs of embedded models share one reply in flight unless its limits say.
        sweep_file = tmp_path / "sweep.toml"
        sweep_file.write_text(
            '[base]\nsystem = "agent:local/smollm2"\ntier = "agent"\n'
            f'family = "due_diligence_v1"\nlocal_port = {given["local_port"]}\n'
            '[matrix]\ndisclosure = ["silent", "named"]\n',
            encoding="utf-8",
        )
        sweep = plan_sweep(sweep_file, tmp_path / "sweep")
        assert sweep.limits == {"local": EMBEDDED_CONCURRENCY}
        assert local_status(tools) == Serving(serving.pid, serving.port, False, 3)
        for made, _ in sweep.runs:
            made.release()
    finally:
        plan.release()
    assert local_status(tools) is None
    other = plan_run(RunSpec(system="agent:openai/x", tier="agent"), names)
    assert (other.max_steps, other.concurrency) == (DEFAULT_MAX_STEPS, DEFAULT_CONCURRENCY)
    assert EMBEDDED_MAX_STEPS < DEFAULT_MAX_STEPS and EMBEDDED_CONCURRENCY < DEFAULT_CONCURRENCY
