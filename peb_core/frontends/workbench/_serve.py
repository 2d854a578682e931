"""Serving a notebook to this machine's browser only: `marimo run` on 127.0.0.1 with an access
token (in the URL it prints, as Jupyter does) and every HTTP request and WebSocket whose Host,
or Origin when sent, is not this server's local address refused with 403. So a page of another
site, even one whose name resolves to 127.0.0.1 (DNS rebinding), can neither read the workbench
nor press its buttons."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The names this machine's browser reaches the server by."""

TOKEN_ENV = "PEB_WORKBENCH_TOKEN"
"""An access token to serve with (default: a new random one each time)."""

DEFAULT_PORT = 2718


def local_hosts(port: int) -> frozenset[str]:
    """The Host header values a local browser sends to `port`."""
    return frozenset(f"{name}:{port}" for name in LOCAL_NAMES)


def local_origins(port: int) -> frozenset[str]:
    """The Origin header values of the server's own pages at `port`."""
    return frozenset(f"http://{host}" for host in local_hosts(port))


class LocalOnly:
    """ASGI middleware: requests and WebSockets whose Host is not one of `local_hosts(port)`,
    or whose Origin (when sent) is not one of `local_origins(port)`, are refused with 403."""

    def __init__(self, app: Any, port: int) -> None:
        self.app = app
        self.hosts = local_hosts(port)
        self.origins = local_origins(port)

    def allowed(self, headers: Sequence[tuple[bytes, bytes]]) -> bool:
        seen = {k.lower(): v.decode("latin-1") for k, v in headers}
        origin = seen.get(b"origin")
        return seen.get(b"host") in self.hosts and (origin is None or origin in self.origins)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not self.allowed(scope["headers"]):
            if scope["type"] == "websocket":  # closing before accepting: a 403 to the handshake
                await send({"type": "websocket.close", "code": 1008})
                return
            body = b"refused: this workbench serves only this machine (Host or Origin not local)"
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def free_port(start: int = DEFAULT_PORT) -> int:
    """The first port from `start` that 127.0.0.1 can bind."""
    for port in range(start, start + 100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port from {start} to {start + 99} on 127.0.0.1")


def serve(
    notebook: Path,
    *,
    port: int | None = None,
    browser: bool = True,
    args: Sequence[str] = (),
) -> None:
    """Serve `notebook` as `marimo run` does (`args` go to the notebook) on 127.0.0.1 at `port`
    (default: the first free one from 2718), guarded by `LocalOnly` and an access token
    (`$PEB_WORKBENCH_TOKEN`, else a new random one), and open it in a `browser`; marimo prints
    the URL with the token. Returns when the server stops (Ctrl-C)."""
    from marimo._cli.cli import main as marimo
    from marimo._server.registry import MIDDLEWARE_REGISTRY
    from starlette.middleware import Middleware

    port = port or free_port()
    MIDDLEWARE_REGISTRY.register("peb-local-only", Middleware(LocalOnly, port=port))
    if "peb-local-only" not in MIDDLEWARE_REGISTRY.names():  # an allow list in the environment
        raise RuntimeError("marimo refused the Host/Origin guard; not serving without it")
    token = os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    command = ["run", str(notebook), "--host", "127.0.0.1", "--port", str(port), "--no-sandbox"]
    command += ["--token-password", token, *([] if browser else ["--headless"])]
    command += ["--", *args] if args else []
    # In process, so the token never appears on a command line other users can read.
    marimo.main(args=command, prog_name="marimo", standalone_mode=False)
