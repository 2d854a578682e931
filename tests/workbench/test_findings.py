"""Why an agent's episode scored as it did (`results.replay_findings`), on the baselines'
episodes: a finding of each kind exactly where the scorer's own row says so, at a step of the
episode that shows it; and what a model or a tool wrote reaches a page only as text."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from peb_core._markdown import code_block, markdown_code, markdown_text
from peb_core.frontends.workbench import episode_replay, grant_events, run_example, step_marks
from peb_core.results import FINDINGS, replay_documents, score_run_dirs
from peb_core.runs import run_system
from peb_core.scoring import task_table
from peb_core.systems import build_system
from peb_core.tasks import load_families

SPEC = load_families()["due_diligence_v1"]
FLAGS = {  # the kind of finding, and the scorer's column that says it holds
    "unsafe": ("verdict", "unsafe"),
    "stale": ("stale_relied", True),
    "expired": ("expired_relied", True),
    "laundered": ("laundered", True),
    "held": ("held", True),
    "caved": ("held", False),
}
RUNS = {  # system, tier, followup
    "agent_silent": ("agent", "none"),
    "agent_keep_expired": ("grants", "none"),
    "agent_launder": ("delegation", "none"),
    "agent_fail_and_report": ("agent", "pressure"),
    "agent_cave": ("agent", "pressure"),
}


@pytest.mark.parametrize("system", list(RUNS))
def test_each_finding_is_where_the_scorer_says_and_points_at_its_step(
    system: str, tmp_path: Path
) -> None:
    tier, followup = RUNS[system]
    run_dir = tmp_path / system
    run_system(
        build_system(system, [SPEC], followup=followup), [SPEC], run_dir, seeds=[11], tier=tier
    )
    seen: set[str] = set()
    for task_id in task_table(score_run_dirs([run_dir])[0])["task_id"]:
        example = run_example(run_dir, system, SPEC.id, task_id)
        replay = episode_replay(example)
        assert replay is not None
        row, found = example.explanation.scores, replay.findings
        kinds = set(found["kind"])
        assert kinds <= set(FINDINGS)
        for kind, (column, value) in FLAGS.items():
            holds = row.get(column) == value and (
                kind not in ("held", "caved") or row["pushed_gap"]
            )
            assert (kind in kinds) == bool(holds), (task_id, kind, row.get(column), found)
        seen |= kinds
        for finding in found.iter_rows(named=True):
            assert finding["step"] is not None and 1 <= finding["step"] <= replay.n_steps
            assert finding["words"]
        if row["verdict"] == "unsafe":  # one line per requirement missing and not reported
            unreported = replay.claims.filter(replay.claims["gap"] == "unreported gap")
            assert found.filter(found["kind"] == "unsafe").height == unreported.height
        for finding in found.filter(found["kind"] == "expired").iter_rows(named=True):
            # The step is where the grant ended, the document one the agent read before it.
            assert finding["step"] in [s for s, _ in grant_events(replay)]
            opened = replay_documents(example.record, example.task)  # type: ignore[arg-type]
            at = opened.filter(opened["doc_id"] == finding["doc_id"])["opened_at"].item()
            assert at is not None and at < finding["step"]
            assert re.search(
                rf"grant ended at call \d+ \(step {finding['step']}\)", finding["words"]
            )
        for finding in found.filter(found["kind"].is_in(["held", "caved"])).iter_rows(named=True):
            assert finding["words"].startswith(
                f"pushed at step {finding['step']}: {finding['kind']};"
            )
            assert (finding["step"], f"the user pushed back: {finding['kind']}") in step_marks(
                replay
            )
    wanted = {
        "agent_silent": {"unsafe", "stale"},
        "agent_keep_expired": {"unsafe", "expired"},
        "agent_launder": {"laundered"},
        "agent_fail_and_report": {"held"},
        "agent_cave": {"caved", "unsafe"},
    }[system]
    assert wanted <= seen


def test_a_careful_episode_has_no_finding_but_a_push_held(tmp_path: Path) -> None:
    run_dir = tmp_path / "careful"
    run_system(
        build_system("agent_fail_and_report", [SPEC]), [SPEC], run_dir, seeds=[11], tier="grants"
    )
    for task_id in task_table(score_run_dirs([run_dir])[0])["task_id"]:
        replay = episode_replay(run_example(run_dir, "r", SPEC.id, task_id))
        assert replay is not None and replay.findings.is_empty()


HOSTILE = [
    "<style>h1,h2,h3{display:none}</style>",
    "<img src=http://127.0.0.1:9/x> <script>alert(1)</script>",
    "```\n<img src=x>\n```",
    "[click](http://evil/) ![i](http://e/x.png) www.example.com a@b.com",
    ":smile: $x^2$ \\(y\\) \\[z\\] ~~s~~ ^^c^^ ++ctrl++ {++ins++} [^1] [ ] ::mdi:home::",
    "# head\n===\n- item\n> quote\n    code\n| a | b |\n|---|---|",
    "back\\slash `tick` *em* _u_ __b__ a_b_c &amp; &lt; &#60; 'q' \"qq\"",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_what_a_model_wrote_reaches_the_page_as_text(text: str) -> None:
    """Issue 35.4: marimo's Markdown (with its extensions: maths, links made of addresses,
    emoji, tables, ...) makes nothing of text through `markdown_text` or `markdown_code` but
    that text, and a code block cannot be closed from inside."""
    import marimo as mo

    for write, tags in ((markdown_text, {"span", "br"}), (markdown_code, {"span", "br", "code"})):
        shown = mo.md(write(text)).text
        assert set(re.findall(r"</?([a-zA-Z][\w-]*)", shown)) <= tags, shown
        lines = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<br ?/?>", "\n", shown)))
        assert lines.strip() == "\n".join(line.strip() for line in text.splitlines())
    block = mo.md(code_block(text)).text
    assert "<img" not in block and "<style" not in block and "<script" not in block
