"""The access layer (docs/benchmark.md §9): the one place that decides what a tool may return.
A task's corpus is indexed by a search engine in process (bm25s) with each document's scope; the
user's scopes filter every query; a disclosure mode decides what is said of what was withheld;
tools answer with typed results that cannot hold a hidden document, a fact, an evidence-family
tag or an oracle. Agents reach a task through the `agent` view kind: `view_for("agent", task,
spec)` gives an `AgentView`, whose `session(disclosure)` is one episode."""

from ._delegate import (
    DELEGATE_TOOL,
    MAX_HANDOFFS,
    MAX_REQUEST_CHARS,
    DelegateArguments,
    handoff_view,
)
from ._disclosure import (
    DEFAULT_DISCLOSURE,
    DISCLOSURES,
    NOT_FOUND,
    Disclosure,
    get_disclosure,
    register_disclosure,
)
from ._explore import corpus_frame, search_frame
from ._index import CorpusIndex, IndexedDocument, Ranking, tokens
from ._results import (
    AgentStart,
    DelegateResult,
    GrantNotice,
    Handoff,
    HandoffStatus,
    Hit,
    OpenResult,
    SearchResult,
    SubmitResult,
    ToolOutcome,
)
from ._session import (
    DEFAULT_HITS,
    DELEGATE,
    MAX_HITS,
    MAX_QUERY_CHARS,
    SNIPPET_CHARS,
    TOOLS,
    AgentSession,
    Corpus,
    Delegator,
    OpenArguments,
    SearchArguments,
    Tool,
    ToolContext,
    register_tool,
    tool_schemas,
)
from ._view import AgentView, agent_start, agent_view, family_tools

__all__ = [
    "DEFAULT_DISCLOSURE",
    "DEFAULT_HITS",
    "DELEGATE",
    "DELEGATE_TOOL",
    "DISCLOSURES",
    "MAX_HANDOFFS",
    "MAX_HITS",
    "MAX_QUERY_CHARS",
    "MAX_REQUEST_CHARS",
    "NOT_FOUND",
    "SNIPPET_CHARS",
    "TOOLS",
    "AgentSession",
    "AgentStart",
    "AgentView",
    "Corpus",
    "CorpusIndex",
    "DelegateArguments",
    "DelegateResult",
    "Delegator",
    "Disclosure",
    "GrantNotice",
    "Handoff",
    "HandoffStatus",
    "Hit",
    "IndexedDocument",
    "OpenArguments",
    "OpenResult",
    "Ranking",
    "SearchArguments",
    "SearchResult",
    "SubmitResult",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "agent_start",
    "agent_view",
    "corpus_frame",
    "family_tools",
    "get_disclosure",
    "handoff_view",
    "register_disclosure",
    "register_tool",
    "search_frame",
    "tokens",
    "tool_schemas",
]
