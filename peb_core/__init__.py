"""partial-evidence-bench: does a system know its evidence is incomplete, say what is missing,
and block when policy says so?

The public surface, in the order data flows: scenario files -> tasks -> views -> systems ->
runs -> scores -> reports.
"""

import os as _os

# litellm fetches a price map from the internet at import unless told to use its local copy; set
# before anything can import it (it is imported lazily, in peb_core.model_system).
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .answers import AnswerField, answer_schema, fold_answer, response_model
from .compare import CompareError, compare_runs, compare_scores, compare_to_reference
from .generate import generate_task, generate_tasks, parse_seeds, parse_task_id, task_id
from .report import (
    SCORECARD_KEYS,
    LoadedRun,
    discover_runs,
    documents_frame,
    load_run,
    score_run_dirs,
    scorecard_of,
)
from .responses import GapReport, Reply, Response, ResponseRecord, Usage
from .runs import RunError, RunManifest, read_manifest, read_records, run_system, run_tasks
from .scenarios import (
    ScenarioError,
    ScenarioFile,
    families_with_template,
    load_families,
    load_scenario,
    scenario_hash,
)
from .scoring import score_frames, score_run, scorecard
from .systems import BASELINES, Baseline, System
from .tasks import Contract, Document, Fact, Oracles, Task
from .views import ModelView, SystemView, VisibleDocument, model_view, system_view

__all__ = [
    "BASELINES",
    "SCORECARD_KEYS",
    "AnswerField",
    "Baseline",
    "CompareError",
    "Contract",
    "Document",
    "Fact",
    "GapReport",
    "LoadedRun",
    "ModelView",
    "Oracles",
    "Reply",
    "Response",
    "ResponseRecord",
    "RunError",
    "RunManifest",
    "ScenarioError",
    "ScenarioFile",
    "System",
    "SystemView",
    "Task",
    "Usage",
    "VisibleDocument",
    "answer_schema",
    "compare_runs",
    "compare_scores",
    "compare_to_reference",
    "discover_runs",
    "documents_frame",
    "families_with_template",
    "fold_answer",
    "generate_task",
    "generate_tasks",
    "load_families",
    "load_run",
    "load_scenario",
    "model_view",
    "parse_seeds",
    "parse_task_id",
    "read_manifest",
    "read_records",
    "response_model",
    "run_system",
    "run_tasks",
    "scenario_hash",
    "score_frames",
    "score_run",
    "score_run_dirs",
    "scorecard",
    "scorecard_of",
    "system_view",
    "task_id",
]
