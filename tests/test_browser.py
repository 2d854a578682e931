"""The workbench and the paper notebook in a real browser: `marimo run` on 127.0.0.1, driven by
headless Chromium; model runs against the scripted server over real HTTP. Screenshots go to
test-artifacts/ (gitignored)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from browser import (
    ARTIFACTS,
    ROOT,
    browser_available,
    chromium_page,
    fill,
    pick_options,
    scratch_env,
    screenshot_of,
    select_table_row,
    serve,
    toggle_option,
    wait_count,
)
from scripted_server import ScriptedServer, Step

from peb_core.results import SCRATCH
from peb_core.runs import read_manifest, read_records, run_folder_name, run_status, run_system
from peb_core.systems import BASELINES
from peb_core.tasks import load_families

pytestmark = pytest.mark.skipif(
    not browser_available(), reason="needs playwright and /usr/bin/chromium"
)


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    """Two baseline runs over every family (each test gets its own: the workbench adds runs)."""
    root = tmp_path / "runs"
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
        page.get_by_text("Boundary signal (tracker)").first.wait_for(timeout=30_000)
        assert page.get_by_text("The first task of the table").count() == 0
        page.get_by_text("Gap report: oracle against the response").first.wait_for()
        # The answer field by field: the complete-world answer beside the authorized-view answer
        # and the reply's, every score to three decimals.
        answers = page.locator("marimo-table").nth(2).locator("table").inner_text()
        assert "complete_answer" in answers and "authorized_answer" in answers
        assert re.search(r"\b[01]\.\d{3}\b", answers) and not re.search(r"\d\.\d{4}", answers)
        screenshot_of(page, f"Worked example: {task_id}", ARTIFACTS / "workbench-example.png")

        # The Run button: fail_and_report over the families still selected, saved in the
        # scratch area and scored.
        page.get_by_role("button", name="Run selected systems").click()
        n_tasks = 24 * (n_families - 1)
        page.get_by_text(f"finished: {n_tasks} tasks, {n_tasks} replies").first.wait_for(
            timeout=120_000
        )
        page.get_by_text(f"Scorecard: {3 * (n_families - 1)} rows").wait_for(timeout=60_000)
        assert len(list(runs_root.glob("*/manifest.json"))) == 2
        assert len(list((runs_root / SCRATCH).glob("*/manifest.json"))) == 1


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


@pytest.fixture
def workbench(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    """A page on the workbench served over an empty runs root; (page, runs root)."""
    root = tmp_path / "runs"
    root.mkdir()
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("No runs selected").first.wait_for(timeout=60_000)
        yield page, root


def _launch_model(page: Any, api_base: str, name: str, limit: int, families: list[str]) -> None:
    pick_options(page, 0, families)
    pick_options(page, 1, [])  # no baseline
    fill(page, "litellm model strings", "openai/scripted")
    fill(page, "API base", api_base)
    fill(page, "Run name", name)
    fill(page, "Task limit", str(limit))
    page.get_by_role("button", name="Run selected systems").click()


def test_a_failing_model_is_shown_failed_with_its_reason_and_a_retry_heals_it(
    workbench: tuple[Any, Path], server: ScriptedServer
) -> None:
    page, root = workbench
    server.script.default = Step(kind="status", status=401)  # a wrong key, say
    _launch_model(page, server.url, "bad-key", 6, ["due_diligence_v1"])
    failed = page.get_by_text("finished: 6 tasks, 0 replies, 6 errors (6 x ").first
    failed.wait_for(timeout=120_000)
    assert "401" in failed.inner_text() or "Authentication" in failed.inner_text()
    page.get_by_text("1 of 1 rows are not finished numbers").wait_for(timeout=60_000)
    table = page.locator("marimo-table").first
    # The status line can show while the run is still "running"; the row's status follows.
    wait_count(table.get_by_text("failed", exact=True), 1)
    wait_count(page.get_by_text("No finished run to chart"), 1)
    screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-failed-run.png")
    run_dir = root / SCRATCH / "bad-key"
    assert read_manifest(run_dir).counts.error == 6

    # The cause fixed, Run again retries the error records, and says so.
    server.script.default = Step()
    page.get_by_role("button", name="Run selected systems").click()
    page.get_by_text("retrying the error records of an earlier attempt (6 of bad-key)").wait_for(
        timeout=60_000
    )
    page.get_by_text("finished: 6 tasks, 6 replies; retried 6 error records").first.wait_for(
        timeout=120_000
    )
    assert run_status(run_dir).clean
    page.get_by_text("not finished numbers").wait_for(state="detached", timeout=60_000)
    wait_count(table.get_by_text("ok", exact=True), 1)


def test_stop_ends_a_run_and_keeps_its_records(
    workbench: tuple[Any, Path], server: ScriptedServer
) -> None:
    page, root = workbench
    server.script.default = Step(delay=2.0)  # 48 tasks, 8 at a time: 12 s
    _launch_model(page, server.url, "slow", 48, ["due_diligence_v1", "compliance_audit_v1"])
    page.get_by_text(" 8 of 48 tasks").first.wait_for(timeout=60_000)  # the first 8 are in
    page.get_by_role("button", name="Stop", exact=True).click()
    stopped = page.get_by_text("interrupted: 48 tasks").first
    stopped.wait_for(timeout=60_000)
    run_dir = root / SCRATCH / "slow"
    assert read_manifest(run_dir).state == "interrupted"
    n_records = len(read_records(run_dir / "responses.jsonl")[0])
    assert 0 < n_records < 48
    assert f"{48 - n_records} missing" in stopped.inner_text()
    page.get_by_text("rows are not finished numbers").wait_for(timeout=60_000)
    # The line shows while the rows still say "running"; they turn "incomplete" on the next tick.
    incomplete = page.locator("marimo-table").first.get_by_text("incomplete", exact=True)
    wait_count(incomplete, 2)
    screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-stopped-run.png")


def test_an_empty_selection_is_refused_and_nothing_is_written(
    workbench: tuple[Any, Path],
) -> None:
    page, root = workbench
    pick_options(page, 0, [])
    page.get_by_role("button", name="Run selected systems").click()
    page.get_by_text("Pick at least one family.").wait_for(timeout=30_000)
    wait_count(page.get_by_text("Nothing was run."), 1)
    assert list(root.rglob("*")) == []


def test_the_paper_notebook_exports_only_the_picked_runs(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    folders = {}
    for name in ("silent_filter", "fail_and_report"):
        folders[name] = run_folder_name(BASELINES[name], families, None)
        run_system(BASELINES[name], families, root / folders[name])
    out = tmp_path / "export"
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "paper.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("selected runs").first.wait_for(timeout=60_000)
        toggle_option(page, 0, folders["silent_filter"], "and 1 selected runs")
        fill(page, "Output folder", str(out))
        page.get_by_role("button", name="Export tables").click()
        page.get_by_text("files of 1 runs to").wait_for(timeout=120_000)
    exported = pl.read_csv(out / "table_baselines.csv")
    assert set(exported["baseline"]) == {"fail_and_report"}
    assert (out / "figure_operating_profile.png").exists()


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
        wait_count(canvases, 2)  # the metric bars and the outcome grid (vega draws late)
        for i in range(canvases.count()):
            canvas = canvases.nth(i)
            canvas.scroll_into_view_if_needed()
            shown, drawn = canvas.evaluate("e => [e.parentElement.clientWidth, e.clientWidth]")
            box = canvas.bounding_box()
            assert drawn <= shown, f"chart {i}: {drawn} px drawn in {shown} px"
            assert box is not None and box["x"] + box["width"] <= width, (i, box)
        screenshot_of(page, "Task x system", ARTIFACTS / "compare-grid.png")

        # No family picked: said so, and no section fails.
        pick_options(page, 1, [])
        page.get_by_text("Pick at least one family and one tier.").wait_for(timeout=30_000)
