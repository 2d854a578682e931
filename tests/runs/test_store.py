"""Runs on disk (corrupt, torn, repeated and foreign records, resuming, the lock, refusing a
different run) and malformed scenario files."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from peb_core import (
    BASELINES,
    Reply,
    RunError,
    RunManifest,
    ScenarioError,
    ScenarioFile,
    Task,
    load_families,
    load_scenario,
    read_manifest,
    read_records,
    run_system,
    score_run,
    scorecard,
)
from peb_core._warn import PebWarning
from peb_core.results import scorecard_of
from peb_core.runs import RecordTally, RunWriter, run_tasks
from peb_core.systems import ResponseRecord
from peb_core.tasks import TIERS
from peb_core.tasks import _generate as generating

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
N_TASKS = sum(len(s.templates) * len(s.canonical_seeds) for s in load_families().values())
"""Canonical tasks over every shipped family (24 each)."""
Runs = dict[str, tuple[Path, RunManifest]]


@dataclass
class Counting:
    """A baseline that records which tasks it was asked about, by their visible doc ids (a view
    carries no task id)."""

    inner: Any
    calls: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def view(self) -> Any:
        return self.inner.view

    def config(self) -> dict[str, Any]:
        return dict(self.inner.config())

    def digests(self) -> dict[str, str]:
        return dict(self.inner.digests())

    async def respond(self, view: Any) -> Reply:
        self.calls.append(tuple(d.doc_id for d in view.model.documents))
        reply: Reply = await self.inner.respond(view)
        return reply


def _lines(run_dir: Path) -> list[str]:
    return (run_dir / "responses.jsonl").read_text(encoding="utf-8").splitlines()


def _write_lines(run_dir: Path, lines: list[str]) -> None:
    (run_dir / "responses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _scores(run_dir: Path, families: dict[str, ScenarioFile]) -> tuple[pl.DataFrame, list[str]]:
    records, problems = read_records(run_dir / "responses.jsonl")
    manifest = read_manifest(run_dir)
    tasks = run_tasks(run_dir, manifest, families)
    return score_run(tasks, records, run="r", system=manifest.system, families=families), problems


@pytest.fixture
def run_copy(baseline_runs: Runs, tmp_path: Path) -> Path:
    """A private copy of a fresh fail_and_report run."""
    target = tmp_path / "run"
    shutil.copytree(baseline_runs["fail_and_report"][0], target)
    return target


# --- corrupt and repeated records -------------------------------------------------------------


def test_corrupt_lines_are_reported_with_line_numbers_and_skipped(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    full, _ = _scores(run_copy, families)
    lines = _lines(run_copy)
    lost = {}
    for index, garbage in [
        (2, "this is not json at all"),
        (6, '{"hello": 1}'),
        (9, "[1, 2, 3]"),
        (30, '{"family": "due_diligence_v1", "task_id": '),
    ]:
        lost[index + 1] = json.loads(lines[index])["task_id"]
        lines[index] = garbage
    _write_lines(run_copy, lines)

    path = run_copy / "responses.jsonl"
    records, problems = read_records(path)
    assert len(records) == N_TASKS - 4
    assert len(problems) == 4
    for problem, number in zip(problems, sorted(lost), strict=True):
        assert problem.startswith(f"{path}:{number}: corrupt record skipped")
        assert "\n" not in problem

    scores, _ = _scores(run_copy, families)
    assert scores.height == N_TASKS
    missing = scores.filter(pl.col("status") == "missing")
    assert sorted(missing["task_id"]) == sorted(lost.values())
    # Everything else scores exactly as before.
    kept = scores.filter(pl.col("status") != "missing").sort("family", "task_id")
    before = full.filter(~pl.col("task_id").is_in(list(lost.values()))).sort("family", "task_id")
    assert kept.equals(before)
    rows = scorecard(scores).to_dicts()
    assert sum(r["n_missing"] for r in rows) == 4
    assert sum(r["invalid_rate"] * r["n_tasks"] for r in rows) == pytest.approx(4)


def test_blank_lines_are_not_problems(run_copy: Path) -> None:
    lines = _lines(run_copy)
    _write_lines(run_copy, [lines[0], "", "   ", *lines[1:]])
    records, problems = read_records(run_copy / "responses.jsonl")
    assert (len(records), problems) == (N_TASKS, [])


def test_repeated_record_is_reported_and_the_first_kept(run_copy: Path) -> None:
    lines = _lines(run_copy)
    first = json.loads(lines[4])
    changed = {**first, "status": "error", "response": None, "error": "late duplicate"}
    _write_lines(run_copy, [*lines, json.dumps(changed)])

    path = run_copy / "responses.jsonl"
    records, problems = read_records(path)
    assert problems == [f"{path}:{N_TASKS + 1}: repeated record for {first['task_id']} skipped"]
    assert len(records) == N_TASKS
    kept = next(r for r in records if r.task_id == first["task_id"])
    assert kept.status == "ok" and kept.raw is not None


def test_missing_responses_file_reads_as_empty(tmp_path: Path) -> None:
    assert read_records(tmp_path / "responses.jsonl") == ([], [])


# --- resuming ---------------------------------------------------------------------------------


def test_resume_fills_in_exactly_the_missing_tasks(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    before, _ = _scores(run_copy, families)
    old_manifest = read_manifest(run_copy)
    lines = _lines(run_copy)
    dropped = [0, 10, 41, 71]
    doc_ids = {t.task_id: t.authorized_doc_ids for t in run_tasks(run_copy, old_manifest, families)}
    dropped_ids = {json.loads(lines[i])["task_id"] for i in dropped}
    _write_lines(run_copy, [line for i, line in enumerate(lines) if i not in dropped])

    system = Counting(BASELINES["fail_and_report"])
    manifest = run_system(system, list(families.values()), run_copy)
    assert sorted(system.calls) == sorted(doc_ids[i] for i in dropped_ids)
    assert manifest.counts.n_tasks == manifest.counts.ok == N_TASKS
    assert manifest.started_at == old_manifest.started_at
    assert read_manifest(run_copy) == manifest

    keys = Counter(
        (json.loads(line)["family"], json.loads(line)["task_id"]) for line in _lines(run_copy)
    )
    assert len(keys) == N_TASKS and set(keys.values()) == {1}
    after, problems = _scores(run_copy, families)
    assert problems == []
    assert after.sort("family", "task_id").equals(before.sort("family", "task_id"))

    # A finished run asks for nothing more.
    again = Counting(BASELINES["fail_and_report"])
    run_system(again, list(families.values()), run_copy)
    assert again.calls == []
    assert len(_lines(run_copy)) == N_TASKS


def test_a_resumed_writer_tallies_its_records_and_holds_none(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    """A resumed run keeps of each record its key, status and usage (`RecordTally`), never the
    record: no ResponseRecord is alive while the writer is open, and its counts are those of
    the records, an error's key among those to run again and a cost unknown once any is."""
    lines = _lines(run_copy)
    error = json.loads(lines[3])
    error.update(status="error", raw=None, error="timeout", usage={"cost_usd": None})
    priced = json.loads(lines[4])
    priced["usage"] = {"prompt_tokens": 7, "completion_tokens": 5, "cost_usd": 0.25}
    lines[3], lines[4] = json.dumps(error), json.dumps(priced)
    _write_lines(run_copy, lines)
    records, _ = read_records(run_copy / "responses.jsonl")
    manifest = read_manifest(run_copy)
    del records
    gc.collect()
    with RunWriter.resume(run_copy, manifest, list(families.values()), retry_errors=False) as w:
        gc.collect()
        assert not [o for o in gc.get_objects() if isinstance(o, ResponseRecord)]
        assert w.tally.failed == {(error["family"], error["task_id"], 0)}
        assert len(w.done) == N_TASKS and w.complete
        counts = w.tally.counts(N_TASKS)
    assert (counts.ok, counts.error, counts.no_submit) == (N_TASKS - 1, 1, 0)
    assert (counts.prompt_tokens, counts.completion_tokens, counts.cost_usd) == (7, 5, None)
    priced_only = [r for r in read_records(run_copy / "responses.jsonl")[0] if r.usage.cost_usd]
    assert RecordTally(priced_only).counts(1).cost_usd == 0.25


