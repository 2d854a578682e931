"""Agent harness overhead: `agent:openai/...` through litellm and real HTTP, side by side with
inspect_ai's `react()` agent on the same tools and the same server, and at scale against
one-shot requests.

Run: .venv/bin/python benchmarks/bench_agent.py [--episodes 40] [--scale 1000]

The server is tests/scripted_server.py in its own process (as a real endpoint would be),
answering at once (`--latency 0 --agent-steps 10`): a request offering tools gets a `search`
call until its conversation holds 9 replies, then a `submit` of a valid response (10 steps); a
request without tools gets a valid one-shot reply.

1. Per step, one episode at a time, over agent-tier tasks: our runner (`run_system` of an
   `AgentSystem`, a fresh cache folder, as `peb run` does) and inspect_ai's `react()` agent
   (`inspect_ai.eval`, its `search`, `open` and `submit` tools calling the same access-layer
   sessions, `openai-api/scripted/scripted` to the same server, logs written as usual). Each
   harness runs `--episodes` episodes and a tenth of them; the marginal cost of a step is the
   difference over the difference in steps (fixed costs cancel), as wall time and as this
   process's CPU time; the two harnesses alternate within each of `--rounds` rounds and the
   median is reported. Goal: ours at most half of inspect's, on both.
2. Scale, whole processes: `peb run --model agent:openai/scripted` over `--scale` agent tasks
   of 10 steps at concurrency 32, and `peb run --model openai/scripted` over 10 x `--scale`
   paper-tier tasks (the same number of requests) at concurrency 32, each with a fresh cache;
   wall time, CPU time and peak resident memory of each process (`wait4`), and the server's CPU;
   the two alternate in each of `--rounds` rounds, medians reported. Goal: the agent run within
   1.5 x the one-shot run's wall time.

Exits 1 if a goal is missed.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "scripted_server.py"
STEPS = 10
CONCURRENCY = 32
GOAL_STEP_RATIO = 0.5
GOAL_SCALE_RATIO = 1.5
FAMILY = "due_diligence_v1"


class AgentServer:
    """tests/scripted_server.py in its own process, answering at once as a 10-step agent."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--latency", "0", "--agent-steps", str(STEPS)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        self.url = self._proc.stdout.readline().strip()

    def requests(self) -> int:
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats", timeout=5) as r:
            return int(json.load(r)["requests"])

    def cpu(self) -> float:
        """The server process's CPU seconds so far (user and system, from /proc)."""
        fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)


