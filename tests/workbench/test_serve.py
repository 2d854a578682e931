"""`./dev workbench` serves only this machine's browser: over real HTTP and a real WebSocket to
the served workbench, a request without the access token is not served, and a foreign Host or
Origin (a DNS-rebinding page) is refused even with the token, while the local ones pass."""

from __future__ import annotations

import base64
import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from browser import ROOT, free_port, scratch_env

from peb_core.frontends.workbench import TOKEN_ENV, LocalOnly, local_hosts, local_origins

TOKEN = "test-token-4b1d"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The workbench served by `python -m peb_core.frontends.workbench` (what `./dev workbench`
    runs) over an empty runs root; its port."""
    home = tmp_path_factory.mktemp("home")
    (home / "runs").mkdir()
    port = free_port()
    env = scratch_env(home, PEB_RUNS_DIR=str(home / "runs"), **{TOKEN_ENV: TOKEN})
    env["PYTHONPATH"] = str(ROOT)
    log = open(home / "serve.log", "wb")  # noqa: SIM115
    command = [sys.executable, "-m", "peb_core.frontends.workbench", "notebooks/workbench.py"]
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--headless"], cwd=ROOT, env=env, stdout=log, stderr=log
    )
    try:
        deadline = time.monotonic() + 60
        while _status(port, "/health") != 200:
            assert proc.poll() is None, (home / "serve.log").read_text()
            assert time.monotonic() < deadline, "the workbench did not start"
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
        assert f"access_token={TOKEN}" in (home / "serve.log").read_text()


def _get(port: int, path: str, **headers: str) -> http.client.HTTPResponse | None:
    """A GET over real HTTP (redirects not followed), or None if nothing answers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host="Host" in headers)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response
    except OSError:
        return None
    finally:
        connection.close()


def _status(port: int, path: str, **headers: str) -> int:
    response = _get(port, path, **headers)
    return 0 if response is None else response.status


def _handshake(port: int, path: str, headers: dict[str, str]) -> str:
    """A WebSocket opening handshake over a real socket; the status line of the answer."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        *(f"{k}: {v}" for k, v in headers.items()),
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = s.recv(4096).decode("latin-1")
    return answer.split("\r\n", 1)[0]


def test_the_page_needs_the_token(served: int) -> None:
    """Without the token: sent to the login page; with it: a session cookie, then the page."""
    for path in ("/", "/?access_token=wrong"):
        refused = _get(served, path)
        assert refused is not None and refused.status == 303
        assert "/auth/login" in refused.getheader("location", "")
    assert _status(served, "/api/status") == 401
    let_in = _get(served, f"/?access_token={TOKEN}")
    assert let_in is not None and let_in.status == 303
    cookie = let_in.getheader("set-cookie", "").split(";", 1)[0]
    assert cookie
    page = _get(served, "/", Cookie=cookie)
    assert page is not None and page.status == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example.com"},
        {"Host": "evil.example.com:{port}"},
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example.com"},
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example.com:{port}"},
        {"Host": "127.0.0.1:{port}", "Origin": "null"},
    ],
    ids=["host", "host-with-port", "origin", "origin-with-port", "origin-null"],
)
def test_a_foreign_host_or_origin_is_refused_over_http_and_websocket(
    served: int, headers: dict[str, str]
) -> None:
    headers = {k: v.format(port=served) for k, v in headers.items()}
    assert _status(served, f"/?access_token={TOKEN}", **headers) == 403
    assert _status(served, f"/api/status?access_token={TOKEN}", **headers) == 403
    ws = _handshake(served, f"/ws?session_id=s1&access_token={TOKEN}", headers)
    assert ws.startswith("HTTP/1.1 403"), ws


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_the_local_host_and_origin_open_a_websocket(served: int, name: str) -> None:
    """The guard is not a wall: the same handshake from the page's own origin is accepted."""
    host = f"{name}:{served}"
    ws = _handshake(
        served,
        f"/ws?session_id=s-{name}&access_token={TOKEN}",
        {"Host": host, "Origin": f"http://{host}"},
    )
    assert ws.startswith("HTTP/1.1 101"), ws


def test_the_allowed_values_are_the_local_names_at_the_port() -> None:
    assert local_hosts(2718) == {"127.0.0.1:2718", "localhost:2718", "[::1]:2718"}
    assert "http://localhost:2718" in local_origins(2718)
    guard = LocalOnly(app=None, port=2718)
    assert guard.allowed([(b"Host", b"localhost:2718")])
    assert not guard.allowed([(b"host", b"localhost:2719")])
    assert not guard.allowed([(b"host", b"localhost:2718"), (b"origin", b"http://a.b")])
    assert not guard.allowed([])
