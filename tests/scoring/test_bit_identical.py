"""The same records give bit-identical numbers in any order, at any thread count, in any process
(issue 19, item 3): per-task scores, scorecards with their intervals, comparisons and the figures
drawn from them, over the checked-in runs. Scored as a stream (issue 29: tasks a chunk at a
time, records one at a time), the checked-in runs and fresh agent runs give the very numbers
main gave when it held them all (pinned digests), at any chunk size and in any record order.

Each thread count (POLARS_MAX_THREADS 1 and 8) gets a subprocess that scores its own copy of the
checked-in runs, every responses.jsonl shuffled line by line, from the raw replies (nothing saved
is reused), then scores the per-task frame in 24 more row orders: 50 scorecards in all, one
digest (the first three of them also of the comparisons and the figures' specs). Run as a script
(`python tests/scoring/test_bit_identical.py N [RUNS]`) it prints the digests of N repetitions.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from peb_core.results import discover_runs, run_records, score_run_dirs
from peb_core.runs import read_manifest, run_system, run_tasks
from peb_core.scoring import (
    RunReading,
    compare_to_reference,
    disagreements,
    read_replies,
    score_runs,
    scorecard,
)
from peb_core.scoring import _stream as stream
from peb_core.systems import ResponseRecord, build_system
from peb_core.tasks import load_families

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "runs"
REPETITIONS = 25
"""Shuffled repetitions per thread count (two thread counts: 50 in all)."""


def _digest(frame: pl.DataFrame) -> str:
    """sha256 of a frame's rows as JSON (floats as their shortest exact repr)."""
    return hashlib.sha256(json.dumps(frame.to_dicts(), default=str).encode()).hexdigest()


def numbers(scores: pl.DataFrame, *, everything: bool) -> str:
    """One digest of the scorecard of per-task scores, with its intervals; with `everything`,
    also of the per-task scores themselves, each paper-tier baseline run compared with the
    first, the tasks they disagree on, and the specs of the figures drawn from the scores (their
    data inline)."""
    card = scorecard(scores)
    if not everything:
        return _digest(card)
    from peb_core.reporting import charts

    baselines = scores.filter(pl.col("run").str.starts_with("baselines/"))
    parts = [
        scores.sort("run", "family", "task_id"),
        card,
        compare_to_reference(baselines, sorted(baselines["run"].unique())[0]),
        disagreements(baselines),
    ]
    specs = [
        charts.operating_profile(card).to_dict(),
        charts.metric_bars(card).to_dict(),
        charts.confusion_heatmap(scores).to_dict(),
        charts.outcome_grid(scores).to_dict(),
    ]
    text = "".join(_digest(p) for p in parts) + json.dumps(specs, sort_keys=True)
    return _digest(card) + "+" + hashlib.sha256(text.encode()).hexdigest()


def shuffled_digests(scores: pl.DataFrame, repetitions: int, seed: int = 0) -> list[str]:
    """The digests of `numbers` over `repetitions` row orders of `scores`: the first two of
    everything, the rest of the scorecard."""
    return [
        numbers(scores.sample(fraction=1.0, shuffle=True, seed=seed + i), everything=i < 2)
        for i in range(repetitions)
    ]


def _shuffled_copy(dest: Path, seed: int) -> list[Path]:
    """A copy of the checked-in runs with every responses.jsonl's lines shuffled (and nothing
    saved beside them); the run folders of the copy."""
    shutil.copytree(RUNS, dest, ignore=shutil.ignore_patterns("scores.*", ".lock"))
    rng = random.Random(seed)
    for responses in sorted(dest.rglob("responses.jsonl")):
        lines = responses.read_text(encoding="utf-8").splitlines(keepends=True)
        rng.shuffle(lines)
        responses.write_text("".join(lines), encoding="utf-8")
    return discover_runs(dest)


