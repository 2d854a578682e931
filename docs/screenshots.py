"""Screenshots of the notebooks for the user guide (docs/guide.md), on the checked-in runs, at
1440 px wide.

Run: .venv/bin/python docs/screenshots.py   (needs /usr/bin/chromium and playwright)
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / "tests"))

from browser import (  # noqa: E402
    ROOT,
    chromium_page,
    pick_options,
    scratch_env,
    screenshot_of,
    select_table_row,
    serve,
    table,
    toggle_option,
)

WIDTH, HEIGHT = 1440, 1000


def _silent_filter_misses_a_gap(page: Any) -> str:
    """Select, in the per-task table, a row where silent_filter claims an incomplete task
    complete; its task id."""
    tasks = table(page, "Per task")
    tasks.get_by_placeholder("Search...").fill("silent_filter")
    page.wait_for_timeout(1500)
    rows = tasks.get_by_role("row")
    for i in range(1, rows.count()):
        if rows.nth(i).locator('td[data-cell-id$="_completeness"]').inner_text() == "incomplete":
            return select_table_row(page, "Per task", i - 1, "task_id")
    raise RuntimeError("no incomplete task of silent_filter on the first page")


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        env = scratch_env(Path(home), PEB_RUNS_DIR=str(ROOT / "runs"))
        nb = ROOT / "notebooks"
        with (
            serve(nb / "workbench.py", env) as url,
            chromium_page(width=WIDTH, height=HEIGHT) as page,
        ):
            page.goto(url)
            page.get_by_text("Worked example:").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)
            screenshot_of(page, "partial-evidence-bench workbench", DOCS / "workbench.png")
            toggle_option(page, "Tiers shown", "paper", "Scorecard:")  # the hard tier only
            page.wait_for_timeout(1500)
            task_id = _silent_filter_misses_a_gap(page)
            page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)
            page.wait_for_timeout(1000)
            screenshot_of(page, f"Worked example: {task_id}", DOCS / "workbench-example.png")
            screenshot_of(page, "Register: each kind", DOCS / "workbench-register.png")
        with (
            serve(nb / "task_explorer.py", env) as url,
            chromium_page(width=WIDTH, height=HEIGHT) as page,
        ):
            page.goto(url)
            page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
            pick_options(page, "Has every topology", ["silent_gap"])
            filtered = re.compile(r"^(?!336 )\d+ of 336 tasks")  # fewer than all: filtered
            page.get_by_text(filtered).first.wait_for(timeout=30_000)
            page.wait_for_timeout(1000)
            task_id = select_table_row(page, "tasks; select one", 0, "task_id")
            page.get_by_text("Register: each kind").first.wait_for(timeout=30_000)
            page.wait_for_timeout(1500)
            screenshot_of(page, "Task explorer", DOCS / "task_explorer.png")
        with (
            serve(nb / "compare.py", env) as url,
            chromium_page(width=WIDTH, height=HEIGHT) as page,
        ):
            page.goto(url)
            page.get_by_text("Task x system").first.wait_for(timeout=60_000)
            page.wait_for_timeout(2500)
            screenshot_of(page, "Task x system", DOCS / "compare.png")
    print(f"task explorer: {task_id}")


if __name__ == "__main__":
    main()
