"""Loading run folders with their scores: a run is kept in this process until its files
change, its scores are saved beside it (or in the cache folder when the folder is read-only) and
reused after a restart, and rescored whenever the code, the scenarios it ran or its files
change; each folder is counted once under a label of its own, and saved scores are trusted only
when they are this run's own (never a copy from another run, never damaged bytes handed to the
parquet reader)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli import peb_process

from peb_core import ScenarioFile, scorecard
from peb_core.results import _load as loading
from peb_core.results import _saved as report
from peb_core.results import load_run, responses_to_task, score_run_dirs
from peb_core.runs import RunError, run_system
from peb_core.systems import BASELINES
from peb_core.tasks import load_families

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def test_load_run_is_cached_until_the_responses_change(two_runs: list[Path]) -> None:
    run_dir = two_runs[0]
    first = load_run(run_dir)
    assert load_run(run_dir) is first
    with (run_dir / "responses.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert load_run(run_dir) is not first


def test_scores_are_reused_from_disk_after_a_restart_until_the_responses_change(
    tmp_path: Path, two_runs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = two_runs[0]
    first = load_run(run_dir)
    # A restarted process: nothing in memory, and scoring would fail if it were attempted.
    monkeypatch.setattr(loading, "_RUNS", {})

    def fail(*args: object) -> None:
        raise AssertionError("rescored an unchanged run")

    monkeypatch.setattr(loading, "_replies", fail)
    again = load_run(run_dir)
    assert again.scores.equals(first.scores) and again.warnings == first.warnings

    monkeypatch.undo()
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    lines = (run_dir / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    (run_dir / "responses.jsonl").write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    changed = load_run(run_dir)
    assert (changed.scores["status"] == "missing").sum() == 1


def test_scores_are_saved_beside_the_run_and_a_bad_copy_is_rescored(
    tmp_path: Path, two_runs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = two_runs[0]
    first = load_run(run_dir)
    saved = json.loads((run_dir / report.SCORE_NOTES).read_text(encoding="utf-8"))
    assert pl.read_parquet(run_dir / report.SCORES).equals(first.scores)
    assert not (tmp_path / "cache" / "run-scores").exists()  # the folder was writable

    # Another machine's copy: no cache folder; the saved scores serve without rescoring.
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "other-cache"))
    monkeypatch.setattr(loading, "_RUNS", {})
    calls: list[object] = []
    score = loading._replies

    def counted(*args: Any) -> Any:
        calls.append(args)
        return score(*args)

    monkeypatch.setattr(loading, "_replies", counted)
    assert load_run(run_dir).scores.equals(first.scores) and calls == []

    # Saved for other code or data (another key), or unreadable (nested too deeply for the
    # parser too): rescored, then saved again.
    for notes in (json.dumps({**saved, "key": "0" * 64}), "{not json", "[" * 100_000):
        (run_dir / report.SCORE_NOTES).write_text(notes, encoding="utf-8")
        monkeypatch.setattr(loading, "_RUNS", {})
        assert load_run(run_dir).scores.equals(first.scores)
    assert len(calls) == 3
    assert json.loads((run_dir / report.SCORE_NOTES).read_text(encoding="utf-8")) == saved


def test_a_read_only_run_folder_keeps_its_scores_in_the_cache(
    tmp_path: Path, two_runs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = two_runs[0]
    monkeypatch.setattr(report, "_write_atomically", _refuse_in(run_dir, report._write_atomically))
    first = load_run(run_dir)
    assert not (run_dir / report.SCORES).exists()
    assert len(list((tmp_path / "cache" / "run-scores").glob("*.parquet"))) == 1
    monkeypatch.setattr(loading, "_RUNS", {})
    monkeypatch.setattr(loading, "_replies", lambda *a: pytest.fail("rescored an unchanged run"))
    assert load_run(run_dir).scores.equals(first.scores)


def _refuse_in(folder: Path, write: Any) -> Any:
    """`report._write_atomically`, failing as a read-only `folder` would (root ignores chmod)."""

    def guarded(path: Path, how: Any) -> None:
        if path.parent == folder:
            raise PermissionError(f"read-only: {path}")
        write(path, how)

    return guarded


def test_an_edited_scenario_file_rescores_a_live_process_and_the_saved_scores(
    tmp_path: Path, two_runs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Editing a scenario file while a process (the workbench, say) is running takes effect at
    once: the run is rescored on the edited file, and the scores saved beside it change too, so
    a later process does not reuse scores computed on the old file."""
    scenarios = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS, scenarios)
    monkeypatch.setenv("PEB_SCENARIOS_DIR", str(scenarios))
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = two_runs[1]  # fail_and_report over the first family
    before = load_run(run_dir)
    assert before.scores["answer_score"].min() == 1.0
    saved = json.loads((run_dir / report.SCORE_NOTES).read_text(encoding="utf-8"))

    # A block template now permits a partial answer: the fail_and_report run blocked its
    # tasks, so they become over-blocked and score 0 on the answer.
    path = scenarios / f"{next(iter(load_families()))}.toml"
    text = path.read_text(encoding="utf-8")
    edited = text.replace(
        "partial_response_permitted = false", "partial_response_permitted = true", 1
    )
    assert edited != text
    path.write_text(edited, encoding="utf-8")

    after = load_run(run_dir)
    assert after is not before
    assert after.scores["blocked_when_safe"].sum() > 0
    assert after.scores["answer_score"].min() == 0.0
    assert any("other scenario files" in w for w in after.warnings)
    resaved = json.loads((run_dir / report.SCORE_NOTES).read_text(encoding="utf-8"))
    assert resaved["key"] != saved["key"]
    assert pl.read_parquet(run_dir / report.SCORES).equals(after.scores)