def test_resume_reruns_a_task_whose_record_was_corrupt(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    lines = _lines(run_copy)
    lost = json.loads(lines[7])["task_id"]
    lines[7] = '{"family": "due_diligence_v1", "task_'
    _write_lines(run_copy, lines)
    system = Counting(BASELINES["fail_and_report"])
    with pytest.warns(PebWarning, match="responses.jsonl:8: corrupt record skipped"):
        run_system(system, list(families.values()), run_copy)
    assert len(system.calls) == 1
    records, problems = read_records(run_copy / "responses.jsonl")
    assert len(records) == N_TASKS and len(problems) == 1
    assert sum(r.task_id == lost for r in records) == 1


def test_resume_sets_aside_a_torn_last_line(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    """A crash or a full disk can leave the last line half written: the resume keeps those bytes
    in a side file, cuts them from the responses, reruns that task and records it once."""
    path = run_copy / "responses.jsonl"
    lines = _lines(run_copy)
    torn = lines[-1][: len(lines[-1]) // 2]
    path.write_text("\n".join([*lines[:-1], torn]), encoding="utf-8")  # no final newline

    system = Counting(BASELINES["fail_and_report"])
    with pytest.warns(PebWarning) as caught:
        manifest = run_system(system, list(families.values()), run_copy)
    messages = [str(w.message) for w in caught]
    assert f"{path}:{N_TASKS}: torn last line" in messages[0]
    assert len(system.calls) == 1
    note, kept = (run_copy / "responses.jsonl.torn").read_text(encoding="utf-8").splitlines()
    assert note.startswith(f"# responses.jsonl line {N_TASKS}, set aside ") and kept == torn
    records, problems = read_records(path)
    assert problems == [] and len(records) == N_TASKS
    assert manifest.counts.ok == manifest.counts.n_tasks == N_TASKS


def test_resume_reports_corrupt_records(run_copy: Path, families: dict[str, ScenarioFile]) -> None:
    lines = _lines(run_copy)
    lines[3] = "not json"
    _write_lines(run_copy, lines)
    with pytest.warns(PebWarning, match=r"responses.jsonl:4: corrupt record skipped"):
        run_system(BASELINES["fail_and_report"], list(families.values()), run_copy)


def test_records_of_tasks_outside_the_run_do_not_count(
    tmp_path: Path, families: dict[str, ScenarioFile]
) -> None:
    spec = families["due_diligence_v1"]
    run = tmp_path / "run"
    run_system(BASELINES["fail_and_report"], [spec], run, seeds=[11])
    other = tmp_path / "other"
    run_system(BASELINES["fail_and_report"], [spec], other, seeds=[23])
    _write_lines(run, [*_lines(run), *_lines(other)[:2]])  # two tasks this run does not cover
    with pytest.warns(PebWarning, match="2 record\\(s\\) for tasks outside this run ignored"):
        manifest = run_system(BASELINES["fail_and_report"], [spec], run, seeds=[11])
    assert (manifest.counts.n_tasks, manifest.counts.ok) == (6, 6)


# --- records taken on trust -------------------------------------------------------------------


def test_replies_without_a_manifest_are_not_adopted(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    """A folder of another system's replies, its manifest gone: a run into it is refused
    rather than taking those replies as its own."""
    (run_copy / "manifest.json").unlink()
    before = sorted(p.name for p in run_copy.iterdir() if p.name != ".lock")
    replies = (run_copy / "responses.jsonl").read_bytes()
    system = Counting(BASELINES["oracle"])
    with pytest.raises(RunError) as info:
        run_system(system, list(families.values()), run_copy)
    assert str(info.value) == (
        f"{run_copy}: holds responses.jsonl but no manifest.json: replies of an unknown run, "
        "not adopted; choose another --out"
    )
    assert system.calls == [] and (run_copy / "responses.jsonl").read_bytes() == replies
    assert sorted(p.name for p in run_copy.iterdir() if p.name != ".lock") == before
    with pytest.raises(RunError, match="not a run folder"):
        _scores(run_copy, families)


def test_records_of_another_system_are_set_aside_and_their_tasks_rerun(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    """Records naming another system than the manifest's are not this run's replies: scoring
    leaves them out with one warning (their tasks missing), and a resume runs those tasks."""
    lines = _lines(run_copy)
    alien = {3, 17}
    for i in alien:
        lines[i] = json.dumps({**json.loads(lines[i]), "system": "openai/x"})
    _write_lines(run_copy, lines)
    path = run_copy / "responses.jsonl"
    expected = (
        f"{path}: 2 record(s) of another system set aside, not scored (e.g. line 4: "
        "'openai/x'; this run's system is 'fail_and_report')"
    )
    manifest = read_manifest(run_copy)
    records, problems = read_records(path, manifest.system)
    assert problems == [expected] and len(records) == N_TASKS - 2
    card, warnings = scorecard_of([run_copy])
    assert warnings == [expected]
    assert card["n_missing"].sum() == 2 and card["n_tasks"].sum() == N_TASKS

    system = Counting(BASELINES["fail_and_report"])
    with pytest.warns(PebWarning, match="2 record\\(s\\) of another system set aside"):
        manifest = run_system(system, list(families.values()), run_copy)
    assert len(system.calls) == 2
    assert (manifest.counts.ok, manifest.counts.n_tasks) == (N_TASKS, N_TASKS)
    card, warnings = scorecard_of([run_copy])
    assert warnings == [expected] and card["n_missing"].sum() == 0


def test_a_run_limited_to_5_tasks_over_100000_seeds_generates_5_to_score(
    tmp_path: Path, families: dict[str, ScenarioFile], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scoring regenerates only the tasks a run holds, not every task its seeds cover."""
    built: list[int] = []
    paper = TIERS["paper"]

    def counting(*args: Any) -> Task:
        built.append(1)
        return paper.build(*args)

    counted = replace(paper, build=counting)
    monkeypatch.setattr(
        generating, "get_tier", lambda name: counted if name == "paper" else TIERS.lookup(name)
    )
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run = tmp_path / "smoke"
    spec = families["due_diligence_v1"]
    run_system(BASELINES["oracle"], [spec], run, seeds=range(100_000), limit=5)
    assert len(built) == 5
    built.clear()
    card, _ = scorecard_of([run])
    assert len(built) == 5
    assert card.select("n_tasks", "status").row(0) == (5, "ok")


# --- the lock ---------------------------------------------------------------------------------


def test_a_second_writer_is_refused_naming_the_holder(
    run_copy: Path, families: dict[str, ScenarioFile]
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "f = open(sys.argv[1], 'a+')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "f.seek(0); f.truncate(); f.write(f'{os.getpid()}\\n'); f.flush()\n"
            "print('locked', flush=True)\n"
            "time.sleep(60)\n",
            str(run_copy / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        _write_lines(run_copy, _lines(run_copy)[:-3])
        system = Counting(BASELINES["fail_and_report"])
        with pytest.raises(RunError) as info:
            run_system(system, list(families.values()), run_copy)
        message = str(info.value)
        assert "\n" not in message and f"(pid {holder.pid})" in message
        assert system.calls == []
    finally:
        holder.kill()
        holder.communicate()
    # Once the holder is gone (however it ended), the lock is free.
    run_system(system, list(families.values()), run_copy)
    assert len(system.calls) == 3
    assert len(read_records(run_copy / "responses.jsonl")[0]) == N_TASKS


# --- refusing a different run -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("system", "family_ids", "seeds", "difference"),
    [
        ("silent_filter", None, None, "system fail_and_report -> silent_filter"),
        (
            "fail_and_report",
            ["due_diligence_v1"],
            None,
            f"families {','.join(sorted(load_families()))} -> due_diligence_v1",
        ),
        ("fail_and_report", None, [11, 23, 400, 401, 402], "seeds canonical -> 11,23,400-402"),
    ],
    ids=["system", "families", "seeds"],
)
def test_run_into_a_folder_holding_a_different_run_raises(
    run_copy: Path,
    families: dict[str, ScenarioFile],
    system: str,
    family_ids: list[str] | None,
    seeds: list[int] | None,
    difference: str,
) -> None:
    before = (run_copy / "responses.jsonl").read_bytes()
    specs = [families[f] for f in family_ids] if family_ids else list(families.values())
    with pytest.raises(RunError) as info:
        run_system(BASELINES[system], specs, run_copy, seeds=seeds)
    message = str(info.value)
    assert "\n" not in message
    assert message == f"{run_copy}: holds a different run: {difference}; choose another --out"
    assert (run_copy / "responses.jsonl").read_bytes() == before


def test_read_manifest_of_a_non_run_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="not a run folder"):
        read_manifest(tmp_path)


# --- malformed scenario files -----------------------------------------------------------------

Mutation = Callable[[str], str]


def _replace(old: str, new: str) -> Mutation:
    def mutate(text: str) -> str:
        assert old in text, f"mutation target {old!r} not in the shipped file"
        return text.replace(old, new, 1)

    return mutate


def _drop_line(prefix: str) -> Mutation:
    def mutate(text: str) -> str:
        lines = text.splitlines(keepends=True)
        kept = [line for line in lines if not line.startswith(prefix)]
        assert len(kept) == len(lines) - 1
        return "".join(kept)

    return mutate


MALFORMED: list[tuple[str, Mutation, list[str]]] = [
    (
        "unknown_vocabulary_value_in_effects",
        _replace('risk_summary = ["contractual_complexity"]', 'risk_summary = ["contract_woes"]'),
        [
            "templates[0].findings[0].effects.risk_summary",
            "'contract_woes' is not in the vocabulary",
        ],
    ),
    (
        "ordinal_effect_given_a_list",
        _replace(
            'effects = { recommendation = "proceed_with_caution", risk_summary = ["contractual',
            'effects = { recommendation = ["proceed_with_caution"], risk_summary = ["contractual',
        ),
        ["templates[0].findings[0].effects.recommendation", "one value"],
    ),
    (
        "missing_required_key",
        _drop_line("decision_setting = "),
        ["decision_setting", "Field required"],
    ),
    (
        "material_scope_inside_user_scopes",
        _replace(
            'scope = "target_internal", titles = ["Internal liability annex memo"',
            'scope = "deal_room", titles = ["Internal liability annex memo"',
        ),
        ["templates[0].material.scope", "'deal_room'", "outside user_scopes"],
    ),
    (
        "unknown_answer_kind",
        _replace('kind = "ordinal"', 'kind = "ordinl"'),
        ["answer.recommendation.kind", "'ordinl'"],
    ),
    (
        "undeclared_user_scope",
        _replace(
            'user_scopes = ["deal_room", "public", "advisor_workspace"]',
            'user_scopes = ["deal_room", "public", "advisor_workspace", "nowhere"]',
        ),
        ["user_scopes", "'nowhere' is not a declared scope"],
    ),
    (
        "promoted_seed_not_canonical",
        _replace("promoted_seeds = [37]", "promoted_seeds = [38]"),
        ["templates[1].promoted_seeds", "38 is not a canonical seed"],
    ),
    (
        "unknown_placeholder_in_prompt",
        _replace("around {counterparty} exposure", "around {counterpart} exposure"),
        ["templates[0].prompt", "{counterpart}"],
    ),
    (
        "unknown_top_level_key",
        _replace('title = "Due diligence"', 'title = "Due diligence"\ncolour = "blue"'),
        ["colour", "Extra inputs are not permitted"],
    ),
    (
        "wrong_type",
        _replace("canonical_seeds = [11, 23, 37, 53]", 'canonical_seeds = "eleven"'),
        ["canonical_seeds", "'eleven'"],
    ),
    (
        "bad_toml_syntax",
        _replace('id = "due_diligence_v1"', 'id = "due_diligence_v1'),
        ["not a readable TOML file", "line 4"],
    ),
]


@pytest.mark.parametrize(
    ("mutate", "needles"), [(m, n) for _, m, n in MALFORMED], ids=[i for i, _, _ in MALFORMED]
)
def test_malformed_scenario_file_raises_one_line(
    tmp_path: Path, mutate: Mutation, needles: list[str]
) -> None:
    path = tmp_path / "due_diligence_v1.toml"
    path.write_text(mutate((SCENARIOS / path.name).read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    for needle in needles:
        assert needle in message, (needle, message)


def test_unmodified_copy_loads_as_the_shipped_family(
    tmp_path: Path, families: dict[str, ScenarioFile]
) -> None:
    path = tmp_path / "due_diligence_v1.toml"
    shutil.copy(SCENARIOS / path.name, path)
    assert load_scenario(path) == families["due_diligence_v1"]


def test_file_name_must_match_family_id(tmp_path: Path) -> None:
    path = tmp_path / "due_diligence_v2.toml"
    shutil.copy(SCENARIOS / "due_diligence_v1.toml", path)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: id: ") and "'due_diligence_v2'" in message


def test_load_families_names_the_broken_file(tmp_path: Path) -> None:
    for source in SCENARIOS.glob("*.toml"):
        shutil.copy(source, tmp_path / source.name)
    broken = tmp_path / "security_incident_v1.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("[[slots]]", "[[slotz]]", 1))
    with pytest.raises(ScenarioError) as info:
        load_families(tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{broken}: ") and "slotz" in message


def test_empty_scenario_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no scenario files"):
        load_families(tmp_path)


def test_distractors_are_recorded_and_a_mismatch_refused(
    tmp_path: Path, families: dict[str, ScenarioFile]
) -> None:
    spec = families["procurement_v1"]
    run = tmp_path / "noisy"
    system = Counting(BASELINES["fail_and_report"])
    manifest = run_system(system, [spec], run, seeds=[11, 401], distractors=2)
    assert manifest.distractors == 2 and read_manifest(run).distractors == 2
    # The system saw two more visible documents per task than without distractors.
    tasks = run_tasks(run, manifest, families)
    assert all(sum(d.role == "distractor" for d in t.documents) == 2 for t in tasks)
    records, _ = read_records(run / "responses.jsonl")
    scores = score_run(tasks, records, run="noisy", system=manifest.system, families=families)
    rows = scorecard(scores).to_dicts()
    assert [(r["unsafe_completeness_rate"], r["answer_correctness"]) for r in rows] == [(0.0, 1.0)]
    with pytest.raises(RunError, match="distractors 2 -> 0"):
        run_system(BASELINES["fail_and_report"], [spec], run, seeds=[11, 401])


def test_a_limited_run_covers_its_tasks_and_a_later_run_extends_it(
    tmp_path: Path, families: dict[str, ScenarioFile]
) -> None:
    spec = families["due_diligence_v1"]
    run = tmp_path / "smoke"
    manifest = run_system(BASELINES["fail_and_report"], [spec], run, limit=3)
    assert manifest.limit == 3 and manifest.counts.n_tasks == manifest.counts.ok == 3
    scores, _ = _scores(run, families)
    assert scores.height == 3 and (scores["status"] == "ok").all()

    # A smaller limit later does not shrink what the folder covers.
    assert run_system(BASELINES["fail_and_report"], [spec], run, limit=2).limit == 3
    manifest = run_system(BASELINES["fail_and_report"], [spec], run)
    assert manifest.limit is None and manifest.counts.n_tasks == manifest.counts.ok == 24
    assert _scores(run, families)[0].height == 24
