"""Every notebook runs top to bottom as a script and passes `marimo check`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_as_script(notebook: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(notebook)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
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
        env=_env(tmp_path),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
