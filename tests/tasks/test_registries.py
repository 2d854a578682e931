"""A tier and a view kind registered from outside the package are run, scored and explored end to
end without editing peb_core: a new tier or view is a module plus a registry line (issue 20)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from peb_core.frontends.cli import main
from peb_core.results import scorecard_of
from peb_core.runs import run_system
from peb_core.systems import BASELINES, Baseline
from peb_core.tasks import (
    TIERS,
    VIEWS,
    ScenarioFile,
    Task,
    TemplateSpec,
    TierSpec,
    ViewSpec,
    documents_frame,
    generate_task,
    get_tier,
    load_families,
    register_tier,
    register_view,
    view_for,
)

FAMILY = "procurement_v1"


def _reversed_paper(
    spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int
) -> Task:
    """The toy tier: the paper tier's task with its documents in reverse order. It names no
    tier: `generate_task` stamps the id and tier of the name it is registered under."""
    task = get_tier("paper").build(spec, template, seed, distractors)
    return task.model_copy(update={"documents": type(task.documents)(reversed(task.documents))})


@pytest.fixture
def toy() -> Iterator[Baseline]:
    """The toy tier, the toy view (the system view, built by another name) and a baseline that
    reads it with silent_filter's policy; unregistered afterwards."""
    tier = register_tier(TierSpec("toy", "the paper tier, documents reversed", _reversed_paper))
    view = register_view(ViewSpec("toyview", "the system view", VIEWS["system"].build))
    silent = BASELINES["silent_filter"]
    assert isinstance(silent, Baseline)
    try:
        yield Baseline("toy_silent", view.name, silent.policy)
    finally:
        TIERS.unregister(tier.name)
        VIEWS.unregister(view.name)


def _peb(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _row(frame: Any) -> dict[str, Any]:
    rows = frame.to_dicts()
    assert len(rows) == 1
    return dict(rows[0])


def test_a_toy_tier_and_view_run_score_and_explore(toy: Baseline, tmp_path: Path) -> None:
    spec = load_families()[FAMILY]
    task = generate_task(spec, spec.templates[0].id, 11, tier="toy")
    paper = generate_task(spec, spec.templates[0].id, 11)
    assert task.task_id.endswith("__toy__s11") and task.tier == "toy"
    assert [d.doc_id for d in task.documents] == [d.doc_id for d in reversed(paper.documents)]
    assert view_for("toyview", task, spec) == view_for("system", task, spec)

    toy_dir, paper_dir = tmp_path / "toy", tmp_path / "paper"
    run_system(toy, [spec], toy_dir, tier="toy")
    run_system(BASELINES["silent_filter"], [spec], paper_dir)
    card, _ = scorecard_of([toy_dir, paper_dir])
    toy_row = _row(card.filter(card["tier"] == "toy"))
    paper_row = _row(card.filter(card["tier"] == "paper"))
    assert toy_row["status"] == "ok" and toy_row["n_tasks"] == paper_row["n_tasks"] == 24
    for metric in ("unsafe_completeness_rate", "answer_correctness", "gap_report_quality"):
        assert toy_row[metric] == paper_row[metric]
    assert toy_row["unsafe_completeness_rate"] == 1.0

    frame = documents_frame(task, spec)
    assert frame.height == len(task.documents)

    code, out, err = _peb("tasks", "show", task.task_id, "--family", FAMILY)
    assert code == 0, err
    assert task.documents[0].doc_id in out
    code, out, err = _peb("score", str(toy_dir), "--json")
    assert code == 0, err
    assert json.loads(out)[0]["tier"] == "toy"


def test_the_toy_tier_is_gone_once_unregistered() -> None:
    assert "toy" not in TIERS and "toyview" not in VIEWS
