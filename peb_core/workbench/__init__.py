"""The notebooks' logic: what `notebooks/*.py` decide and show, so each notebook only wires UI
to it. The top stage: it reads every stage below and the CLI's argument checks; nothing imports
it but the notebooks and `./dev workbench` (`python -m peb_core.workbench`).

- `_launch`: a run request from the Run button or the headless form, checked as `peb run`
  checks it, started in the background; the headless form's exit statuses.
- `_status`: one current status per run started here, its severity and time; when to rescore.
- `_runs`: one label per run folder on a page, picks kept when runs appear, the runs compared by
  default, the picked runs' scores, what is said of rows that are not finished numbers.
- `_example`: the worked example of one reply to one task.
- `_explore`: the task explorer's index of tasks, its filters, a task's contract.
- `_show`: marimo elements for frames, documents, registers and worked examples.
- `_serve`: a notebook served with an access token, to local Host and Origin values only.
"""

from ._example import (
    ROW_KEY,
    WorkedExample,
    picked_row,
    row_key,
    row_position,
    run_example,
    worked_example,
)
from ._explore import (
    INDEX_MAX_TASKS,
    POLICIES,
    contract_frame,
    filter_index,
    index_choices,
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
    headless,
    headless_parser,
    launch_note,
    start_launch,
)
from ._runs import (
    compare_defaults,
    finished,
    keep_picks,
    paired_tests,
    run_label,
    run_options,
    score_runs,
    unfinished_notes,
)
from ._serve import LOCAL_NAMES, TOKEN_ENV, LocalOnly, local_hosts, local_origins, serve
from ._show import (
    EXAMPLE_SECTIONS,
    SEVERITY_COLOURS,
    Section,
    documents_view,
    example_view,
    register_view,
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

__all__ = [
    "EXAMPLE_SECTIONS",
    "HEADLESS_FLAGS",
    "INDEX_MAX_TASKS",
    "LABELS",
    "LOCAL_NAMES",
    "POLICIES",
    "RESCORE_EVERY_S",
    "ROW_KEY",
    "SEVERITY_COLOURS",
    "TOKEN_ENV",
    "Launch",
    "LaunchError",
    "LocalOnly",
    "RunForm",
    "RunLine",
    "RunsStamp",
    "Section",
    "Severity",
    "WorkedExample",
    "check_run",
    "compare_defaults",
    "contract_frame",
    "documents_view",
    "example_view",
    "filter_index",
    "finished",
    "headless",
    "headless_parser",
    "index_choices",
    "keep_picks",
    "launch_note",
    "local_hosts",
    "local_origins",
    "paired_tests",
    "picked_row",
    "register_view",
    "rescore_due",
    "row_key",
    "row_position",
    "run_example",
    "run_label",
    "run_lines",
    "run_options",
    "runs_stamp",
    "score_runs",
    "scorecard_table",
    "serve",
    "severity",
    "start_launch",
    "status_table",
    "table",
    "task_documents_view",
    "task_index",
    "task_ref",
    "unfinished_notes",
    "worked_example",
]
