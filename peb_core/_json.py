"""JSON from text nothing vouches for (a model's reply, a tool call's arguments, a record's
trace): arrays or objects nested too deep for Python's parser are malformed JSON like any other,
a ValueError, never a RecursionError."""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()
TOO_DEEP = "arrays or objects nested too deeply to be read"


def read_json(text: str | bytes) -> Any:
    """`json.loads(text)`; a ValueError (json.JSONDecodeError for a syntax error, with its
    position) if it is not JSON or is nested too deeply."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def read_json_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value that starts at `text[start]` and where it ends
    (`json.JSONDecoder.raw_decode`); a ValueError as `read_json` gives one."""
    try:
        return _DECODER.raw_decode(text, start)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
