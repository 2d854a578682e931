"""`peb mcp serve`: the agent tiers' tools served to any MCP client, its episodes recorded into a
run folder (`peb_core.frontends.mcp`; the `mcp` extra). Its run options are the run
declaration's (`runs.RunSpec`), as `peb run`'s are."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from pathlib import Path

from ...runs import RunSpecError, naming, options, plan_run, read_spec
from .._argv import PORT, Parser, UsageError, add_options, given, one_line, path_arg
from ..mcp import DEFAULT_PORT
from ._common import command_group, needs_extra

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


def cmd_mcp_serve(args: argparse.Namespace) -> int:
    with needs_extra("mcp", f"the mcp SDK is not installed; install the mcp extra: {MCP_EXTRA}"):
        from ..mcp.server import McpBench, serve
    names = naming("mcp")
    try:
        spec = read_spec(given(args, options("mcp")), names, frontend="mcp")
        plan = plan_run(spec, names, frontend="mcp")
    except RunSpecError as exc:
        raise UsageError(str(exc)) from None
    families = plan.selection.families
    if len(families) != 1:
        raise UsageError(
            f"--family: peb mcp serve serves one family (its submit tool takes the family's "
            f"response schema); got {len(families)}: pass --family F"
        )
    if args.transport == "stdio" and args.port is not None:
        raise UsageError("--port applies to --transport http only")
    port = args.port or DEFAULT_PORT
    if args.transport == "http":
        _free(port)
    bench = McpBench(Path(args.out), plan)

    def ready(where: str) -> None:
        for line in bench.warnings:
            print(f"peb: warning: {one_line(line)}", file=sys.stderr)
        print(
            f"peb: serving {len(bench.tasks)} tasks of {families[0].id} ({spec.disclosure}) "
            f"over {where} into {args.out}",
            file=sys.stderr,
            flush=True,
        )

    manifest = serve(bench, args.transport, port, ready)
    if manifest is None:
        print(f"{args.out}: no task was started; nothing recorded", file=sys.stderr)
        return 0
    c = manifest.counts
    due = f"{c.n_tasks} tasks" + (f" x {spec.repeats} repeats" if spec.repeats > 1 else "")
    print(
        f"{args.out}: {c.ok + c.escalated + c.no_submit + c.error} episodes of {due} recorded "
        f"({c.ok} submitted, "
        + (f"{c.escalated} escalated, " if c.escalated else "")
        + f"{c.no_submit} without a submit); peb score reads them",
        file=sys.stderr,
    )
    return 0


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`mcp serve`."""
    mcp = command_group(
        sub, "mcp", "serve the agent tiers' tools to any MCP client", metavar="serve"
    )
    s = mcp.add_parser(
        "serve",
        help="serve one family's agent tasks over MCP (stdio or streamable HTTP), recording "
        "every episode into a run folder",
    )
    s.add_argument("--out", required=True, type=path_arg("folder"), metavar="DIR")
    add_options(s, "mcp", options("mcp"))
    s.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    s.add_argument(
        "--port",
        type=PORT,
        metavar="PORT",
        help=f"for --transport http, on 127.0.0.1 (default: {DEFAULT_PORT})",
    )
    s.set_defaults(func=cmd_mcp_serve)
