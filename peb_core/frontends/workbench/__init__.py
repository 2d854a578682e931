"""The notebooks' logic: what `notebooks/*.py` decide and show, so each notebook only wires UI
to it. The top stage: it reads every stage below and the CLI's argument checks; nothing imports
it but the notebooks and `./dev workbench` (`python -m peb_core.frontends.workbench`).

- `_launch`: a run request from the Run button or the headless form, checked as `peb run`
  checks it, started in the background; the headless form's exit statuses.
- `_status`: one current status per run started here, its severity and time; when to rescore.
- `_runs`: one label per run folder on a page, the newest runs and tier a page opens on, picks
  kept when runs appear, the picked runs' scores, what is said of rows that are not finished
  numbers.
- `_example`: the worked example of one reply to one task.
- `_replay`: an agent's episode in a worked example, step by step beside its corpus, with each
  handoff's sub-episode under the step that made it.
- `_explore`: the task explorer's index of tasks, its filters, a task's contract and register.
- `_access`: the task explorer's view of a corpus through the access layer, per disclosure mode.
- `_show`: marimo elements for frames, documents, registers, worked examples, replays and the
  access layer's view.
- `_serve`: a notebook served with an access token, to local Host and Origin values only.

Importing it loads the installed extensions (`peb_core._extensions`), so the form and the
pages offer their entries as every other front-end does.
"""

from ..._extensions import load_extensions
from ._access import AccessSearch, access_search, corpus_access, default_query, has_corpus
from ._example import (
    ROW_KEY,
    WorkedExample,
    picked_row,
    row_key,
    row_position,
    run_example,
    task_rows,
    worked_example,
)
from ._explore import (
    INDEX_MAX_TASKS,
    POLICIES,
    REGISTER_COLUMNS,
    contract_frame,
    filter_index,
    index_choices,
    register_rows,
    task_index,
    task_ref,
)
from ._launch import (
    HEADLESS_FLAGS,
    LABELS,
    Launch,
    LaunchError,
    RunForm,
    check_run,
    form_help,
    form_options,
    form_request,
    headless,
    headless_parser,
    launch_note,
    run_form,
    start_launch,
)
from ._replay import (
    CORPUS_STATES,
    Replay,
    contract_line,
    corpus_at,
    corpus_counts,
    episode_replay,
    grant_events,
    handoff_line,
    handoffs_at,
    replay_of,
    step_calls,
    step_label,
    step_table,
    what_it_saw,
)
from ._runs import (
    NEWEST_RUNS,
    differences,
    finished,
    has_repeats,
    keep_picks,
    newest_runs,
    paired_tests,
    run_label,
    run_options,
    run_tiers,
    score_runs,
    sweep_options,
    sweep_picks,
    unfinished_notes,
)
from ._serve import LOCAL_NAMES, TOKEN_ENV, LocalOnly, local_hosts, local_origins, serve
from ._show import (
    EXAMPLE_SECTIONS,
    SEVERITY_COLOURS,
    Section,
    access_view,
    documents_view,
    example_view,
    handoff_view,
    register_view,
    replay_view,
    scorecard_glance,
    scorecard_table,
    status_table,
    table,
    task_documents_view,
)
from ._status import (
    RESCORE_EVERY_S,
    RunLine,
    RunsStamp,
    Severity,
    rescore_due,
    run_lines,
    runs_stamp,
    severity,
)

load_extensions()  # before any name is read: the form derives from the registries

__all__ = [
    "CORPUS_STATES",
    "EXAMPLE_SECTIONS",
    "HEADLESS_FLAGS",
    "INDEX_MAX_TASKS",
    "LABELS",
    "LOCAL_NAMES",
    "NEWEST_RUNS",
    "POLICIES",
    "REGISTER_COLUMNS",
    "RESCORE_EVERY_S",
    "ROW_KEY",
    "SEVERITY_COLOURS",
    "TOKEN_ENV",
    "AccessSearch",
    "Launch",
    "LaunchError",
    "LocalOnly",
    "Replay",
    "RunForm",
    "RunLine",
    "RunsStamp",
    "Section",
    "Severity",
    "WorkedExample",
    "access_search",
    "access_view",
    "check_run",
    "contract_frame",
    "contract_line",
    "corpus_access",
    "corpus_at",
    "corpus_counts",
    "default_query",
    "differences",
    "documents_view",
    "episode_replay",
    "example_view",
    "filter_index",
    "finished",
    "form_help",
    "form_options",
    "form_request",
    "grant_events",
    "handoff_line",
    "handoff_view",
    "handoffs_at",
    "has_corpus",
    "has_repeats",
    "headless",
    "headless_parser",
    "index_choices",
    "keep_picks",
    "launch_note",
    "local_hosts",
    "local_origins",
    "newest_runs",
    "paired_tests",
    "picked_row",
    "register_rows",
    "register_view",
    "replay_of",
    "replay_view",
    "rescore_due",
    "row_key",
    "row_position",
    "run_example",
    "run_form",
    "run_label",
    "run_lines",
    "run_options",
    "run_tiers",
    "runs_stamp",
    "score_runs",
    "scorecard_glance",
    "scorecard_table",
    "serve",
    "severity",
    "start_launch",
    "status_table",
    "step_calls",
    "step_label",
    "step_table",
    "sweep_options",
    "sweep_picks",
    "table",
    "task_documents_view",
    "task_index",
    "task_ref",
    "task_rows",
    "unfinished_notes",
    "what_it_saw",
    "worked_example",
]
