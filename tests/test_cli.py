"""The `peb` command line, run in process (tests/cli.py); how the process itself ends is
tests/test_bad_input.py's."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from cli import peb

from peb_core.access import offered
from peb_core.frontends.cli._run import ProgressLine
from peb_core.frontends.workbench import scorecard_glance
from peb_core.results import scorecard_of
from peb_core.runs import EpisodeStep, run_lock
from peb_core.systems import BASELINES, Reply, ResponseRecord, Usage

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = json.loads((ROOT / "peb_core" / "data" / "published_table4.json").read_text())
FAMILIES = sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
N_TASKS = 24 * len(FAMILIES)
ORACLE = ROOT / "runs" / "baselines" / "oracle"


def _published() -> dict[tuple[str, str], dict[str, float]]:
    return {(r["family"], r["baseline"]): r for r in PUBLISHED["rows"]}


def _assert_table4(rows: list[dict[str, object]]) -> None:
    published = _published()
    seen = set()
    for row in rows:
        key = (str(row["family"]), str(row["system"]))
        if key not in published:
            continue
        seen.add(key)
        for metric, column in [
            ("unsafe", "unsafe_completeness_rate"),
            ("answer", "answer_correctness"),
            ("gap", "gap_report_quality"),
        ]:
            assert round(float(row[column]), 3) == published[key][metric], (key, metric)  # type: ignore[arg-type]
    assert seen == set(published)


def test_score_json_of_checked_in_baselines_reproduces_table4() -> None:
    dirs = sorted(str(p) for p in (ROOT / "runs" / "baselines").iterdir())
    result = peb("score", *dirs, "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    expected_keys = {
        "run",
        "system",
        "protocol",
        "family",
        "n_tasks",
        "n_incomplete",
        "unsafe_completeness_rate",
        "answer_correctness",
        "gap_report_quality",
        "blocked_when_safe_to_answer_rate",
        "correct_complete",
        "correct_incomplete",
        "false_complete",
        "false_incomplete",
        "invalid_rate",
    }
    assert all(expected_keys <= set(r) for r in rows)
    # The checked-in paper-tier runs: every one-shot baseline (agent baselines run on corpora)
    # giving the response of docs §2 (those under structured_gap@2 are made in §3.2).
    one_shot = {name for name, b in BASELINES.items() if b.view != "agent" and not b.protocol}
    assert {r["system"] for r in rows} == one_shot
    assert len(rows) == len(one_shot) * len(FAMILIES)
    _assert_table4(rows)


def test_run_then_score_from_scratch(tmp_path: Path) -> None:
    """`peb run` records replies and ends; `peb score` reads, scores and saves them. (Table 4
    from fresh runs is checked in tests/scoring/test_frames.py.)"""
    systems = ["silent_filter", "fail_and_report"]
    for system in systems:
        result = peb("run", "--system", system, "--out", str(tmp_path / system))
        assert result.returncode == 0, result.stderr
        assert f"{N_TASKS} tasks ({N_TASKS} replies, 0 errors)" in result.stdout
        # A run ends as soon as its replies are recorded; scoring it is the next command's.
        assert not (tmp_path / system / "scores.parquet").exists()
    result = peb("score", *(str(tmp_path / s) for s in systems), "--json")
    assert result.returncode == 0, result.stderr
    for system in systems:
        assert (tmp_path / system / "scores.parquet").is_file()  # saved for the notebooks
    rows = json.loads(result.stdout)
    assert {(r["system"], r["n_tasks"]) for r in rows} == {(s, 24) for s in systems}


def test_family_and_seed_selection(tmp_path: Path) -> None:
    out = tmp_path / "views.jsonl"
    result = peb(
        "tasks",
        "export",
        "--out",
        str(out),
        "--family",
        "due_diligence_v1,security_incident_v1",
        "--seeds",
        "11,400-402",
        "--model-view",
    )
    assert result.returncode == 0, result.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 2 * 6 * 4
    view = json.loads(lines[0])
    assert set(view) == {"family", "prompt", "contract", "answer_schema", "documents"}
    result = peb("tasks", "list", "--family", "compliance_audit_v1", "--family", "due_diligence_v1")
    assert result.returncode == 0
    assert result.stdout.count("__s") == 48


def test_tasks_show_worked_example() -> None:
    result = peb("tasks", "show", "hidden_liability_annex__s11")
    assert result.returncode == 0, result.stderr
    assert "Westbridge MedTech" in result.stdout
    assert "HIDDEN" in result.stdout and "target_internal" in result.stdout
    shown = json.loads(peb("tasks", "show", "hidden_liability_annex__s11", "--json").stdout)
    assert shown["oracles"]["gap_report"]["reason"] == "policy_requires_block"


def test_schema_comes_from_the_models() -> None:
    schemas = json.loads(peb("schema").stdout)
    assert {"Task", "ModelView", "ResponseRecord", "RunManifest", "ScenarioFile"} <= set(schemas)
    dd = schemas["Response[due_diligence_v1]"]
    answer = dd["$defs"]["DueDiligenceV1Answer"]["properties"]
    assert answer["recommendation"]["enum"] == ["proceed", "proceed_with_caution", "block"]
    assert answer["risk_summary"]["maxItems"] == 10
    tools = schemas["Tools[due_diligence_v1]"]
    assert [t["function"]["name"] for t in tools] == offered()
    submit = next(t for t in tools if t["function"]["name"] == "submit")["function"]["parameters"]
    assert submit["properties"]["response"]["properties"] == dd["properties"]
    assert {"AgentStart", "SearchResult", "OpenResult"} <= set(schemas)


def test_agent_corpora_are_exported_and_run_with_a_size_and_a_mode(tmp_path: Path) -> None:
    """`peb tasks export --tier agent` writes whole corpora; `peb run` of an agent baseline
    records its disclosure mode and the corpus size."""
    out = tmp_path / "tasks.jsonl"
    selection = ["--tier", "agent", "--family", "due_diligence_v1", "--seeds", "11"]
    result = peb("tasks", "export", *selection, "--corpus-size", "25", "--out", str(out))
    assert result.returncode == 0, result.stderr
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(tasks) == 6 and all(len(t["documents"]) == 25 for t in tasks)
    assert all(t["task_id"].endswith("__agent__s11") for t in tasks)
    run = tmp_path / "run"
    result = peb(
        "run", "--system", "agent_fail_and_report", *selection, "--corpus-size", "25",
        "--disclosure", "named", "--out", str(run),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"] == {"disclosure": "named"} and manifest["corpus_size"] == 25
    scored = json.loads(peb("score", str(run), "--json").stdout)
    assert [(r["unsafe_completeness_rate"], r["answer_correctness"]) for r in scored] == [
        (0.0, 1.0)
    ]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["tasks", "list", "--family", "nope"], "unknown family 'nope'; valid: "),
        (["tasks", "show", "nope__s11"], "unknown template 'nope'; valid: "),
        (["tasks", "show", "hidden_liability_annex"], "not of the form <template>__s<seed>"),
        (["run", "--system", "nope", "--out", "/tmp/x"], "unknown system 'nope'; valid: "),
        (["tasks", "list", "--seeds", "11,eleven"], "'eleven' is not an integer or a range"),
        (["tasks", "list", "--seeds", "9-3"], "range '9-3' is empty"),
        (["score", "/nonexistent-run"], "not a run folder"),
        (["score", str(ROOT / "runs" / "baselines" / "oracle"), "--family", "x"], "unknown family"),
        (["bogus"], "invalid choice"),
        (["schema", "Nope"], "unknown schema 'Nope'; valid: "),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args: list[str], needle: str) -> None:
    result = peb(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("peb: error: ") and needle in lines[0]


def test_score_family_filter_keeps_only_those_families() -> None:
    result = peb(
        "score", str(ROOT / "runs" / "baselines" / "oracle"), "--json",
        "--family", "due_diligence_v1,security_incident_v1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["family"] for r in rows] == ["due_diligence_v1", "security_incident_v1"]


def test_score_columns_picks_and_orders_the_table() -> None:
    oracle = str(ROOT / "runs" / "baselines" / "oracle")
    result = peb("score", oracle, "--family", "due_diligence_v1", "--columns", "gap,run,unsafe")
    assert result.returncode == 0, result.stderr
    header, _, row, note = result.stdout.splitlines()
    assert header.split("|")[1:-1] == [" gap   ", " run    ", " unsafe "]
    assert row.split("|")[1:-1] == [" 1.000 ", " oracle ", " 0.000  "]
    # gap is shown: so is what a reader must know to read it (issue 21.17)
    assert note.startswith("Note: gap averages complete tasks") and "gap_incomplete" in note


def _table(stdout: str) -> list[dict[str, str]]:
    """The rows of a Markdown table printed by `peb score`, by heading."""
    header, _, *rows = [line for line in stdout.splitlines() if line.startswith("|")]
    names = [c.strip() for c in header.strip("|").split("|")]
    return [
        dict(zip(names, (c.strip() for c in row.strip("|").split("|")), strict=True))
        for row in rows
    ]


def test_score_has_a_pooled_row_per_run_as_the_workbench() -> None:
    """Issue 36: the workbench shows each run pooled over its families (`all`); `peb score`
    did not. Its pooled rows are the workbench's (`scoring.with_pooled`), over the families
    shown, each first among its run's rows; `--json` keeps one row per run and family."""
    from peb_core.results import score_run_dirs
    from peb_core.scoring import filter_scores, glance, scorecard, with_pooled

    runs = [ROOT / "runs" / "baselines" / n for n in ("oracle", "silent_filter")]
    shown = "due_diligence_v1,security_incident_v1"
    result = peb("score", *map(str, runs), "--family", shown, "--ci")
    assert result.returncode == 0, result.stderr
    rows = _table(result.stdout)
    assert [(r["run"], r["family"]) for r in rows] == [
        ("oracle", "all"), ("oracle", "due_diligence_v1"), ("oracle", "security_incident_v1"),
        ("silent_filter", "all"), ("silent_filter", "due_diligence_v1"),
        ("silent_filter", "security_incident_v1"),
    ]  # fmt: skip
    scores, _ = score_run_dirs(runs)
    scores = filter_scores(scores, families=shown.split(","))
    workbench = glance(with_pooled(scorecard(scores), scores), intervals=True)
    pooled = workbench.filter(family="all")
    assert [r["unsafe"] for r in rows if r["family"] == "all"] == pooled["unsafe"].to_list()
    assert pooled["unsafe"].to_list()[1].startswith("1.000 [0.9")  # 38 incomplete tasks
    assert [r["n"] for r in rows if r["family"] == "all"] == ["48", "48"]
    as_json = json.loads(peb("score", *map(str, runs), "--family", shown, "--json").stdout)
    assert "all" not in {r["family"] for r in as_json} and len(as_json) == 4


