"""What the notebooks show, written once: the elements carry what they must (marimo's own HTML,
read without a browser; tests/test_browser.py reads them in one)."""

from __future__ import annotations

import html
import json
import re
from datetime import datetime
from pathlib import Path

from peb_core.frontends.workbench import (
    EXAMPLE_SECTIONS,
    RunLine,
    example_view,
    register_rows,
    register_view,
    run_example,
    scorecard_table,
    status_table,
    task_documents_view,
)
from peb_core.results import scorecard_of
from peb_core.runs import run_system
from peb_core.systems import BASELINES
from peb_core.tasks import generate_tasks, load_families, register_frame, stale_facts

FAMILIES = load_families()
SPEC = FAMILIES["due_diligence_v1"]
HARD = generate_tasks([SPEC], [11, 23, 37, 53], tier="hard")


def _text(element: object) -> str:
    return html.unescape(str(element.text))  # type: ignore[attr-defined]


def _attribute(text: str, name: str) -> object:
    """A marimo element's `data-NAME` attribute, parsed (its value is JSON)."""
    found = re.search(rf"data-{name}='(.*?)'", text)
    assert found is not None, f"no data-{name}"
    return json.loads(found[1])


def _styles(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """The cell styles a marimo table sends to the page, by row id and column."""
    styles: dict[str, dict[str, dict[str, str]]] = _attribute(text, "cell-styles")  # type: ignore[assignment]
    return styles


def test_a_stale_copy_is_struck_through_in_the_register_and_its_facts() -> None:
    task = next(t for t in HARD if "superseded" in t.topologies)
    register = register_frame(task, SPEC)
    assert register is not None
    shown_rows = register_rows(register)  # the order the view shows
    stale_rows = [str(i) for i, s in enumerate(shown_rows["copy_state"]) if s == "stale"]
    shown = _text(register_view(register, stale_facts(task)))
    assert "Register: each kind of record" in shown
    styles = _styles(shown)
    for row, columns in styles.items():
        struck = columns["copy_stamp"].get("textDecoration") == "line-through"
        assert struck == (row in stale_rows)
    assert "Stale copies: what they say" in shown
    assert "Register" not in _text(register_view(None, stale_facts(task)))


def test_the_tracker_sentence_is_labelled_by_its_worth_on_the_page() -> None:
    decoy = next(t for t in HARD if "decoy_notice" in t.topologies)
    shown = _text(task_documents_view(decoy, SPEC))
    assert "boundary decoy" in shown and "boundary signal" not in shown
    decoy = next(t for t in HARD if "decoy_supersession" in t.topologies)
    assert "[supersession decoy: " in _text(task_documents_view(decoy, SPEC))


def test_the_worked_example_has_every_part_and_the_reply(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "silent"
    run_system(BASELINES["silent_filter"], [SPEC], run_dir, seeds=[11], tier="hard")
    task = next(
        t for t in generate_tasks([SPEC], [11], tier="hard") if "silent_gap" in t.topologies
    )
    example = run_example(run_dir, "silent", SPEC.id, task.task_id)
    assert example.task == task and example.record is not None and example.system == "silent_filter"
    assert example.explanation.scores["verdict"] != "correct"  # silent_filter misses a silent gap
    shown = _text(example_view(example, "## Worked example", note="a note"))
    for part in (
        "a note",
        "Register: each kind",
        "Answer: the complete-world",
        "Gap report:",
        "The reply (pretty-printed",
        task.prompt[:40],
    ):
        assert part in shown, part
    assert list(EXAMPLE_SECTIONS) == ["heading", "documents", "answer", "reply"]
    assert "Register" not in _text(example_view(example, "x", skip=("documents",)))


def test_one_status_line_per_run_coloured_by_severity() -> None:
    at = datetime(2026, 1, 5, 14, 3, 22)
    lines = [
        RunLine("scratch/a", "finished: 6 tasks, 6 replies", "success", at),
        RunLine("scratch/b", "finished: 6 tasks, 0 replies, 6 errors (6 x HTTP 401)", "danger", at),
    ]
    shown = _text(status_table(lines))
    assert "14:03:22" in shown and "scratch/b" in shown
    styles = _styles(shown)
    assert styles["0"]["status"]["color"] != styles["1"]["status"]["color"]


def test_the_scorecard_pins_run_and_family_and_shows_whole_names(tmp_path: Path) -> None:
    long = tmp_path / ("a-run-with-a-name-long-enough-to-be-cut-" * 2).strip("-")
    run_system(BASELINES["oracle"], [SPEC], long, seeds=[11])
    card, _ = scorecard_of([long])
    shown = _text(scorecard_table(card))
    assert _attribute(shown, "freeze-columns-left") == ["run", "family"]
    assert _attribute(shown, "page-size") == 25
    hover = _attribute(shown, "cell-hover-texts")
    assert isinstance(hover, dict) and hover["0"]["run"] == long.name
