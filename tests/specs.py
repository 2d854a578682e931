"""Walking a chart's Vega-Lite spec (`chart.to_dict()`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of a spec's dicts, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)
