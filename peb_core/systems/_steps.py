"""Which step an agent's episode is at, for whoever watches it (the runner, hence `peb run`'s
progress line; the workbench or an MCP server could too).

The episode recorder says each step its episode starts (`Episode.starting`, hence
`step_started`) through a hook in context (`watching_steps`), as the repeat index reaches the
request path (`answering_repeat`), so no system's `respond` signature changes. Only an episode
that began from the start watched (an agent view's `start`) is told: a handoff's episode, nested
in one of its steps, begins from a start of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

StepHook = Callable[[int, int], None]
"""Told (step, max_steps) as an episode starts a step, from 1."""

_WATCHED: ContextVar[tuple[object, StepHook] | None] = ContextVar("peb_steps", default=None)


@contextmanager
def watching_steps(start: object, hook: StepHook) -> Iterator[None]:
    """Within the block (and the coroutines it awaits), an episode that began from `start` (an
    agent view's `start`) tells `hook` each step it starts."""
    token = _WATCHED.set((start, hook))
    try:
        yield
    finally:
        _WATCHED.reset(token)


def step_started(start: object, step: int, max_steps: int) -> None:
    """Said as an episode that began from `start` starts step `step` of at most `max_steps`;
    the hook watching `start`, if any, is told."""
    watched = _WATCHED.get()
    if watched is not None and watched[0] is start:
        watched[1](step, max_steps)
