"""Which repeat of a task a system is answering (`peb run --repeats K`, docs/benchmark.md §3.1).

The runner answers each task K times; the repeat index reaches the request path through a
context variable, so no system's `respond` signature changes and deterministic baselines (which
never read it) give the same reply each repeat. The one request path (`LitellmSystem._send`)
keys the reply cache on it and sends a per-repeat seed where the provider takes one: a repeat
is never served another repeat's reply."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

MAX_REPEATS = 100
"""The most repeats a run may ask for: each repeat is a whole run's requests again."""

_REPEAT: ContextVar[int] = ContextVar("peb_repeat", default=0)


def current_repeat() -> int:
    """The repeat being answered in this context: 0 outside a run, or in a run's first repeat."""
    return _REPEAT.get()


@contextmanager
def answering_repeat(repeat: int) -> Iterator[None]:
    """Within the block (and the coroutines it awaits), `current_repeat()` is `repeat`."""
    token = _REPEAT.set(repeat)
    try:
        yield
    finally:
        _REPEAT.reset(token)
