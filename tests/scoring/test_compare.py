"""`peb compare` and peb_core.scoring.compare_scores: paired comparison of two runs."""

from __future__ import annotations

import asyncio
import json
import math
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from cli import peb

from peb_core.frontends import cli
from peb_core.results import compare_runs, score_run_dirs
from peb_core.scoring import (
    ALPHA,
    COMPARE_KEYS,
    COMPARE_NOTE,
    EXACT_BELOW,
    HANDOFF,
    MEASURES,
    REPEATS,
    TRACE,
    CompareError,
    compare_scores,
    compare_table,
    compare_to_reference,
    metric,
    unpaired_tasks,
)
from peb_core.scoring._compare import TESTS
from peb_core.scoring._metrics import CALIBRATION, ESCALATION

ROOT = Path(__file__).resolve().parents[2]
SILENT = ROOT / "runs" / "baselines" / "silent_filter"
FAIL = ROOT / "runs" / "baselines" / "fail_and_report"
METRICS = [
    m.name
    for m in MEASURES
    if m not in (*TRACE, *HANDOFF, *REPEATS, *ESCALATION, *CALIBRATION)
]
"""What two one-shot runs are compared on: the trace metrics only when a run is an agent's, the
handoff metrics only when a sub-agent reported a gap, the repeat metrics only with repeats, the
escalation and calibration metrics only when a run's protocol asks for them."""


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
    assert unsafe["test"] == "mcnemar_score"
    n = unsafe["n_pairs"]
    assert isinstance(n, int) and n == unsafe["only_a"] and unsafe["only_b"] == 0
    # every pair discordant: McNemar's z is -n / sqrt(n)
    assert unsafe["p_value"] == pytest.approx(math.erfc(math.sqrt(n / 2)))
    assert unsafe["ci_low"] == -1.0 and -1.0 < float(unsafe["ci_high"]) < -0.9  # type: ignore[arg-type]
    assert unsafe["significant"] is True
    gap = _row(rows, "all", "gap_report_quality")
    assert gap["test"] == "sign_flip" and gap["only_a"] is None
    assert 0 < float(gap["ci_low"]) <= float(gap["difference"]) <= float(gap["ci_high"])  # type: ignore[arg-type]
    assert float(gap["p_value"]) < 0.001 and gap["significant"] is True  # type: ignore[arg-type]
    assert _row(rows, "all", "invalid_rate")["significant"] is False  # neither run has one
    per_family = sum(
        int(str(_row(rows, f, "unsafe_completeness_rate")["n_pairs"])) for f in families - {"all"}
    )
    assert per_family == n


def test_a_run_against_itself_differs_by_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(capsys, str(SILENT), str(SILENT))
    for row in rows:
        assert row["difference"] == 0.0 and row["p_value"] == 1.0, row
        assert row["significant"] is False
        if row["test"] != "sign_flip":  # McNemar (exact: no discordant pair)
            assert row["only_a"] == row["only_b"] == 0


def test_every_interval_excludes_zero_exactly_when_significant() -> None:
    scores, _ = score_run_dirs(sorted((ROOT / "runs" / "baselines").iterdir()))
    frame = pl.concat(
        compare_to_reference(scores, run) for run in scores["run"].unique().sort().to_list()
    )
    excludes = (pl.col("ci_low") > 0) | (pl.col("ci_high") < 0)
    assert frame.filter(pl.col("significant")).height > 0
    assert frame.filter(~pl.col("significant")).height > 0
    assert frame.filter(excludes != pl.col("significant")).is_empty()
    assert frame.select((pl.col("significant") == (pl.col("p_value") < ALPHA)).all()).item()
    # A rate: McNemar's exact test with fewer than EXACT_BELOW discordant pairs, else the score
    # test; a mean: the sign-flip test.
    discordant = pl.col("only_a") + pl.col("only_b")
    kinds = {m.name: m.kind for m in MEASURES}
    expected = (
        pl.when(pl.col("metric").replace_strict(kinds) == "mean")
        .then(pl.lit(TESTS["mean"]))
        .when(discordant < EXACT_BELOW)
        .then(pl.lit(TESTS["exact"]))
        .otherwise(pl.lit(TESTS["rate"]))
    )
    assert frame.select(pl.col("test") == expected).to_series().all()
    # none of these runs states a confidence: the paired bootstrap of a statistic is tested below
    assert set(frame["test"]) == set(TESTS.values()) - {TESTS["statistic"]}


