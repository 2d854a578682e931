"""The `peb` command line. Each command group is a module (`_tasks`, `_run`, `_results`,
`_read`, `_audit`, `_mcp`) that adds its subcommands to the parser; the run options are derived
from the run declaration (`runs.RunSpec`, through `frontends._argv`); bad input gets one line on
stderr and exit status 2."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import NoReturn, TextIO

from ..._extensions import ExtensionError, load_extensions
from ..._warn import PebWarning
from ...runs import RunError, RunSpecError
from ...systems import LocalModelError, SystemSpecError, release_held
from ...tasks import ScenarioError
from .._argv import Parser, UsageError, one_line
from . import _audit, _mcp, _read, _results, _run, _tasks

__all__ = ["COMMANDS", "build_parser", "main", "run"]

COMMANDS = (_tasks, _run, _results, _read, _audit, _mcp)
"""The modules of command groups, in the order `peb --help` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="peb", description="partial-evidence-bench: tasks, runs and scores.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for commands in COMMANDS:
        commands.add_commands(sub)
    return parser


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    if issubclass(category, PebWarning):
        print(f"peb: warning: {one_line(str(message))}", file=sys.stderr)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


_SHOW_WARNING = warnings.showwarning


STOPS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""Signals that stop a command as Ctrl-C does (a run then closes its manifest `interrupted`,
keeping what it recorded), instead of ending the process where it stands."""


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """A stop handled as SIGINT is at this moment: inside `asyncio.run`, its runner cancels
    the main task (which then closes what it holds) before raising KeyboardInterrupt; outside,
    KeyboardInterrupt is raised where the program stands."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        signal.default_int_handler(signal.SIGINT, frame)


@contextlib.contextmanager
def _stopped_as_interrupts() -> Iterator[None]:
    """While the body runs (in the main thread), `STOPS` are handled as Ctrl-C (`_as_ctrl_c`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _as_ctrl_c) for sig in STOPS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command, the installed extensions loaded first (`load_extensions`); its exit
    status: 0, 1 (`peb run` with tasks in error), 2 (bad input or an extension that fails to
    load, one line on stderr), 130 (interrupted: Ctrl-C, or one of `STOPS`). However it ends, the
    embedded model servers it still holds are let go of (a server started for its runs
    stops)."""
    with warnings.catch_warnings(), _stopped_as_interrupts():
        warnings.simplefilter("always", PebWarning)
        warnings.showwarning = _show_warning
        try:
            load_extensions()  # before the parser reads the registries
            args = build_parser().parse_args(argv)
            return int(args.func(args) or 0)
        except (
            ExtensionError,
            UsageError,
            ScenarioError,
            RunError,
            RunSpecError,
            LocalModelError,
            SystemSpecError,
        ) as exc:
            print(f"peb: error: {one_line(str(exc))}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(
                "peb: interrupted (a run keeps what it recorded; the same command resumes it)",
                file=sys.stderr,
            )
            return 130
        except BrokenPipeError:
            return 0
        finally:
            release_held()


def run() -> NoReturn:
    """The `peb` command: `main` on the command line, then an immediate exit. Everything a
    command writes is closed (or committed, for the reply cache) before `main` returns, so the
    interpreter's teardown of every imported module (most of a second once litellm is loaded)
    buys nothing and is skipped."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
