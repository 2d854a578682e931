"""The `search(query, k)` tool (docs/benchmark.md §9): the best hits of a query among the
documents the user may see in the stores the session reaches, and what the disclosure mode says
the scope filter withheld among the best matches of those stores. A search is what a `search`
trigger of a grant schedule reads (a late grant is set going by a search that would find one of
its documents)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import numpy as np
from pydantic import Field, ValidationError

from .._grants import CallEvent
from .._index import CorpusIndex, Ranking
from .._results import SearchResult, ToolOutcome
from .._tool import (
    CallContext,
    Tool,
    ToolArguments,
    ToolContext,
    described,
    listed,
    register_tool,
    shown,
    text_argument,
)

MAX_HITS = 50
"""The most hits one search returns."""
DEFAULT_HITS = 10
MAX_QUERY_CHARS = 300
"""The longest query the tool takes (a bound in its schema, as `MAX_ID_CHARS`)."""


class SearchArguments(ToolArguments):
    query: Annotated[str, text_argument("what to look for, in words", MAX_QUERY_CHARS)]
    k: int = Field(default=DEFAULT_HITS, ge=1, le=MAX_HITS, description="how many hits at most")


def _ranking(
    index: CorpusIndex, allowed: np.ndarray, reach: np.ndarray, args: SearchArguments
) -> Ranking:
    return index.rank(args.query, allowed, args.k, reach)


def _search(context: CallContext, args: SearchArguments) -> ToolOutcome:
    corpus = context.corpus
    ranking = _ranking(corpus.index, context.allowed, context.reach, args)
    hits = [corpus.hit(position) for position in ranking.visible]
    withheld, scopes = context.disclosure.notice(
        [corpus.index.documents[p].scope for p in ranking.withheld]
    )
    result = SearchResult(
        query=args.query, hits=tuple(hits), withheld=withheld, withheld_scopes=scopes
    )
    return ToolOutcome(content=shown(result))


def _surfaces(
    index: CorpusIndex, allowed: np.ndarray, reach: np.ndarray, arguments: Mapping[str, Any]
) -> tuple[Sequence[int], Sequence[int]]:
    try:
        args = SearchArguments.model_validate(arguments)
    except ValidationError:
        return (), ()
    ranking = _ranking(index, allowed, reach, args)
    return ranking.visible, ranking.withheld


def _reached(context: ToolContext) -> str:
    """What a session with stores is told of them: the stores its tools reach, and which
    sub-agent owns each of the others (nothing for a corpus without stores)."""
    if not context.stores:
        return ""
    mine = "; ".join(described(store) for store in context.stores)
    others = "; ".join(
        described(store, agent.name)
        for agent in context.agents
        for store in agent.stores
        if store not in context.stores
    )
    return f" The stores you reach: {mine}." + (
        f" Your tools do not reach the other stores, each owned by a sub-agent: {others}."
        if others
        else ""
    )


def _description(context: ToolContext) -> str:
    told = context.disclosure.told
    return (
        "Search the documents you may access; returns the best hits (id, title, scope, the "
        "start of the text)." + _reached(context) + (f" {told}" if told else "")
    )


def _render(result: Mapping[str, Any], hits: Sequence[str]) -> str:
    """The hits shown, and what the disclosure mode said of what was withheld."""
    told = result.get("withheld")
    scopes = result.get("withheld_scopes")
    said = (
        "nothing said of withheld records"
        if told is None
        else f"told {told} withheld" + (f" (scopes {', '.join(scopes)})" if scopes else "")
    )
    return f"{len(hits)} hits: {listed(hits) or '-'}; {said}"


SEARCH_TOOL = register_tool(
    Tool(
        "search",
        _description,
        SearchArguments,
        _search,
        prompt="Find documents with search(query, k)",
        event=lambda args: CallEvent(query=args.query, k=args.k),
        surfaces=_surfaces,
        render=_render,
    )
)