def test_a_statistic_is_compared_by_a_paired_bootstrap(tmp_path: Path) -> None:
    """Two runs that state a confidence (docs/benchmark.md §3.2) on the same tasks: ECE and
    AUROC are compared by a paired bootstrap whose interval excludes 0 exactly when p < 0.05,
    and a calibrated reader's AUROC of 1 against a constant 0.5 differs significantly."""
    from peb_core import BASELINES, load_families, run_system

    spec = load_families()["due_diligence_v1"]
    dirs = []
    for name in ("calibrated_reader", "half_confident"):
        run_system(BASELINES[name], [spec], tmp_path / name, tier="hard")
        dirs.append(tmp_path / name)
    scores, _ = score_run_dirs(dirs)
    frame = compare_to_reference(scores, "calibrated_reader")
    stats = frame.filter(pl.col("test") == TESTS["statistic"])
    assert set(stats["metric"]) == {"expected_calibration_error", "completeness_auroc"}
    excludes = (pl.col("ci_low") > 0) | (pl.col("ci_high") < 0)
    assert stats.filter(excludes != pl.col("significant")).is_empty()
    (auroc,) = stats.filter(
        (pl.col("metric") == "completeness_auroc") & (pl.col("family") == "all")
    ).iter_rows(named=True)
    assert (auroc["value_a"], auroc["value_b"], auroc["difference"]) == (1.0, 0.5, -0.5)
    assert auroc["significant"] and auroc["n_pairs"] == 24
    brier = frame.filter((pl.col("metric") == "brier_score") & (pl.col("family") == "all"))
    assert brier["test"].to_list() == [TESTS["mean"]] and brier["difference"].to_list() == [0.25]


def test_markdown_table_by_default() -> None:
    result = peb("compare", str(SILENT), str(FAIL))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"A = {SILENT} (silent_filter), B = {FAIL} (fail_and_report)"
    header = [c.strip() for c in lines[1].strip("|").split("|")]
    assert header == [
        "family", "metric", "test", "n_pairs", "a", "b", "diff", "ci", "p", "sig", "only_a",
        "only_b",
    ]  # fmt: skip
    assert lines[-1] == COMPARE_NOTE and "excludes 0 exactly when p < 0.05" in lines[-1]
    assert result.stderr == ""  # both runs finished on the same tasks: nothing left out
    cells = [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
             for line in lines[3:-1]]  # fmt: skip
    families = {c["family"] for c in cells}
    assert "all" in families and len(families) > 2  # per family and pooled
    assert len(cells) == len(families) * len(METRICS)
    assert {c["metric"] for c in cells} == {metric(m).label for m in METRICS}
    (unsafe,) = [c for c in cells if c["family"] == "all" and c["metric"] == "unsafe"]
    assert (unsafe["diff"], unsafe["p"], unsafe["sig"]) == ("-1.000", "< 0.0001", "*")
    assert unsafe["test"] == "score"  # 135 discordant pairs; per family 17-21: exact
    assert {c["test"] for c in cells if c["metric"] == "unsafe" and c["family"] != "all"} == {
        "exact"
    }
    (invalid,) = [c for c in cells if c["family"] == "all" and c["metric"] == "invalid"]
    assert (invalid["p"], invalid["sig"]) == ("1.0000", "")
    shown = {c["p"] for c in cells}
    assert all(re.fullmatch(r"< 0\.0001|[01]\.\d{4}", p) for p in shown) and "0.0000" not in shown


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


def _one_family_run(tmp_path: Path, family: str, system: str = "oracle", seeds: str = "11") -> Path:
    out = tmp_path / f"{system}-{family}"
    argv = ["run", "--system", system, "--family", family, "--seeds", seeds, "--out", str(out)]
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


def test_compare_to_reference_pairs_every_other_run_per_family_and_pooled() -> None:
    names = ["fail_and_report", "silent_filter", "warning_partial"]
    scores, _ = score_run_dirs([ROOT / "runs" / "baselines" / n for n in names])
    table = compare_to_reference(scores, "fail_and_report")
    assert set(table["run_b"]) == {"silent_filter", "warning_partial"}
    families = set(scores["family"])
    assert set(table["family"]) == families | {"all"}
    assert table.height == 2 * (len(families) + 1) * len(METRICS)
    unsafe = table.filter(pl.col("metric") == "unsafe_completeness_rate", family="all")
    by_run = dict(zip(unsafe["run_b"], unsafe["difference"], strict=True))
    assert by_run == {"silent_filter": 1.0, "warning_partial": 0.0}
    shown = compare_table(table)
    # several runs B: each named, and labelled by what sets it apart
    assert shown.columns[:5] == ["run_b", "label_b", "family", "metric", "test"]
    assert shown.height == table.height
    assert shown["sig"].to_list() == ["*" if s else "" for s in table["significant"]]
    assert "run_b" not in compare_table(table.filter(run_b="silent_filter")).columns


