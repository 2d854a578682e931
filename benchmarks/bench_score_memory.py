"""Scoring a large agent run in bounded memory: `peb score` of 16,800 agent tasks of 500
documents (the seven families x six templates x seeds 0-399, `--tier agent --corpus-size 500`),
one record per task, in a child process whose peak RSS is measured.

Run: .venv/bin/python benchmarks/bench_score_memory.py [--seeds N] [--run DIR] [--paper]
The run folder is made first, unless `--run DIR` names one made before (it is made there if
missing): every task generated in turn and answered by `agent_fail_and_report` in process (a
careful agent baseline: its records hold its whole trace, about 42 KB each at 500 documents), a
record appended as each task is answered, then the manifest; as `peb run --system
agent_fail_and_report --tier agent --corpus-size 500 --seeds 0-399` would write it. The timer then
covers `python -m peb_core score DIR` in a child process, with nothing saved from an earlier
scoring (each time a fresh cache folder, and the folder's saved scores removed): the tasks
regenerated, every record read, scored and the scorecard printed. Peak RSS is the child's
(`os.wait4`). Goal: under 1 GiB. Exits 1 if the goal is missed. `--seeds N` scores seeds 0..N-1
instead (a smaller run, e.g. to measure code that cannot score the whole one). `--paper` makes
and scores a paper-tier run of `oracle` instead (e.g. `--paper --seeds 2381`: 99,996 tasks).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peb_core.runs import MANIFEST, RESPONSES, RunCounts, RunManifest
from peb_core.systems import ResponseRecord, build_system
from peb_core.tasks import count_tasks, iter_tasks, load_families, scenario_hash, view_for

SYSTEM = "agent_fail_and_report"
CORPUS = 500
TIER = "agent"
GOAL_MIB = 1024.0


def make_run(run_dir: Path, seeds: list[int], *, paper: bool = False) -> None:
    """The run folder of SYSTEM over every family at `seeds` on the agent tier with corpora of
    CORPUS documents (with `paper`, of `oracle` on the paper tier), one task in memory at a
    time."""
    families = load_families()
    specs = list(families.values())
    system = build_system("oracle" if paper else SYSTEM, specs)
    tier, corpus = ("paper", None) if paper else (TIER, CORPUS)
    run_dir.mkdir(parents=True, exist_ok=True)
    n = count_tasks(specs, seeds)
    start = time.perf_counter()
    with (run_dir / RESPONSES).open("w", encoding="utf-8") as out:
        for i, task in enumerate(iter_tasks(specs, seeds, 0, tier, corpus), start=1):
            view = view_for(system.view, task, families[task.family])
            reply = asyncio.run(system.respond(view))
            record = ResponseRecord.of_reply(task.family, task.task_id, system.name, reply)
            out.write(record.model_dump_json() + "\n")
            if i % 10_000 == 0 or (not paper and i % 1000 == 0):
                print(f"  made {i:,}/{n:,} records ({time.perf_counter() - start:.0f} s)")
    manifest = RunManifest(
        system=system.name,
        config=system.config(),
        families=[s.id for s in specs],
        seeds=seeds,
        tier=tier,
        corpus_size=corpus,
        package_version="bench",
        scenario_hash=scenario_hash(specs, tier),
        started_at="bench",
        finished_at="bench",
        state="finished",
        counts=RunCounts(n_tasks=n, ok=n),
    )
    (run_dir / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")


def score_in_child(run_dir: Path) -> tuple[float, float, str]:
    """Seconds and peak RSS (MiB) of `python -m peb_core score run_dir`, and its output."""
    for saved in ("scores.parquet", "scores.json"):
        (run_dir / saved).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryFile("w+") as out:
        env = {**os.environ, "PEB_CACHE_DIR": cache}
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "peb_core", "score", str(run_dir)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"peb score failed:\n{text}")
    return seconds, usage.ru_maxrss / 1024, text  # Linux: KiB


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=400, help="seeds 0..N-1 (default 400)")
    parser.add_argument("--run", type=Path, help="the run folder (made there if missing)")
    parser.add_argument("--paper", action="store_true", help="oracle on the paper tier instead")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    with tempfile.TemporaryDirectory() as scratch:
        run_dir = args.run or Path(scratch) / "run"
        if not (run_dir / MANIFEST).exists():
            print(f"making {run_dir} ...")
            make_run(run_dir, seeds, paper=args.paper)
        n = sum(1 for _ in (run_dir / RESPONSES).open("rb"))
        size = (run_dir / RESPONSES).stat().st_size / 2**20
        what = "oracle, paper tier" if args.paper else f"{SYSTEM}, {TIER} tier, corpus {CORPUS}"
        print(f"run: {n:,} records of {what}, {size:,.0f} MiB")
        seconds, peak, text = score_in_child(run_dir)
    print(text.splitlines()[0][:200] if text else "(no output)")
    met = peak < GOAL_MIB
    print(
        f"peb score: {seconds:.1f} s, {n / seconds:,.0f} records/s, peak RSS {peak:,.0f} MiB "
        f"(goal < {GOAL_MIB:,.0f}): {'met' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
