"""Harness overhead: `run_system` over the paper's 72 canonical tasks through litellm and real HTTP.

Run: .venv/bin/python benchmarks/bench_harness.py [--no-local] [--concurrency 1 4 16 64]

1. Overhead: tests/scripted_server.py, in its own process on 127.0.0.1, answers every chat
   completion with valid JSON after a fixed 200 ms. Each concurrency gets a fresh, empty cache
   folder and run folder, so every task makes one request. Reported: wall time of `run_system`,
   the ideal 72 * 0.2 / c, their ratio, and the client's CPU per request (`time.process_time()`
   over the run, all threads, / 72). Goal: ratio <= 1.3 at concurrency 16.
2. Cached rerun: the same 72 tasks into a new run folder with the same cache folder. Goal: the
   server receives 0 requests and the rerun takes < 2 s.
3. SmolLM2 (only if `llama_cpp` imports; skip with --no-local): 6 tasks at concurrency 1 against
   `local/smollm2` (served through peb_core.systems.serve_local, or reused if already
   serving). Reported: seconds per task, completion tokens/s, and the share of wall time
   outside the requests (1 - sum of record latencies / wall). Goal: under 5% (reported, not
   part of the exit code).

`import litellm` is timed once, apart from everything else. Exits 1 if goal 1 or 2 is missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

N_TASKS = 72
LATENCY_S = 0.2
GOAL_CONCURRENCY = 16
GOAL_RATIO = 1.3
GOAL_CACHED_S = 2.0
GOAL_OUTSIDE = 0.05
LOCAL_TASKS = 6

PAPER_FAMILIES = ("compliance_audit_v1", "due_diligence_v1", "security_incident_v1")
"""The paper's 72 tasks."""
SERVER = Path(__file__).resolve().parent.parent / "tests" / "scripted_server.py"


class LatencyServer:
    """tests/scripted_server.py in its own process (as a real endpoint would be: its threads must
    not share the client's interpreter lock), answering every request after `latency_s`."""

    def __init__(self, latency_s: float) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--latency", str(latency_s)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        self.url = self._proc.stdout.readline().strip()

    def _call(self, method: str, path: str) -> dict[str, int]:
        root = self.url.removesuffix("/v1")
        request = urllib.request.Request(
            root + path, method=method, data=b"" if method == "POST" else None
        )
        with urllib.request.urlopen(request, timeout=5) as reply:
            stats: dict[str, int] = json.load(reply)
        return stats

    def stats(self) -> dict[str, int]:
        return self._call("GET", "/stats")

    def reset(self) -> None:
        self._call("POST", "/stats/reset")

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)


def _statuses(run_dir: Path) -> dict[str, int]:
    from peb_core import read_records
    from peb_core.runs import RESPONSES

    records, _ = read_records(run_dir / RESPONSES)
    counts: dict[str, int] = {}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
    return counts


