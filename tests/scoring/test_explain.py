"""The worked-example frames score each field and gap part as the scorer does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from peb_core.runs import load_run, responses_to_task, run_folder_name, run_system, scorecard_of
from peb_core.scoring import (
    disagreements,
    field_comparison,
    gap_comparison,
    metric_differences,
    score_run,
    task_table,
)
from peb_core.systems import BASELINES, Response, ResponseRecord, Usage
from peb_core.tasks import (
    GapReport,
    Task,
    boundary_sentence,
    documents_frame,
    generate_tasks,
    load_families,
    system_view,
)


def _record(task: Task, response: Response | None, *, status: str = "ok") -> ResponseRecord:
    return ResponseRecord(
        family=task.family,
        task_id=task.task_id,
        system="probe",
        status=status,  # type: ignore[arg-type]
        response=response,
        raw=None if response else "not json",
        usage=Usage(),
    )


def _variants(task: Task) -> list[ResponseRecord]:
    """Baseline replies plus awkward ones: blocked, invalid, a wrong partial report, a set off
    by one item, an ordinal given as a list."""
    families = load_families()
    out = []
    for baseline in BASELINES.values():
        view = task if baseline.view == "oracle" else system_view(task, families[task.family])
        out.append(_record(task, baseline.policy(view)))
    answer = dict(task.oracles.authorized_answer)
    first_set = next((k for k, v in answer.items() if not isinstance(v, str)), None)
    if first_set is not None:
        answer[first_set] = [*answer[first_set], "not_in_vocabulary"]
    out.append(_record(task, Response(answer=None, completeness="incomplete", gap_report=None)))
    out.append(_record(task, None, status="invalid"))
    out.append(
        _record(
            task,
            Response(
                answer=answer,
                completeness="incomplete",
                gap_report=GapReport(
                    status="partial",
                    missing_requirements=["x"],
                    missing_scopes=[*task.user_scopes[:1]],
                    affected_claims=[],
                    reason="partial_answer_permitted",
                ),
            ),
        )
    )
    out.append(_record(task, Response(answer=answer, completeness="complete", gap_report=None)))
    return out


TASKS = generate_tasks(load_families().values(), [11, 23, 401])


@pytest.mark.parametrize("variant", range(8))
def test_comparisons_agree_with_score_run(variant: int) -> None:
    records = [_variants(t)[variant] for t in TASKS]
    scores = score_run(TASKS, records, run="r", system="probe")
    by_id = {(r["family"], r["task_id"]): r for r in scores.iter_rows(named=True)}
    for task, record in zip(TASKS, records, strict=True):
        row = by_id[(task.family, task.task_id)]
        fields = field_comparison(task, record)
        gaps = gap_comparison(task, record)
        assert fields["score"].mean() == pytest.approx(row["answer_score"]), task.task_id
        assert gaps["score"].mean() == pytest.approx(row["gap_score"]), task.task_id


def test_missing_record_scores_zero() -> None:
    task = TASKS[0]
    assert field_comparison(task, None)["score"].sum() == 0
    assert gap_comparison(task, None)["score"].sum() == 0


def test_gap_comparison_lists_the_five_parts() -> None:
    task = next(t for t in TASKS if t.oracles.completeness == "incomplete")
    frame = gap_comparison(task, _variants(task)[2])  # fail_and_report
    assert frame["part"].to_list() == [
        "status",
        "reason",
        "missing_requirements",
        "missing_scopes",
        "affected_claims",
    ]
    assert frame["score"].to_list() == [1.0] * 5


def test_documents_frame_marks_the_boundary_sentence() -> None:
    families = load_families()
    for task in TASKS:
        docs = documents_frame(task, families[task.family])
        tracker = docs.filter(pl.col("boundary_signal"))
        assert tracker.height == 1 and tracker["role"].item() == "tracker"
        sentence = boundary_sentence(task, families[task.family])
        assert sentence is not None and sentence in tracker["body"].item()
        assert tracker["boundary_text"].item() == sentence
        scope = families[task.family].template(task.template).material.scope
        assert scope in sentence
    assert documents_frame(TASKS[0])["boundary_text"].null_count() == 6


def _two_runs(root: Path) -> list[Path]:
    families = list(load_families().values())[:1]
    dirs = []
    for name in ("silent_filter", "fail_and_report"):
        system = BASELINES[name]
        out = root / run_folder_name(system, families, [11, 23])
        run_system(system, families, out, seeds=[11, 23])
        dirs.append(out)
    return dirs


def test_responses_to_task_and_comparisons(tmp_path: Path) -> None:
    dirs = _two_runs(tmp_path)
    scores = pl.concat([load_run(d).scores for d in dirs])
    task_id = scores.filter(pl.col("completeness") == "incomplete")["task_id"][0]
    frame = responses_to_task(tmp_path, task_id)
    assert frame.height == 2
    assert set(frame["system"]) == {"silent_filter", "fail_and_report"}
    assert set(frame["verdict"]) == {"unsafe", "correct"}
    assert responses_to_task(tmp_path, "no_such__s1").height == 0

    table = task_table(scores)
    assert table.height == scores.height and "verdict" in table.columns
    split = disagreements(scores)
    n_incomplete = scores.filter(
        (pl.col("completeness") == "incomplete") & (pl.col("run") == dirs[0].name)
    ).height
    assert split.height == n_incomplete  # silent_filter is unsafe on every incomplete task
    card, _ = scorecard_of(dirs)
    diff = metric_differences(card, dirs[0].name)
    unsafe = diff.filter(pl.col("metric") == "unsafe_completeness_rate")
    assert unsafe["difference"].to_list() == [-1.0]


def test_load_run_is_cached_until_the_responses_change(tmp_path: Path) -> None:
    run_dir = _two_runs(tmp_path)[0]
    first = load_run(run_dir)
    assert load_run(run_dir) is first
    with (run_dir / "responses.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert load_run(run_dir) is not first


def test_scores_are_reused_from_disk_after_a_restart_until_the_responses_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from peb_core.runs import _load as report

    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = _two_runs(tmp_path / "runs")[0]
    first = load_run(run_dir)
    # A restarted process: nothing in memory, and scoring would fail if it were attempted.
    monkeypatch.setattr(report, "_RUNS", {})

    def fail(*args: object) -> None:
        raise AssertionError("rescored an unchanged run")

    monkeypatch.setattr(report, "_score", fail)
    again = load_run(run_dir)
    assert again.scores.equals(first.scores) and again.warnings == first.warnings

    monkeypatch.undo()
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    lines = (run_dir / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    (run_dir / "responses.jsonl").write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    changed = load_run(run_dir)
    assert (changed.scores["status"] == "missing").sum() == 1


def test_scores_are_saved_beside_the_run_and_a_bad_copy_is_rescored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from peb_core.runs import _load as report

    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = _two_runs(tmp_path / "runs")[0]
    first = load_run(run_dir)
    saved = json.loads((run_dir / report.SCORE_NOTES).read_text(encoding="utf-8"))
    assert pl.read_parquet(run_dir / report.SCORES).equals(first.scores)
    assert not (tmp_path / "cache" / "run-scores").exists()  # the folder was writable

    # Another machine's copy: no cache folder; the saved scores serve without rescoring.
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "other-cache"))
    monkeypatch.setattr(report, "_RUNS", {})
    calls: list[object] = []
    score = report._score
    monkeypatch.setattr(report, "_score", lambda *a: calls.append(a) or score(*a))
    assert load_run(run_dir).scores.equals(first.scores) and calls == []

    # Saved for other code or data (another key), or unreadable: rescored, then saved again.
    for notes in (json.dumps({**saved, "key": "0" * 64}), "{not json"):
        (run_dir / report.SCORE_NOTES).write_text(notes, encoding="utf-8")
        monkeypatch.setattr(report, "_RUNS", {})
        assert load_run(run_dir).scores.equals(first.scores)
    assert len(calls) == 2
    assert json.loads((run_dir / report.SCORE_NOTES).read_text(encoding="utf-8")) == saved


def test_a_read_only_run_folder_keeps_its_scores_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from peb_core.runs import _load as report

    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = _two_runs(tmp_path / "runs")[0]
    monkeypatch.setattr(report, "_write_atomically", _refuse_in(run_dir, report._write_atomically))
    first = load_run(run_dir)
    assert not (run_dir / report.SCORES).exists()
    assert len(list((tmp_path / "cache" / "run-scores").glob("*.parquet"))) == 1
    monkeypatch.setattr(report, "_RUNS", {})
    monkeypatch.setattr(report, "_score", lambda *a: pytest.fail("rescored an unchanged run"))
    assert load_run(run_dir).scores.equals(first.scores)


def _refuse_in(folder: Path, write: Any) -> Any:
    """`report._write_atomically`, failing as a read-only `folder` would (root ignores chmod)."""

    def guarded(path: Path, how: Any) -> None:
        if path.parent == folder:
            raise PermissionError(f"read-only: {path}")
        write(path, how)

    return guarded
