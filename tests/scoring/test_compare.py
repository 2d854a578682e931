"""`peb compare` and peb_core.scoring.compare_scores: paired comparison of two runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from peb_core import cli
from peb_core.runs import compare_runs, score_run_dirs
from peb_core.scoring import (
    COMPARE_KEYS,
    COMPARED,
    CompareError,
    compare_scores,
    compare_to_reference,
)

ROOT = Path(__file__).resolve().parents[2]
SILENT = ROOT / "runs" / "baselines" / "silent_filter"
FAIL = ROOT / "runs" / "baselines" / "fail_and_report"
METRICS = [m.name for m in COMPARED]


def _rows(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert cli.main(["compare", *args, "--json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def _row(rows: list[dict[str, object]], family: str, metric: str) -> dict[str, object]:
    (row,) = [r for r in rows if r["family"] == family and r["metric"] == metric]
    return row


def test_silent_filter_against_fail_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(capsys, str(SILENT), str(FAIL))
    assert all(list(r) == COMPARE_KEYS for r in rows)
    families = {str(r["family"]) for r in rows}
    assert "all" in families and {"due_diligence_v1", "compliance_audit_v1"} <= families
    assert len(rows) == len(families) * len(METRICS)
    unsafe = _row(rows, "all", "unsafe_completeness_rate")
    assert unsafe["run_a"] == "silent_filter" and unsafe["run_b"] == "fail_and_report"
    assert (unsafe["value_a"], unsafe["value_b"], unsafe["difference"]) == (1.0, 0.0, -1.0)
    assert unsafe["test"] == "mcnemar_exact"
    n = unsafe["n_pairs"]
    assert isinstance(n, int) and n == unsafe["only_a"] and unsafe["only_b"] == 0
    assert unsafe["p_value"] == pytest.approx(2.0 / 2**n)  # tiny: every pair discordant
    assert unsafe["ci_low"] == -1.0 and -1.0 < float(unsafe["ci_high"]) < -0.8  # type: ignore[arg-type]
    gap = _row(rows, "all", "gap_report_quality")
    assert gap["test"] == "sign_flip" and gap["only_a"] is None
    assert 0 < float(gap["ci_low"]) <= float(gap["difference"]) <= float(gap["ci_high"])  # type: ignore[arg-type]
    assert float(gap["p_value"]) < 0.001  # type: ignore[arg-type]
    per_family = sum(
        int(str(_row(rows, f, "unsafe_completeness_rate")["n_pairs"])) for f in families - {"all"}
    )
    assert per_family == n


def test_a_run_against_itself_differs_by_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(capsys, str(SILENT), str(SILENT))
    for row in rows:
        assert row["difference"] == 0.0 and row["p_value"] == 1.0, row
        if row["test"] == "mcnemar_exact":
            assert row["only_a"] == row["only_b"] == 0


def test_markdown_table_by_default() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "peb_core.cli", "compare", str(SILENT), str(FAIL)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("A = ") and "difference = B - A" in lines[0]
    assert lines[1].startswith("| family") and "| p " in lines[1]
    all_unsafe = [line for line in lines if line.startswith("| all ") and "| unsafe " in line]
    assert len(all_unsafe) == 1 and "-1.000" in all_unsafe[0]


def test_frame_level_compare_uses_only_common_tasks() -> None:
    scores_a, _ = score_run_dirs([SILENT])
    scores_b, _ = score_run_dirs([FAIL])
    some = scores_b.sort("family", "task_id").head(30)
    frame = compare_scores(scores_a, some)
    total = frame.filter(family="all", metric="answer_correctness")["n_pairs"].item()
    assert total == 30
    assert compare_runs(SILENT, FAIL).equals(compare_scores(scores_a, scores_b))
    with pytest.raises(CompareError, match="no task in common"):
        compare_scores(scores_a, scores_b.head(0))
    with pytest.raises(CompareError, match="one run"):
        compare_scores(pl.concat([scores_a, scores_b]), scores_b)


def _one_family_run(tmp_path: Path, family: str) -> Path:
    out = tmp_path / family
    argv = ["run", "--system", "oracle", "--family", family, "--seeds", "11", "--out", str(out)]
    assert cli.main(argv) == 0
    return out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["/nonexistent-run", str(FAIL)], "not a run folder"),
        ([str(SILENT), str(ROOT / "runs")], "not a run folder"),
        ([str(SILENT)], "the following arguments are required"),
        (["DD", "CA"], "have no task in common"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if args == ["DD", "CA"]:
        args = [
            str(_one_family_run(tmp_path, "due_diligence_v1")),
            str(_one_family_run(tmp_path, "compliance_audit_v1")),
        ]
        capsys.readouterr()
    assert cli.main(["compare", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("peb: error: ") and needle in lines[0]


def test_compare_to_reference_pairs_every_other_run_over_all_families() -> None:
    names = ["fail_and_report", "silent_filter", "warning_partial"]
    scores, _ = score_run_dirs([ROOT / "runs" / "baselines" / n for n in names])
    table = compare_to_reference(scores, "fail_and_report")
    assert set(table["run_b"]) == {"silent_filter", "warning_partial"}
    assert set(table["family"]) == {"all"}
    unsafe = table.filter(pl.col("metric") == "unsafe_completeness_rate")
    by_run = dict(zip(unsafe["run_b"], unsafe["difference"], strict=True))
    assert by_run == {"silent_filter": 1.0, "warning_partial": 0.0}