def test_a_tier_s_text_is_in_the_scenario_hash_of_its_runs_only(
    tmp_path: Path, families: dict[str, ScenarioFile], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29.15: a paper run's scenario hash covered the [hard] section, so editing the hard
    tier's text warned that the checked-in paper runs were "run on other scenario files".
    Each tier declares the sections it reads: editing [hard] moves hard and agent runs, not
    paper runs; editing [agent] or [procedure] moves agent runs only."""
    scenarios = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS, scenarios)
    monkeypatch.setenv("PEB_SCENARIOS_DIR", str(scenarios))
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    tiers = ("paper", "hard", "agent")
    first = list(families.values())[:1]
    runs = {}
    for tier in tiers:
        runs[tier] = tmp_path / "runs" / tier
        run_system(BASELINES["oracle"], first, runs[tier], seeds=[11], tier=tier)
    assert not any(load_run(runs[t]).warnings for t in tiers)

    path = scenarios / f"{first[0].id}.toml"
    text = path.read_text(encoding="utf-8")

    def warned(section: str) -> set[str]:
        """The tiers whose run warns once the first phrasing of `section` is edited."""
        quote = text.index('"', text.index(f"\n[{section}]\n"))
        path.write_text(text[: quote + 1] + "Edited. " + text[quote + 1 :], encoding="utf-8")
        found = {t for t in tiers if "other scenario files" in " ".join(load_run(runs[t]).warnings)}
        path.write_text(text, encoding="utf-8")
        return found

    assert warned("hard") == {"hard", "agent"}
    assert warned("agent") == {"agent"}
    assert warned("procedure") == {"agent"}
    assert warned("boundary") == set(tiers)


def test_no_checked_in_run_was_run_on_other_scenario_files() -> None:
    """Every run under runs/ scores on the scenario files it was stamped with."""
    dirs = sorted(p.parent for p in (ROOT / "runs").rglob("manifest.json"))
    assert len(dirs) >= 13
    for d in dirs:
        assert not [w for w in load_run(d).warnings if "other scenario files" in w], d


@pytest.fixture
def dd_runs(families: dict[str, ScenarioFile], tmp_path: Path) -> dict[str, Path]:
    """fail_and_report and silent_filter over due_diligence_v1 (24 tasks each)."""
    runs = {name: tmp_path / name for name in ("fail_and_report", "silent_filter")}
    for name, folder in runs.items():
        run_system(BASELINES[name], [families["due_diligence_v1"]], folder)
    return runs


def _score_json(*dirs: Path, cache: Path) -> tuple[list[dict[str, object]], str]:
    done = peb_process(
        "score", *map(str, dirs), "--json", env={"PEB_CACHE_DIR": str(cache)}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_a_folder_given_twice_is_scored_once(dd_runs: dict[str, Path], tmp_path: Path) -> None:
    run = dd_runs["fail_and_report"]
    rows, _ = _score_json(run, run, run / ".." / run.name, cache=tmp_path / "cache")
    assert [(r["run"], r["n_tasks"]) for r in rows] == [("fail_and_report", 24)]


def test_folders_of_the_same_name_stay_apart(dd_runs: dict[str, Path], tmp_path: Path) -> None:
    """Two replicas of one system in folders both called `run`: two rows, never one of 48."""
    a, b = tmp_path / "a" / "run", tmp_path / "b" / "run"
    shutil.copytree(dd_runs["fail_and_report"], a)
    shutil.copytree(dd_runs["fail_and_report"], b)
    scores, _ = score_run_dirs([a, b])
    card = scorecard(scores)
    assert sorted(zip(card["run"], card["n_tasks"], strict=True)) == [("a/run", 24), ("b/run", 24)]
    from peb_core.results import run_labels

    assert run_labels([a, b, a]) == {a: "a/run", b: "b/run"}
    assert run_labels([a, tmp_path / "x" / ".." / "a" / "run"]) == {a: "run"}


def test_a_scores_parquet_copied_from_another_run_is_not_trusted(
    dd_runs: dict[str, Path], tmp_path: Path
) -> None:
    mine, other = dd_runs["fail_and_report"], dd_runs["silent_filter"]
    cache = tmp_path / "cache"
    _score_json(mine, other, cache=cache)  # both save their scores beside them
    shutil.copy(other / "scores.parquet", mine / "scores.parquet")
    rows, stderr = _score_json(mine, cache=cache)
    assert [(r["run"], r["system"], r["unsafe_completeness_rate"]) for r in rows] == [
        ("fail_and_report", "fail_and_report", 0.0)
    ]
    assert f"saved scores {mine / 'scores.parquet'}: not the file scores.json was saved with" in (
        stderr
    )
    # Rewritten: the next read trusts it again, without a warning.
    assert _score_json(mine, cache=cache) == (rows, "")
    # Both files copied from the other run: its key is not this run's, so they are rescored.
    for name in ("scores.parquet", "scores.json"):
        shutil.copy(other / name, mine / name)
    assert _score_json(mine, cache=cache)[0] == rows


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: os.urandom(len(data)),
        # Header, footer and metadata intact, 200 bytes of a data page zeroed: on 51251cf the
        # parquet reader panicked on this one (PanicException, `peb score` a traceback).
        lambda data: data[:2200] + bytes(200) + data[2400:],
        lambda data: b"",
    ],
    ids=["truncated", "random", "zeroed_page", "empty"],
)
def test_a_damaged_scores_parquet_is_rescored_with_a_warning(
    dd_runs: dict[str, Path], tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    run = dd_runs["fail_and_report"]
    cache = tmp_path / "cache"
    rows, _ = _score_json(run, cache=cache)
    parquet = run / "scores.parquet"
    parquet.write_bytes(damage(parquet.read_bytes()))
    again, stderr = _score_json(run, cache=cache)
    assert again == rows
    assert stderr.startswith(f"peb: warning: saved scores {parquet}: ")
    assert stderr.rstrip().endswith("; rescored") and stderr.count("\n") == 1
    assert _score_json(run, cache=cache) == (rows, "")


def test_a_damaged_scores_json_is_rescored_with_a_warning(
    dd_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = dd_runs["fail_and_report"]
    cache = tmp_path / "cache"
    rows, _ = _score_json(run, cache=cache)
    (run / "scores.json").write_bytes(b'{"key": "\xff')
    again, stderr = _score_json(run, cache=cache)
    assert again == rows
    assert stderr.startswith(f"peb: warning: saved scores {run / 'scores.json'}: unreadable")


def test_a_view_over_many_runs_passes_over_one_it_cannot_read(
    dd_runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest edited by hand (a seed of 2^63, past a signed 64-bit integer) is refused in
    one line naming the file; a view over many runs (the workbench, the task explorer) leaves
    that run out with the same line and shows the rest."""
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "root"
    root.mkdir()
    good, bad = root / "good", root / "bad"
    shutil.copytree(dd_runs["fail_and_report"], good)
    shutil.copytree(dd_runs["silent_filter"], bad)
    manifest = bad / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**data, "seeds": [11, 2**63]}), encoding="utf-8")
    line = f"{manifest}: seeds.1: Input should be less than or equal to 9223372036854775807"

    with pytest.raises(RunError) as info:
        score_run_dirs([good, bad])
    assert str(info.value) == line
    scores, warnings = score_run_dirs([bad, good], skip_unreadable=True)
    assert warnings == [f"{line}; left out"]
    assert set(scores["run"]) == {"good"} and scores.height == 24
    with pytest.raises(RunError, match=r"^no run could be read: .*; left out$"):
        score_run_dirs([bad], skip_unreadable=True)

    task_id = scores["task_id"][0]
    assert responses_to_task(root, task_id)["run"].to_list() == ["good"]
