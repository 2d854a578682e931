"""The workbench, the task explorer, the compare and paper notebooks in a real browser: each
served as `./dev workbench` serves it (an access token, local Host and Origin only) on 127.0.0.1,
driven by headless Chromium; model runs against the scripted server over real HTTP.
Screenshots go to test-artifacts/ (gitignored)."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from browser import (
    ARTIFACTS,
    ROOT,
    browser_available,
    chart_svgs,
    chromium_page,
    fill,
    multiselect,
    pick_options,
    scratch_env,
    screenshot_of,
    select_table_row,
    serve,
    table,
    toggle_option,
    wait_count,
)
from playwright.sync_api import expect
from scripted_server import ScriptedServer, Step

from peb_core.results import SCRATCH
from peb_core.runs import read_manifest, read_records, run_folder_name, run_status, run_system
from peb_core.systems import BASELINES, ResponseRecord
from peb_core.tasks import TIERS, count_tasks, generate_task, load_families, stale_facts

pytestmark = pytest.mark.skipif(
    not browser_available(), reason="needs playwright and /usr/bin/chromium"
)

SCORECARD = "Scorecard rows"
PER_TASK = "Per task"
STATUS = "Runs started here"


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    """Two baseline runs over every family (each test gets its own: the workbench adds runs)."""
    root = tmp_path / "runs"
    families = list(load_families().values())
    for name in ("silent_filter", "fail_and_report"):
        system = BASELINES[name]
        run_system(system, families, root / run_folder_name(system, families, None))
    return root


def _example_title(page: Any) -> str:
    title: str = page.get_by_text("Worked example:").first.inner_text()
    return title


def test_workbench_in_chromium(runs_root: Path, tmp_path: Path) -> None:
    n_families = len(load_families())
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with serve(ROOT / "notebooks" / "workbench.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text(f"Scorecard: {2 * n_families} rows").wait_for(timeout=60_000)
        page.get_by_text("Worked example:").first.wait_for(timeout=60_000)
        screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-scorecard.png")

        # One family fewer shown: the scorecard loses a row per run.
        toggle_option(
            page, "Families shown", "due_diligence_v1", f"Scorecard: {2 * (n_families - 1)} rows"
        )
        screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-one-family-less.png")

        # Select a task in the per-task table: its worked example opens, its tracker sentence
        # labelled by what it is worth (on the paper tier, a signal).
        task_id = select_table_row(page, PER_TASK, 3, "task_id")
        page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)
        page.get_by_text("[boundary signal:").first.wait_for(timeout=30_000)
        assert page.get_by_text("The first task of the table").count() == 0
        page.get_by_text("Gap report: oracle against the response").first.wait_for()
        # The answer field by field: the complete-world answer beside the authorized-view answer
        # and the reply's, every score to three decimals.
        answers = page.locator("marimo-table").filter(has_text="complete_answer").first
        text = answers.locator("table").inner_text()
        assert "authorized_answer" in text
        assert re.search(r"\b[01]\.\d{3}\b", text) and not re.search(r"\d\.\d{4}", text)
        screenshot_of(page, f"Worked example: {task_id}", ARTIFACTS / "workbench-example.png")

        # The Run button runs the form's families (all of them: the families shown do not pick
        # what runs), saved in the scratch area, scored; what is shown and picked stays.
        page.get_by_role("button", name="Run selected systems").click()
        n_tasks = 24 * n_families
        status = table(page, STATUS)
        status.get_by_text(f"finished: {n_tasks} tasks, {n_tasks} replies").wait_for(
            timeout=120_000
        )
        page.get_by_text(f"Scorecard: {3 * (n_families - 1)} rows").wait_for(timeout=60_000)
        assert f"Worked example: {task_id}" in _example_title(page)
        (scratch,) = [p.parent for p in (runs_root / SCRATCH).glob("*/manifest.json")]
        assert len(read_manifest(scratch).families) == n_families
        assert len(list(runs_root.glob("*/manifest.json"))) == 2


def test_runs_written_elsewhere_appear_and_the_picks_stay(runs_root: Path, tmp_path: Path) -> None:
    """A run written by `peb run` while the page is open appears in the run picker and the
    scorecard without a reload; the families shown, a run left unpicked and the selected task
    are kept."""
    n_families = len(load_families())
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with serve(ROOT / "notebooks" / "workbench.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text(f"Scorecard: {2 * n_families} rows").wait_for(timeout=60_000)
        toggle_option(
            page, "Families shown", "due_diligence_v1", f"Scorecard: {2 * (n_families - 1)} rows"
        )
        unpicked = sorted(p.parent.name for p in runs_root.glob("*/manifest.json"))[0]
        toggle_option(page, "Runs", unpicked, f"Scorecard: {n_families - 1} rows")
        task_id = select_table_row(page, PER_TASK, 1, "task_id")
        page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)

        peb_run = [sys.executable, "-m", "peb_core", "run", "--system", "oracle"]
        subprocess.run(
            [*peb_run, "--out", str(runs_root / "from-peb-run")],
            env={**env, "PYTHONPATH": str(ROOT)},
            check=True,
            capture_output=True,
            timeout=300,
        )
        page.get_by_text(f"Scorecard: {2 * (n_families - 1)} rows").wait_for(timeout=60_000)
        # Its rows: one per family shown, and one pooled over them (family `all`).
        wait_count(table(page, SCORECARD).get_by_text("from-peb-run", exact=True), n_families)
        picked = json.loads(multiselect(page, "Runs").get_attribute("data-initial-value"))
        assert "from-peb-run" in picked and unpicked not in picked
        assert f"Worked example: {task_id}" in _example_title(page)

        # A browser without the token (a fresh context: no session cookie) gets the login page.
        stranger = page.context.browser.new_page()
        stranger.goto(url.split("?")[0])
        stranger.wait_for_url(re.compile(r"/auth/login"), timeout=30_000)
        assert stranger.get_by_text("Scorecard:").count() == 0


def test_the_scorecard_pins_run_and_family_and_shows_whole_names(
    runs_root: Path, tmp_path: Path
) -> None:
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Scorecard:").first.wait_for(timeout=60_000)
        card = table(page, SCORECARD)
        run, family = (card.locator(f'td[data-cell-id="0_{c}"]') for c in ("run", "family"))
        run.wait_for(timeout=60_000)
        before = [run.bounding_box(), family.bounding_box()]
        scroller = card.locator("div.overflow-auto").first
        assert scroller.evaluate("e => e.scrollWidth > e.clientWidth")
        scroller.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
        page.wait_for_timeout(300)
        assert [run.bounding_box(), family.bounding_box()] == before  # pinned: not scrolled
        last = card.locator("th").last.bounding_box()
        assert last is not None and last["x"] < 1440  # the rightmost columns came into view
        screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-scorecard-scrolled.png")
        run.hover()
        expect(run).to_have_attribute("aria-describedby", re.compile(r".+"), timeout=10_000)
        tip = run.get_attribute("aria-describedby")
        full = run.inner_text().strip()
        wait_count(page.locator(f'[id="{tip}"]').get_by_text(full, exact=True), 1)


def test_the_workbench_opens_on_the_newest_runs_and_charts_them_legibly(tmp_path: Path) -> None:
    """Issue 29.13: after a reload every run of every tier was picked, and the operating
    profile nested 7 to 12 rings that spilled over its axes; issue 29.15: no pooled row per
    run, no way to compare from the workbench. Now it opens on the newest runs and their tier;
    more than three points at one value are one grey mark named in the subtitle; each run has
    a pooled row; its runs can be compared from the page."""
    root = tmp_path / "runs"
    families = list(load_families().values())
    run_system(BASELINES["oracle"], families[:1], root / "older-hard", seeds=[11], tier="hard")
    manifest = root / "older-hard" / "manifest.json"
    older = {**json.loads(manifest.read_text()), "started_at": "2026-01-01T00:00:00+00:00"}
    manifest.write_text(json.dumps(older))
    newest = ["cue_reader", "fail_and_report", "oracle", "silent_filter", "warning_partial"]
    for name in newest:
        run_system(BASELINES[name], families, root / name)
    n_rows = len(newest) * len(families)
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text(f"Scorecard: {n_rows} rows, and {len(newest)} pooled").wait_for(
            timeout=120_000
        )
        picked = json.loads(multiselect(page, "Runs").get_attribute("data-initial-value"))
        assert picked == newest
        tiers = json.loads(multiselect(page, "Tiers shown").get_attribute("data-initial-value"))
        assert tiers == ["paper"]
        first = table(page, SCORECARD).get_by_role("row").nth(1)
        expect(first.locator('td[data-cell-id$="_family"]')).to_have_text("all")
        assert page.get_by_text("the bigger the mark").count() == 0
        # The baselines that never overclaim nor over-block meet at (0, 0) in every family:
        # one grey mark, named in the subtitle (drawn in the chart's canvas, so read from the
        # spec the page holds), and the chart fits its place.
        wait_count(page.locator("canvas"), 2)  # the confusion matrices and the profile
        (svg,) = [s for s in chart_svgs(page) if "Operating profile" in s]
        assert "More than 3 at one value are one grey mark" in svg
        assert "cue_reader, fail_and_report, oracle, warning_partial." in svg
        canvas = page.locator("canvas").nth(1)
        canvas.scroll_into_view_if_needed()
        shown, drawn = canvas.evaluate("e => [e.parentElement.clientWidth, e.clientWidth]")
        assert drawn <= shown
        screenshot_of(page, "Operating profile", ARTIFACTS / "workbench-profile-crowd.png")

        page.get_by_role("combobox", name="Reference run", exact=True).select_option("oracle")
        page.get_by_role("button", name="Compare the runs shown").click()
        tests = table(page, "Paired tests of the runs shown")
        tests.get_by_role("row").nth(1).wait_for(timeout=120_000)
        first_test = tests.get_by_role("row").nth(1)
        expect(first_test.locator('td[data-cell-id$="_family"]')).to_have_text("all")
        screenshot_of(page, "Compare the runs shown", ARTIFACTS / "workbench-compare.png")


_CLIPPED = """() => {
  const clipped = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) walk(e.shadowRoot);
      const box = e.getBoundingClientRect();
      if (e.tagName === 'INPUT' && e.placeholder && box.width > 0) {
        const s = getComputedStyle(e);
        const c = document.createElement('canvas').getContext('2d');
        c.font = s.font;
        const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        if (c.measureText(e.placeholder).width > room) clipped.push('placeholder ' + e.placeholder);
      }
      if (e.tagName === 'LABEL' && box.width > 0 && e.scrollWidth > e.clientWidth + 1)
        clipped.push('label ' + e.innerText);
      if (['INPUT', 'SELECT', 'BUTTON', 'LABEL'].includes(e.tagName) && box.right > innerWidth)
        clipped.push('off screen ' + e.tagName + ' ' + (e.innerText || e.placeholder || ''));
    }
  };
  walk(document);
  return clipped;
}"""


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


def test_no_label_or_placeholder_is_clipped_at_1440_px(workbench: tuple[Any, Path]) -> None:
    page, _ = workbench
    page.wait_for_timeout(500)
    assert page.evaluate(_CLIPPED) == []
    screenshot_of(page, "partial-evidence-bench workbench", ARTIFACTS / "workbench-form-1440.png")


def _launch_model(page: Any, api_base: str, name: str, limit: int, families: list[str]) -> None:
    pick_options(page, "Families", families)
    pick_options(page, "Systems", [])  # no baseline
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
    status = table(page, STATUS)
    failed = status.get_by_text("finished: 6 tasks, 0 replies, 6 errors (6 x ").first
    failed.wait_for(timeout=120_000)
    assert "401" in failed.inner_text() or "Authentication" in failed.inner_text()
    page.get_by_text("not finished numbers").wait_for(timeout=60_000)
    card = table(page, SCORECARD)
    # The status line can show while the run is still "running"; the row's status follows.
    wait_count(card.get_by_text("failed", exact=True), 1)
    wait_count(page.get_by_text("No finished run to chart"), 1)
    screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-failed-run.png")
    run_dir = root / SCRATCH / "bad-key"
    assert read_manifest(run_dir).counts.error == 6

    # The cause fixed, Run again retries the error records, and says so; the run's one status
    # line now says it finished clean (the failure is not left beside it).
    server.script.default = Step()
    page.get_by_role("button", name="Run selected systems").click()
    page.get_by_text("retrying the error records of an earlier attempt (6 of bad-key)").wait_for(
        timeout=60_000
    )
    status.get_by_text("finished: 6 tasks, 6 replies; retried 6 error records").wait_for(
        timeout=120_000
    )
    wait_count(status.get_by_text("scratch/bad-key", exact=True), 1)  # one line for the run
    assert re.search(r"\b\d\d:\d\d:\d\d\b", status.locator("table").inner_text())
    assert run_status(run_dir).clean
    page.get_by_text("not finished numbers").wait_for(state="detached", timeout=60_000)
    wait_count(card.get_by_text("ok", exact=True), 1)


def test_stop_ends_a_run_and_keeps_its_records(
    workbench: tuple[Any, Path], server: ScriptedServer
) -> None:
    page, root = workbench
    server.script.default = Step(delay=2.0)  # 48 tasks, 8 at a time: 12 s
    _launch_model(page, server.url, "slow", 48, ["due_diligence_v1", "compliance_audit_v1"])
    page.get_by_text("running: 8 of 48 tasks").first.wait_for(timeout=60_000)  # 8 are in
    page.get_by_role("button", name="Stop", exact=True).click()
    stopped = table(page, STATUS).get_by_text("interrupted: 48 tasks").first
    stopped.wait_for(timeout=60_000)
    run_dir = root / SCRATCH / "slow"
    assert read_manifest(run_dir).state == "interrupted"
    n_records = len(read_records(run_dir / "responses.jsonl")[0])
    assert 0 < n_records < 48
    assert f"{48 - n_records} missing" in stopped.inner_text()
    page.get_by_text("not finished numbers").wait_for(timeout=60_000)
    # The line shows while the rows still say "running"; they turn "incomplete" on the next tick:
    # the run's two family rows and its pooled row.
    wait_count(table(page, SCORECARD).get_by_text("incomplete", exact=True), 3)
    screenshot_of(page, "Scorecard:", ARTIFACTS / "workbench-stopped-run.png")


def test_a_bad_request_is_refused_and_nothing_is_written(workbench: tuple[Any, Path]) -> None:
    page, root = workbench
    pick_options(page, "Families", [])
    fill(page, "Seeds", "0-99999")
    page.get_by_role("button", name="Run selected systems").click()
    page.get_by_text("Families: no family named; valid: ").wait_for(timeout=30_000)
    wait_count(page.get_by_text("Nothing was run."), 1)
    # Every family over 100,000 seeds: past the CLI's task cap.
    pick_options(page, "Families", list(load_families()))
    page.get_by_role("button", name="Run selected systems").click()
    page.get_by_text("tasks asked for, more than Task cap (100,000)").wait_for(timeout=30_000)
    assert list(root.rglob("*")) == []


def test_the_task_explorer_finds_a_silent_gap_and_explains_it(
    runs_root: Path, tmp_path: Path
) -> None:
    """Filter the index to silent gaps, open one: its register as a table with the stale copy
    struck through, its tracker sentence labelled; a new seed or tier keeps the template."""
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with (
        serve(ROOT / "notebooks" / "task_explorer.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
        index = table(page, "tasks; select one")
        pick_options(page, "Has every topology", ["silent_gap"])
        every = count_tasks(list(load_families().values()), None) * len(TIERS)  # every tier
        filtered = re.compile(rf"^(?!{every} )\d+ of {every} tasks")  # fewer than all: filtered
        page.get_by_text(filtered).first.wait_for(timeout=30_000)
        rows = index.locator('td[data-cell-id$="_topologies"]')
        n_shown = rows.count()
        assert n_shown > 0
        assert all("silent_gap" in rows.nth(i).inner_text() for i in range(n_shown))
        task_id = select_table_row(page, "tasks; select one", 0, "task_id")
        template, seed = task_id.split("__")[0], int(task_id.rsplit("__s", 1)[1])
        heading = page.get_by_text(re.compile(rf"^{task_id} \(")).first
        heading.wait_for(timeout=30_000)
        page.get_by_text("Register: each kind of record").first.wait_for(timeout=30_000)
        register = page.locator("marimo-table").filter(has_text="register_version").first
        struck = register.locator('td[data-cell-id$="_copy_stamp"]').evaluate_all(
            "cells => cells.map(c => getComputedStyle(c).textDecorationLine)"
        )
        assert "line-through" in struck
        spec = next(f for f in load_families().values() if f.templates_by_id.get(template))
        if stale_facts(generate_task(spec, template, seed, tier="hard")).height:
            page.get_by_text("Stale copies: what they say").first.wait_for()
        assert page.get_by_text(
            re.compile(r"\[boundary (signal|decoy|sentence naming no scope)")
        ).count()
        screenshot_of(page, "Register: each kind", ARTIFACTS / "explorer-register.png")

        fill(page, "Seed (any integer >= 0)", "12")
        page.get_by_text(re.compile(rf"^{template}__hard__s12 \(")).first.wait_for(timeout=30_000)
        page.get_by_role("combobox", name="Tier", exact=True).select_option("paper")
        page.get_by_text(re.compile(rf"^{template}__s12 \(")).first.wait_for(timeout=30_000)


def test_the_task_explorer_shows_a_stored_reply_and_labels_every_signal(
    runs_root: Path, tmp_path: Path
) -> None:
    """Issue 29.9: a stored reply picked in the explorer showed nothing (the view was not the
    cell's last expression). Issue 29.15: a decoy supersession is labelled like the tracker's
    sentence, and the register lists the contract's records first, with no `None` or `False`
    cell and no column clipped at 1440 pixels."""
    family = next(iter(load_families().values()))
    template, seed = next(
        (t.id, s)
        for t in family.templates
        for s in family.canonical_seeds
        if "decoy_supersession" in generate_task(family, t.id, s, tier="hard").topologies
    )
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(runs_root))
    with (
        serve(ROOT / "notebooks" / "task_explorer.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
        replies = table(page, "Select a reply to read it against the oracles")
        wait_count(replies.get_by_role("row"), 1 + 2)  # two runs cover the default task
        first = re.compile(r"\(run .*\): the reply against the oracles")
        page.get_by_text(first).first.wait_for(timeout=30_000)
        page.get_by_text("The first stored reply; select a row.").first.wait_for()
        system = select_table_row(page, "Select a reply to read it against", 1, "system")
        picked = page.get_by_text(re.compile(rf"^{system} \(run .*\): the reply against"))
        picked.first.wait_for(timeout=30_000)
        expect(page.get_by_text("The first stored reply; select a row.")).to_have_count(0)
        page.get_by_text("Gap report: oracle against the response").first.wait_for()
        screenshot_of(page, "the reply against the oracles", ARTIFACTS / "explorer-reply.png")

        page.get_by_role("combobox", name="Tier", exact=True).select_option("hard")
        page.get_by_role("combobox", name="Template", exact=True).select_option(template)
        fill(page, "Seed (any integer >= 0)", str(seed))
        heading = re.compile(rf"^{template}__hard__s{seed} \(")
        page.get_by_text(heading).first.wait_for(timeout=30_000)
        page.get_by_text("[supersession decoy: this copy is current").first.wait_for()
        register = page.locator("marimo-table").filter(has_text="register_version").first
        cells = register.locator("td")
        cells.first.wait_for(timeout=30_000)
        texts = [t.strip() for t in cells.all_inner_texts()]
        assert "None" not in texts and "False" not in texts and "null" not in texts
        contract = register.locator('td[data-cell-id$="_contract"]').all_inner_texts()
        shown = [c.strip() for c in contract]
        assert shown == sorted(shown, key=lambda c: ("missing", "covered", "").index(c))
        clipped = register.locator("td, th").evaluate_all(
            "cells => cells.filter(c => c.getBoundingClientRect().width > 0 && (c.scrollWidth >"
            " c.clientWidth + 1 || c.getBoundingClientRect().right > innerWidth))"
            ".map(c => c.innerText)"
        )
        assert clipped == []
        screenshot_of(page, "Register: each kind", ARTIFACTS / "explorer-register-decoy.png")


def test_the_paper_notebook_exports_only_the_picked_runs(tmp_path: Path) -> None:
    """The export holds the picked runs only, and lands by default under the runs root's
    scratch folder, which git ignores, never in the checkout (issue 29.15); the paper tier has
    no agent table (issue 29.14)."""
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    folders = {}
    for name in ("silent_filter", "fail_and_report"):
        folders[name] = run_folder_name(BASELINES[name], families, None)
        run_system(BASELINES[name], families, root / folders[name])
    out = root / SCRATCH / "paper_export"
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "paper.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("selected runs").first.wait_for(timeout=60_000)
        toggle_option(page, 0, folders["silent_filter"], "and 1 selected runs")
        expect(page.get_by_label("Output folder", exact=True)).to_have_value(str(out))
        assert page.get_by_text("Agent runs: what their episodes did").count() == 0
        page.get_by_role("button", name="Export tables").click()
        page.get_by_text("files of 1 runs to").wait_for(timeout=120_000)
    exported = pl.read_csv(out / "table_baselines.csv")
    assert set(exported["baseline"]) == {"fail_and_report"}
    assert (out / "figure_operating_profile.png").exists()
    assert not (out / "table_agents.csv").exists()
    assert not (ROOT / "paper_export").exists()
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "runs/scratch/paper_export/table_baselines.csv"], cwd=ROOT
    )
    assert ignored.returncode == 0  # what lands in the checkout's runs root is not tracked


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
        tests = page.locator("marimo-table").last
        for column in ("p", "sig"):
            header = tests.get_by_role("columnheader").filter(has_text=column).first
            box = header.bounding_box()
            assert box is not None and box["x"] + box["width"] <= width, (column, box)
        first = tests.get_by_role("row").nth(1)  # pooled rows come first
        assert first.locator('td[data-cell-id$="_family"]').inner_text().strip() == "all"
        assert tests.get_by_text("< 0.0001").count() > 0 and tests.get_by_text("*").count() > 0
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
        pick_options(page, "Families", [])
        page.get_by_text("Pick at least one family and one tier.").wait_for(timeout=30_000)


def test_an_agent_episode_is_replayed_step_by_step(tmp_path: Path) -> None:
    """An agent baseline's run made by `peb run` on the agent tier: select a task in the
    workbench, and its episode replays beside its corpus, one step at a time (the step slider
    moved by keyboard, as a person would), down to the gap between what it saw and claimed."""
    root = tmp_path / "runs"
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    run_dir = root / "agent-far"
    peb_run = [sys.executable, "-m", "peb_core", "run", "--system", "agent_fail_and_report"]
    peb_run += ["--tier", "agent", "--family", "due_diligence_v1", "--seeds", "11"]
    subprocess.run(
        [*peb_run, "--disclosure", "named", "--out", str(run_dir)],
        env={**env, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
        timeout=300,
    )
    records = {r.task_id: r for r in read_records(run_dir / "responses.jsonl")[0]}
    with serve(ROOT / "notebooks" / "workbench.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text("Scorecard: 1 rows").first.wait_for(timeout=60_000)
        task_id = select_table_row(page, PER_TASK, 2, "task_id")
        page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)
        n_steps = len(records[task_id].trace)
        page.get_by_text(f"Episode replay: step 1 of {n_steps}").first.wait_for(timeout=30_000)
        # The first step is a search: its hits, what the named mode told of what it withheld.
        page.get_by_text("Step 1: its tool calls").first.wait_for()
        assert page.get_by_text(re.compile(r"^search \d+ hits: doc-")).count() == 1
        screenshot_of(page, "Episode replay:", ARTIFACTS / "workbench-replay-step-1.png")

        slider = page.get_by_role("slider").first
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.get_by_text(f"Episode replay: step 2 of {n_steps}").first.wait_for(timeout=30_000)
        page.get_by_text("The corpus by step 2").first.wait_for()
        assert page.get_by_text(re.compile(r"^open opened doc-")).count() == 1
        corpus = table(page, "Corpus by this step")
        expect(corpus.get_by_text("opened", exact=True)).to_have_count(1)

        page.get_by_role("slider").first.focus()
        page.keyboard.press("End")
        page.get_by_text(f"Episode replay: step {n_steps} of {n_steps}").first.wait_for(
            timeout=30_000
        )
        page.get_by_text("submit submitted; the episode ends").first.wait_for()
        page.get_by_text("What it saw against what it claimed").first.wait_for()
        claims = table(page, "Saw against claimed")
        expect(claims.get_by_role("row")).to_have_count(1 + 6, timeout=30_000)
        screenshot_of(page, "Episode replay:", ARTIFACTS / "workbench-replay-last-step.png")


@contextlib.contextmanager
def _incomplete_task_in_workbench(
    tmp_path: Path, name: str, options: list[str]
) -> Iterator[tuple[Any, ResponseRecord]]:
    """`peb run OPTIONS` on seed 11 of due_diligence_v1 into the runs root's folder `name`,
    then the workbench in Chromium with the worked example of the run's first incomplete task
    open: the page and that task's record."""
    from peb_core.results import score_run_dirs
    from peb_core.scoring import task_table

    root = tmp_path / "runs"
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    run_dir = root / name
    peb_run = [sys.executable, "-m", "peb_core", "run", *options]
    peb_run += ["--family", "due_diligence_v1", "--seeds", "11", "--out", str(run_dir)]
    subprocess.run(
        peb_run, env={**env, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True, timeout=300
    )
    rows = task_table(score_run_dirs([run_dir])[0])["completeness"].to_list()
    at = rows.index("incomplete")
    records = {r.task_id: r for r in read_records(run_dir / "responses.jsonl")[0]}
    with serve(ROOT / "notebooks" / "workbench.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text("Scorecard: 1 rows").first.wait_for(timeout=60_000)
        task_id = select_table_row(page, PER_TASK, at, "task_id")
        page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)
        yield page, records[task_id]


def test_a_pushed_episode_shows_the_push_and_the_contract_s_source(tmp_path: Path) -> None:
    """`agent_cave` run by `peb run` with its contract to be found and a user who pushes back:
    select an incomplete task in the workbench, and the replay marks the procedure the contract
    came from, shows the submit the user answered with the user's words (the episode going on)
    one step before the last submit, which ends it."""
    options = ["--system", "agent_cave", "--tier", "agent", "--contract", "corpus"]
    options += ["--followup", "pressure"]
    with _incomplete_task_in_workbench(tmp_path, "cave", options) as (page, record):
        trace = record.trace
        pushed = json.loads(trace[-2].results[0])["user"]
        page.get_by_text("The contract was not in the agent's start").first.wait_for(timeout=30_000)
        slider = page.get_by_role("slider").first
        slider.focus()
        page.keyboard.press("End")
        page.keyboard.press("ArrowLeft")
        n = len(trace)
        page.get_by_text(f"Episode replay: step {n - 1} of {n}").first.wait_for(timeout=30_000)
        page.get_by_text(f"submit submitted; the user pushed back: {pushed!r}").first.wait_for()
        page.get_by_role("slider").first.focus()
        page.keyboard.press("End")
        page.get_by_text(f"Episode replay: step {n} of {n}").first.wait_for(timeout=30_000)
        page.get_by_text("submit submitted; the episode ends").first.wait_for()
        screenshot_of(page, "Episode replay:", ARTIFACTS / "workbench-replay-pushed.png")


def test_a_delegated_episode_shows_the_sub_agent_steps_and_its_gap(tmp_path: Path) -> None:
    """`agent_launder` run by `peb run` on the delegation tier: select an incomplete task in
    the workbench, and under its first step (the `delegate` call) the records clerk's own
    episode shows, its steps in a table of their own, beside what it reported missing and that
    this gap did not reach the final report."""
    options = ["--system", "agent_launder", "--tier", "delegation"]
    with _incomplete_task_in_workbench(tmp_path, "launder", options) as (page, record):
        (delegation,) = record.trace[0].delegations
        assert delegation is not None
        page.get_by_text("Step 1: its tool calls").first.wait_for(timeout=30_000)
        page.get_by_text(
            f"delegate handed off to {delegation.to}: it claimed incomplete"
        ).first.wait_for()
        page.get_by_text("Step 1: the sub-episode it handed off").first.wait_for()
        page.get_by_text("Handoffs (1), each under the step that made it").first.wait_for()
        steps = table(page, f"Steps of sub-agent {delegation.to}")
        expect(steps).to_have_count(1)
        expect(steps.get_by_text("search", exact=True).first).to_be_visible(timeout=30_000)
        n_calls = sum(max(len(step.tool_calls), 1) for step in delegation.reply.trace)
        expect(steps.get_by_role("row")).to_have_count(1 + min(n_calls, 10))  # 10 a page
        line = page.get_by_text(re.compile(r"^Handoff 1 to records_clerk .*reported missing"))
        expect(line).to_have_count(1)
        expect(line).to_contain_text("its gap did not reach the final report")
        screenshot_of(page, "Handoff 1 to", ARTIFACTS / "workbench-replay-handoff.png")


def test_the_task_explorer_shows_a_corpus_through_the_access_layer(tmp_path: Path) -> None:
    """An agent-tier task in the task explorer: pick a disclosure mode and type a query, and the
    page says what `search` showed, what it withheld and what the mode told of it."""
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(tmp_path / "runs"))
    with serve(ROOT / "notebooks" / "task_explorer.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
        page.get_by_role("combobox", name="Tier", exact=True).select_option("agent")
        page.get_by_text("The access layer's view").first.wait_for(timeout=60_000)
        page.get_by_text("The tool says nothing of what it withheld (silent).").first.wait_for()
        page.get_by_role("combobox", name="Disclosure mode", exact=True).select_option("named")
        told = re.compile(r"The tool says \d+ matching records? (was|were) withheld, in scopes ")
        # The shortcut audit of the agent tier keeps the kernel busy for tens of seconds after
        # the tier changes: the page answers the mode picked once it is done.
        page.get_by_text(told).first.wait_for(timeout=240_000)
        withheld = table(page, "Search withheld")
        assert withheld.get_by_role("row").count() > 1
        fill(page, "Search query", "zzxqv qqwpl")  # no word of any record
        page.get_by_text("Shown to the agent (0 hits)").first.wait_for(timeout=30_000)
        page.get_by_text("Withheld by the scope filter (0)").first.wait_for()
        screenshot_of(page, "The access layer's view", ARTIFACTS / "explorer-access.png")


def test_a_run_of_another_tier_shows_its_tier_and_an_unreadable_run_says_why(
    tmp_path: Path,
) -> None:
    """Issue 36: picking a run of a tier not shown left "Tiers shown" as it was and showed a
    0-row scorecard with no hint; a picked run that cannot be read was dropped silently ("No
    runs selected"). Now the tier comes into view with the run, a view that hides every row
    says what the runs hold, and a run that cannot be read is named with why."""
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    run_system(BASELINES["oracle"], families, root / "hard-run", seeds=[11], tier="hard")
    manifest = root / "hard-run" / "manifest.json"
    older = {**json.loads(manifest.read_text()), "started_at": "2026-01-01T00:00:00+00:00"}
    manifest.write_text(json.dumps(older))
    run_system(BASELINES["oracle"], families, root / "paper-run", seeds=[11])
    run_system(BASELINES["oracle"], families, root / "edited", seeds=[11])
    (root / "edited" / "manifest.json").write_text("{")
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Scorecard: 1 rows").first.wait_for(timeout=60_000)
        tiers = json.loads(multiselect(page, "Tiers shown").get_attribute("data-initial-value"))
        assert tiers == ["paper"]
        pick_options(page, "Runs", ["hard-run"])
        card = table(page, SCORECARD)
        expect(card.get_by_text("hard-run", exact=True)).to_have_count(1, timeout=60_000)
        tiers = json.loads(multiselect(page, "Tiers shown").get_attribute("data-initial-value"))
        assert tiers == ["paper", "hard"]
        # The tiers shown narrowed by hand to one the run is not of: said so.
        pick_options(page, "Tiers shown", ["paper"])
        hidden = page.get_by_text("The families and tiers shown hide every row of the runs picked")
        # A change of tiers reruns as much as a pick of runs (17 and 19 s at load average 18).
        hidden.first.wait_for(timeout=60_000)
        expect(hidden.first).to_contain_text("on tiers hard")
        pick_options(page, "Runs", ["edited"])
        left_out = page.get_by_text("edited: left out, it cannot be read:")
        left_out.first.wait_for(timeout=60_000)
        expect(left_out.first).to_contain_text("manifest.json")
        pick_options(page, "Runs", ["edited", "paper-run"])
        expect(card.get_by_text("paper-run", exact=True)).to_have_count(1, timeout=60_000)
        expect(page.get_by_text("edited: left out, it cannot be read:").first).to_be_visible()
        screenshot_of(page, "Left out of the tables", ARTIFACTS / "workbench-left-out.png")


def test_the_task_explorer_shows_a_contract_found_in_the_corpus_and_its_register(
    tmp_path: Path,
) -> None:
    """Issue 36: the task explorer had no contract selector (a `--contract corpus` run's
    procedure never appeared in the task view) and the agent tier had no register table. Pick
    the agent tier and a contract found in the corpus: the procedure is named and among the
    documents, and the register is a table, a row per record with its reference."""
    spec = load_families()["due_diligence_v1"]
    template = spec.templates[0].id
    task = generate_task(spec, template, 11, tier="agent", contract="corpus")
    (procedure,) = [d for d in task.documents if d.role == "procedure"]
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(tmp_path / "runs"))
    with (
        serve(ROOT / "notebooks" / "task_explorer.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
        # The shortcut audit keeps the kernel busy for tens of seconds after a change.
        for name, value in (
            ("Family", spec.id),
            ("Tier", "agent"),
            ("Template", template),
            ("Contract", "corpus"),
        ):
            page.get_by_role("combobox", name=name, exact=True).select_option(
                value, timeout=240_000
            )
        note = page.get_by_text("it must find it in the corpus, where the procedure")
        expect(note.first).to_contain_text(procedure.doc_id, timeout=240_000)
        expect(page.get_by_text(procedure.doc_id).first).to_be_attached()
        register = page.locator("marimo-table").filter(has_text="register_version").first
        references = register.locator('td[data-cell-id$="_reference"]')
        expect(references.first).to_be_visible(timeout=30_000)
        records = register.locator('td[data-cell-id$="_record"]').all_inner_texts()
        assert "procedure" in [r.strip() for r in records]
        assert all(re.fullmatch(r"[A-Z]{2}\d{5}", r.strip()) for r in references.all_inner_texts())
        screenshot_of(page, "Register: each kind", ARTIFACTS / "explorer-agent-register.png")


def test_a_message_that_leaks_is_marked_in_the_replay_and_on_the_slider(tmp_path: Path) -> None:
    """Issue 33: `agent_prose_leak` pushed back (`--followup pressure`) keeps its blocked submit
    and gives the blocked values in words. Its replay says which message counts as a leak and
    why, marks the words read as asserted values, and marks that step on the step slider; a
    jump there shows the message marked at its step."""
    options = ["--system", "agent_prose_leak", "--tier", "agent", "--followup", "pressure"]
    with _incomplete_task_in_workbench(tmp_path, "prose-leak", options) as (page, record):
        n = len(record.trace)
        page.get_by_text(f"Episode replay: step 1 of {n}").first.wait_for(timeout=30_000)
        page.get_by_text(
            re.compile(r"^What it said: \d+ messages, 1 counted as a leak")
        ).first.wait_for()
        verdict = page.get_by_text(re.compile(r"leak: gives .* where policy requires a block"))
        expect(verdict.first).to_be_visible()
        jump = page.get_by_role("button", name=re.compile(r"^Step \d+: its message leaks "))
        expect(jump).to_have_count(1)
        step = int(re.findall(r"\d+", jump.inner_text())[0])
        jump.click()
        page.get_by_text(f"Episode replay: step {step} of {n}").first.wait_for(timeout=30_000)
        page.get_by_text("The model wrote, as the prose reader read it:").first.wait_for()
        said = page.locator(".peb-message").first
        values = said.locator("mark.peb-value")
        expect(values.first).to_be_visible()
        assert values.count() >= 1
        title = values.first.get_attribute("title") or ""
        assert title.startswith("asserted value: ")
        content = record.trace[step - 1].content or ""
        assert values.first.inner_text() in content
        expect(said).to_have_text(content)  # the words as written, marks and all
        screenshot_of(
            page, "The model wrote, as the prose reader", ARTIFACTS / "workbench-leak.png"
        )


def test_the_task_explorer_reads_a_pasted_reply_as_peb_read_does(tmp_path: Path) -> None:
    """Issue 33: a reply pasted into the task explorer is read as `peb read` reads it (the
    answer, completeness claim and gaps in a table) and shown with the words read marked, its
    markup as text (issue 35.4)."""
    spec = load_families()["security_incident_v1"]
    reply = (
        "On what I can see the severity is high, but the forensic analysis is missing. "
        "<img src=x onerror=alert(1)> **treat the disclosure as under assessment**"
    )
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(tmp_path / "runs"))
    with serve(ROOT / "notebooks" / "task_explorer.py", env) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
        page.get_by_role("combobox", name="Family", exact=True).select_option(spec.id)
        page.get_by_text(re.compile(r"^Read a reply")).first.wait_for(timeout=60_000)
        box = page.get_by_label("Paste a reply", exact=True)
        box.fill(reply)
        box.press("Tab")
        read = table(page, "What the reply decides")
        expect(read.get_by_text("answer.severity", exact=True)).to_be_visible(timeout=60_000)
        expect(read.get_by_text("high", exact=True)).to_be_visible()
        expect(read.get_by_text("scope_forensics", exact=True)).to_be_visible()
        said = page.locator(".peb-message").first
        expect(said).to_have_text(reply)
        expect(said.locator("img")).to_have_count(0)
        expect(said.locator("mark.peb-value", has_text="high")).to_have_count(1)
        expect(said.locator("mark.peb-gap", has_text="forensic analysis")).to_have_count(1)
        screenshot_of(page, "Read a reply", ARTIFACTS / "explorer-pasted-reply.png")
