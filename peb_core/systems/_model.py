"""Model-backed Systems via litellm: the one request path every such system shares
(`LitellmSystem`: our own cache, retries with backoff, cost), and `ModelSystem`, one request per
task under a prompt protocol with structured output; the reply is kept as given, the model's
whole message (content, reasoning, refusal, tool calls; the content is read at scoring time).
The agent system (`_agent.py`) sends its steps through the same path. API keys are read by
litellm from the environment and never recorded; credentials in an api_base URL are sent, never
recorded."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import json
import os
import random
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from .._gc import gc_paused
from ..access import DEFAULT_INTERFACE, check_interface
from ..tasks import BoundaryView, EscalationView, ModelView, ScenarioFile, ViewKind
from ._cache import ResponseCache, cache_dir, cache_key
from ._defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from ._local import file_sha256
from ._prompts import PromptProtocol, get_protocol, in_chat
from ._reach import not_reached, reached
from ._repeat import current_repeat
from ._reply import MAX_REPLY_CHARS, Reply, ToolCall, Usage
from ._schema import response_format

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER_S = 60.0
"""The longest Retry-After honoured (and never longer than the request timeout): a server asking
for more gets an error record at once, which a resumed run retries."""

# litellm's own HTTP handler for the openai provider, instead of a detour through the openai SDK
# (which re-walks every message against its typed request model): 0.6-1.2 ms less client CPU per
# request on litellm 1.110, same replies, usage, cost and error classes (benchmarks/RESULTS.md).
# Set to "false" in the environment to use the SDK path.
os.environ.setdefault("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", "true")


@dataclass(frozen=True)
class Completion:
    """What one request produced, as cached: the message's content (`text`), its reasoning,
    refusal and tool calls (`[id, name, arguments]` each), tokens and cost."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    truncated: bool
    reasoning: str | None
    refusal: str | None
    tool_calls: tuple[tuple[str, str, str], ...]

    @classmethod
    def cached(cls, entry: dict[str, Any]) -> Completion | None:
        """The completion a cache entry holds; None for an entry of another shape (one cached
        before the whole message was kept lacks its reasoning: asked again, not replayed)."""
        if entry.keys() != {f.name for f in fields(cls)}:
            return None
        calls = tuple(tuple(call) for call in entry["tool_calls"])
        return cls(**{**entry, "tool_calls": calls})

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The tool calls, each exactly as given."""
        return tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in self.tool_calls)

    def reply(self, usage: Usage) -> Reply:
        return Reply(
            status="ok",
            raw=self.text,
            reasoning=self.reasoning,
            refusal=self.refusal,
            tool_calls=self.calls,
            usage=usage,
            truncated=self.truncated,
        )


def _retry_after(exc: BaseException) -> float | None:
    """The seconds a failed request's Retry-After header asks for, as seconds (inf allowed) or
    as an HTTP date (RFC 9110; a date past is 0), else None."""
    for headers in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
    ):
        if headers is not None and headers.get("retry-after") is not None:
            value = str(headers["retry-after"])
            try:
                seconds = float(value)
            except ValueError:
                try:
                    when = parsedate_to_datetime(value)
                except (TypeError, ValueError):
                    return None
                if when.tzinfo is None:  # RFC 9110 dates are GMT; `-0000` parses as naive
                    when = when.replace(tzinfo=UTC)
                return max(0.0, (when - datetime.now(UTC)).total_seconds())
            return seconds if seconds >= 0 else None  # also None for nan
    return None


def redact_url(url: str | None) -> str | None:
    """`url` without what may be secret (a `user:password@`, the query string, the fragment):
    what is recorded of an api_base."""
    if not url:
        return url
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _endpoint(url: str) -> tuple[str, dict[str, Any], list[str]]:
    """How to call an api_base that may carry credentials: the URL to give litellm, the extra
    litellm arguments, and the secret strings to keep out of error text. A `user:password@` is
    sent as HTTP Basic auth (as curl would); a query string (`?key=...`) is kept on each request,
    on the chat completions URL itself (litellm adds its path after the api_base)."""
    parts = urlsplit(url)
    base = redact_url(url) or url
    extra: dict[str, Any] = {}
    secrets = [s for s in (parts.password, unquote(parts.password or ""), parts.query) if s]
    if "@" in parts.netloc:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        extra["extra_headers"] = {
            "Authorization": "Basic " + base64.b64encode(pair.encode()).decode()
        }
    if parts.query:
        base = f"{base.rstrip('/')}/chat/completions?{parts.query}"
    return base, extra, secrets


def clean_reply(text: str) -> tuple[str, bool]:
    """Reply text as stored: at most MAX_REPLY_CHARS (and whether it was cut), with anything
    that is not Unicode text (a lone surrogate from a `\\ud800` escape) replaced."""
    cut = text[:MAX_REPLY_CHARS]
    return cut.encode("utf-8", "replace").decode("utf-8"), len(cut) < len(text)


def model_problem(model: str) -> str | None:
    """Why litellm could not call the model string `model` (it names no provider litellm knows),
    or None. Asked before a run writes anything, so a typo costs no run folder."""
    if "litellm" not in sys.modules:
        _import_litellm()
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List" banner on stdout
    provider, slash, name = model.partition("/")
    if (slash and not name.strip("/").strip()) or "//" in model or model.endswith("/"):
        return (
            f"model {model!r} names no model after its provider: a litellm model string is "
            "PROVIDER/NAME, e.g. openai/gpt-4o"
        )
    try:
        litellm.get_llm_provider(model)
    except Exception:  # litellm.BadRequestError: "LLM Provider NOT provided"
        what = f"unknown provider {provider!r} in" if slash else "no provider in"
        return (
            f"{what} model {model!r}: a litellm model string is PROVIDER/NAME, e.g. "
            "openai/gpt-4o, anthropic/claude-sonnet-4-5, ollama/llama3, openai/NAME with "
            "--api-base for an OpenAI-compatible server (providers: "
            "https://docs.litellm.ai/docs/providers)"
        )
    return None


def system_name(model: str, protocol: str) -> str:
    """The name of a system that is `model` under the prompt protocol `protocol`."""
    return f"{model}:{protocol}"


@lru_cache(maxsize=64)
def _takes_seed(model: str) -> bool:
    """Whether litellm sends a `seed` to the provider of `model` (OpenAI and compatible servers
    do; a provider without one would refuse the request)."""
    import litellm

    try:
        provider = litellm.get_llm_provider(model)[1]
        supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:  # an unknown provider: send nothing it may refuse
        return False
    return "seed" in (supported or [])


def _retryable(exc: BaseException) -> bool:
    from litellm.exceptions import APIConnectionError, Timeout

    if isinstance(exc, Timeout | APIConnectionError | asyncio.TimeoutError):
        return True
    return getattr(exc, "status_code", None) in _RETRYABLE_STATUS


@dataclass
class LitellmSystem:
    """What every litellm-backed system shares: the model and where it is served, a prompt
    protocol, sampling, our reply cache, retries with backoff, and cost. `_send` is the one
    request path: each request is keyed in the cache by what shapes its reply (the model and
    api_base as recorded, the messages, the tools, the sampling and the response format)."""

    model: str
    families: Sequence[ScenarioFile]
    protocol: PromptProtocol = field(default_factory=lambda: get_protocol(DEFAULT_PROTOCOL))
    api_base: str | None = None
    temperature: float = DEFAULT_TEMPERATURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = 4
    backoff_s: float = 1.0
    cache_folder: Path | None = None
    use_cache: bool = True
    endpoint: tuple[str, str] | None = None
    """(litellm model, api base) actually called, when it differs from what is recorded: an
    embedded model is recorded as `local/<name>` whatever port serves it."""
    model_file: Path | None = None
    """An embedded model's GGUF file, whose sha256 is among `digests()`."""
    interface: str = DEFAULT_INTERFACE
    """How it answers (`access.INTERFACES`): under `chat` its protocol's chat rendering
    (`prompt`), a reply in prose."""
    prompt: PromptProtocol = field(init=False, repr=False)
    """What it is told: its protocol, or under `chat` the protocol's chat rendering."""

    def __post_init__(self) -> None:
        check_interface(self.interface)
        # under chat, a ValueError for a protocol without a chat rendering
        self.prompt = in_chat(self.protocol) if self.interface == "chat" else self.protocol
        _import_litellm_in_background()
        self._specs = {s.id: s for s in self.families}
        self._cache = ResponseCache(self.cache_folder or cache_dir()) if self.use_cache else None

    def config(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "api_base": redact_url(self.api_base),
            **self.protocol.config(),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
        }

    def digests(self) -> dict[str, str]:
        found = {"protocol_text": self.prompt.digest}
        if self.model_file is not None:
            found["model_file"] = file_sha256(self.model_file)
        return found

    def _request(self, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """A request of `messages` with this system's model and sampling, plus `extra`."""
        return {
            "model": self.model,
            "api_base": self.api_base,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            **extra,
        }

    async def _send(self, request: dict[str, Any]) -> tuple[Completion, bool] | str:
        """The completion of `request` (built by `_request`) and whether it came from the
        cache, or a one-line error after the last retry. A reply obtained is cached.

        In repeat r > 0 of a task (`current_repeat`), the cache key holds r, so a repeat is
        never served another's reply, and the request carries `seed` r where the provider
        takes a seed. Repeat 0 is the request of a run without repeats, as it always was."""
        repeat = current_repeat()
        key = cache_key(request if not repeat else {**request, "repeat": repeat})
        entry = self._cache.get(key) if self._cache else None
        cached = Completion.cached(entry) if entry is not None else None
        if cached is not None:
            return cached, True
        if self.endpoint:
            request = {**request, "model": self.endpoint[0], "api_base": self.endpoint[1]}
        if repeat and _takes_seed(request["model"]):
            request = {**request, "seed": repeat}
        result = await self._complete(request)
        if isinstance(result, str):
            return result
        if self._cache:
            self._cache.put(key, asdict(result))
        return result, False

    async def _complete(self, request: dict[str, Any]) -> Completion | str:
        """One completion with retries; a one-line error after the last attempt."""
        import litellm

        litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner per failure
        extra: dict[str, Any] = {}
        if not _has_callbacks(litellm):
            _remember_unpriced(litellm)
        secrets: list[str] = []
        if request["api_base"]:
            base, auth, secrets = _endpoint(request["api_base"])
            request = {**request, "api_base": base}
            extra.update(auth)
            if not auth and not os.environ.get("OPENAI_API_KEY"):
                extra["api_key"] = "unused"
        error, connected = "", True
        cap = min(MAX_RETRY_AFTER_S, self.timeout_s)
        for attempt in range(self.retries + 1):
            try:
                reply = await asyncio.wait_for(
                    litellm.acompletion(
                        **request, timeout=self.timeout_s, num_retries=0, max_retries=0, **extra
                    ),
                    timeout=self.timeout_s + 5,
                )
                reached()
                return _completion(reply)
            except Exception as exc:
                error, connected = _failure(exc)
                if not _retryable(exc) or attempt == self.retries:
                    break
                wait = _retry_after(exc)
                if wait is not None and wait > cap:
                    error += f"; Retry-After {wait:g} s is beyond the {cap:g} s cap"
                    break
                if wait is None:
                    wait = self.backoff_s * 2**attempt
                await asyncio.sleep(wait + random.uniform(0, self.backoff_s / 2))
        for secret in secrets:
            error = error.replace(secret, "***")
        if connected:
            reached()
        else:  # in a run: MAX_UNREACHABLE in a row stop it
            not_reached(error)
        return f"after {attempt + 1} attempt(s): {error}"[:500]


@dataclass
class ModelSystem(LitellmSystem):
    """A litellm model under a prompt protocol, one request per task, its reply constrained by
    the family's response schema; under `--interface chat` (its protocol's chat rendering,
    `in_chat`) a reply in prose, unconstrained; see `config()` for what is recorded."""

    format_style: str = "json_schema"

    def __post_init__(self) -> None:
        super().__post_init__()
        chat = self.interface == "chat"
        self._formats = {
            s.id: None if chat else response_format(s, self.format_style, self.prompt.parts)
            for s in self.families
        }

    @property
    def name(self) -> str:
        return system_name(self.model, self.protocol.id)

    @property
    def view(self) -> ViewKind:
        return self.protocol.view

    def config(self) -> dict[str, Any]:
        if self.interface == "chat":  # a reply in prose: no response format
            return {**super().config(), "interface": "chat"}
        return {**super().config(), "response_format": self.format_style}

    async def respond(self, view: ModelView | BoundaryView | EscalationView) -> Reply:
        model_view = view.model if isinstance(view, BoundaryView | EscalationView) else view
        form = self._formats[self._specs[model_view.family].id]
        request = self._request(
            self.prompt.render(view), **({} if form is None else {"response_format": form})
        )
        started = time.monotonic()
        result = await self._send(request)
        if isinstance(result, str):
            return Reply(status="error", error=result)
        done, cached = result
        usage = Usage(
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            latency_s=round(time.monotonic() - started, 3),
            cost_usd=done.cost_usd,
            cached=cached,
        )
        return done.reply(usage)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _failure(exc: BaseException) -> tuple[str, bool]:
    """One line for a failed request, and whether it reached a server: "could not connect to
    HOST (why)" when it did not (litellm labels that HTTP 500), else the exception's type, HTTP
    status and first line."""
    import httpx

    chain = list(_causes(exc))
    connect = next(
        (e for e in chain if isinstance(e, httpx.ConnectError | httpx.ConnectTimeout)), None
    )
    if connect is not None:
        try:
            host = connect.request.url.netloc.decode()
        except RuntimeError:  # an error raised without its request
            host = "the server"
        if isinstance(connect, httpx.ConnectTimeout):
            why = "timed out"
        elif any(isinstance(e, ConnectionRefusedError) for e in chain):
            why = "connection refused"
        elif any(isinstance(e, socket.gaierror) for e in chain):
            why = "host name not found"
        else:
            why = str(connect).splitlines()[0] if str(connect) else type(connect).__name__
        return f"could not connect to {host} ({why})", False
    status = getattr(exc, "status_code", None)
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {first}", True


def _import_litellm() -> None:
    """Import litellm (2-3 s, most of a run's start). The import builds ~400,000 long-lived
    objects and no cycles worth collecting: the cyclic GC is paused meanwhile, and what exists
    after it is frozen (`gc.freeze`), so no later collection scans those objects again (the
    first collections after the import did: 1-3 s before the first request). A failed import
    is reported by the next `import litellm`."""
    with gc_paused():
        with contextlib.suppress(Exception):
            import litellm  # noqa: F401
        gc.freeze()


def _import_litellm_in_background() -> None:
    """Start importing litellm on a thread while the run builds its schemas and first tasks
    (when nothing imported it yet); the first request's own `import litellm` waits for what is
    left."""
    if "litellm" not in sys.modules:
        threading.Thread(target=_import_litellm, name="peb-import-litellm", daemon=True).start()


def _has_callbacks(litellm: Any) -> bool:
    names = ("callbacks", "success_callback", "failure_callback", "_async_success_callback")
    return any(getattr(litellm, n, None) for n in names)


def _remember_unpriced(litellm: Any) -> None:
    """Wrap litellm's per-reply cost calculator so a model it has no price for fails once, not
    on every reply (each failure tries three model names and formats three exceptions). The
    cost stays None for it: unknown, never 0."""
    calculate = litellm.response_cost_calculator
    if getattr(calculate, "peb_remembers_unpriced", False):
        return
    unpriced: set[tuple[Any, ...]] = set()

    def cost(**kwargs: Any) -> Any:
        key = (kwargs.get("model"), kwargs.get("custom_llm_provider"), kwargs.get("base_model"))
        if key in unpriced:
            return None
        try:
            return calculate(**kwargs)
        except Exception:
            unpriced.add(key)
            raise

    cost.peb_remembers_unpriced = True  # type: ignore[attr-defined]
    litellm.response_cost_calculator = cost


def _completion(reply: Any) -> Completion:
    """The message, tokens and cost of a litellm reply; the cost is the one litellm computed for
    it (None when it has no price for the model: unknown, never 0). litellm gives a provider's
    reasoning as `reasoning_content`, whether the provider sent it apart or as a `<think>` block
    leading the content (which it takes out of the content)."""
    usage = getattr(reply, "usage", None)
    cost = (getattr(reply, "_hidden_params", None) or {}).get("response_cost")
    message = reply.choices[0].message
    text, truncated = clean_reply(message.content or "")
    reasoning = getattr(message, "reasoning_content", None)
    if reasoning:
        reasoning, cut = clean_reply(reasoning)
        truncated |= cut
    calls = tuple(_tool_calls(getattr(message, "tool_calls", None)))
    return Completion(
        text=text,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost_usd=float(cost) if cost is not None else None,
        truncated=truncated,
        reasoning=reasoning or None,
        refusal=getattr(message, "refusal", None) or None,
        tool_calls=calls,
    )


def _tool_calls(calls: Any) -> Iterator[tuple[str, str, str]]:
    """(id, name, arguments) of each tool call of a reply message, as given: the arguments text
    kept whatever it holds (cut and cleaned as reply text is; an object some providers send is
    its JSON); a call without an id gets `call_<i>` (a tool result must name its call)."""
    for i, call in enumerate(calls or ()):
        function = getattr(call, "function", None)
        arguments = getattr(function, "arguments", None)
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments)
        name = getattr(function, "name", None) or ""
        yield getattr(call, "id", None) or f"call_{i}", str(name), clean_reply(arguments)[0]
