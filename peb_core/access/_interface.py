"""How an agent answers the person it works for (`--interface`, docs/benchmark.md §10.4):
`submit` (the default), through the `submit` tool, whose response is the reply; or `chat`, as
deployed assistants do, with no tool that submits: its last message without a tool call is its
response, read as prose (`peb_core.reading`)."""

from __future__ import annotations

INTERFACES: tuple[str, ...] = ("submit", "chat")
"""How a response reaches the user: through the `submit` tool, or in a chat message."""
DEFAULT_INTERFACE = "submit"


def check_interface(name: str) -> str:
    """`name` if it is an interface; a ValueError naming the valid ones if not."""
    if name not in INTERFACES:
        raise ValueError(f"unknown interface {name!r}; valid: {', '.join(INTERFACES)}")
    return name
