"""Shared fixtures: the shipped families, their canonical tasks (24 per family), baseline runs
made from scratch (never the checked-in ones) in a session temp folder, and making a path
read-only."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from peb_core import (
    BASELINES,
    RunManifest,
    ScenarioFile,
    Task,
    generate_tasks,
    load_families,
    run_system,
)
from peb_core.runs import run_folder_name


@pytest.fixture(scope="session")
def families() -> dict[str, ScenarioFile]:
    return load_families()


@pytest.fixture(scope="session")
def canonical_tasks(families: dict[str, ScenarioFile]) -> list[Task]:
    return generate_tasks(families.values())


@pytest.fixture(scope="session")
def tasks_by_id(canonical_tasks: list[Task]) -> dict[str, Task]:
    """Canonical tasks by task id (task ids are unique across the shipped families)."""
    by_id = {t.task_id: t for t in canonical_tasks}
    assert len(by_id) == len(canonical_tasks)
    return by_id


@pytest.fixture(scope="session")
def baseline_runs(
    families: dict[str, ScenarioFile], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, RunManifest]]:
    """Each shipped baseline run over every canonical task, into a fresh folder."""
    root = tmp_path_factory.mktemp("baseline_runs")
    return {
        name: (root / name, run_system(system, list(families.values()), root / name))
        for name, system in BASELINES.items()
    }


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """Make a file or folder read-only, for root too (`chattr +i`: root ignores file modes);
    undone after the test. Skips the test where that cannot be done."""
    made: list[Path] = []

    def make(path: Path) -> None:
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
                pytest.skip("root ignores file modes and chattr +i is not available")
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)
        made.append(path)

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        else:
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def two_runs(tmp_path: Path, families: dict[str, ScenarioFile]) -> list[Path]:
    """Fresh runs of `silent_filter` and `fail_and_report` over the first family at seeds 11
    and 23, under `tmp_path / "runs"`."""
    first = list(families.values())[:1]
    dirs = []
    for name in ("silent_filter", "fail_and_report"):
        out = tmp_path / "runs" / run_folder_name(BASELINES[name], first, [11, 23])
        run_system(BASELINES[name], first, out, seeds=[11, 23])
        dirs.append(out)
    return dirs
