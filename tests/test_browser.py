"""The workbench in a real browser: `marimo run` on 127.0.0.1, driven by headless Chromium.
Screenshots go to test-artifacts/ (gitignored)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import (
    ARTIFACTS,
    ROOT,
    browser_available,
    chromium_page,
    scratch_env,
    screenshot_of,
    select_table_row,
    serve,
    toggle_option,
)

from peb_core.runs import run_folder_name, run_system
from peb_core.systems import BASELINES
from peb_core.tasks import load_families

pytestmark = pytest.mark.skipif(
    not browser_available(), reason="needs playwright and /usr/bin/chromium"
)


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    families = list(load_families().values())
    for name in ("silent_filter", "fail_and_report"):
        system = BASELINES[name]
        run_system(system, families, root / run_folder_name(system, families, None))
    return root


def test_workbench_in_chromium(runs_root: Path, tmp_path: Path) -> None:
    n_families = len(load_families())
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with serve(ROOT / "notebooks" / "workbench.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text(f"Scorecard: {2 * n_families} rows").wait_for(timeout=60_000)
        page.get_by_text("Worked example:").first.wait_for(timeout=60_000)
        screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-scorecard.png")

        # One family fewer: the scorecard loses a row per run.
        toggle_option(page, 0, "due_diligence_v1", f"Scorecard: {2 * (n_families - 1)} rows")
        assert "due_diligence_v1" not in page.get_by_text("Scorecard:").first.inner_text()
        screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-one-family-less.png")

        # Select a task in the per-task table: its worked example opens.
        task_id = select_table_row(page, 1, 3, "task_id")
        example = page.get_by_text(f"Worked example: {task_id}").first
        example.wait_for(timeout=30_000)
        assert page.get_by_text("Boundary signal (tracker)").count() >= 1
        assert page.get_by_text("The first task of the table").count() == 0
        page.get_by_text("Gap report: oracle against the response").first.wait_for()
        screenshot_of(page, f"Worked example: {task_id}", ARTIFACTS / "workbench-example.png")

        # The Run button: fail_and_report over the families still selected, saved and scored.
        page.get_by_role("button", name="Run selected systems").click()
        n_tasks = 24 * (n_families - 1)
        page.get_by_text(f"fail_and_report: {n_tasks} tasks ({n_tasks} replies").first.wait_for(
            timeout=120_000
        )
        page.get_by_text(f"Scorecard: {3 * (n_families - 1)} rows").wait_for(timeout=60_000)
        assert len(list(runs_root.glob("*/manifest.json"))) == 3


def test_compare_in_chromium_at_1440_by_900(runs_root: Path, tmp_path: Path) -> None:
    """At 1440x900, the paired tests' p and sig columns and every chart, legend included, are
    on screen: nothing clipped or scrolled sideways."""
    width = 1440
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with (
        serve(ROOT / "notebooks" / "compare.py", env) as url,
        chromium_page(width=width, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Paired tests against").first.wait_for(timeout=60_000)
        table = page.locator("marimo-table").last
        for column in ("p", "sig"):
            header = table.get_by_role("columnheader").filter(has_text=column).first
            box = header.bounding_box()
            assert box is not None and box["x"] + box["width"] <= width, (column, box)
        first = table.get_by_role("row").nth(1)  # pooled rows come first
        assert first.locator('td[data-cell-id$="_family"]').inner_text().strip() == "all"
        assert table.get_by_text("< 0.0001").count() > 0 and table.get_by_text("*").count() > 0
        screenshot_of(page, "Paired tests against", ARTIFACTS / "compare-tests.png")

        canvases = page.locator("canvas")
        assert canvases.count() == 2  # the metric bars and the outcome grid
        for i in range(canvases.count()):
            canvas = canvases.nth(i)
            canvas.scroll_into_view_if_needed()
            shown, drawn = canvas.evaluate("e => [e.parentElement.clientWidth, e.clientWidth]")
            box = canvas.bounding_box()
            assert drawn <= shown, f"chart {i}: {drawn} px drawn in {shown} px"
            assert box is not None and box["x"] + box["width"] <= width, (i, box)
        screenshot_of(page, "Task x system", ARTIFACTS / "compare-grid.png")
