"""What an embedded agent's episode costs: `peb run --model agent:local/<name> --tier agent`
as a whole process, over the first `--limit` tasks of due_diligence_v1, with the reply cache off
(every step reaches llama.cpp) and the server started by the run (and stopped at its end).

Run: .venv/bin/python benchmarks/bench_embedded_agent.py [--model smollm2] [--limit 2]
     [--max-steps N] [--concurrency C] [--corpus-size N]

Without `--max-steps`, `--concurrency` or `--corpus-size` the run takes `peb run`'s defaults
(those for an embedded agent). Per step: the prompt's tokens (the whole conversation, re-sent
each step), the tokens new to llama.cpp's prompt cache when episodes run one at a time (this
prompt less the last prompt and its reply), the completion's tokens and the step's seconds; per
episode: its status, steps, tokens and seconds; the run's wall time (the server's start
included), what llama.cpp itself says it did (from the server's log: the prompt tokens it
evaluated and the tokens it generated, and the seconds each took; a step is several llama.cpp
calls under the tool-calling chat format) and the load average before and after
(`os.getloadavg`, 1 minute). Prints what it measured; exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peb_core import read_records  # noqa: E402
from peb_core.runs import RESPONSES  # noqa: E402
from peb_core.systems import ResponseRecord  # noqa: E402

FAMILY = "due_diligence_v1"
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
GENERATED = re.compile(r"(?<!prompt) eval time =\s*([\d.]+) ms /\s*(\d+) runs")


def _llama(log: Path) -> str:
    """What llama.cpp's log says it did: prompt tokens evaluated and tokens generated, with
    their seconds, summed over its calls."""
    text = log.read_text(errors="replace")
    prompt = [(float(ms), int(n)) for ms, n in PROMPT_EVAL.findall(text)]
    made = [(float(ms), int(n)) for ms, n in GENERATED.findall(text)]
    return (
        f"llama.cpp: {len(prompt)} calls; prompt tokens evaluated {sum(n for _, n in prompt):,} "
        f"in {sum(ms for ms, _ in prompt) / 1000:.0f} s; tokens generated "
        f"{sum(n for _, n in made):,} in {sum(ms for ms, _ in made) / 1000:.0f} s"
    )


def _run(model: str, limit: int, extra: list[str], cache: Path, out: Path) -> float:
    """`peb run` of the embedded agent; its wall time."""
    command = [
        sys.executable, "-m", "peb_core", "run", "--model", f"agent:local/{model}", "--tier",
        "agent", "--family", FAMILY, "--limit", str(limit), "--no-cache", "--out", str(out),
        *extra,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PEB_CACHE_DIR": str(cache)}, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"peb run exited {done.returncode}")
    return wall


def _episode(number: int, record: ResponseRecord) -> list[str]:
    """The lines of one episode: a row per step, then its totals."""
    lines = []
    before = 0
    for index, step in enumerate(record.trace, 1):
        usage = step.usage
        prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
        text = " ".join((step.content or "").split())
        calls = ",".join(c.name for c in step.tool_calls) or f"text: {text[:40]!r}"
        lines.append(
            f"| {number} | {index} | {prompt:,} | {prompt - before:,} | {completion} | "
            f"{usage.latency_s or 0:.1f} | {calls} |"
        )
        before = prompt + completion
    usage = record.usage
    steps = len(record.trace)
    seconds = usage.latency_s or 0.0
    lines.append(
        f"| {number} | all ({record.status}) | {usage.prompt_tokens or 0:,} | | "
        f"{usage.completion_tokens or 0:,} | {seconds:.1f} ({seconds / max(steps, 1):.1f}/step)"
        f" | {steps} steps |"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="smollm2, gemma3-270m (repeat)")
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--concurrency", type=int)
    parser.add_argument("--corpus-size", type=int)
    args = parser.parse_args()
    extra = []
    for flag in ("max_steps", "concurrency", "corpus_size"):
        if getattr(args, flag) is not None:
            extra += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
    print(f"{time.strftime('%a %d %b %Y %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores")
    for model in args.model or ["smollm2"]:
        with tempfile.TemporaryDirectory() as tmp:
            load = os.getloadavg()[0]
            wall = _run(model, args.limit, extra, Path(tmp) / "cache", Path(tmp) / "run")
            records, problems = read_records(Path(tmp) / "run" / RESPONSES)
            assert not problems, problems
            print(
                f"\nagent:local/{model}, --limit {args.limit} {' '.join(extra)}: wall "
                f"{wall:.0f} s; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after"
            )
            print(_llama(Path(tmp) / "cache" / "local" / f"{model}+tools.log"))
            print("| episode | step | prompt tokens | new | completion | s | calls or text |")
            print("|---|---|---|---|---|---|---|")
            for number, record in enumerate(records, 1):
                print("\n".join(_episode(number, record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
