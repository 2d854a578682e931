"""The shipped tools (docs/benchmark.md §9, §9.1, §9.4), each one module declaring one `Tool`
and registering it (`access.register_tool`), in the order a session offers them: `search`,
`open`, `submit`, `delegate` where a session can hand off, and `escalate` where a session asks
for it."""

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
from ._escalate import (  # isort: skip
    ESCALATE_TOOL,
    MAX_REASON_CHARS,
    EscalateArguments,
    escalation_arguments,
)

__all__ = [
    "DEFAULT_HITS",
    "DELEGATE_TOOL",
    "ESCALATE_TOOL",
    "MAX_HANDOFFS",
    "MAX_HITS",
    "MAX_QUERY_CHARS",
    "MAX_REASON_CHARS",
    "MAX_REQUEST_CHARS",
    "OPEN_TOOL",
    "RESPONSE_KEYS",
    "SEARCH_TOOL",
    "SUBMIT_TOOL",
    "DelegateArguments",
    "EscalateArguments",
    "OpenArguments",
    "SearchArguments",
    "escalation_arguments",
    "handoff_arguments",
    "handoff_view",
]
