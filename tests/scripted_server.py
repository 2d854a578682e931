"""An OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 whose behaviour per request is
scripted, in order or chosen from the request by a `route`. It records every request's body,
path and headers. Real HTTP, no mocked client. A step answers with text, with tool calls (as a
tool-calling model does: `tool_step`), with an HTTP error or by dropping the connection; a
`route` that reads the conversation in the request is a scripted agent.

Standalone (the harness benchmarks run it in its own process, as a real endpoint would be):
`python tests/scripted_server.py --latency 0.2` prints its api_base, then answers every request
with a valid reply after the latency; with `--agent-steps N`, a request offering tools is
answered by a `search` call until the conversation holds N - 1 replies, then by a `submit` of a
valid response. `GET /stats` gives the request count, the peak number in flight and the
wall-clock times of the first request and of the last reply, `POST /stats/reset` zeroes them."""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BLOCKED = json.dumps({"answer": None, "completeness": "incomplete", "gap_report": None})
"""A response valid for every family."""


@dataclass
class Step:
    """One scripted behaviour: `content` (reply text, and any other keys of the reply's message
    in `message`: `reasoning_content`, `refusal`, `tool_calls`, ...), `tools` (an assistant
    message calling `calls`, each a tool name and its arguments text as given, with `text` as its
    content, if any), `status` (an HTTP error, optional Retry-After), `drop` (close the
    connection), with an optional delay before it and the token counts its usage reports."""

    kind: str = "content"
    text: str | None = BLOCKED
    calls: list[tuple[str, str]] = field(default_factory=list)
    status: int = 200
    retry_after: float | str | None = None
    """Seconds, or any text (an HTTP date), sent as the Retry-After header."""
    delay: float = 0.0
    message: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 100
    completion_tokens: int = 20


def tool_step(*calls: tuple[str, str | dict[str, Any]], text: str | None = None, **kw: Any) -> Step:
    """A reply calling each `(name, arguments)` in order; arguments given as a dict are sent as
    its JSON, a string exactly as it is (malformed JSON included)."""
    sent = [(name, a if isinstance(a, str) else json.dumps(a)) for name, a in calls]
    return Step(kind="tools", text=text, calls=sent, **kw)


def replies_so_far(body: dict[str, Any]) -> int:
    """How many assistant messages the conversation in a request body holds."""
    return sum(m.get("role") == "assistant" for m in body.get("messages", []))


def conversation_route(plan: list[Step]) -> Callable[[dict[str, Any]], Step]:
    """A scripted agent: the reply to a request is `plan[n]`, n the number of replies its
    conversation already holds (the last step of the plan once past its end), so a retried or
    resumed request gets the reply its place in the episode calls for."""

    def route(body: dict[str, Any]) -> Step:
        return plan[min(replies_so_far(body), len(plan) - 1)]

    return route


def _submit_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """A valid response, as the `submit` tool offered in a request takes it: as `response`
    (ours), or as the text `answer` (inspect_ai's react agent)."""
    for tool in body.get("tools", []):
        function = tool.get("function", {})
        properties = function.get("parameters", {}).get("properties", {})
        if function.get("name") == "submit" and "answer" in properties:
            return {"answer": BLOCKED}
    return {"response": json.loads(BLOCKED)}


def agent_route(steps: int) -> Callable[[dict[str, Any]], Step]:
    """A scripted agent of `steps` replies: a `search` call while the conversation holds fewer
    than `steps - 1` replies, then a `submit` of a response valid for every family. A request
    without tools gets a plain valid reply."""

    def route(body: dict[str, Any]) -> Step:
        if not body.get("tools"):
            return Step()
        if replies_so_far(body) < steps - 1:
            return tool_step(("search", {"query": "records", "k": 5}))
        return tool_step(("submit", _submit_arguments(body)))

    return route


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

    def next(
        self, body: bytes, path: str = "", headers: dict[str, str] | None = None
    ) -> tuple[Step, dict[str, Any] | None]:
        """The step for a request, and its body parsed (None when nothing needed it). The body
        is parsed once and the route runs outside the lock, so threads answer in parallel."""
        parsed = json.loads(body) if self.keep_bodies or self.route else None
        with self.lock:
            if self.first_request_at is None:
                self.first_request_at = time.time()
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.keep_bodies:
                self.raw.append(body)
                self.bodies.append(parsed)  # type: ignore[arg-type]
                self.paths.append(path)
                self.headers.append(headers or {})
            if self.steps:
                return self.steps.pop(0), parsed
        return (self.route(parsed) if self.route and parsed is not None else self.default), parsed

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


def _completion(step: Step, body: bytes, parsed: dict[str, Any] | None) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": step.text, **step.message}
    if step.kind == "tools":
        # Ids are the same for the same conversation, as a cached reply's are.
        n = replies_so_far(parsed if parsed is not None else json.loads(body))
        message["tool_calls"] = [
            {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": a}}
            for i, (name, a) in enumerate(step.calls)
        ]
    tokens = step.prompt_tokens + step.completion_tokens
    return json.dumps(
        {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if step.kind == "tools" else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": step.prompt_tokens,
                "completion_tokens": step.completion_tokens,
                "total_tokens": tokens,
            },
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
            step, parsed = script.next(body, self.path, dict(self.headers))
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
            self._send(200, _completion(step, body, parsed), {})

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
    parser.add_argument(
        "--agent-steps", type=int, metavar="N", help="answer requests with tools as an agent"
    )
    args = parser.parse_args()
    server = ScriptedServer(args.port)
    server.script.default = Step(delay=args.latency)
    if args.agent_steps:
        route = agent_route(args.agent_steps)
        server.script.route = lambda body: replace(route(body), delay=args.latency)
    server.script.keep_bodies = False
    print(server.url, flush=True)
    server._server.serve_forever()  # until the parent terminates it


if __name__ == "__main__":
    main()
