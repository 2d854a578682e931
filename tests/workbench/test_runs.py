"""Which runs a notebook offers and shows: one label per run folder across pickers and tables,
picks kept when runs appear, the picked runs' scores under those labels, notes on rows that are
not finished numbers, and only finished rows charted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl

from peb_core._markdown import markdown_code, markdown_text
from peb_core.frontends.workbench import (
    PickedScores,
    finished,
    hidden_note,
    keep_picks,
    newest_runs,
    paired_tests,
    run_label,
    run_options,
    run_tiers,
    score_runs,
    sweep_options,
    sweep_picks,
    tiers_on_pick,
    unfinished_notes,
)
from peb_core.results import score_run_dirs
from peb_core.runs import plan_sweep, run_sweep_async, run_system
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


def test_pages_open_on_the_newest_runs_of_the_newest_run_s_tier(tmp_path: Path) -> None:
    """Issue 29.13 and 29.15: the workbench opened on every run of every tier and compare on
    the checked-in baselines; both open on the newest runs (at most `most`) of the newest
    run's tier, in option order."""
    import json

    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    made = [("old-paper", "paper"), ("hard-a", "hard"), ("paper-b", "paper"), ("hard-c", "hard")]
    for minute, (name, tier) in enumerate(made):
        run_system(BASELINES["oracle"], families, root / name, seeds=[11], tier=tier)
        manifest = root / name / "manifest.json"
        data = json.loads(manifest.read_text())
        data["started_at"] = f"2026-01-05T10:{minute:02d}:00+00:00"  # before now
        manifest.write_text(json.dumps(data))
    (root / "broken").mkdir()
    (root / "broken" / "manifest.json").write_text("{")
    options = run_options(root)
    assert newest_runs(options) == ["hard-a", "hard-c"]
    assert newest_runs(options, most=1) == ["hard-c"]
    assert run_tiers(options, ["paper-b", "hard-c", "broken"]) == ["paper", "hard"]
    assert newest_runs({}) == [] and run_tiers(options, []) == []
    # A run made now is the newest: the page opens on its tier.
    run_system(BASELINES["oracle"], families, root / "now", seeds=[11])
    assert newest_runs(run_options(root)) == ["now", "old-paper", "paper-b"]


