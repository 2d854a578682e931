"""The `open(doc_id)` tool (docs/benchmark.md §9): the whole of a document the user may see in
a store the session reaches, or an error: `not found` for an id that does not exist or is kept
in a store out of reach, and for a hidden document what the disclosure mode says. An open is
what an `open` trigger of a grant schedule reads (an ending grant is set going by the first open
answered with a document of its scope), and a document opened is what the trace metrics count
as read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from ...tasks import VisibleDocument
from .._disclosure import NOT_FOUND
from .._grants import CallEvent
from .._results import OpenResult, ToolOutcome
from .._tool import (
    CallContext,
    Tool,
    ToolArguments,
    ToolContext,
    failed,
    register_tool,
    shown,
    text_argument,
)


class OpenArguments(ToolArguments):
    doc_id: Annotated[str, text_argument("the id of a document, from a search hit")]


def _open(context: CallContext, args: OpenArguments) -> ToolOutcome:
    index = context.corpus.index
    doc_id = args.doc_id.strip()
    position = index.positions.get(doc_id)
    if position is None or not context.reach[position]:
        return failed(f"open: {NOT_FOUND}")
    doc = index.documents[position]
    if not context.allowed[position]:
        return failed(f"open: {context.disclosure.denial(doc.scope)}")
    document = VisibleDocument(doc_id=doc.doc_id, title=doc.title, scope=doc.scope, body=doc.body)
    result = OpenResult(doc_id=doc.doc_id, document=document)
    return ToolOutcome(content=shown(result), opened=doc.doc_id)


def _opens(arguments: Mapping[str, Any]) -> str | None:
    """The doc id the arguments name, trimmed as the tool reads it (valid arguments or not)."""
    doc_id = arguments.get("doc_id")
    return doc_id.strip() if isinstance(doc_id, str) else None


def _description(context: ToolContext) -> str:
    return "Open a document by its id and read all of it." + (
        " Documents of the stores you do not reach are not found." if context.stores else ""
    )


def _render(result: Mapping[str, Any], shown_ids: Sequence[str]) -> str:
    """The document opened, or what refused it."""
    document = result.get("document")
    if isinstance(document, dict):
        return f"opened {document.get('doc_id')}: {document.get('title')}"
    return f"refused: {result.get('error', result)}"


OPEN_TOOL = register_tool(
    Tool(
        "open",
        _description,
        OpenArguments,
        _open,
        prompt="read one with open(doc_id)",
        event=lambda args: CallEvent(doc_id=args.doc_id.strip()),
        opens=_opens,
        render=_render,
    )
)
