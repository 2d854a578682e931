"""Screenshots of the three notebooks for the README, on the checked-in runs.

Run: .venv/bin/python docs/screenshots.py   (needs /usr/bin/chromium and playwright)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / "tests"))

from browser import (  # noqa: E402
    ROOT,
    chromium_page,
    scratch_env,
    screenshot_of,
    select_table_row,
    serve,
)


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        env = scratch_env(Path(home), PEB_RUNS_DIR=str(ROOT / "runs"))
        nb = ROOT / "notebooks"
        with serve(nb / "workbench.py", env) as url, chromium_page(height=1000) as page:
            page.goto(url)
            page.get_by_text("Worked example:").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)
            screenshot_of(page, "Scorecard:", DOCS / "workbench.png")
            table = page.locator("marimo-table").nth(1)
            table.get_by_placeholder("Search...").fill("silent_filter")
            page.wait_for_timeout(1500)
            task_id = select_table_row(page, 1, 0, "task_id")
            page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)
            page.wait_for_timeout(1000)
            screenshot_of(page, f"Worked example: {task_id}", DOCS / "workbench-example.png")
        with serve(nb / "task_explorer.py", env) as url, chromium_page(height=1000) as page:
            page.goto(url)
            page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)
            screenshot_of(page, "Task explorer", DOCS / "task_explorer.png")
        with serve(nb / "compare.py", env) as url, chromium_page(height=1000) as page:
            page.goto(url)
            page.get_by_text("Task x system").first.wait_for(timeout=60_000)
            page.wait_for_timeout(2500)
            screenshot_of(page, "Task x system", DOCS / "compare.png")


if __name__ == "__main__":
    main()
