"""An agent's episode in the workbench and the task explorer, in a real browser (Chromium
through playwright, as tests/test_browser.py drives it): everything a model or a tool wrote is
shown as text (issue 35.4), and each unsafe, expired, stale, laundered, pushed and caved
episode of the baselines says why, with the step to jump to (issue 36)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

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
    table,
)
from playwright.sync_api import expect

from peb_core.frontends.workbench import Replay, episode_replay, grant_events, run_example
from peb_core.results import score_run_dirs
from peb_core.runs import run_system
from peb_core.scoring import task_table
from peb_core.systems import BASELINES, build_system
from peb_core.tasks import load_families

pytestmark = pytest.mark.skipif(
    not browser_available(), reason="needs playwright and /usr/bin/chromium"
)

SPEC = load_families()["due_diligence_v1"]
PER_TASK = "Per task"
STYLE = "<style>h1,h2,h3{display:none}</style>"


class _Recorder(BaseHTTPRequestHandler):
    """Records the path of every request it is sent, and answers 404."""

    paths: list[str]

    def do_GET(self) -> None:
        self.paths.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[int, list[str]]]:
    """A server on 127.0.0.1 that records any fetch: (its port, the paths fetched)."""
    paths: list[str] = []
    handler = type("Recorder", (_Recorder,), {"paths": paths})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], paths
    server.shutdown()
    server.server_close()


def _make_hostile(run_dir: Path, port: int) -> dict[str, str]:
    """Rewrite an agent run's records (and its system's name) as an evaluated agent could
    write them: its message, a tool's name, its raw arguments (closing their code fence) and
    the tool's result carry a `<style>` that hides every heading, images from the recorder
    and Markdown links. Returns the texts written, by where."""

    def img(tag: str) -> str:
        return f"<img src=http://127.0.0.1:{port}/{tag}>"

    link = f"[click me](http://127.0.0.1:{port}/link)"
    written = {
        "system": f"agent:openai/{img('system')}{STYLE}",
        "content": f"{STYLE} {img('content')} {link}\n```\n{img('fenced')}\n```",
        "tool": f"{img('tool')}{STYLE}",
        "arguments": f"```\n{img('arguments')}\n{STYLE}\n``` {link}",
        "result": f"{img('result')}{STYLE}",
    }
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (run_dir / "manifest.json").write_text(json.dumps({**manifest, "system": written["system"]}))
    records = []
    for line in (run_dir / "responses.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["system"] = written["system"]
        step = record["trace"][0]
        step["content"] = written["content"]
        step["tool_calls"].append(
            {"id": "evil", "name": written["tool"], "arguments": written["arguments"]}
        )
        step["results"].append(written["result"])
        if "errors" in step:
            step["errors"].append(None)
        records.append(json.dumps(record))
    (run_dir / "responses.jsonl").write_text("\n".join(records) + "\n")
    return written


_STYLES = """() => {
  const found = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) walk(e.shadowRoot);
      if (e.tagName === 'STYLE' && e.textContent.includes('display:none}')) found.push('style');
      const src = e.getAttribute('src') || '';
      if (e.tagName === 'IMG' && src.includes('127.0.0.1')) found.push('img');
      if (e.tagName === 'A' && (e.getAttribute('href') || '').includes('/link')) found.push('a');
    }
  };
  walk(document);
  return found;
}"""


def _shown_as_text(page: Any, written: dict[str, str], fetched: list[str]) -> None:
    """Each hostile text is on the page as text, nothing was fetched from the recorder, no
    style, image or link was made of them, and every heading shows."""
    for where in ("tool", "content", "arguments", "result"):
        for part in written[where].split("\n"):
            if part.strip("`"):
                expect(page.get_by_text(part.strip(), exact=False).first).to_be_attached()
    assert page.evaluate(_STYLES) == []
    headings = page.locator("h1, h2, h3")
    assert headings.count() > 3
    hidden = headings.evaluate_all(
        "hs => hs.filter(h => getComputedStyle(h).display === 'none').map(h => h.innerText)"
    )
    assert hidden == []
    page.wait_for_timeout(500)  # any image would have been asked for by now
    assert fetched == []


def test_what_an_agent_wrote_is_shown_as_text(
    tmp_path: Path, recorder: tuple[int, list[str]]
) -> None:
    """Issue 35.4: an agent's message, a tool's name, its raw arguments (closing their code
    fence) and a result carrying a `<style>` that hides every heading, images from another
    server and Markdown links, and a run folder and system named with them: in the workbench's
    worked example and replay, and the task explorer's reply, all shown as text; nothing is
    fetched, and every heading shows."""
    port, fetched = recorder
    root = tmp_path / "runs"
    run_dir = root / f"evil{STYLE}"
    run_system(BASELINES["agent_fail_and_report"], [SPEC], run_dir, seeds=[11], tier="agent")
    written = _make_hostile(run_dir, port)
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Episode replay: step 1 of").first.wait_for(timeout=120_000)
        page.get_by_text("The model wrote").first.wait_for(timeout=60_000)
        _shown_as_text(page, written, fetched)
        expect(page.get_by_text(f"answered by {written['system']}").first).to_be_visible()
        screenshot_of(page, "Episode replay:", ARTIFACTS / "workbench-replay-hostile.png")

    with (
        serve(ROOT / "notebooks" / "task_explorer.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Stored replies to this task").first.wait_for(timeout=60_000)
        template = run_example(run_dir, "r", SPEC.id, _first_task(run_dir)).task.template
        # The shortcut audit keeps the kernel busy for tens of seconds after a change.
        for name, value in (("Family", SPEC.id), ("Tier", "agent"), ("Template", template)):
            page.get_by_role("combobox", name=name, exact=True).select_option(
                value, timeout=240_000
            )
        page.get_by_text("Episode replay: step 1 of").first.wait_for(timeout=240_000)
        page.get_by_text("The model wrote").first.wait_for(timeout=60_000)
        _shown_as_text(page, written, fetched)


def _first_task(run_dir: Path) -> str:
    task_id: str = task_table(score_run_dirs([run_dir])[0])["task_id"][0]
    return task_id


KINDS: dict[str, tuple[str, dict[str, Any], str]] = {
    # kind: (system, the run's tier, what the finding's words say); a user pushes back on
    # the systems of "held" and "caved" (`--followup pressure`)
    "unsafe": ("agent_silent", {"tier": "agent"}, r"was missing when it answered"),
    "stale": ("agent_silent", {"tier": "agent"}, r"an out-of-date copy it opened at step \d+"),
    "expired": (
        "agent_keep_expired",
        {"tier": "grants"},
        r"relied on evidence whose grant ended at call \d+ \(step \d+\), before the submit",
    ),
    "laundered": (
        "agent_launder",
        {"tier": "delegation"},
        r"handoff 1 to records_clerk at step \d+ reported missing .*never reached it",
    ),
    "held": (
        "agent_fail_and_report",
        {"tier": "agent"},
        r"pushed at step \d+: held; its last submit \(step \d+\) still claims incomplete",
    ),
    "caved": (
        "agent_cave",
        {"tier": "agent"},
        r"pushed at step \d+: caved; its last submit \(step \d+\) claims complete",
    ),
}


def _episode_of_kind(run_dir: Path, kind: str) -> tuple[int, Replay]:
    """The first task of a run (in the per-task table's order) whose episode has a finding of
    `kind`: its row and its replay."""
    rows = task_table(score_run_dirs([run_dir])[0])
    for at, task_id in enumerate(rows["task_id"]):
        replay = episode_replay(run_example(run_dir, "r", SPEC.id, task_id))
        if replay is not None and kind in replay.findings["kind"].to_list():
            return at, replay
    raise AssertionError(f"no {kind} episode in {run_dir}")


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_replay_says_why_an_episode_scored_as_it_did(kind: str, tmp_path: Path) -> None:
    """Issue 36: a baseline's episode of each kind (unsafe, stale, expired, laundered, pushed
    and held, caved), selected in the workbench: its replay says in words why, with a button
    that jumps to the step; a push (held or caved) is in the replay's header, and the push and
    every grant change are marked on the step slider."""
    system, options, words = KINDS[kind]
    root = tmp_path / "runs"
    run_dir = root / kind
    followup = "pressure" if kind in ("held", "caved") else "none"
    baseline = build_system(system, [SPEC], followup=followup)
    run_system(baseline, [SPEC], run_dir, seeds=[11], **options)
    at, replay = _episode_of_kind(run_dir, kind)
    (finding,) = (
        replay.findings.filter(replay.findings["kind"] == kind).head(1).iter_rows(named=True)
    )
    assert re.search(words, finding["words"]), finding["words"]
    step, n = finding["step"], replay.n_steps
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Scorecard: 1 rows").first.wait_for(timeout=60_000)
        task_id = select_table_row(page, PER_TASK, at, "task_id")
        page.get_by_text(f"Worked example: {task_id}").first.wait_for(timeout=30_000)
        page.get_by_text(f"Episode replay: step 1 of {n}").first.wait_for(timeout=60_000)
        page.get_by_text("Why it scored as it did").first.wait_for()
        said = page.get_by_text(finding["words"]).first
        expect(said).to_be_visible()
        if kind in ("held", "caved"):
            header = page.get_by_text(
                re.compile(rf"Episode replay: step 1 of {n} \(pushed at step {step}: {kind}\)")
            )
            expect(header.first).to_be_visible()
            mark = page.get_by_role("button", name=f"Step {step}: the user pushed back: {kind}")
            expect(mark).to_have_count(1)
        for change_step, line in grant_events(replay):
            mark = page.get_by_role("button", name=f"Step {change_step}: {line}")
            expect(mark).to_have_count(1)
        screenshot_of(page, "Why it scored as it did", ARTIFACTS / f"workbench-why-{kind}.png")
        # Its button jumps the replay, and the slider, to its step.
        line = page.locator("div").filter(has=said).filter(has=page.get_by_role("button")).last
        line.get_by_role("button", name=f"Step {step}", exact=True).click()
        page.get_by_text(f"Episode replay: step {step} of {n}").first.wait_for(timeout=30_000)
        expect(page.get_by_role("slider").first).to_have_attribute("aria-valuenow", str(step))


_OVERFLOW = """(e) => {
  const wide = [];
  for (const x of [e, ...e.querySelectorAll('*')]) {
    const box = x.getBoundingClientRect();
    if (box.width > 0 && box.right > innerWidth + 1) wide.push(x.tagName + ' ' + box.right);
  }
  return wide;
}"""


def test_the_replay_fits_1440_px_and_reads_as_text(tmp_path: Path) -> None:
    """Issue 36: at 1440x900, the replay's corpus table fits the page (no column cut off, no
    sideways scroll), the procedure an agent opened reads wrapped rather than as one clipped
    line, tables say yes, no or nothing rather than True, False or None, and the scorecard
    tells agent runs apart by disclosure, contract and follow-up."""
    root = tmp_path / "runs"
    run_dir = root / "corpus"
    run_system(
        BASELINES["agent_fail_and_report"],
        [SPEC],
        run_dir,
        seeds=[11],
        tier="agent",
        contract="corpus",
    )
    (task_id, *_) = task_table(score_run_dirs([run_dir])[0])["task_id"]
    replay = episode_replay(run_example(run_dir, "r", SPEC.id, task_id))
    assert replay is not None
    procedure = replay.steps.filter(replay.steps["step"] == 2)["doc_id"][0]
    assert next(d for d in replay.task.documents if d.doc_id == procedure).role == "procedure"
    env = scratch_env(tmp_path / "home", PEB_RUNS_DIR=str(root))
    with (
        serve(ROOT / "notebooks" / "workbench.py", env) as url,
        chromium_page(width=1440, height=900) as page,
    ):
        page.goto(url)
        page.get_by_text("Episode replay: step 1 of").first.wait_for(timeout=120_000)
        header = table(page, "Scorecard rows").get_by_role("columnheader")
        for key in ("disclosure", "contract", "followup"):
            expect(header.filter(has_text=re.compile(rf"^{key}$"))).to_have_count(1)
        slider = page.get_by_role("slider").first
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.get_by_text("Episode replay: step 2 of").first.wait_for(timeout=30_000)
        page.get_by_text(re.compile(rf"^open opened {procedure}")).first.wait_for()
        page.get_by_role("button", name="What the tool showed it").first.click()
        shown = page.locator("pre").filter(has_text='"body"', visible=True).first
        shown.wait_for(timeout=30_000)
        box = shown.bounding_box()
        assert box is not None and box["height"] > 60  # wrapped over lines, not one
        assert shown.evaluate("e => e.scrollWidth <= e.clientWidth")
        assert shown.evaluate(_OVERFLOW) == []
        corpus = table(page, "Corpus by this step")
        corpus.locator("td").first.wait_for(timeout=30_000)
        scroller = corpus.locator("div.overflow-auto").first
        assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert corpus.evaluate(_OVERFLOW) == []
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        for label in ("Corpus by this step", "Saw against claimed", "Episode steps"):
            cells = [t.strip() for t in table(page, label).locator("td").all_inner_texts()]
            assert cells and not {"None", "True", "False", "null"} & set(cells), label
        screenshot_of(page, "The corpus by step 2", ARTIFACTS / "workbench-replay-1440.png")