@pytest.fixture(scope="module")
def checked_in_scores(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    root = tmp_path_factory.mktemp("in_order") / "runs"
    shutil.copytree(RUNS, root, ignore=shutil.ignore_patterns("scores.*", ".lock"))
    scores, _ = score_run_dirs(discover_runs(root))
    assert scores.height > 2_000 and scores["run"].n_unique() == 15
    return scores


def _fields_reversed(record: ResponseRecord) -> ResponseRecord:
    """`record` with its reply's answer fields in reverse order (where it parses as JSON)."""
    try:
        reply = json.loads(record.raw or "")
    except ValueError:
        return record
    if isinstance(reply, dict) and isinstance(reply.get("answer"), dict):
        reply["answer"] = dict(reversed(reply["answer"].items()))
    return record.model_copy(update={"raw": json.dumps(reply)})


def test_scores_ignore_record_order() -> None:
    """Per-task scores (an answer score is a mean over fields) do not depend on the order of
    the tasks, of the records or of the answer fields within a reply."""
    families = load_families()
    for run_dir in discover_runs(RUNS):
        if run_dir.parent != RUNS:
            continue  # the model runs: their replies hold every kind of field
        manifest = read_manifest(run_dir)
        tasks = run_tasks(run_dir, manifest, families)
        records = run_records(run_dir)
        replies = functools.partial(
            read_replies, families=families, reading=RunReading(run_dir.name, manifest.system)
        )
        (first,) = score_runs(tasks, [replies(records)], families)
        for seed in range(3):
            shuffled = random.Random(seed).sample(records, len(records))
            (again,) = score_runs(tasks[::-1], [replies(shuffled)], families)
            assert again.sort("family", "task_id").equals(first.sort("family", "task_id"))
        fields_reversed = replies([_fields_reversed(r) for r in records])
        (reordered,) = score_runs(tasks, [fields_reversed], families)
        assert reordered.drop("schema_violations").equals(first.drop("schema_violations"))


def test_runs_scored_together_score_as_alone() -> None:
    """Runs over the same tasks judged in one pass over them (`score_runs`, as `load_runs`
    scores runs that share their tasks) score as each does alone."""
    families = load_families()
    dirs = [d for d in discover_runs(RUNS) if d.parent == RUNS]
    manifest = read_manifest(dirs[0])
    assert all(read_manifest(d).seeds == manifest.seeds for d in dirs)
    tasks = run_tasks(dirs[0], manifest, families)
    runs = [
        read_replies(run_records(d), families, RunReading(d.name, read_manifest(d).system))
        for d in dirs
    ]
    together = score_runs(tasks, runs, families)
    for run, scores in zip(runs, together, strict=True):
        assert scores.equals(score_runs(iter(tasks), [run], families)[0])


CHECKED_IN_DIGESTS = (
    "254b0345d11442220d8d0b2e288369fbb4a9b698077f6a9f891bfad58204eb31",
    "c8fcc1cfd3f78af3c5aa67b2724596a337898a0a6a8face2e2ab49a6829857c1",
)
"""`_pinned` of the checked-in runs, as main scored them before scoring became a stream (issue
29; main at 1d85a3f, which held every task and record): per-task scores, then scorecard; since
issue 28 with its new columns (`contract`, `followup`, `pushed_gap`, `held` and
`held_under_pressure`), without which the digests are 1d85a3f's; since issue 33 with its
columns (`interface`, `prose_seen`, `unsafe_in_prose`, `prose_leak`, `leak_after_push`,
`leak_push`, `cave_push`, and the three metrics' scorecard columns), and since issue 34 with the
next step's, the escalation's and the confidence's (`next_action` ... `brier_score`; the metrics
`next_step` ... `completeness_auroc`, null on these runs), without both of which the digests are
issue 28's (7f9bf64a..., 5ccd468e...: checked when they changed). Change only with a deliberate
change of scoring, and say so."""
AGENT_RUNS = (
    ("agent_silent", "agent", "silent", None, 1, (11, 23)),
    ("agent_fail_and_report", "agent", "named", None, 2, (11, 23)),
    ("agent_cue", "agent", "counted", None, 1, (11,)),
    ("agent_keep_expired", "grants", "silent", None, 1, (11, 23)),
    ("agent_fail_and_report", "grants", "named", None, 1, (11,)),
    ("agent_silent", "grants", "counted", None, 2, (23,)),
    ("agent_propagate", "delegation", "silent", "agent_fail_and_report", 1, (11,)),
    ("agent_launder", "delegation", "named", "agent_drop_gap", 2, (11,)),
    ("agent_fail_and_report", "delegation", "silent", "agent_overclaim", 1, (23,)),
)
"""Agent runs over every family, made afresh by the agent baselines (system, tier, disclosure,
delegate system, repeats, seeds): traces with probes, stale and expired reads, replies judged in
each state of a grant schedule, handoffs (with what sub-agents opened) and repeats."""
AGENT_DIGESTS = (
    "5f6a928badb6d06c89b6ed724376b9eb42f36600c6eba8c620efc5a6d50815cc",
    "573148a3b96694fe80a390fcdcd5dea7a0314c12a528a676aa2dc97743f074f8",
)
"""`_pinned` of AGENT_RUNS, as main scored them (main at 1d85a3f, scoring the grants tier in
the state at each submit and holding every task with a schedule and every record), with issue
28's, issue 33's and issue 34's new columns as CHECKED_IN_DIGESTS (without issue 33's and 34's:
08d06a13..., a5b6a79b...: checked when an episode that says nothing came to score 0 in prose,
not null)."""


def _pinned(dirs: list[Path]) -> tuple[str, str]:
    """The digests of run folders' per-task scores (sorted by run, task and repeat) and of
    their scorecard, scored from their records; without `run_label` (what sets a run apart
    from the others given, a name and no score, added since the digests were pinned)."""
    scores, _ = score_run_dirs(dirs)
    scores = scores.drop("run_label")
    ordered = scores.sort("run", "family", "task_id", "repeat")
    return _digest(ordered), _digest(scorecard(scores))


@pytest.fixture(scope="module")
def agent_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("agent_runs")
    specs = list(load_families().values())
    for name, tier, mode, delegate, repeats, seeds in AGENT_RUNS:
        system = build_system(name, specs, disclosure=mode, delegate_system=delegate)
        run_system(system, specs, root / f"{name}-{tier}-{mode}", seeds=list(seeds), tier=tier,
                   repeats=repeats)  # fmt: skip
    return sorted(root.iterdir())


def _shuffled_lines(dirs: list[Path], seed: int) -> None:
    rng = random.Random(seed)
    for run_dir in dirs:
        responses = run_dir / "responses.jsonl"
        lines = responses.read_text(encoding="utf-8").splitlines(keepends=True)
        rng.shuffle(lines)
        responses.write_text("".join(lines), encoding="utf-8")
        for saved in run_dir.glob("scores.*"):
            saved.unlink()


@pytest.mark.parametrize("chunk", [1, 64, 100_000])
def test_scored_as_a_stream_the_numbers_are_main_s(
    chunk: int,
    agent_runs: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scoring streams records (one at a time, each kept as a few rows), then tasks
    (`TASK_CHUNK` at a time, each episode on a task with a grant schedule played again while
    the task is in hand): the checked-in runs and fresh agent runs score bit for bit as main
    scored them when it held every task and record, in any record order and at any chunk
    size."""
    monkeypatch.setattr(stream, "TASK_CHUNK", chunk)
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "runs"
    shutil.copytree(RUNS, root, ignore=shutil.ignore_patterns("scores.*", ".lock"))
    agents = tmp_path / "agents"
    shutil.copytree(agent_runs[0].parent, agents, ignore=shutil.ignore_patterns("scores.*"))
    checked_in, fresh = discover_runs(root), sorted(agents.iterdir())
    _shuffled_lines([*checked_in, *fresh], seed=chunk)
    assert _pinned(checked_in) == CHECKED_IN_DIGESTS
    assert _pinned(fresh) == AGENT_DIGESTS


def test_numbers_ignore_row_order_and_thread_count(
    checked_in_scores: pl.DataFrame, tmp_path: Path
) -> None:
    reference = numbers(checked_in_scores, everything=True)
    card = reference.split("+")[0]
    for threads in (1, 8):
        copy = tmp_path / f"threads{threads}" / "runs"
        _shuffled_copy(copy, seed=threads)
        out = subprocess.run(
            [sys.executable, __file__, str(REPETITIONS), str(copy)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={
                **os.environ,
                "POLARS_MAX_THREADS": str(threads),
                "PEB_CACHE_DIR": str(tmp_path / f"cache{threads}"),
            },
        )
        assert out.returncode == 0, out.stderr
        digests = out.stdout.split()
        assert len(digests) == REPETITIONS, out.stdout
        assert set(digests) <= {reference, card}, f"POLARS_MAX_THREADS={threads}"
        assert digests.count(reference) == 3


def _main(argv: list[str]) -> None:
    """`N [RUNS]`: score RUNS (default: the checked-in runs) from their replies, then print the
    digest of everything and those of N - 1 shuffled repetitions (`shuffled_digests`), one a
    line."""
    root = Path(argv[1]) if len(argv) > 1 else RUNS
    scores, _ = score_run_dirs(discover_runs(root))
    print(numbers(scores, everything=True))
    print(*shuffled_digests(scores, int(argv[0]) - 1, seed=len(argv)), sep="\n")


if __name__ == "__main__":
    _main(sys.argv[1:])
