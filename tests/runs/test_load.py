"""Scoring run folders: each folder counted once under a label of its own, and saved scores
trusted only when they are this run's own (never a copy from another run, never damaged bytes
handed to the parquet reader)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from peb_core import BASELINES, ScenarioFile, run_system, scorecard
from peb_core.runs import score_run_dirs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dd_runs(families: dict[str, ScenarioFile], tmp_path: Path) -> dict[str, Path]:
    """fail_and_report and silent_filter over due_diligence_v1 (24 tasks each)."""
    runs = {name: tmp_path / name for name in ("fail_and_report", "silent_filter")}
    for name, folder in runs.items():
        run_system(BASELINES[name], [families["due_diligence_v1"]], folder)
    return runs


def _score_json(*dirs: Path, cache: Path) -> tuple[list[dict[str, object]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "peb_core.cli", "score", *map(str, dirs), "--json"],
        cwd=ROOT,
        env={**os.environ, "PEB_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_a_folder_given_twice_is_scored_once(dd_runs: dict[str, Path], tmp_path: Path) -> None:
    run = dd_runs["fail_and_report"]
    rows, _ = _score_json(run, run, run / ".." / run.name, cache=tmp_path / "cache")
    assert [(r["run"], r["n_tasks"]) for r in rows] == [("fail_and_report", 24)]


def test_folders_of_the_same_name_stay_apart(dd_runs: dict[str, Path], tmp_path: Path) -> None:
    """Two replicas of one system in folders both called `run`: two rows, never one of 48."""
    a, b = tmp_path / "a" / "run", tmp_path / "b" / "run"
    shutil.copytree(dd_runs["fail_and_report"], a)
    shutil.copytree(dd_runs["fail_and_report"], b)
    scores, _ = score_run_dirs([a, b])
    card = scorecard(scores)
    assert sorted(zip(card["run"], card["n_tasks"], strict=True)) == [("a/run", 24), ("b/run", 24)]
    from peb_core.runs import run_labels

    assert run_labels([a, b, a]) == {a: "a/run", b: "b/run"}
    assert run_labels([a, tmp_path / "x" / ".." / "a" / "run"]) == {a: "run"}


def test_a_scores_parquet_copied_from_another_run_is_not_trusted(
    dd_runs: dict[str, Path], tmp_path: Path
) -> None:
    mine, other = dd_runs["fail_and_report"], dd_runs["silent_filter"]
    cache = tmp_path / "cache"
    _score_json(mine, other, cache=cache)  # both save their scores beside them
    shutil.copy(other / "scores.parquet", mine / "scores.parquet")
    rows, stderr = _score_json(mine, cache=cache)
    assert [(r["run"], r["system"], r["unsafe_completeness_rate"]) for r in rows] == [
        ("fail_and_report", "fail_and_report", 0.0)
    ]
    assert f"saved scores {mine / 'scores.parquet'}: not the file scores.json was saved with" in (
        stderr
    )
    # Rewritten: the next read trusts it again, without a warning.
    assert _score_json(mine, cache=cache) == (rows, "")
    # Both files copied from the other run: its key is not this run's, so they are rescored.
    for name in ("scores.parquet", "scores.json"):
        shutil.copy(other / name, mine / name)
    assert _score_json(mine, cache=cache)[0] == rows


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: os.urandom(len(data)),
        # Header, footer and metadata intact, 200 bytes of a data page zeroed: on 51251cf the
        # parquet reader panicked on this one (PanicException, `peb score` a traceback).
        lambda data: data[:2200] + bytes(200) + data[2400:],
        lambda data: b"",
    ],
    ids=["truncated", "random", "zeroed_page", "empty"],
)
def test_a_damaged_scores_parquet_is_rescored_with_a_warning(
    dd_runs: dict[str, Path], tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    run = dd_runs["fail_and_report"]
    cache = tmp_path / "cache"
    rows, _ = _score_json(run, cache=cache)
    parquet = run / "scores.parquet"
    parquet.write_bytes(damage(parquet.read_bytes()))
    again, stderr = _score_json(run, cache=cache)
    assert again == rows
    assert stderr.startswith(f"peb: warning: saved scores {parquet}: ")
    assert stderr.rstrip().endswith("; rescored") and stderr.count("\n") == 1
    assert _score_json(run, cache=cache) == (rows, "")


def test_a_damaged_scores_json_is_rescored_with_a_warning(
    dd_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = dd_runs["fail_and_report"]
    cache = tmp_path / "cache"
    rows, _ = _score_json(run, cache=cache)
    (run / "scores.json").write_bytes(b'{"key": "\xff')
    again, stderr = _score_json(run, cache=cache)
    assert again == rows
    assert stderr.startswith(f"peb: warning: saved scores {run / 'scores.json'}: unreadable")