def test_score_columns_keep_the_rows_told_apart() -> None:
    """Issue 36: `--columns unsafe,gap` over two runs of two families printed six rows that
    could not be told apart; the run and the family are now kept first where the columns
    asked for leave rows alike."""
    runs = [str(ROOT / "runs" / "baselines" / n) for n in ("oracle", "silent_filter")]
    shown = "due_diligence_v1,security_incident_v1"
    bare = _table(peb("score", *runs, "--family", shown, "--columns", "unsafe,gap").stdout)
    assert list(bare[0]) == ["run", "family", "unsafe", "gap"] and len(bare) == 6
    assert len({(r["run"], r["family"]) for r in bare}) == 6
    by_run = _table(peb("score", *runs, "--family", shown, "--columns", "run,unsafe").stdout)
    assert list(by_run[0]) == ["family", "run", "unsafe"]
    one = _table(peb("score", runs[0], "--family", "due_diligence_v1", "--columns", "gap").stdout)
    assert one == [{"gap": "1.000"}]  # one row: nothing to tell apart


def test_score_columns_take_a_metric_s_column_name_and_repeats() -> None:
    """Issue 29.15: `--columns` took only short labels (`coverage`, `stale`) while the README
    names metrics by their columns (`evidence_coverage`), and `repeats` was no column."""
    oracle = str(ROOT / "runs" / "baselines" / "oracle")
    asked = "run,repeats,unsafe_completeness_rate,gap,evidence_coverage"
    result = peb("score", oracle, "--family", "due_diligence_v1", "--columns", asked)
    assert result.returncode == 0, result.stderr
    header, _, row, *_ = result.stdout.splitlines()
    assert [c.strip() for c in header.split("|")[1:-1]] == [
        "run", "repeats", "unsafe", "gap", "coverage",
    ]  # fmt: skip
    assert [c.strip() for c in row.split("|")[1:-1]] == ["oracle", "1", "0.000", "1.000", "—"]
    # Without --columns, repeats shows only when some run has K > 1.
    plain = peb("score", oracle, "--family", "due_diligence_v1")
    assert "repeats" not in plain.stdout.splitlines()[0]
    bad = peb("score", oracle, "--columns", "run,coverag")
    assert bad.returncode == 2 and "unknown coverag" in bad.stderr
    assert bad.stderr.count("\n") == 1


