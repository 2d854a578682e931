"""Scoring a large agent run in bounded memory: `peb score` of 16,800 agent tasks of 500
documents (the seven families x six templates x seeds 0-399, `--corpus-size 500`), one record
per task, in a child process whose peak RSS is measured; on the `agent` tier by default, or on
the `grants` tier (each episode played again against its task's grant schedule to judge it) or
the `delegation` tier (each episode with its handoffs' sub-episodes).

Run: .venv/bin/python benchmarks/bench_score_memory.py [--tier T] [--seeds N] [--run DIR]
[--limit N] [--resume] [--paper]
The run folder is made first, unless `--run DIR` names one made before (it is made there if
missing): every task generated in turn and answered by `agent_fail_and_report` in process (a
careful agent baseline; on the delegation tier it hands off to `agent_fail_and_report`
sub-agents; its records hold their whole traces, about 42 KB each at 500 documents), a record
appended as each task is answered, then the manifest (an agent's run: `episodes`); as `peb run
--system agent_fail_and_report --tier T --corpus-size 500 --seeds 0-399` would write it. The
timer then covers `python -m peb_core score DIR` in a child process, with nothing saved from an
earlier scoring (each time a fresh cache folder, and the folder's saved scores removed): the
tasks regenerated, every record read, scored and the scorecard printed. Peak RSS is the
child's (`os.wait4`). Goal: under 1 GiB. Exits 1 if the goal is missed.

`--seeds N` makes seeds 0..N-1 instead; `--limit N` scores a copy of the run limited to its
first N tasks and records (a smaller run, e.g. to measure code that cannot score the whole
one); `--resume` also times `RunWriter.resume` of the run in a child (what `peb run` does
before answering the tasks still to do), with its peak RSS; `--paper` makes and scores a
paper-tier run of `oracle` instead (e.g. `--paper --seeds 2381`: 99,996 tasks). The child
imports the `peb_core` this process imports (with PYTHONPATH set, another checkout's: how the
figures of main were measured).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import peb_core
from peb_core.runs import MANIFEST, RESPONSES, RunCounts, new_manifest, read_manifest
from peb_core.systems import ResponseRecord, build_system
from peb_core.tasks import count_tasks, iter_tasks, load_families, view_for

SYSTEM = "agent_fail_and_report"
CORPUS = 500
TIERS = ("agent", "grants", "delegation")
GOAL_MIB = 1024.0
RESUME = """\
import sys
from pathlib import Path
from peb_core.runs import RunWriter, read_manifest
from peb_core.tasks import load_families
run_dir = Path(sys.argv[1])
manifest = read_manifest(run_dir)
families = load_families()
with RunWriter.resume(run_dir, manifest, [families[f] for f in manifest.families]) as writer:
    print(f"{len(writer.done):,} records counted")
"""
"""What the `--resume` child runs: the run resumed as `peb run` resumes it, nothing answered."""


def make_run(run_dir: Path, seeds: list[int], tier: str, *, paper: bool = False) -> None:
    """The run folder of SYSTEM over every family at `seeds` on `tier` with corpora of CORPUS
    documents (with `paper`, of `oracle` on the paper tier), one task in memory at a time."""
    families = load_families()
    specs = list(families.values())
    delegate = SYSTEM if tier == "delegation" and not paper else None
    system = build_system("oracle" if paper else SYSTEM, specs, delegate_system=delegate)
    tier, corpus = ("paper", None) if paper else (tier, CORPUS)
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
    manifest = new_manifest(
        system=system.name,
        config=system.config(),
        families=specs,
        seeds=seeds,
        tier=tier,
        kind="one_shot" if paper else "episodes",
        n_tasks=n,
        corpus_size=corpus,
    ).model_copy(
        update={"state": "finished", "finished_at": "bench", "counts": RunCounts(n_tasks=n, ok=n)}
    )
    (run_dir / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")


def limited(run_dir: Path, limit: int, into: Path) -> Path:
    """A copy of `run_dir` limited to its first `limit` tasks and their records (`into`)."""
    into.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(run_dir).model_copy(update={"limit": limit})
    (into / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    with (run_dir / RESPONSES).open("rb") as source, (into / RESPONSES).open("wb") as target:
        target.writelines(itertools.islice(source, limit))
    return into


def in_child(args: list[str]) -> tuple[float, float, str]:
    """Seconds and peak RSS (MiB) of `python args` in a child process with a fresh cache
    folder, and its output."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryFile("w+") as out:
        env = {**os.environ, "PEB_CACHE_DIR": cache}
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, *args], stdout=out, stderr=subprocess.STDOUT, env=env
        )
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed:\n{text}")
    return seconds, usage.ru_maxrss / 1024, text  # Linux: KiB


def score_in_child(run_dir: Path) -> tuple[float, float, str]:
    """Seconds and peak RSS (MiB) of `python -m peb_core score run_dir`, and its output."""
    for saved in ("scores.parquet", "scores.json"):
        (run_dir / saved).unlink(missing_ok=True)
    return in_child(["-m", "peb_core", "score", str(run_dir)])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tier", choices=TIERS, default="agent", help="default agent")
    parser.add_argument("--seeds", type=int, default=400, help="seeds 0..N-1 (default 400)")
    parser.add_argument("--run", type=Path, help="the run folder (made there if missing)")
    parser.add_argument("--limit", type=int, help="score the first N tasks only")
    parser.add_argument("--resume", action="store_true", help="time RunWriter.resume too")
    parser.add_argument("--paper", action="store_true", help="oracle on the paper tier instead")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    print(f"peb_core: {Path(peb_core.__file__).parent}")
    with tempfile.TemporaryDirectory() as scratch:
        run_dir = args.run or Path(scratch) / "run"
        if not (run_dir / MANIFEST).exists():
            print(f"making {run_dir} ...")
            make_run(run_dir, seeds, args.tier, paper=args.paper)
        if args.limit is not None:
            run_dir = limited(run_dir, args.limit, Path(scratch) / f"limit{args.limit}")
        n = sum(1 for _ in (run_dir / RESPONSES).open("rb"))
        size = (run_dir / RESPONSES).stat().st_size / 2**20
        manifest = read_manifest(run_dir)
        what = f"{manifest.system}, {manifest.tier} tier, corpus {manifest.corpus_size}"
        print(f"run: {n:,} records of {what} ({manifest.kind}), {size:,.0f} MiB")
        seconds, peak, text = score_in_child(run_dir)
        print(text.splitlines()[0][:200] if text else "(no output)")
        met = peak < GOAL_MIB
        print(
            f"peb score: {seconds:.1f} s, {n / seconds:,.0f} records/s, peak RSS {peak:,.0f} "
            f"MiB (goal < {GOAL_MIB:,.0f}): {'met' if met else 'MISSED'}"
        )
        if args.resume:
            seconds, peak, text = in_child(["-c", RESUME, str(run_dir)])
            print(f"RunWriter.resume: {seconds:.1f} s, peak RSS {peak:,.0f} MiB ({text.strip()})")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
