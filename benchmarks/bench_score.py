"""Scoring speed: per-task scores (`score_frames` and the record columns `score_replies` adds,
`with_record_columns`) + scorecard over >= 1,000,000 responses.

Run: .venv/bin/python benchmarks/bench_score.py
Every baseline answers the paper tier's canonical tasks; their response frames are replicated (a
cross join with distinct run labels) to >= 1,000,000 rows and scored against those tasks' frames.
Goal: at least 200,000 responses/s, best of 3 timed calls after one first (cold) call.
Exits 1 if the goal is missed.
Also measured, without a goal: records on disk to frames (`read_records` + `response_frame`)
for a responses.jsonl of 100,000 lines.
"""

from __future__ import annotations

import gc
import math
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from peb_core.results import SCORECARD_KEYS
from peb_core.runs import read_records
from peb_core.scoring import (
    ROW_KEYS,
    RunReading,
    judge,
    read_replies,
    response_frame,
    score_frames,
    scorecard,
    with_record_columns,
)
from peb_core.systems import BASELINES, Reply, ResponseRecord
from peb_core.tasks import Task, generate_tasks, load_families, view_for

N_RESPONSES = 1_000_000
N_LINES = 100_000
REPEATS = 3
GOAL = 200_000.0  # responses/s
METRICS = [k for k in SCORECARD_KEYS if k not in (*ROW_KEYS, "status")]


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def baseline_records(tasks: list[Task]) -> dict[str, list[ResponseRecord]]:
    """Each baseline's records over `tasks`, built as the runner builds them."""
    families = load_families()
    out: dict[str, list[ResponseRecord]] = {}
    for name, baseline in BASELINES.items():
        out[name] = [
            ResponseRecord(
                family=t.family,
                task_id=t.task_id,
                system=name,
                **dict(Reply.of(baseline.policy(view_for(baseline.view, t, families[t.family])))),
            )
            for t in tasks
        ]
    return out


def replicate(frame: pl.DataFrame, copies: int) -> pl.DataFrame:
    """`copies` copies of `frame`, copy k with run label `<run>#<k>`."""
    reps = pl.DataFrame({"rep": pl.int_range(copies, eager=True).cast(pl.String)})
    return (
        frame.join(reps, how="cross")
        .with_columns(run=pl.concat_str("run", pl.lit("#"), "rep"))
        .drop("rep")
        .select(frame.columns)
    )


def same_metrics(card: pl.DataFrame, base: pl.DataFrame) -> bool:
    """Every replicated run's metrics equal its baseline's over the canonical tasks."""
    joined = card.join(base, on=["system", "family"], suffix="_base")
    if joined.height != card.height:
        return False
    for m in METRICS:
        a, b = pl.col(m), pl.col(f"{m}_base")
        same = (a.is_null() & b.is_null()) | ((a - b).abs() <= 1e-12)
        if not joined.select(same.all()).item():
            return False
    return True