def test_malformed_scenario_file_is_one_line(tmp_path: Path) -> None:
    for path in (ROOT / "scenarios").glob("*.toml"):
        shutil.copy(path, tmp_path / path.name)
    broken = tmp_path / "due_diligence_v1.toml"
    broken.write_text(broken.read_text().replace('kind = "ordinal"', 'kind = "ordinl"', 1))
    result = peb("tasks", "list", env={"PEB_SCENARIOS_DIR": str(tmp_path)})
    assert result.returncode == 2
    line = result.stderr.strip()
    assert "\n" not in line
    assert str(broken) in line and "answer.recommendation.kind" in line and "ordinal" in line


def test_corrupt_record_is_reported_and_the_rest_scored(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(ROOT / "runs" / "baselines" / "fail_and_report", run)
    lines = (run / "responses.jsonl").read_text().splitlines()
    lines[4] = '{"family": "due_diligence_v1", "task_id": '  # truncated write
    (run / "responses.jsonl").write_text("\n".join(lines) + "\n")
    result = peb("score", str(run), "--json")
    assert result.returncode == 0, result.stderr
    assert f"{run / 'responses.jsonl'}:5: corrupt record skipped" in result.stderr
    rows = json.loads(result.stdout)
    assert sum(r["n_tasks"] for r in rows) == N_TASKS
    assert sum(r["n_missing"] for r in rows) == 1
    assert sum(r["invalid_rate"] * r["n_tasks"] for r in rows) == pytest.approx(1)


def test_distractors_flag() -> None:
    shown = json.loads(
        peb("tasks", "show", "approved_migration__s11", "--distractors", "2", "--json").stdout
    )
    roles = [d["role"] for d in shown["documents"]]
    assert len(roles) == 8 and roles.count("distractor") == 2
    plain = json.loads(peb("tasks", "show", "approved_migration__s11", "--json").stdout)
    assert shown["oracles"] == plain["oracles"]
    result = peb("tasks", "list", "--distractors", "-1")
    assert result.returncode == 2
    assert "argument --distractors: expected an integer from 0 to 50" in result.stderr


def test_compare_warns_when_the_runs_share_few_tasks(tmp_path: Path) -> None:
    runs = [tmp_path / s for s in ("silent_filter", "fail_and_report")]
    for run in runs:
        made = peb(
            "run", "--system", run.name, "--family", "due_diligence_v1", "--seeds", "11",
            "--out", str(run),
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    result = peb("compare", *map(str, runs))
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"peb: warning: {runs[0]} and {runs[1]} have only 6 task(s) both answered; "
        "the comparison says little\n"
    )


def _failed_copy(run: Path, out: Path) -> Path:
    """`run` copied to `out` with every record turned into an error (`timeout`)."""
    shutil.copytree(run, out)
    lines = []
    for line in (out / "responses.jsonl").read_text().splitlines():
        record = json.loads(line)
        lines.append(json.dumps({**record, "status": "error", "raw": None, "error": "timeout"}))
    (out / "responses.jsonl").write_text("\n".join(lines) + "\n")
    return out


def test_a_failed_run_says_so_in_score_and_stays_out_of_report(tmp_path: Path) -> None:
    good = tmp_path / "runs" / "good"
    made = peb(
        "run", "--system", "fail_and_report", "--family", "due_diligence_v1", "--seeds", "11",
        "--out", str(good),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    bad = _failed_copy(good, tmp_path / "runs" / "bad")

    scored = peb("score", str(good), str(bad), "--columns", "run,status,errors,unsafe")
    assert scored.returncode == 0, scored.stderr
    rows = {line.split("|")[1].strip(): line for line in scored.stdout.splitlines()[2:]}
    assert "| failed " in rows["bad"] and "| 6 " in rows["bad"]
    assert rows["bad"].rstrip().endswith("| —      |")  # no headline for a failed run
    assert "| ok " in rows["good"] and "| 0.000  |" in rows["good"]
    assert scored.stderr == (
        "peb: warning: bad: finished: 6 tasks, 0 replies, 6 errors (6 x timeout); "
        "its rows are not finished numbers\n"
    )
    # --json: no rate of a failed run (unsafe 0 would read as safe), the counts kept, and
    # the warning once.
    as_json = peb("score", str(bad), "--json")
    assert as_json.stderr == scored.stderr
    (row,) = json.loads(as_json.stdout)
    assert (row["status"], row["n_tasks"], row["n_errors"]) == ("failed", 6, 6)
    assert row["unsafe_completeness_rate"] is None and row["unsafe_completeness_upper"] == 1.0
    assert row["answer_correctness"] is None and row["invalid_rate"] is None

    out = tmp_path / "paper"
    report = peb("report", "--out", str(out), "--runs", str(tmp_path / "runs" / "*"))
    assert report.returncode == 0, report.stderr
    assert f"{bad.resolve()}: left out (finished: 6 tasks, 0 replies, 6 errors" in report.stderr
    baselines = (out / "table_baselines.csv").read_text().splitlines()[1:]
    assert len(baselines) == 1  # the good run's one family: the failed copy is left out

    every = peb("report", "--out", str(out), "--runs", str(good), str(bad), "--include-failed")
    assert every.returncode == 0, every.stderr
    assert len((out / "table_baselines.csv").read_text().splitlines()[1:]) == 2
    nothing = peb("report", "--out", str(out), "--runs", str(bad))
    assert nothing.returncode == 2 and nothing.stderr.count("\n") == 1, nothing.stderr
    assert nothing.stderr.startswith(
        f"peb: error: --runs: no finished run to report: {bad.resolve()}: left out (finished: "
    ) and nothing.stderr.endswith("(or pass --include-failed)\n")


THREE = ("compliance_audit_v1", "due_diligence_v1", "security_incident_v1")


def test_an_all_error_run_is_unsafe_in_the_worst_case_everywhere(tmp_path: Path) -> None:
    """Every error counts as unsafe in unsafe_max: an all-error run over three families is 1.0
    there on every family, with its interval, in --json, the table, the workbench's scorecard
    and the paper's detail table (with --include-failed), while its headline and every other
    rate stay without a number (issue 35: unsafe_max was null there since d6f7080)."""
    good = tmp_path / "runs" / "good"
    made = peb(
        "run", "--system", "fail_and_report", "--family", ",".join(THREE), "--seeds", "11",
        "--out", str(good),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    bad = _failed_copy(good, tmp_path / "runs" / "bad")

    rows = json.loads(peb("score", str(bad), "--json").stdout)
    assert [r["family"] for r in rows] == list(THREE)
    assert [r["unsafe_completeness_upper"] for r in rows] == [1.0, 1.0, 1.0]
    assert all(0 < r["unsafe_completeness_upper_ci_low"] < 1 for r in rows)
    assert all(r["unsafe_completeness_upper_ci_high"] == 1.0 for r in rows)
    assert {r["unsafe_completeness_rate"] for r in rows} == {None}
    assert {r["answer_correctness"] for r in rows} == {None}

    table = peb("score", str(bad), "--columns", "family,status,unsafe,unsafe_max,answer").stdout
    for line in table.splitlines()[2:]:
        assert [c.strip() for c in line.split("|")[2:-1]] == ["failed", "—", "1.000", "—"], line

    card, _ = scorecard_of([bad])
    shown = scorecard_glance(card)
    assert shown["unsafe_max"].str.starts_with("1.000 [").all(), shown["unsafe_max"]
    assert (shown["unsafe"] == "—").all() and (shown["answer"] == "—").all()

    out = tmp_path / "paper"
    report = peb("report", "--out", str(out), "--runs", str(bad), "--include-failed")
    assert report.returncode == 0, report.stderr
    detail = pl.read_csv(out / "table_baselines_detail.csv")
    assert detail["unsafe_max"].to_list() == [1.0, 1.0, 1.0]
    assert detail["status"].to_list() == ["failed"] * 3


def test_a_run_that_cannot_be_read_is_left_out_of_report_saying_why(tmp_path: Path) -> None:
    """Issue 36: one run whose manifest cannot be read (or whose family is gone) made `peb
    report` fail for every run. It is left out, saying why, and the rest are reported; with
    nothing left, one line and exit 2."""
    good = tmp_path / "runs" / "good"
    made = peb("run", "--system", "oracle", "--family", "due_diligence_v1", "--out", str(good))
    assert made.returncode == 0, made.stderr
    edited = tmp_path / "runs" / "edited"
    shutil.copytree(good, edited)
    (edited / "manifest.json").write_text("{")
    gone = tmp_path / "runs" / "gone"
    shutil.copytree(good, gone)
    manifest = json.loads((gone / "manifest.json").read_text())
    (gone / "manifest.json").write_text(json.dumps({**manifest, "families": ["no_such_family"]}))
    out = tmp_path / "paper"
    for flags in ([], ["--include-failed"]):
        report = peb("report", "--out", str(out), "--runs", str(tmp_path / "runs" / "*"), *flags)
        assert report.returncode == 0, report.stderr
        assert f"{edited.resolve()}: left out, cannot be read: " in report.stderr
        assert f"{gone.resolve()}: left out, cannot be read: " in report.stderr
        assert "no_such_family" in report.stderr and "Traceback" not in report.stderr
        assert len((out / "table_baselines.csv").read_text().splitlines()[1:]) == 1
    nothing = peb("report", "--out", str(out), "--runs", str(edited), "--include-failed")
    assert nothing.returncode == 2 and nothing.stderr.count("\n") == 1, nothing.stderr
    assert nothing.stderr.startswith(
        f"peb: error: --runs: no finished run to report: {edited.resolve()}: left out, cannot be "
        "read: "
    )


def test_a_run_that_has_recorded_nothing_yet_says_so(tmp_path: Path) -> None:
    """A run whose writer is at work and has recorded nothing: score names its state and
    pending tasks instead of printing an empty table, and compare refuses it by its path."""
    run = tmp_path / "running"
    made = peb("run", "--system", "oracle", "--family", "due_diligence_v1", "--out", str(run))
    assert made.returncode == 0, made.stderr
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(
        json.dumps({**manifest, "state": "running", "finished_at": None})
    )
    (run / "responses.jsonl").unlink()
    for saved in run.glob("scores.*"):
        saved.unlink()
    status = "running: 24 tasks, 0 replies, 24 pending"
    with run_lock(run):  # the writer, at work
        scored = peb("score", str(run))
        as_json = peb("score", str(run), "--json")
        compared = peb("compare", str(run), str(ORACLE))
    assert (scored.returncode, scored.stdout) == (0, "")
    assert scored.stderr == f"peb: warning: running: {status}; nothing to score yet\n"
    assert json.loads(as_json.stdout) == []
    assert (compared.returncode, compared.stdout) == (2, "")
    assert compared.stderr == f"peb: error: {run}: {status}; nothing to compare yet\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_in_a_log_is_a_line_per_percent_and_in_place_on_a_terminal() -> None:
    """10,000 records: off a terminal (a log, CI) one line for each whole percent reached, the
    last one the run's end; on a terminal the line is rewritten after every record, ending with
    a newline."""
    record = ResponseRecord.of_reply(
        "due_diligence_v1",
        "hidden_liability_annex__s11",
        "openai/x",
        Reply(status="ok", raw="{}", usage=Usage(prompt_tokens=9, cost_usd=0.001)),
    )
    log, terminal = io.StringIO(), _Terminal()
    for stream in (log, terminal):
        progress = ProgressLine(stream)
        for done in range(1, 10_001):
            progress(record, done, 10_000)
    lines = log.getvalue().splitlines()
    assert len(lines) == 101
    assert lines[-1] == "10000/10000 tasks, 0 errors, 90000 tokens, cost $10.0000"
    assert terminal.getvalue().count("\r") == 10_000 and terminal.getvalue().count("\n") == 1


def test_the_progress_line_shows_each_episode_in_flight_at_its_step() -> None:
    """Three agent episodes of up to 24 steps, two in flight at once: the line names each
    episode in flight and its step, on a terminal after every step (padded over a longer line
    before it); in a log at most a line per whole percent of the run's work (a step made counts
    its share of an episode), so a long episode is seen moving, and the last line is the run's
    end without episodes."""
    def record(episode: int) -> ResponseRecord:
        reply = Reply(status="no_submit", usage=Usage(prompt_tokens=1_000, completion_tokens=50,
                                                        cost_usd=0.001))
        return ResponseRecord.of_reply("due_diligence_v1", f"t{episode}", "agent:x", reply)

    def step(episode: int, number: int, done: int) -> EpisodeStep:
        return EpisodeStep(episode, "due_diligence_v1", f"t{episode}", 0, number, 24, done, 3)

    log, terminal = io.StringIO(), _Terminal()
    for stream in (log, terminal):
        progress = ProgressLine(stream)
        for number in range(1, 25):  # episodes 1 and 2 side by side
            progress.step(step(1, number, 0))
            progress.step(step(2, number, 0))
        progress(record(1), 1, 3)
        progress.step(step(3, 1, 1))
        progress(record(2), 2, 3)
        for number in range(2, 25):
            progress.step(step(3, number, 2))
        progress(record(3), 3, 3)
    lines = log.getvalue().splitlines()
    assert lines[:2] == [
        "0/3 tasks, 0 errors, 0 tokens, cost $0.0000 (episode 1: step 1/24)",
        "0/3 tasks, 0 errors, 0 tokens, cost $0.0000 (episode 1: step 2/24; episode 2: step "
        "1/24)",  # 1/24 of an episode made: another whole percent of the run
    ]
    assert "1/3 tasks, 0 errors, 1050 tokens, cost $0.0010 (episode 2: step 24/24)" in lines
    assert "2/3 tasks, 0 errors, 2100 tokens, cost $0.0020 (episode 3: step 24/24)" in lines
    assert 40 < len(lines) <= 101
    assert lines[-1] == "3/3 tasks, 0 errors, 3150 tokens, cost $0.0030"
    shown = terminal.getvalue()
    assert shown.count("\r") == 24 * 2 + 24 + 3 and shown.endswith("\n")
    written = shown.split("\r")[1:]
    assert written[-1].rstrip() == lines[-1]
    widths = [len(line.removesuffix("\n")) for line in written]
    assert widths[-1] == max(widths) > len(lines[-1])  # padded over the longest line before
