"""Which step an agent's episode is at, for whoever watches it (the runner, hence `peb run`'s
progress line; the workbench or an MCP server could too).

The agent loop says each step it starts (`step_started`) through a hook in context
(`watching_steps`), as the repeat index reaches the request path (`answering_repeat`), so no
system's `respond` signature changes. Only the episode over the view watched is told: a
handoff's episode, nested in one of its steps, runs over a view of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

StepHook = Callable[[int, int], None]
"""Told (step, max_steps) as an episode starts a step, from 1."""

_WATCHED: ContextVar[tuple[object, StepHook] | None] = ContextVar("peb_steps", default=None)


@contextmanager
def watching_steps(view: object, hook: StepHook) -> Iterator[None]:
    """Within the block (and the coroutines it awaits), an episode over `view` tells `hook`
    each step it starts."""
    token = _WATCHED.set((view, hook))
    try:
        yield
    finally:
        _WATCHED.reset(token)


def step_started(view: object, step: int, max_steps: int) -> None:
    """Said by an agent loop as its episode over `view` starts step `step` of at most
    `max_steps`; the hook watching `view`, if any, is told."""
    watched = _WATCHED.get()
    if watched is not None and watched[0] is view:
        watched[1](step, max_steps)
