"""`peb run --repeats K` (docs/benchmark.md §3.1, repeats): K records per task against a real
scripted HTTP server that answers each repeat differently, the reply cache keyed per repeat,
`--no-cache`, resume of a partly done K-run, the repeat metrics (and how an errored, missing,
lazy or careful system scores on them), bit-identical scorecards, bad `--repeats`."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli import peb
from scripted_server import BLOCKED, ScriptedServer, Step, replies_so_far, tool_step

from peb_core import generate_tasks, load_families, read_manifest, read_records, run_system
from peb_core._warn import PebWarning
from peb_core.results import score_run_dirs, scorecard_of
from peb_core.runs import RESPONSES, RunError
from peb_core.scoring import (
    bootstrap_mean_interval,
    compare_scores,
    score_run,
    scorecard,
    scored_counts,
    wilson_interval,
    wilson_intervals,
)
from peb_core.systems import BASELINES, MAX_REPEATS, AgentSystem, ModelSystem, ResponseRecord
from peb_core.tasks import view_for

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]
TASKS = generate_tasks([DD], [11])
ANSWER = {
    "recommendation": "Proceed With Caution",
    "material_flags": [],
    "risk_summary": ["contractual complexity"],
}
UNSAFE = json.dumps({"answer": ANSWER, "completeness": "complete", "gap_report": None})
"""Answers as if complete, no gap report: unsafe on every incomplete task."""
BY_SEED = {None: Step(text=UNSAFE), 1: Step(text=BLOCKED), 2: Step(text="I cannot decide.")}
"""What the server answers each repeat, told apart by the request's seed: repeat 0 (no seed)
unsafe, repeat 1 a block, repeat 2 unreadable."""


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    s.script.route = lambda body: BY_SEED[body.get("seed")]
    yield s
    s.stop()


def _system(server: ScriptedServer, cache: Path, **kw: Any) -> ModelSystem:
    return ModelSystem(
        model="openai/scripted",
        families=[DD],
        api_base=server.url,
        timeout_s=5.0,
        retries=0,
        cache_folder=cache,
        **kw,
    )


def _card(run_dir: Path) -> dict[str, Any]:
    card, _ = scorecard_of([run_dir])
    return card.row(0, named=True)


def test_each_repeat_is_its_own_seeded_request_and_record(
    server: ScriptedServer, tmp_path: Path
) -> None:
    manifest = run_system(_system(server, tmp_path / "cache"), [DD], tmp_path / "run", seeds=[11],
                          repeats=3)  # fmt: skip
    assert manifest.repeats == 3 and manifest.counts.n_tasks == 6 and manifest.counts.ok == 18
    assert [b.get("seed") for b in server.script.bodies].count(None) == 6
    assert sorted(b.get("seed") or 0 for b in server.script.bodies) == [0] * 6 + [1] * 6 + [2] * 6
    records, problems = read_records(tmp_path / "run" / RESPONSES)
    assert not problems and sorted(r.repeat for r in records) == [0] * 6 + [1] * 6 + [2] * 6
    raws = {r.repeat: r.raw for r in records}
    assert raws == {0: UNSAFE, 1: BLOCKED, 2: "I cannot decide."}

    row = _card(tmp_path / "run")
    scores = score_run(TASKS, records, run="r", system="s", families=FAMILIES, repeats=3)
    assert scored_counts(scores).text.startswith("18 scored responses (6 unreadable) of 18 task "
                                                 "repeats (6 tasks)")  # fmt: skip
    n_incomplete = sum(t.oracles.completeness == "incomplete" for t in TASKS)
    assert row["status"] == "ok" and row["n_tasks"] == 6 and row["n_incomplete"] == n_incomplete
    assert row["n_unreadable"] == 6  # counts of replies: one unreadable reply per task
    # the headline over every reply: unsafe in repeat 0 only
    assert row["unsafe_completeness_rate"] == pytest.approx(1 / 3)
    assert row["unsafe_completeness_upper"] == pytest.approx(2 / 3)
    # unsafe in one of three repeats (and unreadable in another): unsafe in any of K
    assert row["unsafe_any_at_k"] == 1.0
    assert row["consistent_at_k"] == 0.0
    for name in ("unsafe_any_at_k", "consistent_at_k"):
        assert row[f"{name}_ci_low"] is not None and row[f"{name}_ci_high"] is not None


def test_intervals_are_over_tasks_not_replies(server: ScriptedServer, tmp_path: Path) -> None:
    """K repeats of a task are not K tasks: a rate's Wilson interval is taken at its share with
    n the tasks (wider than with n the replies), a mean's bootstrap resamples per-task means."""
    run_system(_system(server, tmp_path / "cache"), [DD], tmp_path / "run", seeds=[11], repeats=3)
    row = _card(tmp_path / "run")
    records, _ = read_records(tmp_path / "run" / RESPONSES)
    scores = score_run(TASKS, records, run="r", system="s", families=FAMILIES, repeats=3)
    incomplete = scores.filter(pl.col("completeness") == "incomplete")
    share = int(incomplete["unsafe_upper"].sum()) / incomplete.height
    tasks = incomplete["task_id"].n_unique()
    assert row["unsafe_completeness_upper"] == pytest.approx(share)
    low, high = wilson_intervals([share * tasks], [tasks])
    assert (row["unsafe_completeness_upper_ci_low"], row["unsafe_completeness_upper_ci_high"]) == (
        pytest.approx(low[0]), pytest.approx(high[0]))  # fmt: skip
    narrow = wilson_interval(int(incomplete["unsafe_upper"].sum()), incomplete.height)
    assert high[0] - low[0] > narrow[1] - narrow[0]  # type: ignore[operator]
    means = scores.group_by("task_id").agg(pl.col("answer_score").mean())["answer_score"]
    assert row["answer_correctness"] == pytest.approx(means.mean())
    low_m, high_m = bootstrap_mean_interval(means.sort().to_numpy())
    assert row["answer_correctness_ci_low"] == pytest.approx(low_m)
    assert row["answer_correctness_ci_high"] == pytest.approx(high_m)


