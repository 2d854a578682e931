"""An episode over one task: the tools an agent calls (`search`, `open`, `submit`, as
OpenAI-style function schemas), each answered by the access layer from the corpus index, the
user's scopes and the stores the session reaches, under a disclosure mode (docs/benchmark.md §9,
§9.1). Tools are a registry (`TOOLS`); a session never reads a Task, and `call` never raises for
anything a model can send: an unknown tool, arguments that are not JSON or of the wrong shape,
an unknown or hidden document id, a call after the response was submitted each give an error
result the model reads. A tool that runs an episode of its own (`delegate`, `_delegate.py`) is
awaited through `acall`."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._json import read_json
from ..tasks import STORES, GrantChange, SubAgent, VisibleDocument
from ._disclosure import NOT_FOUND, Disclosure
from ._grants import GrantClock, GrantTimeline
from ._index import CorpusIndex, IndexedDocument
from ._results import (
    AgentStart,
    GrantNotice,
    Handoff,
    Hit,
    OpenResult,
    SearchResult,
    SubmitResult,
    ToolOutcome,
)

if TYPE_CHECKING:
    from ._view import AgentView

DELEGATE = "delegate"
"""The tool that hands part of the contract to a sub-agent (`_delegate.py`)."""
MAX_HITS = 50
"""The most hits one search returns."""
DEFAULT_HITS = 10
SNIPPET_CHARS = 160
"""A hit shows about this many characters of the start of its body."""


@dataclass(frozen=True)
class Corpus:
    """What a session searches: a task's documents indexed with their scopes and stores, the
    scopes the user holds at the start, the family's response schema (the `submit` tool's
    parameters), the sub-agents the task lists (each with its own scopes and stores; none but on
    the `delegation` tier), the task's grant schedule (changes of the user's scopes, set going
    by the episode's calls: `_grants.py`) and the stores the session's tools reach (none: every
    store; a document of another store is, to them, an id that does not exist)."""

    index: CorpusIndex
    user_scopes: tuple[str, ...]
    response_schema: dict[str, Any]
    agents: tuple[SubAgent, ...] = ()
    grants: tuple[GrantChange, ...] = ()
    stores: tuple[str, ...] = ()
    _hits: dict[int, Hit] = field(default_factory=dict, repr=False, compare=False)

    def hit(self, position: int) -> Hit:
        """The hit showing the document at `position` (made once per corpus)."""
        hit = self._hits.get(position)
        if hit is None:
            doc = self.index.documents[position]
            snippet = _snippet(doc.body)
            hit = Hit(doc_id=doc.doc_id, title=doc.title, scope=doc.scope, snippet=snippet)
            self._hits[position] = hit
        return hit


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


MAX_QUERY_CHARS = 300
MAX_ID_CHARS = 64
"""The longest query and doc id a tool takes. Bounds in the schema bound a model decoding under
it (llama.cpp's tool calls decode each call's arguments under its JSON schema, without a token
cap: a tiny model otherwise writes one query until its context is full)."""


class SearchArguments(_Arguments):
    query: str = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="what to look for, in words"
    )
    k: int = Field(default=DEFAULT_HITS, ge=1, le=MAX_HITS, description="how many hits at most")


class OpenArguments(_Arguments):
    doc_id: str = Field(
        min_length=1, max_length=MAX_ID_CHARS, description="the id of a document, from a search hit"
    )


RESPONSE_KEYS = frozenset({"answer", "completeness", "gap_report"})


@dataclass(frozen=True)
class ToolContext:
    """What a tool's description and schema may depend on: the family's response schema and
    the disclosure mode (whose notices the search tool describes)."""

    response_schema: dict[str, Any]
    disclosure: Disclosure
    agents: tuple[SubAgent, ...] = ()
    """The sub-agents the task lists, as the requester is shown them (their scopes those a
    handoff runs under: the intersection with the requester's; their stores): those a
    `delegate` call may name, and the owners of the stores the session does not reach."""
    stores: tuple[str, ...] = ()
    """The stores the session's tools reach (none: a corpus without stores)."""


@dataclass(frozen=True)
class Tool:
    """A tool an agent may call.

    Args:
        name: the function name a model calls.
        description: what the tool does, as the model reads it, in a context.
        parameters: the JSON schema of its arguments in a context (`submit`'s is the family's
            response schema).
        run: the call, given the session and the arguments as a JSON object.
        arun: for a tool that runs an episode of its own (`delegate`), the call awaited
            (`AgentSession.acall`); `run` then answers a call that cannot be awaited.
        offered: offered in every session (False: only where the session can carry it out,
            as `delegate` where the task lists sub-agents and the system runs handoffs).
    """

    name: str
    description: Callable[[ToolContext], str]
    parameters: Callable[[ToolContext], dict[str, Any]]
    run: Callable[[AgentSession, dict[str, Any]], ToolOutcome]
    arun: Callable[[AgentSession, dict[str, Any]], Awaitable[ToolOutcome]] | None = None
    offered: bool = True


def tool_schemas(
    context: ToolContext, tools: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """`tools` (default: every tool offered in every session) as OpenAI-style function
    schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description(context),
                "parameters": tool.parameters(context),
            },
        }
        for tool in (TOOLS[name] for name in (_offered() if tools is None else tools))
    ]


def _offered() -> list[str]:
    return [name for name, tool in TOOLS.items() if tool.offered]


Delegator = Callable[[str, "AgentView"], Awaitable[Handoff]]
"""What runs a handed-off episode: given the sub-agent's name and its view (the request, and a
corpus under the intersection of scopes), the episode's end (`Handoff`)."""


TOOLS: dict[str, Tool] = {}
"""Every registered tool by name, in registration order."""


def register_tool(tool: Tool) -> Tool:
    """Add `tool` to `TOOLS` and return it; a ValueError for a name taken by another tool."""
    if TOOLS.get(tool.name, tool) is not tool:
        raise ValueError(f"tool {tool.name!r} is already registered")
    TOOLS[tool.name] = tool
    return tool


def _failed(message: str) -> ToolOutcome:
    return ToolOutcome(content=json.dumps({"error": message}), error=message)


_NOTICES = {
    "expires": "the grant for scope {scope} expired at step {step}",
    "revoked": "the grant for scope {scope} was revoked at step {step}",
    "granted": "scope {scope} was granted at step {step}",
}
"""What a `GrantNotice` says of each change (a step is a tool call, counted from 1: the call
from which the change holds)."""


def _announced(outcome: ToolOutcome, notices: Sequence[GrantNotice]) -> ToolOutcome:
    """`outcome` with `notices` added to what the model is shown, under `grants`."""
    shown = json.loads(outcome.content)
    shown["grants"] = [notice.model_dump() for notice in notices]
    content = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    return outcome.model_copy(update={"content": content})


def _shown(result: BaseModel) -> str:
    return result.model_dump_json(exclude_none=True)


def _snippet(body: str) -> str:
    if len(body) <= SNIPPET_CHARS:
        return body
    cut = body[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return f"{cut} ..."


def _arguments(
    model: type[_Arguments], tool: str, arguments: dict[str, Any]
) -> _Arguments | ToolOutcome:
    """The arguments as `model`, or an error naming the first problem and what is expected."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "arguments"
        fields = ", ".join(
            f"{name}: {'string' if f.annotation is str else 'integer'}"
            + ("" if f.is_required() else " (optional)")
            for name, f in model.model_fields.items()
        )
        return _failed(f"{tool}: {where}: {error['msg']}; expected {{{fields}}}")


class AgentSession:
    """One episode over one task: the tools, their calls, and the response once submitted.

    Args:
        start: what the agent starts with.
        corpus: the task's indexed documents, the user's scopes and the response schema.
        disclosure: what the access layer tells of what it withholds.
        tools: the tools offered, by name (default: every tool offered in every session, and
            `delegate` when the task lists sub-agents and `delegator` is given).
        delegator: what runs a handed-off episode (None: this session cannot hand off).
    """

    def __init__(
        self,
        start: AgentStart,
        corpus: Corpus,
        disclosure: Disclosure,
        tools: Sequence[str] | None = None,
        delegator: Delegator | None = None,
    ) -> None:
        self.start = start
        self.disclosure = disclosure
        self.delegator = delegator
        self.handoffs = 0
        """How many handed-off episodes the session has run."""
        self._corpus = corpus
        can_delegate = bool(corpus.agents) and delegator is not None
        self._tools = (
            tuple(n for n, t in TOOLS.items() if t.offered or (n == DELEGATE and can_delegate))
            if tools is None
            else tuple(tools)
        )
        for name in self._tools:
            if name not in TOOLS:
                raise ValueError(f"unknown tool {name!r}; valid: {', '.join(TOOLS)}")
        self._grants = GrantClock(corpus.index, corpus.user_scopes, corpus.grants)
        self._reach = corpus.index.reach(corpus.stores)
        self._calls = 0
        self._submitted: str | None = None
        self._submit_call: int | None = None
        self._opened: dict[str, int] = {}

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes in force: what the user may see now."""
        return self._grants.scopes

    @property
    def timeline(self) -> GrantTimeline:
        """What the task's grant schedule has done in this episode so far."""
        return GrantTimeline(
            changes=tuple(self._grants.changes),
            calls=self._calls,
            submit=self._submit_call,
            opened=dict(self._opened),
        )

    def _advance(self, name: str, parsed: dict[str, Any] | ToolOutcome) -> list[GrantNotice]:
        """Apply the grant changes that hold from this call on (what the call searches or
        opens may set one going); their notices where the disclosure mode announces them."""
        query, k, doc_id = None, 0, None
        if isinstance(parsed, dict) and name in ("search", "open"):
            model = SearchArguments if name == "search" else OpenArguments
            args = _arguments(model, name, parsed)
            if isinstance(args, SearchArguments):
                query, k = args.query, args.k
            elif isinstance(args, OpenArguments):
                doc_id = args.doc_id.strip()
        due = self._grants.advance(self._calls, query=query, k=k, doc_id=doc_id)
        if not due or not self.disclosure.announces_grants:
            return []
        return [
            GrantNotice(
                scope=c.scope,
                step=self._calls,
                change=c.change,
                notice=_NOTICES[c.change].format(scope=c.scope, step=self._calls),
            )
            for c in due
        ]

    @property
    def calls(self) -> int:
        """How many tool calls the session has answered (bad ones included)."""
        return self._calls

    @property
    def submitted(self) -> str | None:
        """The accepted response's JSON text, once submitted; the episode is then over."""
        return self._submitted

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered, as OpenAI-style function schemas."""
        corpus = self._corpus
        context = ToolContext(corpus.response_schema, self.disclosure, self.agents, corpus.stores)
        return tool_schemas(context, self._tools)

    @property
    def stores(self) -> tuple[str, ...]:
        """The stores the session's tools reach (none: every store)."""
        return self._corpus.stores

    @property
    def agents(self) -> tuple[SubAgent, ...]:
        """The sub-agents a handoff may name, as the requester is shown them: each with the
        scopes a handoff to it runs under (its own that the user holds too) and its stores."""
        return tuple(
            SubAgent(
                name=agent.name,
                role=agent.role,
                scopes=tuple(s for s in self.scopes if s in agent.scopes),
                stores=agent.stores,
            )
            for agent in self._corpus.agents
        )

    def call(self, name: str, arguments: str | dict[str, Any]) -> ToolOutcome:
        """Answer one tool call: `arguments` as the model gave them (JSON text, or an object
        already parsed). Never raises for what a model sends; a bad call is an error result.
        The task's grant changes due at this call (this call's own search may set one going)
        hold before it is answered."""
        notices, parsed = self._begin(name, arguments)
        outcome = parsed if isinstance(parsed, ToolOutcome) else TOOLS[name].run(self, parsed)
        return _announced(outcome, notices) if notices else outcome

    async def acall(self, name: str, arguments: str | dict[str, Any]) -> ToolOutcome:
        """`call`, awaiting a tool that runs an episode of its own (`delegate`)."""
        notices, parsed = self._begin(name, arguments)
        if isinstance(parsed, ToolOutcome):
            outcome = parsed
        else:
            tool = TOOLS[name]
            arun = tool.arun
            outcome = await arun(self, parsed) if arun is not None else tool.run(self, parsed)
        return _announced(outcome, notices) if notices else outcome

    def _begin(
        self, name: str, arguments: str | dict[str, Any]
    ) -> tuple[list[GrantNotice], dict[str, Any] | ToolOutcome]:
        """Count a call, read its arguments, and apply the grant changes due at it (with their
        notices)."""
        self._calls += 1
        parsed = self._parsed(name, arguments)
        return self._advance(name, parsed), parsed

    def _parsed(self, name: str, arguments: str | dict[str, Any]) -> dict[str, Any] | ToolOutcome:
        """A call's arguments as a JSON object, or the error a bad call gets."""
        if not isinstance(name, str) or name not in self._tools:
            shown = name if isinstance(name, str) else type(name).__name__
            return _failed(f"unknown tool {shown!r}; tools: {', '.join(self._tools)}")
        if self._submitted is not None:
            return _failed(
                f"{name}: the episode is over: a response was already submitted (only the first "
                "submit counts)"
            )
        parsed: Any = arguments
        if isinstance(arguments, str):
            try:
                parsed = read_json(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return _failed(
                    f"{name}: the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
                )
            except ValueError as exc:
                return _failed(f"{name}: the arguments are not valid JSON ({exc})")
        if not isinstance(parsed, dict):
            return _failed(f"{name}: the arguments must be a JSON object")
        return parsed

    # The shipped tools' bodies: the only code that turns the corpus into what a model sees.

    def _search(self, arguments: dict[str, Any]) -> ToolOutcome:
        args = _arguments(SearchArguments, "search", arguments)
        if isinstance(args, ToolOutcome):
            return args
        assert isinstance(args, SearchArguments)
        index = self._corpus.index
        ranking = index.rank(args.query, self._grants.allowed, args.k, self._reach)
        hits = [self._corpus.hit(position) for position in ranking.visible]
        withheld, scopes = self.disclosure.notice(
            [index.documents[p].scope for p in ranking.withheld]
        )
        result = SearchResult(
            query=args.query, hits=tuple(hits), withheld=withheld, withheld_scopes=scopes
        )
        return ToolOutcome(content=_shown(result))

    def _open(self, arguments: dict[str, Any]) -> ToolOutcome:
        args = _arguments(OpenArguments, "open", arguments)
        if isinstance(args, ToolOutcome):
            return args
        assert isinstance(args, OpenArguments)
        index = self._corpus.index
        position = index.positions.get(args.doc_id.strip())
        if position is None or not self._reach[position]:
            return _failed(f"open: {NOT_FOUND}")
        doc: IndexedDocument = index.documents[position]
        if not self._grants.allowed[position]:
            return _failed(f"open: {self.disclosure.denial(doc.scope)}")
        shown = VisibleDocument(doc_id=doc.doc_id, title=doc.title, scope=doc.scope, body=doc.body)
        self._opened.setdefault(doc.doc_id, self._calls)
        return ToolOutcome(content=_shown(OpenResult(doc_id=doc.doc_id, document=shown)))

    def _submit(self, arguments: dict[str, Any]) -> ToolOutcome:
        response: Any = arguments.get("response")
        if "response" not in arguments and RESPONSE_KEYS & set(arguments):
            response = arguments  # the response given flat, without the wrapper: read as given
        if isinstance(response, str):
            with contextlib.suppress(ValueError):
                response = read_json(response)
        if not isinstance(response, dict):
            return _failed(
                'submit: expected {"response": {"answer": ..., "completeness": ..., '
                '"gap_report": ...}}, the response as a JSON object'
            )
        self._submitted = json.dumps(response, ensure_ascii=False)
        self._submit_call = self._calls
        return ToolOutcome(content=_shown(SubmitResult()), submitted=self._submitted)


def _search_schema(context: ToolContext) -> dict[str, Any]:
    return SearchArguments.model_json_schema()


def _open_schema(context: ToolContext) -> dict[str, Any]:
    return OpenArguments.model_json_schema()


def _submit_schema(context: ToolContext) -> dict[str, Any]:
    """`{"response": <the family's response schema>}`, its definitions lifted to the top."""
    schema = dict(context.response_schema)
    defs = schema.pop("$defs", {})
    return {
        "type": "object",
        "properties": {"response": schema},
        "required": ["response"],
        "additionalProperties": False,
        **({"$defs": defs} if defs else {}),
    }


def described(store: str, owner: str | None = None) -> str:
    """A store named and described (with its owner), as the tools tell of it."""
    return f"{store} ({STORES.get(store, store)}" + (f"; owned by {owner})" if owner else ")")


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


def _search_description(context: ToolContext) -> str:
    told = context.disclosure.told
    return (
        "Search the documents you may access; returns the best hits (id, title, scope, the "
        "start of the text)." + _reached(context) + (f" {told}" if told else "")
    )


def _open_description(context: ToolContext) -> str:
    return "Open a document by its id and read all of it." + (
        " Documents of the stores you do not reach are not found." if context.stores else ""
    )


for _tool in (
    Tool("search", _search_description, _search_schema, AgentSession._search),
    Tool(
        "open",
        _open_description,
        _open_schema,
        AgentSession._open,
    ),
    Tool(
        "submit",
        lambda context: (
            "Submit your final response (the response schema); this ends the "
            "episode and only the first submit counts."
        ),
        _submit_schema,
        AgentSession._submit,
    ),
):
    register_tool(_tool)
