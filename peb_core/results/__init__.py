"""Results: run folders read and scored (the one place the CLI, the reports and the notebooks get
their numbers from), their saved scores, where runs are found and what to call them, runs
compared, and an agent's episode replayed beside its task."""

from ._discover import (
    SCRATCH,
    discover_runs,
    expand_runs,
    run_labels,
    runs_root,
    select_runs,
)
from ._labels import UNLABELLED, declared, differing_labels, run_descriptions
from ._load import (
    INTERVAL_KEYS,
    SCORECARD_KEYS,
    LoadedRun,
    compare_runs,
    is_agent_run,
    load_run,
    load_runs,
    responses_to_task,
    run_record,
    run_records,
    score_run_dirs,
    scorecard_of,
    system_label,
)
from ._replay import (
    CLAIMS_SCHEMA,
    DOCUMENTS_SCHEMA,
    HANDOFFS_SCHEMA,
    STEPS_SCHEMA,
    grant_line,
    handoff_frame,
    replay_claims,
    replay_documents,
    replay_handoffs,
    replay_steps,
)
from ._saved import SCORE_NOTES, SCORES

__all__ = [
    "CLAIMS_SCHEMA",
    "DOCUMENTS_SCHEMA",
    "HANDOFFS_SCHEMA",
    "INTERVAL_KEYS",
    "SCORECARD_KEYS",
    "SCORES",
    "SCORE_NOTES",
    "SCRATCH",
    "STEPS_SCHEMA",
    "UNLABELLED",
    "LoadedRun",
    "compare_runs",
    "declared",
    "differing_labels",
    "discover_runs",
    "expand_runs",
    "grant_line",
    "handoff_frame",
    "is_agent_run",
    "load_run",
    "load_runs",
    "replay_claims",
    "replay_documents",
    "replay_handoffs",
    "replay_steps",
    "responses_to_task",
    "run_descriptions",
    "run_labels",
    "run_record",
    "run_records",
    "runs_root",
    "score_run_dirs",
    "scorecard_of",
    "select_runs",
    "system_label",
]
