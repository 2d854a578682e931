"""`peb` for tests, two ways.

`peb`: the command line's `main` in this process, with what it prints captured, for tests of
what a command prints and returns.

`peb_process`: the real command, `python -m peb_core`, as a process of its own, for tests of how
the process ends (its exit status, a traceback or none, resource limits). It is forked from a
server that has imported the CLI once (`_serve`), so a call costs a fork instead of an
interpreter's start and its imports; the child then runs `python -m peb_core`'s own code, and
the interpreter ends it as it would end that command. Tests of a process started from scratch
(import-time behaviour, a signal sent to a running command, a lock held by another process)
start `PEB` themselves."""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import os
import pickle
import resource
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from peb_core.frontends.cli import main

ROOT = Path(__file__).resolve().parent.parent
PEB = [sys.executable, "-m", "peb_core"]
"""The `peb` command as a fresh interpreter runs it."""

Limits = Mapping[int, tuple[int, int]]
"""Resource limits for the command's process: `resource.RLIMIT_*` -> (soft, hard)."""


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


def peb_process(
    *args: str | bytes,
    env: Mapping[str, str | None] | None = None,
    limits: Limits | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """`python -m peb_core ARGS` from the repository's root, with this process's environment
    and `env` over it (None unsets a variable), under `limits`, with nothing on stdin and its
    output captured as `subprocess.run(text=True)` captures it; `subprocess.TimeoutExpired`
    after `timeout` seconds (the process killed).
    Forked from the server, unless `env` changes what an interpreter reads as it starts
    (`_READ_AT_START`): then a fresh interpreter runs it."""
    command = [*PEB, *args]
    full = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
    server = _server()
    if any(
        full.get(name) != server.environ.get(name)
        for name in full.keys() | server.environ.keys()
        if name.startswith(_READ_AT_START)
    ):
        return subprocess.run(
            command,
            cwd=ROOT,
            env=full,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=functools.partial(_limit, limits) if limits else None,
        )
    ended = server.run(args, full, limits or {}, timeout)
    if ended is None:
        raise subprocess.TimeoutExpired(command, timeout)
    code, out, err = ended
    return subprocess.CompletedProcess(command, code, _text(out), _text(err))


_READ_AT_START = ("PYTHON", "LC_", "LANG")
"""Prefixes of the environment variables an interpreter reads as it starts (its path, flags and
hash seed; the locale its standard streams encode in), which a forked process cannot change."""


def _limit(limits: Limits) -> None:
    for which, limit in limits.items():
        resource.setrlimit(which, limit)


def _text(data: bytes) -> str:
    """Output as `subprocess.run(text=True)` reads it: the locale's encoding, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="locale").read()


_SERVE = """\
import os, sys
started = dict(os.environ)
sys.path[0] = os.getcwd()  # the repository's root, first on the path as `python -m` puts it
import peb_core.frontends.cli
sys.path.insert(1, sys.argv[2])
import cli
del sys.path[1]
cli._serve(int(sys.argv[1]), started)
import runpy
runpy.run_module("peb_core", run_name="__main__", alter_sys=True)
"""
"""The fork server's program: the CLI imported as `python -m peb_core` imports it, then this
module, then `_serve`, which returns only in a forked child, to run `peb` as `python -m peb_core`
runs it."""

_INT = struct.Struct("q")


def _serve(fd: int, started: Mapping[str, str]) -> None:
    """Serve `_Server.run`'s requests on the socket `fd` until the tests' process closes it, then
    exit. For each, fork: the child takes the request's stdout and stderr, arguments,
    environment (with what the imports set in it, `started` being the environment before them)
    and limits, and returns; the server sends the child's pid, then its exit status."""
    imported = {name: value for name, value in os.environ.items() if started.get(name) != value}
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is for the children
    sock = socket.socket(fileno=fd)
    while True:
        request, fds, _, _ = socket.recv_fds(sock, 1 << 20, 2)
        if not request:
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            sock.close()
            signal.signal(signal.SIGINT, signal.default_int_handler)
            for target, received in enumerate(fds, start=1):
                os.dup2(received, target)
                os.close(received)
            args, env, limits = pickle.loads(request)
            os.environ.clear()
            os.environ.update({**imported, **env})
            sys.argv[1:] = map(os.fsdecode, args)
            _limit(limits)
            return
        for received in fds:
            os.close(received)
        sock.send(_INT.pack(pid))
        sock.send(_INT.pack(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))


class _Server:
    """A fork server (`_SERVE`) started from the repository's root with this process's
    environment as it was then (`environ`); one request at a time."""

    def __init__(self) -> None:
        self.environ = dict(os.environ)
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _SERVE, str(theirs.fileno()), str(Path(__file__).parent)],
                cwd=ROOT,
                env=self.environ,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=[theirs.fileno()],
            )
        self._lock = threading.Lock()
        atexit.register(self.close)

    def close(self) -> None:
        self._sock.close()
        self._process.wait()

    def run(
        self, args: Sequence[str | bytes], env: Mapping[str, str], limits: Limits, timeout: float
    ) -> tuple[int, bytes, bytes] | None:
        """One forked `peb`: its exit status, stdout and stderr; None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        (out, out_w), (err, err_w) = os.pipe(), os.pipe()
        request = pickle.dumps((list(args), dict(env), dict(limits)))
        with self._lock:
            socket.send_fds(self._sock, [request], [out_w, err_w])
            os.close(out_w)
            os.close(err_w)
            try:
                return self._wait(self._receive(), out, err, deadline)
            finally:
                os.close(out)
                os.close(err)

    def _wait(
        self, pid: int, out: int, err: int, deadline: float
    ) -> tuple[int, bytes, bytes] | None:
        """Child `pid`'s exit status (the server's next message), and its stdout and stderr read
        from the pipes `out` and `err` to their end; None past `deadline` (the child killed)."""
        output = {out: bytearray(), err: bytearray()}
        code: int | None = None
        with selectors.DefaultSelector() as selector:
            for fd in output:
                selector.register(fd, selectors.EVENT_READ)
            selector.register(self._sock, selectors.EVENT_READ)
            while selector.get_map():
                ready = selector.select(deadline - time.monotonic())
                if not ready:
                    if code is None:
                        with contextlib.suppress(ProcessLookupError):  # just ended
                            os.kill(pid, signal.SIGKILL)
                        self._receive()
                    return None
                for key, _ in ready:
                    if key.fileobj is self._sock:
                        code = self._receive()
                        selector.unregister(self._sock)
                    elif chunk := os.read(key.fd, 1 << 16):
                        output[key.fd] += chunk
                    else:
                        selector.unregister(key.fd)
        assert code is not None
        return code, bytes(output[out]), bytes(output[err])

    def _receive(self) -> int:
        data = self._sock.recv(_INT.size)
        if not data:
            raise RuntimeError(f"the peb fork server ended (status {self._process.poll()})")
        value: int = _INT.unpack(data)[0]
        return value


@functools.cache
def _server() -> _Server:
    """This process's fork server, started on first use."""
    return _Server()
