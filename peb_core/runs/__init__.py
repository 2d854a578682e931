"""Runs: the run folder store (manifest and responses), the resumable runner, and loading a run
folder with its per-task scores (saved beside it). Loading (which scores, with polars) is
imported on first use, so running a system does not pay for it."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._load import (
        INTERVAL_KEYS,
        SCORE_NOTES,
        SCORECARD_KEYS,
        SCORES,
        SCRATCH,
        LoadedRun,
        compare_runs,
        discover_runs,
        load_run,
        load_runs,
        responses_to_task,
        run_labels,
        run_record,
        run_records,
        runs_root,
        score_run_dirs,
        scorecard_of,
        select_runs,
    )

from ._jobs import RunJob, run_jobs, start_runs
from ._runner import (
    Progress,
    is_run_name,
    launch_folder,
    run_folder_name,
    run_system,
    run_system_async,
)
from ._store import (
    MANIFEST,
    RESPONSES,
    RunCounts,
    RunError,
    RunManifest,
    RunState,
    RunStatus,
    count_records,
    package_version,
    read_manifest,
    read_records,
    run_state,
    run_status,
    run_tasks,
    seeds_text,
    write_manifest,
)

__all__ = [
    "INTERVAL_KEYS",
    "MANIFEST",
    "RESPONSES",
    "SCORECARD_KEYS",
    "SCORES",
    "SCORE_NOTES",
    "SCRATCH",
    "LoadedRun",
    "Progress",
    "RunCounts",
    "RunError",
    "RunJob",
    "RunManifest",
    "RunState",
    "RunStatus",
    "compare_runs",
    "count_records",
    "discover_runs",
    "is_run_name",
    "launch_folder",
    "load_run",
    "load_runs",
    "package_version",
    "read_manifest",
    "read_records",
    "responses_to_task",
    "run_folder_name",
    "run_jobs",
    "run_labels",
    "run_record",
    "run_records",
    "run_state",
    "run_status",
    "run_system",
    "run_system_async",
    "run_tasks",
    "runs_root",
    "score_run_dirs",
    "scorecard_of",
    "seeds_text",
    "select_runs",
    "start_runs",
    "write_manifest",
]


def __getattr__(name: str) -> Any:
    """A name of the loading stage, imported on first use."""
    if name in __all__:
        return getattr(importlib.import_module(f"{__name__}._load"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