def bench_overhead(tmp: Path, levels: list[int]) -> bool:
    from peb_core import load_families, run_system
    from peb_core.systems import ModelSystem

    families = [load_families()[f] for f in PAPER_FAMILIES]
    server = LatencyServer(LATENCY_S)
    met = True
    try:

        def system(cache: Path) -> ModelSystem:
            return ModelSystem(
                model="openai/scripted",
                families=families,
                api_base=server.url,
                timeout_s=30.0,
                retries=0,
                cache_folder=cache,
            )

        # Warm-up (not timed): the first litellm call builds clients and loads lazy modules.
        run_system(system(tmp / "warm_cache"), families, tmp / "warm_run", limit=2)

        print(f"\n1. overhead: {N_TASKS} tasks, server latency {LATENCY_S * 1000:.0f} ms")
        print(
            f"{'c':>4} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'cpu ms/req':>10} {'reqs':>5} "
            f"{'peak':>5} status"
        )
        last_cache = tmp / "cache_none"
        for c in levels:
            cache, run_dir = tmp / f"cache_c{c}", tmp / f"run_c{c}"
            server.reset()
            model = system(cache)  # setup, like process start: schemas built, cache opened
            started, cpu_started = time.perf_counter(), time.process_time()
            manifest = run_system(model, families, run_dir, concurrency=c)
            wall = time.perf_counter() - started
            cpu_ms = (time.process_time() - cpu_started) / N_TASKS * 1000
            ideal = N_TASKS * LATENCY_S / c
            ratio = wall / ideal
            assert manifest.counts.n_tasks == N_TASKS, manifest.counts
            stats = server.stats()
            print(
                f"{c:>4} {wall:>8.3f} {ideal:>8.3f} {ratio:>6.2f} {cpu_ms:>10.2f} "
                f"{stats['requests']:>5} {stats['max_in_flight']:>5} {_statuses(run_dir)}"
            )
            if c == GOAL_CONCURRENCY:
                ok = ratio <= GOAL_RATIO
                met &= ok
                print(f"     goal ratio <= {GOAL_RATIO} at c={c}: {'met' if ok else 'MISSED'}")
            last_cache = cache

        print("\n2. cached rerun: same cache folder, new run folder")
        server.reset()
        c = levels[-1]
        started = time.perf_counter()
        run_system(system(last_cache), families, tmp / "run_cached", concurrency=c)
        wall = time.perf_counter() - started
        from peb_core import read_records
        from peb_core.runs import RESPONSES

        records, _ = read_records(tmp / "run_cached" / RESPONSES)
        cached = sum(r.usage.cached for r in records)
        requests = server.stats()["requests"]
        ok = requests == 0 and wall < GOAL_CACHED_S and cached == N_TASKS
        met &= ok
        print(
            f"     c={c}: wall {wall:.3f} s, server requests {requests}, "
            f"records cached {cached}/{len(records)}; goal 0 requests and < {GOAL_CACHED_S} s: "
            f"{'met' if ok else 'MISSED'}"
        )
    finally:
        server.stop()
    return met


def bench_local(tmp: Path) -> None:
    from peb_core import load_families, read_records, run_system
    from peb_core.runs import RESPONSES
    from peb_core.systems import ModelSystem, build_system, get_local
    from peb_core.systems import local_status as status
    from peb_core.systems import serve_local as serve
    from peb_core.systems import stop_local as stop

    print(f"\n3. SmolLM2: {LOCAL_TASKS} tasks, concurrency 1")
    model = get_local("local/smollm2")
    reused = status(model) is not None
    t0 = time.perf_counter()
    _, port = serve(model)
    print(f"     server {'reused' if reused else f'started in {time.perf_counter() - t0:.1f} s'}")
    try:
        families = [load_families()[f] for f in PAPER_FAMILIES]
        built = build_system("local/smollm2", families, local_port=port)
        assert isinstance(built, ModelSystem)
        system = dataclasses.replace(built, use_cache=False)  # every request reaches llama.cpp
        # Warm-up request (not timed): first prompt evaluation and client setup.
        run_system(system, families, tmp / "local_warm", seeds=[99], limit=1)
        started = time.perf_counter()
        run_system(system, families, tmp / "local_run", concurrency=1, limit=LOCAL_TASKS)
        wall = time.perf_counter() - started
        records, _ = read_records(tmp / "local_run" / RESPONSES)
        latency = sum(r.usage.latency_s or 0.0 for r in records)
        tokens = sum(r.usage.completion_tokens or 0 for r in records)
        outside = 1 - latency / wall
        print(
            f"     {len(records)} records {_statuses(tmp / 'local_run')}, wall {wall:.2f} s, "
            f"{wall / len(records):.2f} s/task"
        )
        print(
            f"     completion tokens {tokens}, {tokens / latency:.1f} tok/s over request time, "
            f"{tokens / wall:.1f} tok/s over wall"
        )
        print(
            f"     sum of record latencies {latency:.2f} s; outside requests {outside:.1%} "
            f"(goal < {GOAL_OUTSIDE:.0%}: {'met' if outside < GOAL_OUTSIDE else 'MISSED'})"
        )
    finally:
        if not reused:
            stop(model)
            print("     server stopped")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--no-local", action="store_true")
    args = parser.parse_args()

    # As peb_core.systems does: use litellm's bundled cost map (no network fetch).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    started = time.perf_counter()
    import litellm  # noqa: F401

    print(f"import litellm: {time.perf_counter() - started:.2f} s (excluded from every timing)")
    with tempfile.TemporaryDirectory(prefix="peb_bench_harness_") as folder:
        met = bench_overhead(Path(folder), args.concurrency)
        if not args.no_local:
            if importlib.util.find_spec("llama_cpp") is None:
                print("\n3. SmolLM2: skipped (llama_cpp is not installed)")
            else:
                bench_local(Path(folder))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
