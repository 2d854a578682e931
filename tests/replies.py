"""A system's reply to a view, run to its end from a test."""

from __future__ import annotations

import asyncio
from typing import Any

from peb_core.systems import Reply, System


def reply_of(system: System, view: Any) -> Reply:
    """`system.respond(view)` run with `asyncio.run`, by a coroutine that keeps the reply and
    returns nothing. On Python 3.11 `asyncio.run` ends by reading and restoring the SIGINT
    handler it set, which holds its finished task; `signal` tries to make that handler a
    `signal.Handlers` member each time, and the failed try writes its repr, the whole reply's
    with it: a sixth of an agent baseline's episode."""
    kept: list[Reply] = []

    async def play() -> None:
        kept.append(await system.respond(view))

    asyncio.run(play())
    return kept[0]