def _timed(run: Any) -> tuple[float, float]:
    """(wall s, CPU s of this process) of `run()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _seeds(n_tasks: int) -> list[int]:
    """Seeds enough for `n_tasks` tasks of one family (6 templates a seed)."""
    return list(range(1000, 1000 + -(-n_tasks // 6)))


def ours(server: AgentServer, tmp: Path, n: int, tag: str) -> tuple[float, float]:
    from peb_core import load_families, run_system
    from peb_core.systems import AgentSystem

    spec = load_families()[FAMILY]
    system = AgentSystem(
        model="openai/scripted",
        families=[spec],
        api_base=server.url,
        timeout_s=30.0,
        retries=0,
        cache_folder=tmp / f"cache-{tag}",
    )
    before = server.requests()

    def run() -> None:
        manifest = run_system(
            system, [spec], tmp / f"ours-{tag}", seeds=_seeds(n), tier="agent", limit=n,
            concurrency=1,
        )  # fmt: skip
        assert manifest.counts.ok == n, manifest.counts

    timed = _timed(run)
    assert server.requests() - before == n * STEPS
    return timed


def inspect_task(n: int) -> Any:
    """An inspect task of `n` agent-tier samples whose solver is `react()` over our sessions:
    the sample's input is our agent start messages; the tools call the task's session."""
    from inspect_ai import Task as InspectTask
    from inspect_ai.agent import AgentSubmit, as_solver, react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.solver import Generate, Solver, TaskState, solver
    from inspect_ai.tool import ToolDef

    from peb_core import generate_tasks, load_families
    from peb_core.systems import get_protocol
    from peb_core.tasks import view_for

    spec = load_families()[FAMILY]
    tasks = {t.task_id: t for t in generate_tasks([spec], _seeds(n), tier="agent")[:n]}
    start = get_protocol("structured_gap@1").agent
    assert start is not None

    def sample(task_id: str) -> Sample:
        system, user = start(view_for("agent", tasks[task_id], spec).start)
        messages = [
            ChatMessageSystem(content=system["content"]),
            ChatMessageUser(content=user["content"]),
        ]
        return Sample(id=task_id, input=messages)  # type: ignore[arg-type]

    @solver
    def over_sessions() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            session = view_for("agent", tasks[str(state.sample_id)], spec).session("silent")

            async def search(query: str, k: int = 10) -> str:
                """Search the documents you may access.

                Args:
                    query: what to look for, in words
                    k: how many hits at most
                """
                return str(session.call("search", json.dumps({"query": query, "k": k})).content)

            async def open_document(doc_id: str) -> str:
                """Open a document by its id and read all of it.

                Args:
                    doc_id: the id of a document, from a search hit
                """
                return str(session.call("open", json.dumps({"doc_id": doc_id})).content)

            async def submit(response: dict[str, Any]) -> str:
                """Submit your final response; this ends the episode.

                Args:
                    response: the response object
                """
                session.call("submit", json.dumps({"response": response}))
                return json.dumps(response)

            agent = react(
                prompt=None,
                tools=[ToolDef(search, name="search"), ToolDef(open_document, name="open")],
                submit=AgentSubmit(tool=ToolDef(submit, name="submit"), answer_only=True),
            )
            return await as_solver(agent)(state, generate)

        return solve

    return InspectTask(dataset=[sample(t) for t in tasks], solver=over_sessions())


def theirs(server: AgentServer, tmp: Path, n: int, tag: str) -> tuple[float, float]:
    from inspect_ai import eval as inspect_eval

    task = inspect_task(n)
    before = server.requests()

    def run() -> None:
        (log,) = inspect_eval(
            task,
            model="openai-api/scripted/scripted",
            model_base_url=server.url,
            log_dir=str(tmp / f"inspect-{tag}"),
            display="none",
            max_samples=1,
            max_connections=1,
        )
        assert log.status == "success", log.error

    timed = _timed(run)
    sent = server.requests() - before
    assert sent == n * STEPS, sent
    return timed


def bench_steps(tmp: Path, episodes: int, rounds: int) -> bool:
    """Each harness at `episodes` and a tenth of them, the two harnesses alternated within each
    of `rounds` rounds (the machine's load moves both alike); the median marginal cost."""
    os.environ.setdefault("SCRIPTED_API_KEY", "unused")
    os.environ["INSPECT_LOG_DIR"] = str(tmp / "inspect-logs")
    few = max(1, episodes // 10)
    steps = (episodes - few) * STEPS
    harnesses = {"ours": ours, "inspect react()": theirs}
    marginal: dict[str, list[tuple[float, float]]] = {name: [] for name in harnesses}
    server = AgentServer()
    try:
        ours(server, tmp, 2, "warm")  # not timed: clients built, lazy modules loaded
        theirs(server, tmp, 2, "warm")
        for i in range(rounds):
            timed = {
                (name, n): harness(server, tmp, n, f"{i}-{n}")
                for n in (few, episodes)
                for name, harness in harnesses.items()
            }
            for name in harnesses:
                (wall_s, cpu_s), (wall_l, cpu_l) = timed[name, few], timed[name, episodes]
                marginal[name].append(((wall_l - wall_s) / steps, (cpu_l - cpu_s) / steps))
    finally:
        server.stop()
    results = {
        name: tuple(float(statistics.median(v)) for v in zip(*m, strict=True))
        for name, m in marginal.items()
    }
    print(
        f"\n1. per step: {episodes} and {few} episodes of {STEPS} steps, one at a time; median "
        f"of {rounds} alternated rounds"
    )
    print(f"{'harness':<18} {'wall ms/step':>12} {'cpu ms/step':>12}")
    for name, (wall, cpu) in results.items():
        print(f"{name:<18} {wall * 1000:>12.2f} {cpu * 1000:>12.2f}")
    (wall_a, cpu_a), (wall_b, cpu_b) = results.values()
    ratios = wall_a / wall_b, cpu_a / cpu_b
    met = all(r <= GOAL_STEP_RATIO for r in ratios)
    for name, m in marginal.items():
        print(f"  {name}, each round (wall, cpu ms/step): "
              + ", ".join(f"({w * 1000:.1f}, {c * 1000:.1f})" for w, c in m))  # fmt: skip
    print(
        f"ratio ours / inspect: wall {ratios[0]:.2f}, cpu {ratios[1]:.2f}; goal <= "
        f"{GOAL_STEP_RATIO}: {'met' if met else 'MISSED'}"
    )
    return met


def _process(args: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of `python -m peb_core ARGS` as a whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "peb_core", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0, args
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def bench_scale(tmp: Path, episodes: int, rounds: int) -> bool:
    """The agent run and the one-shot run, alternated `rounds` times (the machine's load moves
    both alike), each with a fresh cache and run folder; the median of each."""
    server = AgentServer()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = ["--api-base", server.url, "--concurrency", str(CONCURRENCY), "--timeout", "60"]
    n_one_shot = episodes * STEPS
    runs = {
        f"{episodes:,} episodes x {STEPS} steps": [
            "run", "--model", "agent:openai/scripted", "--tier", "agent", "--family", FAMILY,
            "--seeds", f"1000-{1000 + -(-episodes // 6) - 1}", "--limit", str(episodes),
            *common,
        ],
        f"{n_one_shot:,} one-shot tasks": [
            "run", "--model", "openai/scripted",
            "--seeds", f"1000-{1000 + -(-n_one_shot // 42) - 1}", "--limit", str(n_one_shot),
            *common,
        ],
    }  # fmt: skip
    measured: dict[str, list[tuple[float, float, float, float, float]]] = {n: [] for n in runs}
    try:
        for i in range(rounds):
            for j, (name, args) in enumerate(runs.items()):
                folder = tmp / f"scale-{i}-{j}"
                run_env = {**env, "PEB_CACHE_DIR": str(folder / "cache")}
                before, server_cpu = server.requests(), server.cpu()
                wall, cpu, rss = _process([*args, "--out", str(folder / "run")], run_env)
                # Two agent tasks may open alike (the same drawn names and contract order): the
                # first step of the second is then served from the run's cache.
                sent = server.requests() - before
                measured[name].append((wall, cpu, rss, server.cpu() - server_cpu, sent))
    finally:
        server.stop()
    median: dict[str, list[float]] = {
        name: [float(statistics.median(v)) for v in zip(*m, strict=True)]
        for name, m in measured.items()
    }
    (agent, shot) = median.values()
    ratio, cpu_ratio = agent[0] / shot[0], agent[1] / shot[1]
    met = bool(ratio <= GOAL_SCALE_RATIO)
    print(f"\n2. scale: {n_one_shot:,} requests each, concurrency {CONCURRENCY}, whole processes, "
          f"median of {rounds} alternated rounds")  # fmt: skip
    print(f"{'run':<30} {'wall s':>8} {'cpu s':>7} {'requests':>9} {'req/s':>7} "
          f"{'peak RSS MiB':>13} {'server cpu s':>13}  (each round's wall)")  # fmt: skip
    for name, (wall, cpu, rss, served, requests) in median.items():
        walls = ", ".join(f"{m[0]:.1f}" for m in measured[name])
        print(f"{name:<30} {wall:>8.2f} {cpu:>7.2f} {requests:>9.0f} {requests / wall:>7.0f} "
              f"{rss:>13.0f} {served:>13.2f}  ({walls})")  # fmt: skip
    print(f"ratio agent / one-shot: wall {ratio:.2f} (goal <= {GOAL_SCALE_RATIO}: "
          f"{'met' if met else 'MISSED'}), client cpu {cpu_ratio:.2f}")  # fmt: skip
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40, help="episodes for the per-step part")
    parser.add_argument("--scale", type=int, default=1000, help="episodes for the scale part")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds of each part")
    parser.add_argument("--skip-steps", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    met = True
    with tempfile.TemporaryDirectory(prefix="peb_bench_agent_") as folder:
        if not args.skip_steps:
            met &= bench_steps(Path(folder), args.episodes, args.rounds)
        if not args.skip_scale:
            met &= bench_scale(Path(folder), args.scale, args.rounds)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
