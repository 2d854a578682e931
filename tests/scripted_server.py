"""An OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 whose behaviour per request is
scripted, in order or chosen from the request by a `route`. It records every request's body,
path and headers. Real HTTP, no mocked client.

Standalone (the harness benchmark runs it in its own process, as a real endpoint would be):
`python tests/scripted_server.py --latency 0.2` prints its api_base, then answers every request
with a valid reply after the latency; `GET /stats` gives the request count, the peak number in
flight and the wall-clock times of the first request and of the last reply, `POST /stats/reset`
zeroes them."""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BLOCKED = json.dumps({"answer": None, "completeness": "incomplete", "gap_report": None})
"""A response valid for every family."""


@dataclass
class Step:
    """One scripted behaviour: `content` (reply text, and any other keys of the reply's message
    in `message`: `reasoning_content`, `refusal`, `tool_calls`, ...), `status` (an HTTP error,
    optional Retry-After), `drop` (close the connection), with an optional delay before it."""

    kind: str = "content"
    text: str | None = BLOCKED
    status: int = 200
    retry_after: float | str | None = None
    """Seconds, or any text (an HTTP date), sent as the Retry-After header."""
    delay: float = 0.0
    message: dict[str, Any] = field(default_factory=dict)


@dataclass
class Script:
    steps: list[Step] = field(default_factory=list)
    default: Step = field(default_factory=Step)
    route: Callable[[dict[str, Any]], Step] | None = None
    """When set, the step for a request with no scripted step left, chosen from its body."""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    keep_bodies: bool = True
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    first_request_at: float | None = None
    last_reply_at: float | None = None

    def next(self, body: bytes, path: str = "", headers: dict[str, str] | None = None) -> Step:
        with self.lock:
            if self.first_request_at is None:
                self.first_request_at = time.time()
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.keep_bodies:
                self.raw.append(body)
                self.bodies.append(json.loads(body))
                self.paths.append(path)
                self.headers.append(headers or {})
            if self.steps:
                return self.steps.pop(0)
            return self.route(json.loads(body)) if self.route else self.default

    def done(self) -> None:
        with self.lock:
            self.in_flight -= 1
            self.last_reply_at = time.time()

    def stats(self) -> dict[str, float | int | None]:
        with self.lock:
            return {
                "requests": self.requests,
                "max_in_flight": self.max_in_flight,
                "first_request_at": self.first_request_at,
                "last_reply_at": self.last_reply_at,
            }

    def reset(self) -> None:
        with self.lock:
            self.requests = self.max_in_flight = 0
            self.first_request_at = self.last_reply_at = None


def _completion(step: Step) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": step.text, **step.message},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    ).encode()


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else header and body writes meet delayed ACK

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path == "/stats":
                self._send(200, json.dumps(script.stats()).encode(), {})
                return
            self._send(200, b'{"object": "list", "data": [{"id": "scripted"}]}', {})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path == "/stats/reset":
                script.reset()
                self._send(200, b"{}", {})
                return
            step = script.next(body, self.path, dict(self.headers))
            time.sleep(step.delay)
            script.done()
            if step.kind == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if step.kind == "status":
                headers = {} if step.retry_after is None else {"Retry-After": str(step.retry_after)}
                self._send(step.status, b'{"error": {"message": "scripted"}}', headers)
                return
            self._send(200, _completion(step), {})

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # 64+ simultaneous connects must not be refused
    daemon_threads = True


class ScriptedServer:
    """Start with `start()`, stop with `stop()`; `url` is the api_base (ends in /v1)."""

    def __init__(self, port: int = 0) -> None:
        self.script = Script()
        self._server = _Server(("127.0.0.1", port), _handler(self.script))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description="a fixed-latency OpenAI-compatible server")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each reply")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ScriptedServer(args.port)
    server.script.default = Step(delay=args.latency)
    server.script.keep_bodies = False
    print(server.url, flush=True)
    server._server.serve_forever()  # until the parent terminates it


if __name__ == "__main__":
    main()
