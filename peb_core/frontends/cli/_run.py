"""`peb run` (a system over tasks into a run folder) and `peb local-model` (the embedded models'
servers)."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ...access import DEFAULT_DISCLOSURE, DISCLOSURES
from ...runs import run_status, run_system
from ...systems import (
    AGENT_PREFIX,
    BASELINES,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    DEFAULT_TOKEN_BUDGET,
    REGISTRY,
    LocalModel,
    LocalModelError,
    ResponseRecord,
    budget_problem,
    build_system,
    get_local,
    local_status,
    serve_local,
    stop_local,
)
from ._common import (
    COUNT,
    PORT,
    REPEATS,
    URL,
    Parser,
    UsageError,
    add_selection,
    checked,
    corpus_size_arg,
    path_arg,
    selection_arg,
)


def _local(name: str) -> LocalModel:
    try:
        return get_local(name)
    except LocalModelError as exc:
        raise UsageError(str(exc)) from None


def cmd_local_model(args: argparse.Namespace) -> None:
    model = _local(args.name)
    if args.action == "serve":
        pid, port = serve_local(model, args.port)
        print(f"local/{model.name}: serving at http://127.0.0.1:{port}/v1 (pid {pid})")
    elif args.action == "status":
        running = local_status(model)
        print(
            f"local/{model.name}: "
            + (
                f"running at http://127.0.0.1:{running[1]}/v1 (pid {running[0]})"
                if running
                else "stopped"
            )
        )
    else:
        print(f"local/{model.name}: {'stopped' if stop_local(model) else 'was not running'}")


@dataclass
class ProgressLine:
    """`peb run`'s progress (a `Progress`): after each record, one line on `stream` with the
    tasks done, errors, tokens and cost so far, rewritten in place on a terminal. Running
    totals, so a record costs the same however many came before it; the cost is unknown from
    the first reply without a price on."""

    stream: TextIO
    unit: str = "tasks"
    """What is counted: `replies` for a run with repeats (each task K times)."""
    errors: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    _terminal: bool = field(init=False)

    def __post_init__(self) -> None:
        self._terminal = self.stream.isatty()

    def __call__(self, record: ResponseRecord, done: int, total: int) -> None:
        usage = record.usage
        self.errors += record.status == "error"
        self.tokens += (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
        if self.cost_usd is not None:
            self.cost_usd = None if usage.cost_usd is None else self.cost_usd + usage.cost_usd
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        end = "\n" if done == total or not self._terminal else ""
        self.stream.write(
            f"\r{done}/{total} {self.unit}, {self.errors} errors, {self.tokens} tokens, "
            f"cost {cost}{end}"
        )
        self.stream.flush()


def cmd_run(args: argparse.Namespace) -> int:
    """Exit status 1 when any task of the run ended in error (after naming the commonest
    reasons), else 0."""
    specs, seeds, distractors = selection_arg(args, args.limit)
    corpus_size = corpus_size_arg(args)
    if args.system is not None and args.system not in BASELINES:
        raise UsageError(f"unknown system {args.system!r}; valid: {', '.join(BASELINES)}")
    name = args.model if args.model is not None else args.system
    budgets = {"--max-steps": args.max_steps, "--token-budget": args.token_budget}
    given = [option for option, value in budgets.items() if value is not None]
    problem = budget_problem([name], given)
    if problem:
        raise UsageError(problem)
    budget = DEFAULT_TOKEN_BUDGET if args.token_budget is None else args.token_budget
    system = build_system(
        name,
        specs,
        protocol=args.protocol,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        api_base=args.api_base,
        timeout_s=args.timeout,
        local_port=args.local_port,
        disclosure=args.disclosure,
        max_steps=args.max_steps or DEFAULT_MAX_STEPS,
        token_budget=budget or None,
        delegate_system=args.delegate_system,
        use_cache=args.cache,
    )
    out = Path(args.out)
    manifest = run_system(
        system,
        specs,
        out,
        seeds=seeds,
        concurrency=args.concurrency,
        progress=ProgressLine(sys.stderr, "replies" if args.repeats > 1 else "tasks"),
        limit=args.limit,
        distractors=distractors,
        tier=args.tier,
        corpus_size=corpus_size,
        retry_errors=args.retry_errors,
        repeats=args.repeats,
    )
    c = manifest.counts
    episodes = f", {c.no_submit} without a submit" if c.no_submit else ""
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


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`run` and `local-model`."""
    p = sub.add_parser("run", help="run a system over tasks into a run folder")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--system", help=f"one of: {', '.join(BASELINES)}")
    who.add_argument(
        "--model",
        help="a litellm model string, e.g. openai/NAME with --api-base, local/smollm2, or "
        f"{AGENT_PREFIX}<model> to run it as a tool-calling agent (--tier agent)",
    )
    add_selection(p)
    p.add_argument("--out", required=True, type=path_arg("folder"), metavar="DIR")
    p.add_argument("--protocol", default=DEFAULT_PROTOCOL, help="prompt protocol (--model)")
    p.add_argument(
        "--disclosure",
        choices=DISCLOSURES,
        default=DEFAULT_DISCLOSURE,
        help="what the access layer tells an agent of what it withheld (agent systems): "
        + "; ".join(f"{d.name}: {d.description}" for d in DISCLOSURES.values())
        + f" (default: {DEFAULT_DISCLOSURE})",
    )
    p.add_argument("--concurrency", type=COUNT, default=8, metavar="N")
    p.add_argument(
        "--temperature",
        type=checked(float, lambda t: math.isfinite(t) and t >= 0, "a finite number >= 0"),
        default=DEFAULT_TEMPERATURE,
        metavar="T",
    )
    p.add_argument(
        "--max-tokens", type=COUNT, default=DEFAULT_MAX_TOKENS, metavar="N", help="per request"
    )
    p.add_argument(
        "--max-steps",
        type=COUNT,
        metavar="N",
        help=f"an agent's model requests per episode (default: {DEFAULT_MAX_STEPS})",
    )
    p.add_argument(
        "--token-budget",
        type=checked(int, lambda n: n >= 0, "an integer >= 0"),
        metavar="N",
        help="an agent's prompt plus completion tokens per episode; 0: none "
        f"(default: {DEFAULT_TOKEN_BUDGET:,})",
    )
    p.add_argument(
        "--delegate-system",
        metavar="SYSTEM",
        help="the agent system that runs an agent's handoffs (delegate, --tier delegation): an "
        f"agent baseline or {AGENT_PREFIX}<model>, built with this run's settings "
        "(default: the agent itself)",
    )
    p.add_argument(
        "--api-base", type=URL, metavar="URL", help="an OpenAI-compatible server (--model)"
    )
    p.add_argument(
        "--timeout",
        type=checked(float, lambda t: math.isfinite(t) and t > 0, "a finite number > 0"),
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help="per request",
    )
    p.add_argument("--limit", type=COUNT, metavar="N", help="only the first N tasks (smoke runs)")
    p.add_argument(
        "--repeats",
        type=REPEATS,
        default=1,
        metavar="K",
        help="answer each task K times (seeded per repeat where the provider takes a seed); "
        "scorecards add unsafe_any@K and consistent@K (default: 1)",
    )
    p.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="neither read nor write the reply cache for this run (model systems)",
    )
    p.add_argument(
        "--no-retry-errors",
        dest="retry_errors",
        action="store_false",
        help="on resume, keep tasks that ended in error as they are (default: run them again)",
    )
    p.add_argument(
        "--local-port", type=PORT, metavar="PORT", help="for local/<name> (default: its own)"
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("local-model", help="serve, inspect or stop an embedded model")
    p.add_argument("action", choices=["serve", "status", "stop"])
    p.add_argument("name", nargs="?", default="smollm2", help=f"one of: {', '.join(REGISTRY)}")
    p.add_argument("--port", type=PORT, help="default: the model's own")
    p.set_defaults(func=cmd_local_model)
