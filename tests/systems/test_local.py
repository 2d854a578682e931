"""Smoke test of every embedded model: `peb run --model local/<name>` over 3 tasks."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from peb_core import read_records
from peb_core.runs import RESPONSES
from peb_core.systems import REGISTRY

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama_cpp is not installed (pip install 'partial-evidence-bench[local]')",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("name", list(REGISTRY))
def test_local_model_smoke_run(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "PEB_CACHE_DIR": str(tmp_path / "cache")}
    port = str(_free_port())

    def peb(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "peb_core.cli", *args],
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


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [sys.executable, "-m", "peb_core.cli", "local-model", "serve", "--port", port],
            cwd=ROOT,
            env={**os.environ, "PEB_CACHE_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert f"port {port} is already in use" in done.stderr
