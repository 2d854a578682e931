"""Harness overhead: `run_system` over the 72 canonical tasks through litellm and real HTTP.

Run: .venv/bin/python benchmarks/bench_harness.py [--no-local] [--concurrency 1 4 16 64]
     [--cache-schema]  (diagnostic what-if: memoise model_system.response_format)

1. Overhead: a threaded stdlib server on 127.0.0.1 answers every chat completion with valid JSON
   after a fixed 200 ms. Each concurrency gets a fresh, empty cache folder and run folder, so
   every task makes one request. Reported: wall time of `run_system`, the ideal 72 * 0.2 / c,
   and their ratio. Goal: ratio <= 1.3 at concurrency 16.
2. Cached rerun: the same 72 tasks into a new run folder with the same cache folder. Goal: the
   server receives 0 requests and the rerun takes < 2 s.
3. SmolLM2 (only if `llama_cpp` imports; skip with --no-local): 6 tasks at concurrency 1 against
   `local/smollm2` (served through peb_core.local, or reused if already serving). Reported:
   seconds per task, completion tokens/s, and the share of wall time outside the requests
   (1 - sum of record latencies / wall). Goal: under 5% (reported, not part of the exit code).

`import litellm` is timed once, apart from everything else. Exits 1 if goal 1 or 2 is missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

N_TASKS = 72
LATENCY_S = 0.2
GOAL_CONCURRENCY = 16
GOAL_RATIO = 1.3
GOAL_CACHED_S = 2.0
GOAL_OUTSIDE = 0.05
LOCAL_TASKS = 6

REPLY = json.dumps({"answer": None, "completeness": "incomplete", "gap_report": None})
"""Valid for every family (a blocked answer)."""


class FixedLatencyServer:
    """OpenAI-compatible `/v1/chat/completions`: sleeps `latency_s`, then answers `REPLY`.
    One thread per connection; a listen backlog large enough for 64+ simultaneous connects."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else header and body writes meet delayed ACK

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, payload: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._send(b'{"object": "list", "data": [{"id": "scripted"}]}')

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with server._lock:
                    server.requests += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                time.sleep(server.latency_s)
                with server._lock:
                    server.in_flight -= 1
                self._send(_completion(REPLY))

        class Server(ThreadingHTTPServer):
            request_queue_size = 256
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FixedLatencyServer:
        self._thread.start()
        return self

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.max_in_flight = 0

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    ).encode()


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
    from peb_core.model_system import ModelSystem

    families = list(load_families().values())
    server = FixedLatencyServer(LATENCY_S).start()
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
        print(f"{'c':>4} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'reqs':>5} {'peak':>5} status")
        last_cache = tmp / "cache_none"
        for c in levels:
            cache, run_dir = tmp / f"cache_c{c}", tmp / f"run_c{c}"
            server.reset()
            started = time.perf_counter()
            manifest = run_system(system(cache), families, run_dir, concurrency=c)
            wall = time.perf_counter() - started
            ideal = N_TASKS * LATENCY_S / c
            ratio = wall / ideal
            assert manifest.counts.n_tasks == N_TASKS, manifest.counts
            print(
                f"{c:>4} {wall:>8.3f} {ideal:>8.3f} {ratio:>6.2f} {server.requests:>5} "
                f"{server.max_in_flight:>5} {_statuses(run_dir)}"
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
        ok = server.requests == 0 and wall < GOAL_CACHED_S and cached == N_TASKS
        met &= ok
        print(
            f"     c={c}: wall {wall:.3f} s, server requests {server.requests}, "
            f"records cached {cached}/{len(records)}; goal 0 requests and < {GOAL_CACHED_S} s: "
            f"{'met' if ok else 'MISSED'}"
        )
    finally:
        server.stop()
    return met


def bench_local(tmp: Path) -> None:
    from peb_core import load_families, read_records, run_system
    from peb_core.local import get_local, serve, status, stop
    from peb_core.model_system import ModelSystem
    from peb_core.runs import RESPONSES

    print(f"\n3. SmolLM2: {LOCAL_TASKS} tasks, concurrency 1")
    model = get_local("local/smollm2")
    reused = status(model) is not None
    t0 = time.perf_counter()
    _, port = serve(model)
    print(f"     server {'reused' if reused else f'started in {time.perf_counter() - t0:.1f} s'}")
    try:
        families = list(load_families().values())
        system = ModelSystem(
            model=f"openai/{model.name}",
            families=families,
            api_base=f"http://127.0.0.1:{port}/v1",
            format_style="json_object",
            cache_folder=tmp / "local_cache",
        )
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


def _memoise_response_format() -> None:
    """What-if: build each family's response_format once instead of once per request."""
    import copy

    from peb_core import model_system

    original = model_system.response_format
    memo: dict[tuple[str, str], dict[str, Any]] = {}

    def cached(spec: Any, style: str) -> dict[str, Any]:
        key = (spec.id, style)
        if key not in memo:
            memo[key] = original(spec, style)
        return copy.deepcopy(memo[key])

    model_system.response_format = cached
    print("diagnostic: response_format memoised per (family, style)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--no-local", action="store_true")
    parser.add_argument(
        "--cache-schema",
        action="store_true",
        help="diagnostic: memoise model_system.response_format (a what-if, not the shipped code)",
    )
    args = parser.parse_args()

    # As peb_core.model_system does: use litellm's bundled cost map (no network fetch).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    started = time.perf_counter()
    import litellm  # noqa: F401

    print(f"import litellm: {time.perf_counter() - started:.2f} s (excluded from every timing)")
    if args.cache_schema:
        _memoise_response_format()
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
