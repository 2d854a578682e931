"""`peb run`'s progress line: what it costs per record as a run grows. The progress callback
(`peb_core.frontends.cli._run.ProgressLine`) runs on the event loop after every finished task, so
its cost per record must not grow with the records before it. Goal: the time per record over 100,000
records at most 1.5 times that over 10,000 (linear work; it was quadratic: every record summed
every cost so far).

Each size is fed through a fresh ProgressLine writing to /dev/null (not a terminal: a line per
whole percent, as in a log), the same record every time (a reply with tokens and a price), `done`
counting up to the total. Best of 3 per size after a warm-up. Run:
`.venv/bin/python benchmarks/bench_progress.py`.
"""

from __future__ import annotations

import os
import sys
import time

from peb_core.frontends.cli._run import ProgressLine
from peb_core.systems import Reply, ResponseRecord, Usage

SIZES = (10_000, 100_000)
GOAL_RATIO = 1.5
REPEATS = 3


def per_record_us(n: int) -> float:
    """Best microseconds per record of `n` records through one ProgressLine."""
    record = ResponseRecord.of_reply(
        "due_diligence_v1",
        "hidden_liability_annex__s11",
        "openai/x",
        Reply(
            status="ok",
            raw="{}",
            usage=Usage(prompt_tokens=900, completion_tokens=120, cost_usd=0.00042),
        ),
    )
    best = float("inf")
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for _ in range(REPEATS):
            progress = ProgressLine(sink)
            start = time.perf_counter()
            for done in range(1, n + 1):
                progress(record, done, n)
            best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def main() -> int:
    per_record_us(1_000)  # warm-up
    times = {n: per_record_us(n) for n in SIZES}
    for n, us in times.items():
        print(f"{n:>7,} records: {us:.2f} us per record ({us * n / 1e6:.3f} s in all)")
    ratio = times[SIZES[-1]] / times[SIZES[0]]
    met = ratio <= GOAL_RATIO
    print(
        f"per-record time at {SIZES[-1]:,} / at {SIZES[0]:,}: {ratio:.2f} "
        f"(goal <= {GOAL_RATIO}): {'met' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
