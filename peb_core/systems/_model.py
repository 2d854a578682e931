"""A model-backed System via litellm: a prompt protocol, structured output, our own cache, and
retries with backoff; the reply text is kept as given (it is read at scoring time). API keys are
read by litellm from the environment and never recorded."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tasks import BoundaryView, ModelView, ScenarioFile, ViewKind
from ._cache import ResponseCache, cache_dir, cache_key
from ._prompts import DEFAULT_PROTOCOL, Protocol, get_protocol
from ._reply import Reply, Usage
from ._schema import response_format

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}

# litellm's own HTTP handler for the openai provider, instead of a detour through the openai SDK
# (which re-walks every message against its typed request model): about 1.5 ms less client CPU
# per request, same replies, usage, cost and error classes (benchmarks/RESULTS.md). Set to
# "false" in the environment to use the SDK path.
os.environ.setdefault("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", "true")


@dataclass(frozen=True)
class Completion:
    """What one request produced, as cached."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None


def _retry_after(exc: BaseException) -> float | None:
    for headers in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
    ):
        if headers is not None and headers.get("retry-after") is not None:
            try:
                return float(headers["retry-after"])
            except ValueError:
                return None
    return None


def _retryable(exc: BaseException) -> bool:
    from litellm.exceptions import APIConnectionError, Timeout

    if isinstance(exc, Timeout | APIConnectionError | asyncio.TimeoutError):
        return True
    return getattr(exc, "status_code", None) in _RETRYABLE_STATUS


@dataclass
class ModelSystem:
    """A litellm model under a prompt protocol; see `config()` for what is recorded."""

    model: str
    families: Sequence[ScenarioFile]
    protocol: Protocol = field(default_factory=lambda: get_protocol(DEFAULT_PROTOCOL))
    api_base: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 120.0
    retries: int = 4
    backoff_s: float = 1.0
    format_style: str = "json_schema"
    cache_folder: Path | None = None
    use_cache: bool = True
    endpoint: tuple[str, str] | None = None
    """(litellm model, api base) actually called, when it differs from what is recorded: an
    embedded model is recorded as `local/<name>` whatever port serves it."""

    def __post_init__(self) -> None:
        self._specs = {s.id: s for s in self.families}
        self._formats = {s.id: response_format(s, self.format_style) for s in self.families}
        self._cache = ResponseCache(self.cache_folder or cache_dir()) if self.use_cache else None

    @property
    def name(self) -> str:
        return f"{self.model}:{self.protocol.id}"

    @property
    def view(self) -> ViewKind:
        return self.protocol.view

    def config(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "api_base": self.api_base,
            "protocol": self.protocol.id,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "response_format": self.format_style,
        }

    async def respond(self, view: ModelView | BoundaryView) -> Reply:
        model_view = view.model if isinstance(view, BoundaryView) else view
        spec = self._specs[model_view.family]
        request: dict[str, Any] = {
            "model": self.model,
            "api_base": self.api_base,
            "messages": self.protocol.render(view),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response_format": self._formats[spec.id],
        }
        key = cache_key(request)
        cached = self._cache.get(key) if self._cache else None
        started = time.monotonic()
        if cached is not None:
            done = Completion(**cached)
        else:
            if self.endpoint:
                request = {**request, "model": self.endpoint[0], "api_base": self.endpoint[1]}
            result = await self._complete(request)
            if isinstance(result, str):
                return Reply(status="error", error=result)
            done = result
            if self._cache:
                self._cache.put(key, done.__dict__)
        usage = Usage(
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            latency_s=round(time.monotonic() - started, 3),
            cost_usd=done.cost_usd,
            cached=cached is not None,
        )
        return Reply(status="ok", raw=done.text, usage=usage)

    async def _complete(self, request: dict[str, Any]) -> Completion | str:
        """One completion with retries; a one-line error after the last attempt."""
        import litellm

        extra: dict[str, Any] = {}
        if not _has_callbacks(litellm):
            # litellm's success/failure logging only feeds callbacks; the reply's usage and
            # response_cost are set before it. A private flag, hence the pinned litellm range.
            extra["_is_litellm_internal_call"] = True
            _remember_unpriced(litellm)
        if request["api_base"] and not os.environ.get("OPENAI_API_KEY"):
            extra["api_key"] = "unused"
        error = ""
        for attempt in range(self.retries + 1):
            try:
                reply = await asyncio.wait_for(
                    litellm.acompletion(
                        **request, timeout=self.timeout_s, num_retries=0, max_retries=0, **extra
                    ),
                    timeout=self.timeout_s + 5,
                )
                return _completion(reply)
            except Exception as exc:
                status = getattr(exc, "status_code", None)
                first = str(exc).splitlines()[0] if str(exc) else ""
                error = f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {first}"
                if not _retryable(exc) or attempt == self.retries:
                    break
                wait = _retry_after(exc)
                if wait is None:
                    wait = self.backoff_s * 2**attempt
                await asyncio.sleep(wait + random.uniform(0, self.backoff_s / 2))
        return f"after {attempt + 1} attempt(s): {error}"[:500]


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
    """Text, tokens and cost of a litellm reply; the cost is the one litellm computed for it
    (None when it has no price for the model: unknown, never 0)."""
    usage = getattr(reply, "usage", None)
    cost = (getattr(reply, "_hidden_params", None) or {}).get("response_cost")
    return Completion(
        text=reply.choices[0].message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost_usd=float(cost) if cost is not None else None,
    )
