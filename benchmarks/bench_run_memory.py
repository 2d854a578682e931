"""A run's memory follows its concurrency, not its size (issue 35, item 5): the peak RSS of `peb
run` of an agent model over agent tasks of 500 documents at `--concurrency 2`, at 210 tasks (the
seven families x six templates x seeds 0-4) and at 840 (seeds 0-19); and of `peb sweep` of one
such run of 210 tasks against four (840 tasks in all) under a budget of 2.

The model is tests/scripted_server.py in its own process, over real HTTP, holding every request
(`--latency` far longer than the measurement): the replies in flight wait as on a slow model
server, and every other task waits for a slot, as in the run of the issue. A run that creates
its tasks up front grows while it generates them; one that generates a task as a slot frees up
holds two. Each command runs in a child process (a fresh cache folder, `--no-cache`), watched
every half second: once the server holds its first requests (every slot taken: from then on the
run only waits) and its resident memory has not grown by `SETTLED_MIB` for `--settle` seconds
(every task it will generate while waiting is generated), it is stopped with SIGINT, as Ctrl-C
stops a run, and its peak RSS (`os.wait4`: its own) is read.

Goal: the larger's peak RSS at most 1.25 times the smaller's, for the run and for the sweep.
Exits 1 if missed.

Run: .venv/bin/python benchmarks/bench_run_memory.py [--settle S] [--against DIR [--before WHAT]]
[--write]. The children import the `peb_core` of this checkout; `--against DIR` measures another
checkout's too (e.g. main's, before this change: `--before` says what it is), its children run
from DIR. `--write` puts the table into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _sections import write_section

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "scripted_server.py"
MODEL = "agent:openai/bench"
CORPUS = 500
CONCURRENCY = 2
HELD_S = 86_400
"""How long the server holds a request, and the run's timeout: longer than any measurement."""
SETTLED_MIB = 8.0
GOAL_RATIO = 1.25
HEADING = "## bench_run_memory.py: a run's memory follows its concurrency (issue 35)"

Row = tuple[str, str, str, float, float]
"""(code, command, size, seconds until settled, peak RSS in MiB)."""


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmRSS:\s*(\d+)", status)
    return int(found[1]) / 1024 if found else 0.0


def _requests(api_base: str, reset: bool = False) -> int:
    """The requests the server has received since its count was last reset (`reset`: now)."""
    root = api_base.removesuffix("/v1")
    ask = urllib.request.Request(
        root + ("/stats/reset" if reset else "/stats"),
        method="POST" if reset else "GET",
        data=b"" if reset else None,
    )
    with urllib.request.urlopen(ask, timeout=10) as reply:
        return int(json.load(reply).get("requests") or 0)


def in_child(args: list[str], code: Path, api_base: str, settle: float) -> tuple[float, float]:
    """Seconds until settled and peak RSS (MiB) of `python -m peb_core args` in a child process
    importing the checkout `code`, with a fresh cache folder, stopped with SIGINT once the
    server holds CONCURRENCY of its requests and its memory has settled; exits naming the
    command if it ends otherwise."""
    _requests(api_base, reset=True)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryFile("w+") as out:
        env = {**os.environ, "PEB_CACHE_DIR": cache, "PYTHONPATH": str(code)}
        start = time.perf_counter()
        child = subprocess.Popen(  # from `code` itself: `-m` puts the working folder first
            [sys.executable, "-m", "peb_core", *args],
            cwd=code,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        top, grew, settled = 0.0, start, 0.0
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            try:
                rss = _rss_mib(child.pid)
            except OSError:
                rss = top
            if rss > top + SETTLED_MIB or _requests(api_base) < CONCURRENCY:
                top, grew = max(top, rss), now
            elif now - grew > settle:
                settled = grew - start
                child.send_signal(signal.SIGINT)
                _, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.5)
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 130:  # stopped as Ctrl-C stops it, nothing else
        raise SystemExit(f"peb {' '.join(args)} ended otherwise:\n{text[-2000:]}")
    return settled, usage.ru_maxrss / 1024  # Linux: KiB


def options(api_base: str, seeds: str) -> list[str]:
    return [
        "--tier", "agent", "--corpus-size", str(CORPUS), "--seeds", seeds, "--api-base", api_base,
        "--no-cache", "--timeout", str(HELD_S),
    ]  # fmt: skip


