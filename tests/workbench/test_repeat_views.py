"""Repeats where users compare (docs/benchmark.md §3.1): the scorecard's `repeats` column (K of
the run, counted with the replies still pending, so a run still recording says the K asked
for; 1 for a plain run),
the workbench's scorecard showing unsafe_any@K and consistent@K with their intervals only when
a row has K > 1, and `peb score` / `peb compare` printing them. Runs of the shipped
`fail_and_report` and `silent_filter` baselines."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from cli import peb

from peb_core import load_families, run_system
from peb_core.frontends.workbench import (
    differences,
    has_repeats,
    row_key,
    row_position,
    run_example,
    scorecard_glance,
    scorecard_table,
    task_rows,
)
from peb_core.results import score_run_dirs, scorecard_of
from peb_core.runs import RESPONSES, read_manifest, run_lock, write_manifest
from peb_core.scoring import score_run, scorecard
from peb_core.systems import BASELINES
from peb_core.tasks import generate_tasks

DD = load_families()["due_diligence_v1"]
SEEDS = [11, 23]
K_LABELS = ("unsafe_any@K", "consistent@K")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """silent_filter and fail_and_report once and 3 times each, over 2 seeds of one family."""
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for name, system, repeats in (
        ("silent-1", "silent_filter", 1),
        ("silent-3", "silent_filter", 3),
        ("careful-3", "fail_and_report", 3),
        ("careful-1", "fail_and_report", 1),
    ):
        run_system(BASELINES[system], [DD], root / name, seeds=SEEDS, repeats=repeats)
        made[name] = root / name
    return made


def test_the_scorecard_says_each_runs_k(runs: dict[str, Path]) -> None:
    card, _ = scorecard_of([runs["silent-1"], runs["silent-3"]])
    assert card.columns[card.columns.index("status") - 1] == "repeats"
    by_run = dict(card.select("run", "repeats").iter_rows())
    assert by_run == {"silent-1": 1, "silent-3": 3}
    plain = card.filter(run="silent-1").row(0, named=True)
    assert plain["unsafe_any_at_k"] is None and plain["consistent_at_k"] is None  # never 0
    three = card.filter(run="silent-3").row(0, named=True)
    assert three["n_incomplete"] > 0 and three["unsafe_any_at_k"] == 1.0
    assert three["consistent_at_k"] == 1.0  # a deterministic baseline repeats itself
    assert 0 < three["unsafe_any_at_k_ci_low"] < 1.0 == three["unsafe_any_at_k_ci_high"]


def test_bare_scores_count_k_from_their_rows() -> None:
    """Scores not read from a run folder (no manifest): K is the rows each task is due."""
    tasks = generate_tasks([DD], SEEDS)
    for repeats in (1, 2):
        scores = score_run(
            tasks, [], run="r", system="oracle", families={DD.id: DD}, repeats=repeats
        )
        assert scorecard(scores)["repeats"].to_list() == [repeats]


def test_a_run_still_recording_says_the_k_asked_for(runs: dict[str, Path], tmp_path: Path) -> None:
    """Only repeat 0 of each task recorded, the manifest (K 3) saying `running`: while a
    process holds the run (its pending replies left out), the row says K 3, not the 1 its
    records alone would show; once none does, it is `incomplete`, still K 3."""
    run_dir = tmp_path / "partial"
    run_dir.mkdir()
    manifest = read_manifest(runs["silent-3"])
    lines = (runs["silent-3"] / RESPONSES).read_text().splitlines()
    first = [line + "\n" for line in lines if '"repeat":0' in line]
    assert 0 < len(first) < len(lines)
    (run_dir / RESPONSES).write_text("".join(first))
    write_manifest(run_dir, manifest.model_copy(update={"state": "running"}))
    with run_lock(run_dir):
        card, _ = scorecard_of([run_dir])
    assert card["repeats"].to_list() == [3] and card["status"].to_list() == ["running"]
    card, _ = scorecard_of([run_dir])
    assert card["repeats"].to_list() == [3] and card["status"].to_list() == ["incomplete"]


def test_the_workbench_shows_the_repeat_metrics_only_with_k_above_1(
    runs: dict[str, Path],
) -> None:
    plain, _ = scorecard_of([runs["silent-1"]])
    assert not has_repeats(plain)
    shown = scorecard_glance(plain)
    assert "repeats" not in shown.columns and not set(K_LABELS) & set(shown.columns)
    assert "unsafe" in shown.columns

    mixed, _ = scorecard_of([runs["silent-1"], runs["silent-3"], runs["careful-3"]])
    assert has_repeats(mixed)
    shown = scorecard_glance(mixed)
    assert shown.columns[:5] == ["run", "run_label", "family", "tier", "repeats"]
    rows = {r["run"]: r for r in shown.iter_rows(named=True)}
    assert rows["silent-1"]["unsafe_any@K"] == "—"  # K 1: no number, never 0
    assert rows["silent-3"]["unsafe_any@K"].startswith("1.000 [0.")
    assert rows["careful-3"]["unsafe_any@K"].startswith("0.000 [0.000, 0.")
    assert rows["careful-3"]["consistent@K"].startswith("1.000 [")
    page = str(scorecard_table(mixed).text)
    assert "unsafe_any@K" in page and "Unsafe completeness in any of K repeats" in page
    assert "unsafe_any@K" not in str(scorecard_table(plain).text)


def test_peb_score_and_compare_print_the_repeat_metrics(runs: dict[str, Path]) -> None:
    score = peb("score", str(runs["silent-3"]), "--ci")
    assert score.returncode == 0, score.stderr
    header = score.stdout.splitlines()[0]
    assert all(label in header for label in K_LABELS)
    as_json = peb("score", str(runs["silent-3"]), "--json")
    assert '"repeats": 3' in as_json.stdout

    both = peb("compare", str(runs["silent-3"]), str(runs["careful-3"]))
    assert both.returncode == 0, both.stderr
    rows = [line for line in both.stdout.splitlines() if "unsafe_any@K" in line]
    assert rows and "-1.000" in rows[0]
    one_plain = peb("compare", str(runs["silent-1"]), str(runs["careful-3"]))
    assert one_plain.returncode == 0 and "unsafe_any@K" not in one_plain.stdout


def test_scorecard_rows_are_identical_whatever_the_order(runs: dict[str, Path]) -> None:
    dirs = [runs["silent-1"], runs["silent-3"], runs["careful-3"]]
    one, _ = scorecard_of(dirs)
    other, _ = scorecard_of(dirs[::-1])
    assert one.sort("run").equals(other.sort("run"))
    assert pl.Int64 == one.schema["repeats"]


def test_each_repeat_of_a_task_opens_its_own_worked_example(runs: dict[str, Path]) -> None:
    """A run with repeats lists each task once per repeat, and a picked row opens that
    repeat's reply; a plain run's table has no repeat column and its rows are repeat 0."""
    scores, _ = score_run_dirs([runs["silent-3"]])
    rows = task_rows(scores)
    assert rows.columns[rows.columns.index("task_id") + 1] == "repeat"
    assert rows.height == 3 * rows.select("task_id").n_unique()
    picked = rows.filter(pl.col("repeat") == 2).head(1)
    key = row_key(picked)
    assert key is not None and key[-1] == 2
    assert row_position(rows, key) == [rows.with_row_index().filter(repeat=2)["index"][0]]
    row = picked.row(0, named=True)
    example = run_example(runs["silent-3"], "silent-3", row["family"], row["task_id"], 2)
    assert example.record is not None and example.record.repeat == 2

    plain, _ = score_run_dirs([runs["silent-1"]])
    plain_rows = task_rows(plain)
    assert "repeat" not in plain_rows.columns
    first = row_key(plain_rows.head(1))
    assert first is not None and first[-1] == 0 and row_position(plain_rows, first) == [0]


def test_the_compare_differences_list_the_repeat_metrics_only_with_k_above_1(
    runs: dict[str, Path],
) -> None:
    plain, _ = scorecard_of([runs["silent-1"], runs["careful-1"]])
    metrics = set(differences(plain, "silent-1")["metric"])
    assert "unsafe_completeness_rate" in metrics and "unsafe_any_at_k" not in metrics
    both, _ = scorecard_of([runs["silent-3"], runs["careful-3"]])
    diff = differences(both, "silent-3").filter(pl.col("metric") == "unsafe_any_at_k")
    assert diff["difference"].to_list() == [-1.0]