def test_scores_carry_the_page_labels_and_unfinished_runs_are_named(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    run_system(BASELINES["oracle"], families, root / "a" / "oracle", seeds=[11])
    run_system(BASELINES["oracle"], families, root / "b" / "oracle", seeds=[11])
    responses = root / "b" / "oracle" / "responses.jsonl"  # 4 of its 6 records lost
    responses.write_text("".join(responses.read_text().splitlines(keepends=True)[:2]))
    options = run_options(root)
    assert list(options) == ["a/oracle", "b/oracle"]
    picked = score_runs(options, list(options))
    scores = picked.scores
    assert scores is not None and not picked.warnings and not picked.left_out
    assert scores["run"].unique(maintain_order=True).to_list() == ["a/oracle", "b/oracle"]
    same, _ = score_run_dirs(list(options.values()))
    assert scores.drop("run").equals(same.drop("run"))  # the results stage's own scores
    card = scorecard(scores)
    (note,) = unfinished_notes(card, options)
    said = markdown_text("finished: 6 tasks, 2 replies, 4 missing")
    assert note.startswith(f"{markdown_code('b/oracle')}: {said}")
    done, charted = finished(card, scores)
    assert done["run"].to_list() == ["a/oracle"]
    assert set(charted["run"]) == {"a/oracle"} and charted.height == 6
    assert score_runs(options, []) == PickedScores(None, [], [])


def test_paired_tests_put_pooled_rows_first(tmp_path: Path) -> None:
    families = list(load_families().values())[:2]
    for name in ("silent_filter", "fail_and_report"):
        run_system(BASELINES[name], families, tmp_path / name)
    scores = score_runs(run_options(tmp_path), ["silent_filter", "fail_and_report"]).scores
    assert scores is not None
    tests = paired_tests(scores, "silent_filter")
    n_pooled = int((tests["family"] == "all").sum())
    assert n_pooled > 0 and tests["family"].head(n_pooled).to_list() == ["all"] * n_pooled
    assert tests.schema["p"] == pl.String


def test_a_sweep_opens_as_one_table(tmp_path: Path) -> None:
    """A sweep's folder under the runs root is offered by its path; picking it picks its runs,
    which score as one table (each a row of its own)."""
    root = tmp_path / "runs"
    path = tmp_path / "s.toml"
    path.write_text(
        '[base]\nfamily = "due_diligence_v1"\nseeds = "11"\n'
        '[matrix]\nsystem = ["oracle", "silent_filter"]\n'
    )
    sweep = plan_sweep(path, root / "s")
    asyncio.run(run_sweep_async(sweep, root / "s"))
    options = run_options(root)
    assert list(sweep_options(root)) == ["s"]
    picked = sweep_picks(options, sweep_options(root)["s"])
    assert len(picked) == 2
    scores = score_runs(options, picked).scores
    assert scores is not None and set(scores["system"]) == {"oracle", "silent_filter"}


def test_a_sweep_s_runs_are_labelled_by_what_differs_among_them(tmp_path: Path) -> None:
    """Issue 36: a sweep's runs are named by a hash; every table labels them by what differs
    among the runs shown (their declarations), one label per run used everywhere."""
    root = tmp_path / "runs"
    path = tmp_path / "s.toml"
    path.write_text(
        '[base]\nfamily = "due_diligence_v1"\nseeds = "11"\n'
        '[matrix]\nsystem = ["oracle", "silent_filter"]\nrepeats = [1, 2]\n'
    )
    sweep = plan_sweep(path, root / "s")
    asyncio.run(run_sweep_async(sweep, root / "s"))
    options = run_options(root)
    scores = score_runs(options, sweep_picks(options, sweep_options(root)["s"])).scores
    assert scores is not None
    labels = dict(scores.select("run", "run_label").unique().iter_rows())
    assert sorted(labels.values()) == [
        "oracle repeats=1", "oracle repeats=2",
        "silent_filter repeats=1", "silent_filter repeats=2",
    ]  # fmt: skip
    card = scorecard(scores)
    assert dict(card.select("run", "run_label").iter_rows()) == labels
    # The paired tests name each run B by its label beside its folder.
    reference = next(run for run, label in labels.items() if label == "oracle repeats=1")
    tests = paired_tests(scores, reference)
    assert {tuple(r) for r in tests.select("run_b", "label_b").iter_rows()} == {
        (run, label) for run, label in labels.items() if run != reference
    }
    # Two runs alike but for their folders: each label names its folder too.
    alike = [root / "a" / "oracle", root / "b" / "oracle"]
    for run in alike:
        run_system(BASELINES["oracle"], list(load_families().values())[:1], run, seeds=[11])
    same, _ = score_run_dirs(alike)
    assert sorted(set(same["run_label"])) == ["oracle (a/oracle)", "oracle (b/oracle)"]


def test_a_run_that_cannot_be_read_is_left_out_saying_why_and_hides_no_other(
    tmp_path: Path,
) -> None:
    """Issue 36: a picked run that cannot be read was dropped silently ("No runs selected"):
    it is left out by name with why, and the other runs picked are scored."""
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    run_system(BASELINES["oracle"], families, root / "good", seeds=[11])
    run_system(BASELINES["oracle"], families, root / "edited", seeds=[11])
    (root / "edited" / "manifest.json").write_text("{")
    options = run_options(root)
    picked = score_runs(options, ["edited", "good"])
    assert picked.scores is not None and set(picked.scores["run"]) == {"good"}
    (line,) = picked.left_out
    assert line.startswith(f"{markdown_code('edited')}: left out, it cannot be read: ")
    assert "manifest" in line
    alone = score_runs(options, ["edited"])
    assert alone.scores is None and len(alone.left_out) == 1


def test_picking_a_run_of_another_tier_shows_its_tier_and_a_hidden_view_is_named(
    tmp_path: Path,
) -> None:
    """Issue 36: picking a run of a tier not shown left "Tiers shown" unchanged and showed a
    0-row scorecard with no hint. Its tier is now shown; and a view whose families and tiers
    hide every row says what the runs hold."""
    root = tmp_path / "runs"
    families = [load_families()["due_diligence_v1"]]
    run_system(BASELINES["oracle"], families, root / "paper", seeds=[11])
    run_system(BASELINES["oracle"], families, root / "hard", seeds=[11], tier="hard")
    options = run_options(root)
    assert tiers_on_pick(options, ["paper"], ["paper", "hard"], ["paper"]) == ["paper", "hard"]
    assert tiers_on_pick(options, ["paper", "hard"], ["hard"], ["paper"]) == ["paper"]
    scores = score_runs(options, ["hard"]).scores
    assert scores is not None
    note = hidden_note(scores, ["due_diligence_v1"], ["paper"])
    assert note is not None and markdown_code("hard") in note
    assert hidden_note(scores, ["due_diligence_v1"], ["hard"]) is None