def bench_scoring(tasks: list[Task], records: dict[str, list[ResponseRecord]]) -> bool:
    families = load_families()
    frames = [
        response_frame(r, run=name, system=name, families=families) for name, r in records.items()
    ]
    responses = pl.concat([f for f, _ in frames])
    answers = pl.concat([a for _, a in frames])
    one_shot = read_replies([], families, RunReading("bench", "bench"))
    judged, _ = judge(tasks, [one_shot], families)

    def scored(responses: pl.DataFrame, answers: pl.DataFrame) -> pl.DataFrame:
        """Per-task scores as `score_replies` makes them for one-shot runs."""
        scores = score_frames(judged.tasks, judged.expected, responses, answers)
        return with_record_columns(scores, judged, one_shot, answers, None)

    base = scorecard(scored(responses, answers))

    rss_before = max_rss_mib()
    copies = math.ceil(N_RESPONSES / responses.height)
    big_responses, big_answers = replicate(responses, copies), replicate(answers, copies)
    rss_replicated = max_rss_mib()
    n = big_responses.height

    start = time.perf_counter()  # first call: cold caches, fresh pages; shown, not in the goal
    scorecard(scored(big_responses, big_answers))
    cold = n / (time.perf_counter() - start)
    rates, card = [], base
    for _ in range(REPEATS):
        start = time.perf_counter()
        card = scorecard(scored(big_responses, big_answers))
        rates.append(n / (time.perf_counter() - start))
    rss_after = max_rss_mib()
    assert card.height == copies * base.height, (card.height, copies * base.height)
    assert same_metrics(card, base), "replicated scorecard differs from the baselines' own"

    best = max(rates)
    print(
        f"scoring: {len(tasks)} tasks x {len(records)} baselines = {responses.height} responses, "
        f"x {copies:,} runs = {n:,} responses, {big_answers.height:,} answer rows"
    )
    print(
        f"  scores + scorecard: best {best:,.0f}  median {statistics.median(rates):,.0f}"
        f"  responses/s  ({', '.join(f'{r:,.0f}' for r in rates)})"
    )
    print(
        f"  best time {n / best:.2f} s; first (cold) call {cold:,.0f} responses/s; "
        f"polars threads {pl.thread_pool_size()}"
    )
    print(
        f"  max RSS: {rss_before:.0f} MiB before replicating, {rss_replicated:.0f} MiB "
        f"replicated, {rss_after:.0f} MiB after scoring (peak); replicated frames hold "
        f"{(big_responses.estimated_size() + big_answers.estimated_size()) / 2**20:.0f} MiB"
    )
    print(f"  sanity: {card.height:,} scorecard rows equal the baselines' own scorecard: ok")
    print(f"  goal {GOAL:,.0f} responses/s: {'met' if best >= GOAL else 'MISSED'}")
    return best >= GOAL


def records_to_frames(path: Path, *, gc_off: bool) -> tuple[float, float, int]:
    """Seconds in read_records and in response_frame, and the answer rows made."""
    gc.collect()
    if gc_off:
        gc.disable()
    try:
        start = time.perf_counter()
        read, problems = read_records(path)
        t_read = time.perf_counter() - start
        start = time.perf_counter()
        frame, answers = response_frame(read, run="disk", system="mixed", families=load_families())
        t_frame = time.perf_counter() - start
    finally:
        gc.enable()
    assert len(read) == frame.height == N_LINES and not problems, (len(read), problems[:1])
    return t_read, t_frame, answers.height


def bench_records(records: dict[str, list[ResponseRecord]]) -> None:
    """responses.jsonl of N_LINES distinct records -> read_records -> response_frame."""
    pool = [r for rs in records.values() for r in rs]
    lines = []
    for i in range(N_LINES):
        r = pool[i % len(pool)]
        template = r.task_id.rsplit("__s", 1)[0]
        fresh = r.model_copy(update={"task_id": f"{template}__s{1000 + i}"})
        lines.append(fresh.model_dump_json() + "\n")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "responses.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        print(f"records: {N_LINES:,} distinct lines, {path.stat().st_size / 2**20:.1f} MiB")
        for label, gc_off in (("as shipped", False), ("GC off (diagnostic)", True)):
            t_read, t_frame, n_answers = records_to_frames(path, gc_off=gc_off)
            print(
                f"  {label + ':':<21}read_records {N_LINES / t_read:>7,.0f}/s ({t_read:.2f} s), "
                f"response_frame {N_LINES / t_frame:>6,.0f}/s ({t_frame:.2f} s), "
                f"both {N_LINES / (t_read + t_frame):>6,.0f} records/s"
            )
        print(f"  answer rows per run: {n_answers:,}")


def main() -> int:
    print(f"max RSS after imports: {max_rss_mib():.0f} MiB")
    tasks = generate_tasks(load_families().values())
    records = baseline_records(tasks)
    met = bench_scoring(tasks, records)
    bench_records(records)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
