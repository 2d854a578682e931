"""Which runs a notebook offers and shows: one label per run folder across pickers and tables,
picks kept when runs appear, the picked runs' scores under those labels, notes on rows that are
not finished numbers, and only finished rows charted."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from peb_core.frontends.workbench import (
    compare_defaults,
    finished,
    keep_picks,
    paired_tests,
    run_label,
    run_options,
    score_runs,
    unfinished_notes,
)
from peb_core.results import score_run_dirs
from peb_core.runs import run_system
from peb_core.scoring import scorecard
from peb_core.systems import BASELINES
from peb_core.tasks import load_families


def test_labels_are_paths_below_the_root_and_whole_paths_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    assert run_label(root / "baselines" / "oracle", root) == "baselines/oracle"
    assert run_label(tmp_path / "else" / "oracle", root) == str(tmp_path / "else" / "oracle")
    assert run_options(tmp_path / "nothing-here") == {}


def test_picks_are_kept_and_new_runs_picked() -> None:
    before = ["a", "b", "c"]
    assert keep_picks(["a", "b", "c", "d"], before, ["a", "c"]) == ["a", "c", "d"]
    assert keep_picks(["b", "c"], before, ["a", "b"]) == ["b"]  # a is gone
    assert keep_picks(before, before, []) == []


def test_compare_opens_on_the_paper_baselines_or_the_first_two() -> None:
    assert compare_defaults(["baselines/a", "baselines-hard/a", "x"]) == ["baselines/a"]
    assert compare_defaults(["x", "y", "z"]) == ["x", "y"]


def test_scores_carry_the_page_labels_and_unfinished_runs_are_named(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    run_system(BASELINES["oracle"], families, root / "a" / "oracle", seeds=[11])
    run_system(BASELINES["oracle"], families, root / "b" / "oracle", seeds=[11])
    responses = root / "b" / "oracle" / "responses.jsonl"  # 4 of its 6 records lost
    responses.write_text("".join(responses.read_text().splitlines(keepends=True)[:2]))
    options = run_options(root)
    assert list(options) == ["a/oracle", "b/oracle"]
    scores, warnings = score_runs(options, list(options))
    assert scores is not None and not warnings
    assert scores["run"].unique(maintain_order=True).to_list() == ["a/oracle", "b/oracle"]
    same, _ = score_run_dirs(list(options.values()))
    assert scores.drop("run").equals(same.drop("run"))  # the results stage's own scores
    card = scorecard(scores)
    (note,) = unfinished_notes(card, options)
    assert note.startswith("`b/oracle`: finished: 6 tasks, 2 replies, 4 missing")
    done, charted = finished(card, scores)
    assert done["run"].to_list() == ["a/oracle"]
    assert set(charted["run"]) == {"a/oracle"} and charted.height == 6
    assert score_runs(options, []) == (None, [])


def test_paired_tests_put_pooled_rows_first(tmp_path: Path) -> None:
    families = list(load_families().values())[:2]
    for name in ("silent_filter", "fail_and_report"):
        run_system(BASELINES[name], families, tmp_path / name)
    scores, _ = score_runs(run_options(tmp_path), ["silent_filter", "fail_and_report"])
    assert scores is not None
    tests = paired_tests(scores, "silent_filter")
    n_pooled = int((tests["family"] == "all").sum())
    assert n_pooled > 0 and tests["family"].head(n_pooled).to_list() == ["all"] * n_pooled
    assert tests.schema["p"] == pl.String
