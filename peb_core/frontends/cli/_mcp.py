"""`peb mcp serve`: the agent tier's tools served to any MCP client, its episodes recorded into a
run folder (`peb_core.frontends.mcp`; the `mcp` extra)."""

from __future__ import annotations

import argparse
import errno
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from ...access import DEFAULT_DISCLOSURE, DISCLOSURES
from ...systems import AGENT_PREFIX, BASELINES, MAX_REPEATS, SystemSpecError, build_system
from ...tasks import get_tier
from ._common import (
    COUNT,
    PORT,
    Parser,
    UsageError,
    add_selection,
    checked,
    corpus_size_arg,
    path_arg,
    selection_arg,
)

DEFAULT_PORT = 8765
DEFAULT_MCP_MAX_STEPS = 100
"""Tool calls an MCP episode may make without a submit (a step of an MCP episode is one tool
call: the client's model requests are not seen); the careful agent baseline makes at most 48
on the shipped families."""
MCP_EXTRA = "pip install 'partial-evidence-bench[mcp]'"


def _free(port: int) -> None:
    """A UsageError unless 127.0.0.1:`port` can be bound now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            why = "in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
            raise UsageError(f"--port: 127.0.0.1:{port} is {why}; choose another port") from None


def _delegate_system(args: argparse.Namespace, specs: list[Any]) -> Any:
    """`--delegate-system` built as `peb run` builds one (`systems.build_system`, under the
    served disclosure mode); None when not given (the server's default then plays handoffs)."""
    name = args.delegate_system
    if name is None:
        return None
    agents = [n for n, b in BASELINES.items() if getattr(b, "view", None) == "agent"]
    if name not in agents and not name.startswith(AGENT_PREFIX):
        raise UsageError(
            f"--delegate-system {name}: a sub-agent must be an agent system: an agent baseline "
            f"({', '.join(agents)}) or {AGENT_PREFIX}<litellm model>"
        )
    try:
        return build_system(name, specs, disclosure=args.disclosure)
    except SystemSpecError as exc:
        raise UsageError(f"--delegate-system {name}: {exc}") from None


def cmd_mcp_serve(args: argparse.Namespace) -> int:
    try:
        from ..mcp.server import McpBench, serve
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        raise UsageError(
            f"the mcp SDK is not installed; install the mcp extra: {MCP_EXTRA}"
        ) from None
    if get_tier(args.tier).corpus is None:
        raise UsageError(
            f"--tier: the {args.tier} tier has no tools to serve; choose a tier with corpora "
            "(agent)"
        )
    specs, seeds, distractors = selection_arg(args)
    if len(specs) != 1:
        raise UsageError(
            f"--family: peb mcp serve serves one family (its submit tool takes the family's "
            f"response schema); got {len(specs)}: pass --family F"
        )
    corpus_size = corpus_size_arg(args)
    delegate_system = _delegate_system(args, specs)
    if args.transport == "stdio" and args.port is not None:
        raise UsageError("--port applies to --transport http only")
    port = args.port or DEFAULT_PORT
    if args.transport == "http":
        _free(port)
    try:
        bench = McpBench(
            Path(args.out),
            specs[0],
            seeds,
            tier=args.tier,
            corpus_size=corpus_size,
            distractors=distractors,
            disclosure=args.disclosure,
            max_steps=args.max_steps or DEFAULT_MCP_MAX_STEPS,
            delegate_system=delegate_system,
            repeats=args.repeats,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def ready(where: str) -> None:
        for line in bench.warnings:
            print(f"peb: warning: {line}", file=sys.stderr)
        print(
            f"peb: serving {len(bench.tasks)} tasks of {specs[0].id} ({args.disclosure}) over "
            f"{where} into {args.out}",
            file=sys.stderr,
            flush=True,
        )

    # SIGTERM stops the server as Ctrl-C does: open episodes recorded, the manifest closed.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        manifest = serve(bench, args.transport, port, ready)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if manifest is None:
        print(f"{args.out}: no task was started; nothing recorded", file=sys.stderr)
        return 0
    c = manifest.counts
    due = f"{c.n_tasks} tasks" + (f" x {args.repeats} repeats" if args.repeats > 1 else "")
    print(
        f"{args.out}: {c.ok + c.no_submit + c.error} episodes of {due} recorded ({c.ok} "
        f"submitted, {c.no_submit} without a submit); peb score reads them",
        file=sys.stderr,
    )
    return 0


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`mcp serve`."""
    p = sub.add_parser("mcp", help="serve the agent tier's tools to any MCP client")
    mcp = p.add_subparsers(dest="mcp_command", metavar="serve", required=True, parser_class=Parser)
    s = mcp.add_parser(
        "serve",
        help="serve one family's agent tasks over MCP (stdio or streamable HTTP), recording "
        "every episode into a run folder",
    )
    add_selection(s, default_tier="agent")
    s.add_argument("--out", required=True, type=path_arg("folder"), metavar="DIR")
    s.add_argument(
        "--disclosure",
        choices=DISCLOSURES,
        default=DEFAULT_DISCLOSURE,
        help="what the access layer tells of what it withheld: "
        + "; ".join(f"{d.name}: {d.description}" for d in DISCLOSURES.values())
        + f" (default: {DEFAULT_DISCLOSURE})",
    )
    s.add_argument(
        "--max-steps",
        type=COUNT,
        metavar="N",
        help=f"tool calls an episode may make without a submit (default: {DEFAULT_MCP_MAX_STEPS})",
    )
    s.add_argument(
        "--delegate-system",
        metavar="SYSTEM",
        help="the peb agent system that plays the episode a delegate call hands off, in the "
        f"server (--tier delegation): an agent baseline or {AGENT_PREFIX}<model> "
        "(default: agent_fail_and_report, which reports its gap)",
    )
    s.add_argument(
        "--repeats",
        type=checked(int, lambda n: 1 <= n <= MAX_REPEATS, f"an integer from 1 to {MAX_REPEATS}"),
        default=1,
        metavar="K",
        help="episodes of each task to record: a task may be started K times, each recorded "
        "with its repeat index; scorecards add unsafe_any@K and consistent@K (default: 1)",
    )
    s.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    s.add_argument(
        "--port",
        type=PORT,
        metavar="PORT",
        help=f"for --transport http, on 127.0.0.1 (default: {DEFAULT_PORT})",
    )
    s.set_defaults(func=cmd_mcp_serve)