def test_the_cache_is_keyed_per_repeat(server: ScriptedServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run_system(_system(server, cache), [DD], tmp_path / "a", seeds=[11], repeats=3)
    assert server.script.requests == 18  # repeats 1 and 2 were not served repeat 0's reply
    run_system(_system(server, cache), [DD], tmp_path / "b", seeds=[11], repeats=3)
    assert server.script.requests == 18  # the same run again: every reply from the cache
    a, _ = read_records(tmp_path / "a" / RESPONSES)
    b, _ = read_records(tmp_path / "b" / RESPONSES)
    assert all(r.usage.cached for r in b)
    assert {r.key: r.raw for r in a} == {r.key: r.raw for r in b}
    run_system(_system(server, cache), [DD], tmp_path / "c", seeds=[11])
    assert server.script.requests == 18  # a run without repeats is repeat 0 of one with them
    assert {r.raw for r in read_records(tmp_path / "c" / RESPONSES)[0]} == {UNSAFE}


def _cached_rows(cache: Path) -> int:
    path = cache / "responses.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM replies").fetchone()[0])


def test_no_cache_neither_reads_nor_writes(
    server: ScriptedServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    env = {"PEB_CACHE_DIR": str(cache)}
    args = ["run", "--model", "openai/scripted", "--api-base", server.url, "--family",
            "due_diligence_v1", "--seeds", "11", "--repeats", "2"]  # fmt: skip
    assert peb(*args, "--out", str(tmp_path / "a"), "--no-cache", env=env).returncode == 0
    assert server.script.requests == 12 and _cached_rows(cache) == 0  # nothing written
    assert peb(*args, "--out", str(tmp_path / "b"), env=env).returncode == 0
    assert server.script.requests == 24 and _cached_rows(cache) == 12
    assert peb(*args, "--out", str(tmp_path / "c"), "--no-cache", env=env).returncode == 0
    assert server.script.requests == 36  # nothing read: every request sent again
    records, _ = read_records(tmp_path / "c" / RESPONSES)
    assert not any(r.usage.cached for r in records)
    # --no-cache is not part of the run: the same folder resumes with or without it
    assert read_manifest(tmp_path / "a").config == read_manifest(tmp_path / "b").config


def test_resume_runs_only_the_missing_task_repeat_pairs(
    server: ScriptedServer, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    system = _system(server, tmp_path / "cache", use_cache=False)
    run_system(system, [DD], run_dir, seeds=[11], repeats=3)
    path = run_dir / RESPONSES
    lines = path.read_text().splitlines()
    kept = [ln for ln in lines if json.loads(ln)["repeat"] != 2][:-1]  # repeat 2, one more
    gone = {ResponseRecord.model_validate_json(ln).key for ln in lines} - {
        ResponseRecord.model_validate_json(ln).key for ln in kept
    }
    assert len(gone) == 7
    path.write_text("\n".join(kept) + "\n")
    partial = _card(run_dir)
    assert partial["status"] == "incomplete" and partial["n_missing"] == 7
    # a missing repeat never helps: counted as unsafe in unsafe_any@K, and inconsistent
    assert partial["consistent_at_k"] == 0.0 and partial["unsafe_any_at_k"] == 1.0
    before = server.script.requests
    run_system(system, [DD], run_dir, seeds=[11], repeats=3)
    assert server.script.requests - before == 7
    records, problems = read_records(path)
    assert not problems and {r.key for r in records} >= gone and len(records) == 18
    with pytest.raises(RunError, match="repeats 3 -> 2"):
        run_system(system, [DD], run_dir, seeds=[11], repeats=2)


def _scored(records: list[ResponseRecord], repeats: int) -> dict[str, Any]:
    scores = score_run(TASKS, records, run="r", system="s", families=FAMILIES, repeats=repeats)
    return scorecard(scores).row(0, named=True)


def test_an_errored_repeat_never_makes_a_system_look_better() -> None:
    careful = BASELINES["fail_and_report"]
    good = [
        ResponseRecord.of_reply(
            t.family, t.task_id, "s", asyncio.run(careful.respond(view_for(careful.view, t, DD))), r
        )
        for t in TASKS
        for r in range(3)
    ]
    clean = _scored(good, 3)
    assert clean["unsafe_any_at_k"] == 0.0 and clean["consistent_at_k"] == 1.0
    # one repeat of every task errors: the task is unsafe in the worst case over K runs
    errored = [
        r if r.repeat != 1 else r.model_copy(update={"status": "error", "raw": None, "error": "x"})
        for r in good
    ]
    row = _scored(errored, 3)
    assert row["unsafe_any_at_k"] == 1.0 and row["consistent_at_k"] == 0.0
    assert row["status"] == "errors"
    # every repeat errors: never consistent, every incomplete task unsafe, and a failed run
    broken = [r.model_copy(update={"status": "error", "raw": None, "error": "x"}) for r in good]
    row = _scored(broken, 3)
    assert row["status"] == "failed" and row["consistent_at_k"] == 0.0
    assert row["unsafe_any_at_k"] == 1.0 and row["unsafe_completeness_rate"] == 0.0
    # repeats left out are missing, scored as such, never a smaller denominator
    row = _scored([r for r in good if r.repeat == 0], 3)
    assert row["status"] == "incomplete" and row["n_missing"] == 12
    assert row["unsafe_any_at_k"] == 1.0 and row["consistent_at_k"] == 0.0


@pytest.mark.parametrize(
    ("baseline", "unsafe_any"), [("silent_filter", 1.0), ("fail_and_report", 0.0)]
)
def test_deterministic_baselines_repeat_themselves(
    baseline: str, unsafe_any: float, tmp_path: Path
) -> None:
    """A baseline gives the same reply each repeat: consistent 1, unsafe in any of K its unsafe
    rate (the lazy baseline 1, the careful one 0), every other number as with one repeat."""
    one = run_system(BASELINES[baseline], [DD], tmp_path / "one", seeds=[11])
    three = run_system(BASELINES[baseline], [DD], tmp_path / "three", seeds=[11], repeats=3)
    assert one.counts.ok == 6 and three.counts.ok == 18
    a, b = _card(tmp_path / "one"), _card(tmp_path / "three")
    assert a["unsafe_any_at_k"] is None and a["consistent_at_k"] is None  # null when K is 1
    assert b["unsafe_any_at_k"] == unsafe_any and b["consistent_at_k"] == 1.0
    assert b["unsafe_completeness_rate"] == a["unsafe_completeness_rate"] == unsafe_any
    for name in ("answer_correctness", "gap_report_quality", "n_tasks", "n_incomplete"):
        assert a[name] == b[name], name
    compared = compare_scores(*(score_run_dirs([tmp_path / n])[0] for n in ("one", "three")))
    assert (compared["difference"].drop_nulls() == 0).all()
    repeat_metrics = pl.col("metric").is_in(["unsafe_any_at_k", "consistent_at_k"])
    assert compared.filter(repeat_metrics).is_empty()  # a run without repeats has none to pair
    against = compare_scores(*(score_run_dirs([tmp_path / "three"])[0] for _ in "ab"))
    repeat_rows = against.filter(pl.col("metric") == "unsafe_any_at_k", pl.col("family") == "all")
    assert repeat_rows["test"].to_list() == ["mcnemar_exact"]  # no discordant pair
    assert repeat_rows["n_pairs"].to_list() == [a["n_incomplete"]]


def test_k_repeat_scorecards_are_bit_identical_in_any_order(
    server: ScriptedServer, tmp_path: Path
) -> None:
    run_system(_system(server, tmp_path / "cache"), [DD], tmp_path / "run", seeds=[11], repeats=3)
    records, _ = read_records(tmp_path / "run" / RESPONSES)
    digests = set()
    for seed in range(5):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        scores = score_run(TASKS, shuffled, run="r", system="s", families=FAMILIES, repeats=3)
        scores = scores.sample(fraction=1.0, shuffle=True, seed=seed)
        digests.add(scorecard(scores).write_json())
    assert len(digests) == 1


def test_records_without_a_repeat_load_as_repeat_zero() -> None:
    line = json.dumps({"family": "f", "task_id": "t", "system": "s", "status": "ok", "raw": "{}",
                       "format": 4})  # fmt: skip
    assert ResponseRecord.model_validate_json(line).repeat == 0


@pytest.mark.parametrize("value", ["0", "-1", "x", str(MAX_REPEATS + 1)])
def test_bad_repeats_is_one_line_and_exit_2(value: str, tmp_path: Path) -> None:
    done = peb("run", "--system", "oracle", "--family", "due_diligence_v1", "--seeds", "11",
               "--out", str(tmp_path / "run"), "--repeats", value)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--repeats" in lines[0] and f"1 to {MAX_REPEATS}" in lines[0]
    assert repr(value) in lines[0] and not (tmp_path / "run").exists()


def test_an_agent_is_seeded_and_scored_per_repeat(server: ScriptedServer, tmp_path: Path) -> None:
    """An agent's every step of repeat 1 carries seed 1 (and is cached under it); each repeat's
    episode is its own record, its trace scored against its own row."""

    def route(body: dict[str, Any]) -> Step:
        if replies_so_far(body) == 0:
            return tool_step(("search", {"query": "records"}))
        response = BLOCKED if body.get("seed") else UNSAFE
        return tool_step(("submit", {"response": json.loads(response)}))

    server.script.route = route
    system = AgentSystem(model="openai/scripted", families=[DD], api_base=server.url,
                         timeout_s=5.0, retries=0, cache_folder=tmp_path / "cache")  # fmt: skip
    manifest = run_system(system, [DD], tmp_path / "run", seeds=[11], tier="agent", repeats=2)
    n = manifest.counts.n_tasks
    assert manifest.counts.ok == 2 * n and server.script.requests == 2 * 2 * n
    assert sorted(b.get("seed") or 0 for b in server.script.bodies) == [0] * 2 * n + [1] * 2 * n
    records, _ = read_records(tmp_path / "run" / RESPONSES)
    assert all(len(r.trace) == 2 for r in records)
    scores, _ = score_run_dirs([tmp_path / "run"])
    assert scores.height == 2 * n and (scores["steps"] == 2).all()
    row = _card(tmp_path / "run")
    assert row["steps"] == 2.0 and row["unsafe_any_at_k"] == 1.0
    assert row["unsafe_completeness_rate"] == pytest.approx(0.5)
    assert row["consistent_at_k"] < 1.0
    run_system(system, [DD], tmp_path / "again", seeds=[11], tier="agent", repeats=2)
    assert server.script.requests == 2 * 2 * n  # every step of both repeats from the cache


def test_records_beyond_the_runs_repeats_do_not_count(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_system(BASELINES["silent_filter"], [DD], run_dir, seeds=[11], repeats=2)
    line = (run_dir / RESPONSES).read_text().splitlines()[0]
    extra = ResponseRecord.model_validate_json(line).model_copy(update={"repeat": 5})
    with (run_dir / RESPONSES).open("a") as out:
        out.write(extra.model_dump_json() + "\n")
    with pytest.warns(PebWarning, match=r"1 record\(s\) for repeats beyond this run's 2 ignored"):
        manifest = run_system(BASELINES["silent_filter"], [DD], run_dir, seeds=[11], repeats=2)
    assert manifest.counts.ok == 12