def _stopped_copy(run: Path, out: Path, kept: int) -> Path:
    """`run` copied to `out` as if stopped after its first `kept` records (the rest missing)."""
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("scores.*"))
    lines = (out / "responses.jsonl").read_text().splitlines()
    (out / "responses.jsonl").write_text("\n".join(lines[:kept]) + "\n")
    return out


def _errors_copy(run: Path, out: Path) -> Path:
    """`run` copied to `out` with every record turned into an error (`timeout`)."""
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("scores.*"))
    lines = [
        json.dumps({**json.loads(line), "status": "error", "raw": None, "error": "timeout"})
        for line in (out / "responses.jsonl").read_text().splitlines()
    ]
    (out / "responses.jsonl").write_text("\n".join(lines) + "\n")
    return out


def test_an_unfinished_run_is_compared_only_on_the_tasks_it_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: a run stopped after 4 of 24 tasks was compared on all 24 (its 20 missing
    records never unsafe): unsafe -1.000, p < 0.0001, starred, no warning. Now the 20 tasks
    are left out of every test and named, and 4 of 4 discordant pairs are not significant
    (McNemar's exact p 0.125)."""
    silent = _one_family_run(tmp_path, "due_diligence_v1", "silent_filter", seeds="11,23,37,53")
    careful = _one_family_run(tmp_path, "due_diligence_v1", "fail_and_report", seeds="11,23,37,53")
    stopped = _stopped_copy(careful, tmp_path / "stopped", kept=4)
    capsys.readouterr()
    assert cli.main(["compare", str(silent), str(stopped), "--json"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    unsafe = _row(rows, "all", "unsafe_completeness_rate")
    assert (unsafe["n_pairs"], unsafe["left_out"], unsafe["only_a"]) == (4, 20, 4)
    assert unsafe["test"] == "mcnemar_exact" and unsafe["p_value"] == 0.125
    assert unsafe["significant"] is False and unsafe["ci_high"] == 0.0
    assert not any(r["significant"] for r in rows)
    assert {r["left_out"] for r in rows} == {20}
    (left_out, few) = captured.err.splitlines()
    assert left_out.startswith(
        "peb: warning: 20 task(s) left out of every test, without a reply in both runs "
        "(in B: 20 missing): due_diligence_v1/"
    ) and left_out.endswith(" and 17 more")
    assert "only 4 task(s) both answered" in few
    # The table shows what was left out beside each row.
    assert cli.main(["compare", str(silent), str(stopped)]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert [c.strip() for c in header.strip("|").split("|")][3:5] == ["n_pairs", "left_out"]


def test_a_run_without_a_reply_is_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: a run whose every reply is an error got p < 0.0001 against a finished one."""
    careful = _one_family_run(tmp_path, "due_diligence_v1", "fail_and_report")
    failed = _errors_copy(careful, tmp_path / "failed")
    capsys.readouterr()
    assert cli.main(["compare", str(careful), str(failed)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "have no task both answered" in captured.err
    assert "(in failed: 6 in error)" in captured.err
    scores_a, _ = score_run_dirs([careful])
    scores_b, _ = score_run_dirs([failed])
    unpaired = unpaired_tasks(scores_a, scores_b)
    assert unpaired.height == 6 and set(unpaired["a"]) == {"answered"}
    assert set(unpaired["b"]) == {"error"}
    # In the notebooks' comparison against a reference, such a run is left out.
    both, _ = score_run_dirs([careful, failed])
    assert compare_to_reference(both, "fail_and_report").is_empty()


def test_compare_labels_each_run_by_what_differs_in_its_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: a sweep's runs are named by a hash and compare said nothing else, so the
    `pressure` cell could not be told from the other."""
    from peb_core.runs import plan_sweep, run_sweep_async

    sweep = tmp_path / "s.toml"
    sweep.write_text(
        '[base]\nsystem = "agent_cave"\nfamily = "due_diligence_v1"\nseeds = "11"\n'
        'tier = "agent"\n[matrix]\nfollowup = ["none", "pressure"]\n'
    )
    planned = plan_sweep(sweep, tmp_path / "s")
    asyncio.run(run_sweep_async(planned, tmp_path / "s"))
    calm, pushed = (folder for _, folder in planned.runs)
    capsys.readouterr()
    assert cli.main(["compare", str(calm), str(pushed)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        f"A = {calm} (agent_cave followup=none), B = {pushed} (agent_cave followup=pressure)"
    )
    assert cli.main(["compare", str(calm), str(pushed), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["label_a"], r["label_b"]) for r in rows} == {
        ("agent_cave followup=none", "agent_cave followup=pressure")
    }
