"""The shipped tools (docs/benchmark.md §9, §9.1), each one module declaring one `Tool` and
registering it (`access.register_tool`), in the order a session offers them: `search`, `open`,
`submit`, and `delegate` where a session can hand off."""

from ._search import DEFAULT_HITS, MAX_HITS, MAX_QUERY_CHARS, SEARCH_TOOL, SearchArguments

from ._open import OPEN_TOOL, OpenArguments  # isort: skip
from ._submit import RESPONSE_KEYS, SUBMIT_TOOL  # isort: skip
from ._delegate import (  # isort: skip
    DELEGATE_TOOL,
    MAX_HANDOFFS,
    MAX_REQUEST_CHARS,
    DelegateArguments,
    handoff_arguments,
    handoff_view,
)

__all__ = [
    "DEFAULT_HITS",
    "DELEGATE_TOOL",
    "MAX_HANDOFFS",
    "MAX_HITS",
    "MAX_QUERY_CHARS",
    "MAX_REQUEST_CHARS",
    "OPEN_TOOL",
    "RESPONSE_KEYS",
    "SEARCH_TOOL",
    "SUBMIT_TOOL",
    "DelegateArguments",
    "OpenArguments",
    "SearchArguments",
    "handoff_arguments",
    "handoff_view",
]
