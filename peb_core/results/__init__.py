"""Results: run folders read and scored (the one place the CLI, the reports and the notebooks get
their numbers from), their saved scores, where runs are found and what to call them, and runs
compared."""

from ._discover import SCRATCH, discover_runs, run_labels, runs_root, select_runs
from ._load import (
    INTERVAL_KEYS,
    SCORECARD_KEYS,
    LoadedRun,
    compare_runs,
    load_run,
    load_runs,
    responses_to_task,
    run_record,
    run_records,
    score_run_dirs,
    scorecard_of,
)
from ._saved import SCORE_NOTES, SCORES

__all__ = [
    "INTERVAL_KEYS",
    "SCORECARD_KEYS",
    "SCORES",
    "SCORE_NOTES",
    "SCRATCH",
    "LoadedRun",
    "compare_runs",
    "discover_runs",
    "load_run",
    "load_runs",
    "responses_to_task",
    "run_labels",
    "run_record",
    "run_records",
    "runs_root",
    "score_run_dirs",
    "scorecard_of",
    "select_runs",
]
