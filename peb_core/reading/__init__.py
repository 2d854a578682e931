"""Reading a message in prose (docs/benchmark.md §2.1): deterministic, data-driven per family
(the family file's vocabulary and `[prose]` phrasings) and explainable (each decision points at
the words it read). It imports only `peb_core.tasks`, so every later stage may use it."""

from ._evaluate import (
    SURFACES,
    Agreement,
    Score,
    Surface,
    agreement,
    differences,
    evaluate,
    label_items,
    reading_items,
)
from ._lexicon import CUE_FILE, cues
from ._read import MARK_KINDS, Mark, MarkKind, ProseReading, read_prose
from ._say import say_response

__all__ = [
    "CUE_FILE",
    "MARK_KINDS",
    "SURFACES",
    "Agreement",
    "Mark",
    "MarkKind",
    "ProseReading",
    "Score",
    "Surface",
    "agreement",
    "cues",
    "differences",
    "evaluate",
    "label_items",
    "read_prose",
    "reading_items",
    "say_response",
]
