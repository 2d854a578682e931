"""Shared fixtures: the shipped families, their canonical tasks (24 per family), and baseline
runs made from scratch (never the checked-in ones) in a session temp folder."""

from __future__ import annotations

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
