"""Every notebook runs top to bottom as a script and passes `marimo check`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from browser import scratch_env

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_as_script(notebook: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(notebook)],
        capture_output=True,
        text=True,
        env=scratch_env(tmp_path / "home"),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_passes_marimo_check(notebook: Path, tmp_path: Path) -> None:
    marimo = Path(sys.executable).parent / "marimo"
    result = subprocess.run(
        [str(marimo), "check", str(notebook)],
        capture_output=True,
        text=True,
        env=scratch_env(tmp_path / "home"),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_workbench_runs_headless_with_an_argument(tmp_path: Path) -> None:
    """`python notebooks/workbench.py -- --run SYSTEM --family F --out DIR` does what the Run
    button does: the run is saved under DIR, and asking again reuses it."""
    from peb_core.results import scorecard_of

    out = tmp_path / "runs"
    command = [
        sys.executable,
        str(ROOT / "notebooks" / "workbench.py"),
        "--",
        "--run",
        "fail_and_report",
        "--family",
        "due_diligence_v1",
        "--out",
        str(out),
    ]
    first = subprocess.run(
        command, capture_output=True, text=True, env=scratch_env(tmp_path / "home"), timeout=300
    )
    assert first.returncode == 0, first.stderr[-3000:]
    assert "fail_and_report: finished: 24 tasks, 24 replies ->" in first.stdout
    (run_dir,) = [p.parent for p in out.rglob("manifest.json")]
    card, warnings = scorecard_of([run_dir])
    assert not warnings
    assert card["family"].to_list() == ["due_diligence_v1"]
    assert card["unsafe_completeness_rate"].item() == 0.0
    assert card["answer_correctness"].item() == 1.0
    before = (run_dir / "responses.jsonl").read_bytes()
    again = subprocess.run(
        command, capture_output=True, text=True, env=scratch_env(tmp_path / "again"), timeout=300
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert (run_dir / "responses.jsonl").read_bytes() == before


def test_the_headless_workbench_exits_as_peb_run_does(tmp_path: Path) -> None:
    """The form as a script, end to end: bad input is one line on stderr and exit 2 with
    nothing written; a run whose tasks all end in error (a model over real HTTP answering 401)
    exits 1 and says why. Every bad input is probed in tests/workbench/test_launch.py."""
    from scripted_server import ScriptedServer, Step

    out = tmp_path / "runs"
    script = [sys.executable, str(ROOT / "notebooks" / "workbench.py"), "--"]
    env = scratch_env(tmp_path / "home")
    bad = subprocess.run(
        [*script, "--run", "fail_and_report", "--limit", "0", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == (
        "workbench: error: argument --limit: expected an integer from 1 to 10,000,000, got '0'\n"
    )
    assert not out.exists()
    server = ScriptedServer().start()
    try:
        server.script.default = Step(kind="status", status=401)
        model = ["--run", "openai/scripted", "--api-base", server.url]
        failed = subprocess.run(
            [*script, *model, "--family", "due_diligence_v1", "--limit", "2", "--out", str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    finally:
        server.stop()
    assert failed.returncode == 1, failed.stderr[-3000:]
    assert "finished: 2 tasks, 0 replies, 2 errors (2 x " in failed.stdout
