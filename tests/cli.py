"""`peb` in process: the command line's `main` with what it prints captured, for tests of what a
command prints and returns. Tests of how the process ends (a traceback, a signal, a lock held by
another process, resource limits) run the real command in a subprocess instead."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from peb_core.frontends.cli import main

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def peb(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`peb ARGS` run in this process from the repository's root, as a finished process."""
    out, err = io.StringIO(), io.StringIO()
    with (
        _environment(env or {}),
        contextlib.chdir(ROOT),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(args))
    return subprocess.CompletedProcess(["peb", *args], code, out.getvalue(), err.getvalue())