def measure(api_base: str, code: Path, label: str, settle: float) -> list[Row]:
    """The two runs and the two sweeps of `code`."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seeds in (5, 20):
            args = ["run", "--model", MODEL, "--out", f"{tmp}/run{seeds}"]
            args += ["--concurrency", str(CONCURRENCY), *options(api_base, f"0-{seeds - 1}")]
            ended = in_child(args, code, api_base, settle)
            rows.append((label, "peb run", f"{42 * seeds} tasks", *ended))
        for runs in (1, 4):
            path = Path(tmp) / f"sweep{runs}.toml"
            temperatures = ", ".join(str(t / 10) for t in range(runs))
            path.write_text(
                f"concurrency = {CONCURRENCY}\n[base]\nsystem = {MODEL!r}\ntier = 'agent'\n"
                f"corpus_size = {CORPUS}\nseeds = '0-4'\napi_base = {api_base!r}\n"
                f"cache = false\ntimeout = {HELD_S}\n[matrix]\ntemperature = [{temperatures}]\n",
                encoding="utf-8",
            )
            args = ["sweep", str(path), "--out", f"{tmp}/sweep{runs}"]
            what = f"{runs} run{'s' if runs > 1 else ''} of 210 tasks"
            rows.append((label, "peb sweep", what, *in_child(args, code, api_base, settle)))
    for row in rows:
        print(f"{row[0]}: {row[1]}, {row[2]}: settled after {row[3]:.0f} s, peak RSS "
              f"{row[4]:.0f} MiB")  # fmt: skip
    return rows


def ratios(rows: list[Row]) -> tuple[float, float]:
    """Peak RSS of the larger over the smaller: the run, the sweep."""
    return rows[1][4] / rows[0][4], rows[3][4] / rows[2][4]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--settle", type=float, default=20.0, help="seconds without growth")
    parser.add_argument("--against", type=Path, help="another checkout to measure too")
    parser.add_argument("--before", default="before", help="what that checkout is")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--latency", str(HELD_S), "--agent-steps", "2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    api_base = server.stdout.readline().strip()
    try:
        rows = measure(api_base, ROOT, "this checkout", args.settle)
        before = (
            []
            if args.against is None
            else measure(api_base, args.against, args.before, args.settle)
        )
    finally:
        server.terminate()
        server.wait()
    run, sweep = ratios(rows)
    met = run <= GOAL_RATIO and sweep <= GOAL_RATIO
    print(f"ratios (larger / smaller): run {run:.2f}, sweep {sweep:.2f}; goal <= {GOAL_RATIO}: "
          f"{'met' if met else 'MISSED'}")  # fmt: skip
    if args.write:
        when = datetime.datetime.now(datetime.UTC).strftime("%a %b %-d %Y, %H:%M UTC")
        against = " --against DIR" if before else ""
        checkout = f", DIR a checkout of {args.before}" if before else ""
        lines = [
            HEADING,
            "",
            f"Measured {when} with `python benchmarks/bench_run_memory.py{against}`{checkout} "
            f"(agent tasks of {CORPUS} documents, `--concurrency {CONCURRENCY}`, a scripted "
            "model over real HTTP holding every request; each command stopped with SIGINT once "
            "the server "
            f"held {CONCURRENCY} of its requests and its memory had not grown by "
            f"{SETTLED_MIB:g} MiB for {args.settle:g} s). Peak RSS is the "
            f"child's. Goal: the larger at most {GOAL_RATIO} times the smaller, for the run and "
            "the sweep.",
            "",
            "| code | command | size | settled after (s) | peak RSS (MiB) |",
            "|---|---|---|---|---|",
            *(f"| {c} | {cmd} | {what} | {s:.0f} | {p:.0f} |" for c, cmd, what, s, p in rows),
            *(f"| {c} | {cmd} | {what} | {s:.0f} | {p:.0f} |" for c, cmd, what, s, p in before),
            "",
            f"Ratios of this checkout: run {run:.2f}, sweep {sweep:.2f}: "
            f"{'met' if met else 'MISSED'}."
            + (
                " {}: run {:.2f}, sweep {:.2f}.".format(args.before, *ratios(before))
                if before
                else ""
            ),
            "",
        ]
        write_section(HEADING, "\n".join(lines))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
