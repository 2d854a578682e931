"""Generation speed: 10,000 fresh tasks on one core, spread evenly over families and templates,
on each tier (about 2,000 on the agent tier, whose tasks are 60-document corpora).

Run: .venv/bin/python benchmarks/bench_generate.py [--tier paper|hard|agent] [--profile]
Goal, best of 3, building the list with `generate_tasks` (which pauses the cyclic GC while it
builds): at least 5,000 tasks/s on the paper and hard tiers, 500 corpora/s (of the default size)
on the agent tier. Also printed, without a goal: the same loop over
`generate_task` with the GC left on, and a streamed run (each task dropped at once), which show
where the time goes. Exits 1 if the goal is missed on a tier.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import resource
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from typing import Any

from peb_core.tasks import (
    TIERS,
    ScenarioFile,
    Task,
    Tier,
    generate_task,
    generate_tasks,
    load_families,
)

SEEDS_PER_TEMPLATE = {"agent": 48}  # x 42 templates (7 families) = 2,016 corpora
"""Seeds per template on a tier; 239 elsewhere (10,038 tasks)."""
FIRST_SEED = 1000  # canonical seeds are small; fresh seeds start here
REPEATS = 3
GOALS = {"agent": 500.0}
"""Tasks (corpora) per second on a tier; 5,000 elsewhere."""

Job = tuple[ScenarioFile, str, int, Tier]


def seeds(tier: Tier) -> list[int]:
    return list(range(FIRST_SEED, FIRST_SEED + SEEDS_PER_TEMPLATE.get(tier, 239)))


def jobs(tier: Tier) -> list[Job]:
    """Every (family, template) at every seed, in `generate_tasks` order."""
    families = load_families().values()
    return [
        (spec, t.id, s, tier) for spec in families for t in spec.templates for s in seeds(tier)
    ]


def generate(work: list[Job]) -> list[Task]:
    """The public batch API: what the goal is measured on."""
    families = {spec.id: spec for spec, _, _, _ in work}
    return generate_tasks(families.values(), seeds(work[0][3]), tier=work[0][3])


def generate_gc_on(work: list[Job]) -> list[Task]:
    return [generate_task(spec, template, seed, tier=tier) for spec, template, seed, tier in work]


def stream(work: list[Job]) -> None:
    for spec, template, seed, tier in work:
        generate_task(spec, template, seed, tier=tier)


def rates(fn: Callable[[list[Job]], Any], work: list[Job]) -> list[float]:
    out = []
    for _ in range(REPEATS):
        gc.collect()
        start = time.perf_counter()
        result = fn(work)
        out.append(len(work) / (time.perf_counter() - start))
        del result
    return out


class GcClock:
    """Wall time spent in cyclic garbage collection, via gc.callbacks."""

    def __init__(self) -> None:
        self.seconds, self.full, self._t0 = 0.0, 0, 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._t0
            self.full += info["generation"] == 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", choices=TIERS, action="append", help="default: every tier")
    parser.add_argument("--profile", action="store_true", help="a cProfile table per tier")
    args = parser.parse_args()
    met = [measure(tier, profile=args.profile) for tier in args.tier or TIERS]
    return 0 if all(met) else 1


def measure(tier: Tier, *, profile: bool) -> bool:
    """Print what generating `tier`'s tasks costs; whether the goal is met."""
    work = jobs(tier)
    canonical = {s for spec, _, _, _ in work for s in spec.canonical_seeds}
    assert not canonical & {seed for _, _, seed, _ in work}, "a canonical seed slipped in"
    generate_gc_on(work[:100])  # warm up: scenario caches, pydantic validators
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    held = rates(generate, work)
    clock = GcClock()
    gc.callbacks.append(clock)
    held_gc_on = rates(generate_gc_on, work)
    gc.callbacks.remove(clock)
    streamed = rates(stream, work)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    tracemalloc.start()
    tasks = generate(work)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_pair = Counter((t.family, t.template) for t in tasks)
    incomplete = sum(t.oracles.completeness == "incomplete" for t in tasks)
    del tasks
    best = max(held)
    goal = GOALS.get(tier, 5_000.0)

    def show(name: str, values: list[float]) -> None:
        runs = ", ".join(f"{r:,.0f}" for r in values)
        print(
            f"{name:<26}best {max(values):>6,.0f}  median {statistics.median(values):>6,.0f}"
            f"  tasks/s  ({runs})"
        )

    print(f"== tier {tier}")
    print(
        f"tasks:                    {len(work):,}, seeds {FIRST_SEED}..{work[-1][2]}, "
        f"{len({f for f, _ in per_pair})} families, {len(per_pair)} templates, "
        f"{min(per_pair.values())}-{max(per_pair.values())} tasks each, "
        f"{incomplete / len(work):.3f} incomplete"
    )
    show("held list (goal):", held)
    show("held list, GC on:", held_gc_on)
    show("streamed:", streamed)
    print(
        f"GC in GC-on runs:         {clock.seconds / REPEATS:.2f} s per run, "
        f"{clock.full / REPEATS:.0f} full collections per run"
    )
    print(f"peak traced allocation:   {traced_peak / 2**20:.1f} MiB (tracemalloc, all tasks held)")
    print(
        f"max RSS:                  {rss_before / 1024:.1f} MiB before, "
        f"{rss_after / 1024:.1f} MiB after the timed runs"
    )

    if profile:
        gc.disable()  # profile the generator itself; GC time is printed above
        profiler = cProfile.Profile()
        profiler.runcall(generate, work)
        gc.enable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)

    print(f"goal {goal:,.0f} tasks/s on the {tier} tier: {'met' if best >= goal else 'MISSED'}")
    return best >= goal


if __name__ == "__main__":
    sys.exit(main())
