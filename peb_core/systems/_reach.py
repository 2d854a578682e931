"""Whether a run's requests reach their server (docs/guide.md, "Making a run"): with no network,
or an `--api-base` nothing listens on, every request of a run fails after its retries, and a
run spent minutes on them before it said so. Within `watching_reach` (the runner's block), each
request that never reached its server (every attempt refused, timed out connecting or its host
not found) counts toward `MAX_UNREACHABLE` in a row, and one that reached it (answered, even
with an error) sets the count back; at the `MAX_UNREACHABLE`-th, `Reach.unreachable` says so in
one line naming the server, and the runner starts no more tasks. The request path tells it
(`reached`, `not_reached`) through a hook in context, as the repeat index reaches it
(`answering_repeat`), so no system's signature changes; a request outside such a block (an
inspect eval's sub-agent, an MCP server's delegate system) is watched by none."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

MAX_UNREACHABLE = 5
"""Requests in a row that never reached their server, each after its retries, on which a run
stops."""


@dataclass
class Reach:
    """What a run's requests found of their server so far."""

    failures: int = 0
    """Requests in a row that never reached their server."""
    unreachable: str | None = None
    """One line saying the server could not be reached, once `MAX_UNREACHABLE` requests in a row
    did not reach it (None before)."""


_WATCH: ContextVar[Reach | None] = ContextVar("peb_reach", default=None)


@contextmanager
def watching_reach() -> Iterator[Reach]:
    """Within the block (and the coroutines it starts), the requests' reach of their server."""
    reach = Reach()
    token = _WATCH.set(reach)
    try:
        yield reach
    finally:
        _WATCH.reset(token)


def reached() -> None:
    """Said when a request reached its server (it answered, even with an error)."""
    reach = _WATCH.get()
    if reach is not None:
        reach.failures = 0


def not_reached(failure: str) -> None:
    """Said when a request never reached its server after its retries (`failure`: one line,
    `could not connect to HOST (why)`)."""
    reach = _WATCH.get()
    if reach is None or reach.unreachable is not None:
        return
    reach.failures += 1
    if reach.failures >= MAX_UNREACHABLE:
        reach.unreachable = (
            f"stopped: {reach.failures} requests in a row {failure}, each after its retries; "
            "is the server running, and the address right? (the run keeps what it recorded; "
            "the same command resumes it)"
        )
