"""Whole-process start and exit of `peb run`: how long a 72-task run against a 200 ms server
spends before its first request reaches the server, and after the server's last reply before
the process exits. Goal: their sum under 1.5 s.

The scripted server (tests/scripted_server.py) runs in its own process, as a real endpoint
would, and records the wall-clock time of the first request and of the last reply; `peb run` is
started as a user starts it (`.venv/bin/peb run --model openai/scripted --api-base ...`, the
paper's three families, concurrency 16) with a fresh cache and run folder each time, so every
task makes a request. Run: `.venv/bin/python benchmarks/bench_startup.py [--repeats 5]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEB = Path(sys.executable).parent / "peb"
FAMILIES = "due_diligence_v1,compliance_audit_v1,security_incident_v1"
GOAL_S = 1.5


def _stats(url: str) -> dict[str, float]:
    base = url.removesuffix("/v1")
    with urllib.request.urlopen(f"{base}/stats", timeout=5) as reply:
        stats: dict[str, float] = json.loads(reply.read())
    request = urllib.request.Request(f"{base}/stats/reset", data=b"", method="POST")
    urllib.request.urlopen(request, timeout=5).close()
    return stats


def one_run(url: str, folder: Path) -> tuple[float, float, float]:
    """(before the first request, after the last reply, wall) in seconds for one `peb run`."""
    env = {**os.environ, "PEB_CACHE_DIR": str(folder / "cache"), "OPENAI_API_KEY": ""}
    command = [
        str(PEB), "run", "--model", "openai/scripted", "--api-base", url, "--family", FAMILIES,
        "--concurrency", "16", "--out", str(folder / "run"),
    ]  # fmt: skip
    started = time.time()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    ended = time.time()
    if done.returncode != 0:
        raise SystemExit(f"peb run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    stats = _stats(url)
    assert stats["requests"] == 72, stats
    return stats["first_request_at"] - started, ended - stats["last_reply_at"], ended - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "scripted_server.py"), "--latency", "0.2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        rows = []
        for i in range(args.repeats):
            with tempfile.TemporaryDirectory() as folder:
                rows.append(one_run(url, Path(folder)))
            print(f"run {i + 1}: before first request {rows[-1][0]:.2f} s, after last reply "
                  f"{rows[-1][1]:.2f} s, wall {rows[-1][2]:.2f} s")  # fmt: skip
    finally:
        server.terminate()
    before = statistics.median(r[0] for r in rows)
    after = statistics.median(r[1] for r in rows)
    total = before + after
    print(
        f"median: before first request {before:.2f} s, after last reply {after:.2f} s, "
        f"sum {total:.2f} s (goal < {GOAL_S} s: {'met' if total < GOAL_S else 'MISSED'})"
    )
    return 0 if total < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
