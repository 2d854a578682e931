"""An OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 whose behaviour per request is
scripted. It records every request body. Real HTTP, no mocked client."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BLOCKED = json.dumps({"answer": None, "completeness": "incomplete", "gap_report": None})
"""A response valid for every family."""


@dataclass
class Step:
    """One scripted behaviour: `content` (reply text), `status` (an HTTP error, optional
    Retry-After), `drop` (close the connection), with an optional delay before it."""

    kind: str = "content"
    text: str = BLOCKED
    status: int = 200
    retry_after: float | None = None
    delay: float = 0.0


@dataclass
class Script:
    steps: list[Step] = field(default_factory=list)
    default: Step = field(default_factory=Step)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, body: bytes) -> Step:
        with self.lock:
            self.raw.append(body)
            self.bodies.append(json.loads(body))
            return self.steps.pop(0) if self.steps else self.default


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    ).encode()


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

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
            self._send(200, b'{"object": "list", "data": [{"id": "scripted"}]}', {})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            step = script.next(body)
            time.sleep(step.delay)
            if step.kind == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if step.kind == "status":
                headers = {} if step.retry_after is None else {"Retry-After": str(step.retry_after)}
                self._send(step.status, b'{"error": {"message": "scripted"}}', headers)
                return
            self._send(200, _completion(step.text), {})

    return Handler


class ScriptedServer:
    """Start with `start()`, stop with `stop()`; `url` is the api_base (ends in /v1)."""

    def __init__(self) -> None:
        self.script = Script()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.script))
        self._server.daemon_threads = True
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
