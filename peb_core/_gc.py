"""Pausing the cyclic garbage collector around batch construction of many small objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause cyclic collection while building many acyclic objects (tasks, records): each full
    collection would otherwise walk everything built so far. Reference counting still frees."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
