"""partial-evidence-bench: does a system know its evidence is incomplete, say what is missing,
and block when policy says so?

The stages, in the order data flows, each a subpackage that imports only those before it:
`tasks` (scenario files -> tasks -> views) -> `systems` (views -> replies) -> `scoring` (tasks and
replies -> per-task scores, scorecards) -> `interventions` (platform elements around a system,
reading a reply as scoring does) -> `runs` (a system, with its intervention, over tasks into a
run folder) -> `results` (run folders -> scores) -> `reporting` (tables and charts) and
`dataset` (the release), and `audit` (what the surface of the model views gives away; after
`scoring`, whose intervals it uses); then the front-ends in a room of their own (`frontends`:
`cli`, `workbench`, `inspect`, `mcp`), and the notebooks on top. This module offers the common
names of the stages; each is imported from its stage on first use, so importing the package (or
the CLI) costs only the stages a command needs.
"""

import importlib as _importlib
import os as _os
from typing import TYPE_CHECKING, Any

# litellm fetches a price map from the internet at import unless told to use its local copy; set
# before anything can import it (it is imported lazily, in peb_core.systems._model).
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from .results import (
        SCORECARD_KEYS,
        LoadedRun,
        compare_runs,
        discover_runs,
        load_run,
        score_run_dirs,
        scorecard_of,
    )
    from .runs import RunError, RunManifest, read_manifest, read_records, run_system, run_tasks
    from .scoring import (
        CompareError,
        compare_scores,
        compare_to_reference,
        score_frames,
        score_run,
        scorecard,
    )
    from .systems import (
        BASELINES,
        Baseline,
        Reply,
        Response,
        ResponseRecord,
        System,
        Usage,
    )
    from .tasks import (
        AnswerField,
        Contract,
        Document,
        Fact,
        GapReport,
        ModelView,
        Oracles,
        ScenarioError,
        ScenarioFile,
        SystemView,
        Task,
        VisibleDocument,
        answer_schema,
        documents_frame,
        families_with_template,
        fold_answer,
        generate_task,
        generate_tasks,
        load_families,
        load_scenario,
        model_view,
        parse_seeds,
        parse_task_id,
        response_model,
        scenario_hash,
        system_view,
        task_id,
    )

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


_STAGES = ("tasks", "systems", "runs", "scoring", "results")


def __getattr__(name: str) -> Any:
    """A public name, from the first stage (in data-flow order) that offers it."""
    if name in __all__:
        for stage in _STAGES:
            module = _importlib.import_module(f"{__name__}.{stage}")
            if name in module.__all__:
                return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
