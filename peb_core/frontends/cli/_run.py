"""`peb run` (a system over tasks into a run folder) and `peb local-model` (the embedded models'
servers)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ...runs import (
    EpisodeStep,
    InFlight,
    Progress,
    RunError,
    RunSpecError,
    SweepError,
    naming,
    options,
    plan_run,
    plan_sweep,
    read_spec,
    run,
    run_status,
    run_sweep_async,
)
from ...systems import (
    AGENT_PREFIX,
    BASELINES,
    CHAT_BASELINES,
    LocalModel,
    LocalModelError,
    ResponseRecord,
    get_server,
    local_servers,
    serve_local,
    status_line,
    stop_local,
)
from .._argv import PORT, Parser, UsageError, add_options, given, path_arg


def _servers(name: str | None) -> list[LocalModel]:
    """The server `name` names, or every server (`local_servers`) without a name."""
    if name is None:
        return local_servers()
    try:
        return [get_server(name)]
    except LocalModelError as exc:
        raise UsageError(str(exc)) from None


def cmd_local_model(args: argparse.Namespace) -> None:
    if args.action == "serve":
        server = _servers(args.name or "smollm2")[0]
        pid, port = serve_local(server, args.port)
        print(f"local/{server.name}: serving at http://127.0.0.1:{port}/v1 (pid {pid})")
        return
    if args.port is not None:
        raise UsageError(f"--port: applies to serve, not {args.action}")
    for server in _servers(args.name):
        if args.action == "status":
            print(status_line(server))
        else:
            print(f"local/{server.name}: {'stopped' if stop_local(server) else 'was not running'}")


@dataclass
class ProgressLine:
    """`peb run`'s progress (a `Progress`, and its `step` a `Steps`): one line on `stream` with
    the tasks done, errors, tokens and cost so far, and the step each agent's episode in flight
    is at (`(episode 3: step 5/24)`, the first three by episode), rewritten in place after each
    record and step on a terminal; elsewhere (a log) written again only when another whole
    percent of the run's work is done (an episode in flight counting the share of its steps
    made), and at its end, so a run of millions of replies, or of three long episodes, writes
    at most about a hundred lines. Running totals, so a record costs the same however many came
    before it; the cost is unknown from the first reply without a price on."""

    stream: TextIO
    unit: str = "tasks"
    """What is counted: `replies` for a run with repeats (each task K times)."""
    errors: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    in_flight: InFlight = field(default_factory=InFlight)
    _terminal: bool = field(init=False)
    _percent: int = field(default=-1, init=False)
    """The whole percent of the run's work last written (off a terminal)."""
    _width: int = field(default=0, init=False)
    """The longest line written in place (a shorter one is padded over it)."""

    def __post_init__(self) -> None:
        self._terminal = self.stream.isatty()

    def __call__(self, record: ResponseRecord, done: int, total: int) -> None:
        usage = record.usage
        self.errors += record.status == "error"
        self.tokens += (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
        if self.cost_usd is not None:
            self.cost_usd = None if usage.cost_usd is None else self.cost_usd + usage.cost_usd
        self.in_flight.ended(record)
        self._write(done, total)

    def step(self, event: EpisodeStep) -> None:
        self.in_flight.started(event)
        self._write(event.done, event.total)

    def _write(self, done: int, total: int) -> None:
        percent = int((done + self.in_flight.made()) * 100 // max(total, 1))
        if not self._terminal and percent <= self._percent and done != total:
            return
        self._percent = percent
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        line = f"{done}/{total} {self.unit}, {self.errors} errors, {self.tokens} tokens, "
        line += f"cost {cost}"
        steps = self.in_flight.text()
        if steps:
            line += f" ({steps})"
        if self._terminal:
            self._width = max(self._width, len(line))
            line = "\r" + line.ljust(self._width)
        self.stream.write(line + ("\n" if done == total or not self._terminal else ""))
        self.stream.flush()


def run_options() -> tuple[str, ...]:
    """`peb run`'s options besides the system (`--system`/`--model`) and `--out`: every run
    option the CLI offers."""
    return tuple(name for name in options("cli") if name != "system")


def cmd_run(args: argparse.Namespace) -> int:
    """Exit status 1 when any task of the run ended in error (after naming the commonest
    reasons), else 0."""
    names = naming("cli")
    names["system"] = "--model" if args.model is not None else "--system"
    if args.system is not None and args.system not in (*BASELINES, *CHAT_BASELINES):
        valid = ", ".join((*BASELINES, *CHAT_BASELINES))
        raise UsageError(f"unknown system {args.system!r}; valid: {valid}")
    system = args.model if args.model is not None else args.system
    try:
        spec = read_spec(given(args, run_options()), names, system=system)
        plan = plan_run(spec, names, frontend="cli")
    except RunSpecError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.out)
    progress = ProgressLine(sys.stderr, "replies" if spec.repeats > 1 else "tasks")
    manifest = run(plan, out, progress=progress, steps=progress.step)
    c = manifest.counts
    episodes = f", {c.escalated} escalated" if c.escalated else ""
    episodes += f", {c.no_submit} without a submit" if c.no_submit else ""
    times = f" x {manifest.repeats} repeats" if manifest.repeats > 1 else ""
    print(
        f"{args.out}: {c.n_tasks} tasks{times} ({c.ok} replies{episodes}, {c.error} errors); "
        "peb score reads them"
    )
    if not c.error:
        return 0
    what = "replies" if manifest.repeats > 1 else "tasks"
    print(
        f"peb: {c.error} of {c.n_tasks * manifest.repeats} {what} ended in error (the same "
        "command retries them); the commonest reasons:",
        file=sys.stderr,
    )
    for reason, count in run_status(out).reasons:
        print(f"peb:   {count} x {reason}", file=sys.stderr)
    return 1


@dataclass
class SweepProgress:
    """`peb sweep`'s progress: one line over every run of the sweep (each run's replies due,
    and those recorded so far, earlier ones included), as `ProgressLine` writes it."""

    line: ProgressLine
    total: int
    done: dict[Path, int] = field(default_factory=dict)

    def of(self, folder: Path) -> Progress:
        def told(record: ResponseRecord, done: int, total: int) -> None:
            self.done[folder] = done
            self.line(record, sum(self.done.values()), self.total)

        return told


def cmd_sweep(args: argparse.Namespace) -> int:
    """Exit status 1 when any run of the sweep ended with errors or could not be made, else 0."""
    path = Path(args.file)
    out = Path(args.out) if args.out else path.with_suffix("")
    try:
        sweep = plan_sweep(path, out)
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    total = sum(plan.n_replies for plan, _ in sweep.runs)
    print(
        f"peb: sweep of {len(sweep.runs)} runs ({total:,} replies) into {out}, at most "
        f"{sweep.concurrency} tasks at once"
        + "".join(f", {p} {n}" for p, n in sweep.limits.items()),
        file=sys.stderr,
    )
    progress = SweepProgress(ProgressLine(sys.stderr, "replies"), total)
    ended = asyncio.run(run_sweep_async(sweep, out, progress=progress.of))
    clean = True
    for folder, outcome in ended:
        if isinstance(outcome, RunError):
            print(f"{folder}: not run: {outcome}", file=sys.stderr)
            clean = False
            continue
        status = run_status(folder)
        clean = clean and status.clean
        print(f"{folder}: {status.summary()}")
    listed = len(sweep.listing(out))
    more = f" ({listed} with those of earlier sweeps here)" if listed > len(ended) else ""
    print(f"{out}: {len(ended)} runs{more}; peb score {out} reads them as one table")
    return 0 if clean else 1


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`run`, `sweep` and `local-model`."""
    p = sub.add_parser("run", help="run a system over tasks into a run folder")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--system", help=f"one of: {', '.join(BASELINES)}")
    who.add_argument(
        "--model",
        help="a litellm model string, e.g. openai/NAME with --api-base, local/smollm2, or "
        f"{AGENT_PREFIX}<model> to run it as a tool-calling agent (--tier agent)",
    )
    p.add_argument("--out", required=True, type=path_arg("folder"), metavar="DIR")
    add_options(p, "cli", run_options())
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "sweep",
        help="a matrix of runs declared in one TOML file (any run option crossed with any other), "
        "made into one folder of runs under one concurrency budget; the same command resumes it",
    )
    p.add_argument("file", type=path_arg("file"), metavar="FILE.toml")
    p.add_argument(
        "--out",
        type=path_arg("folder"),
        metavar="DIR",
        help="the sweep's folder (default: the file's path without .toml)",
    )
    p.set_defaults(func=cmd_sweep)

    servers = ", ".join(server.name for server in local_servers())
    p = sub.add_parser(
        "local-model",
        help="serve, list or stop the embedded models' llama.cpp servers (a server a run "
        "started stops when the last run holding it ends; one served here is kept until "
        "stopped)",
    )
    p.add_argument("action", choices=["serve", "status", "stop"])
    p.add_argument(
        "name",
        nargs="?",
        help=f"one of: {servers} (NAME+tools: the server agents use); default: every server "
        "for status and stop, smollm2 for serve",
    )
    p.add_argument("--port", type=PORT, help="where serve starts it (default: the model's own)")
    p.set_defaults(func=cmd_local_model)
