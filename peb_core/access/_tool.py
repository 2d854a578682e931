"""What a tool is (docs/benchmark.md §9, tools): one module declaring one `Tool` value, added to
the registry (`TOOLS`) by one `register_tool` line. A tool declares its arguments (a model whose
JSON schema is its parameters), what a model reads of it (`description`, in a `ToolContext`), its
handler (`run`, given the `CallContext` a session offers one call and the arguments as its
model), the words the agent prompt says of it, what a call does that a grant schedule reads
(`event`), and how later stages read its calls: the document a call opens (`opens`), what a call
showed and withheld, found again (`surfaces`), whether its accepted call ends the episode
(`ends`, unless its result says the user answered it: `goes_on`) and the response it submits
(`submits`), whether it hands off (`hands_off`), and how a replay renders its result (`render`).
Nothing after the access layer branches on a tool's name: it asks the registry (`opened_id`,
`surfaced_ids`, `rendered`, `ends_episode`, `went_on`, `submitted_response`, `hands_off`,
`escalates`). The shipped tools are in `tools/`."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._json import read_json
from ..tasks import STORES, Owners, SubAgent
from ._disclosure import Disclosure
from ._grants import CallEvent
from ._index import CorpusIndex
from ._results import AgentStart, Handoff, ToolOutcome

if TYPE_CHECKING:
    from ._session import Corpus
    from ._view import AgentView

MAX_ID_CHARS = 64
"""The longest doc id or name a tool takes. Bounds in the schema bound a model decoding under it
(llama.cpp's tool calls decode each call's arguments under its JSON schema, without a token
cap: a tiny model otherwise writes one argument until its context is full)."""


MAX_CALL_ARGUMENTS = 16_000
"""The longest a call's arguments may be, in characters of its JSON text as given (arguments
given already parsed, as inspect's tools take them: as `json.dumps(..., ensure_ascii=False)`
writes them, which is how a record keeps them). A longer call is an error result, read no
further, live and in every replay alike: a record keeps a call's arguments whole up to
`systems.MAX_KEPT_ARGUMENTS` (20,000), more than this bound, so every call a session acts on is
recorded whole and every call it refused is refused again when the record is replayed (a cut
one is longer than the bound too), so padding a call (with JSON whitespace, with keys a tool
leaves unread) cannot make the session act on what a record does not keep. The largest valid
call of a shipped tool, as compact JSON, is about 2,100 characters (a `delegate` whose request
has the most characters it takes; a `submit` with every list full is under 1,200), which
tests/scoring/test_record_replay.py measures."""


def arguments_text(arguments: str | Mapping[str, Any]) -> str:
    """A call's arguments as the bound and a record measure them: as given, or an object as
    `json.dumps(..., ensure_ascii=False)` writes it (how inspect's conversation is recorded)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=str)


def too_long(name: str) -> ToolOutcome:
    """The error result of a call whose arguments are longer than `MAX_CALL_ARGUMENTS`; it does
    not say how long they were, so a replay of a record that kept only their start says the
    same."""
    return failed(
        f"{name}: the arguments are longer than {MAX_CALL_ARGUMENTS:,} characters; a valid "
        "call takes a few thousand at most"
    )


class ToolArguments(BaseModel):
    """A tool's arguments: a JSON object of exactly these fields."""

    model_config = ConfigDict(extra="forbid")


def text_argument(description: str, max_chars: int = MAX_ID_CHARS) -> Any:
    """A required text argument of a tool (`Annotated[str, text_argument(...)]`): 1 to
    `max_chars` characters, a bound in its schema (see `MAX_ID_CHARS`), with `description` for
    the model."""
    return Field(min_length=1, max_length=max_chars, description=description)


A = TypeVar("A")
"""A tool's arguments as its handler takes them: a `ToolArguments` model, or the JSON object
as given (`dict`) for a tool that reads its arguments itself."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool's description and schema may depend on: the family's response schema, the
    disclosure mode (whose notices the search tool describes) and whether the user pushes back
    on a response (whose end the submit tool describes)."""

    response_schema: dict[str, Any]
    disclosure: Disclosure
    agents: tuple[SubAgent, ...] = ()
    """The sub-agents the task lists, as the requester is shown them (their scopes those a
    handoff runs under: the intersection with the requester's; their stores): those a
    `delegate` call may name, and the owners of the stores the session does not reach (none:
    a description for every task, as a listing of tools gives it)."""
    stores: tuple[str, ...] = ()
    """The stores the session's tools reach (none: a corpus without stores)."""
    pushes: bool = False
    """Whether the user answers a response that reports a gap (`--followup pressure`), so an
    accepted submit may leave the episode going."""
    owners: Owners | None = None
    """The family's scope owners and reviewer (None: it names none): the roles an `escalate`
    call may name."""


def to_one_of(
    arguments: type[ToolArguments], names: Callable[[ToolContext], Sequence[str] | None]
) -> Callable[[ToolContext], dict[str, Any]]:
    """A tool's `parameters`: `arguments`' schema with its `to` restricted to the names a
    context gives (`names`: an enum of them; None: any text, as `arguments` declares it)."""

    def parameters(context: ToolContext) -> dict[str, Any]:
        schema = arguments.model_json_schema()
        allowed = names(context)
        if allowed is not None:
            schema["properties"]["to"]["enum"] = list(allowed)
        return schema

    return parameters


Delegator = Callable[[str, "AgentView"], Awaitable[Handoff]]
"""What runs a handed-off episode: given the sub-agent's name and its view (the request, and a
corpus under the intersection of scopes), the episode's end (`Handoff`)."""


@dataclass(frozen=True)
class CallContext:
    """What a session offers a tool's handler for one call, once the grant changes due at it
    hold: the corpus and the masks that say what the user may see now and what the session's
    tools reach (a handler shows only what both allow; the typed results enforce the rest), the
    disclosure mode, the agent's start, what a handoff needs and what the user would say to a
    response. A handler reports what its call did in its `ToolOutcome` (`submitted` and
    `goes_on`, `opened`, `handed_off`); the session keeps it."""

    call: int
    """The call's number in the episode, from 1 (bad calls included)."""
    start: AgentStart
    corpus: Corpus
    """The task's corpus: every document with its scope and store, hidden ones included."""
    disclosure: Disclosure
    scopes: tuple[str, ...]
    """The user's scopes in force at this call."""
    allowed: np.ndarray
    """Which documents of `corpus.index` those scopes let the user see (a boolean mask)."""
    reach: np.ndarray
    """Which documents are kept in the stores the session's tools reach (a boolean mask)."""
    delegator: Delegator | None = None
    """What runs a handoff (None: this session cannot hand off)."""
    handoffs: int = 0
    """How many handoffs the episode has made before this call."""
    pressure: str | None = None
    """What the user says if this call's submit reports a gap (`--followup pressure`, before
    the first accepted submit; None: no user answers it)."""


@dataclass(frozen=True)
class Tool(Generic[A]):
    """A tool an agent may call.

    Args:
        name: the function name a model calls.
        description: what the tool does, as the model reads it, in a context.
        arguments: its arguments' model (`ToolArguments`: a call whose arguments break it is an
            error result naming the first problem), or `dict` for a tool that reads the JSON
            object as given.
        run: the call, given its `CallContext` and its arguments.
        parameters: the JSON schema of its arguments in a context (default: `arguments`'
            schema).
        arun: for a tool that runs an episode of its own (`delegate`), the call awaited
            (`AgentSession.acall`); `run` then answers a call that cannot be awaited.
        prompt: the words the agent prompt says of it (`systems.get_protocol(...).agent`;
            "": none), e.g. `read one with open(doc_id)`.
        reminder: how the reminder after a reply that calls no tool names it (default: its
            name).
        event: what a call does that a grant schedule reads (`CallEvent`: the search it makes,
            the document it opens), from its arguments; None: nothing.
        opens: the doc id a call names to open, from its arguments as a JSON object, read as
            the access layer reads it and whether or not they are valid (the trace metrics'
            reads and probes, a replay's `doc_id`); None: the tool opens nothing.
        surfaces: the positions in the index of the documents a call showed and of those the
            scope filter withheld from it, found again from its arguments (as a JSON object)
            under the scopes in force and the stores reached (a replay's `shown` and
            `withheld`); None: it shows no document from a ranking.
        render: one line, for a person, of what a call that did not fail showed (a replay's
            `what_it_saw`), from its result as a JSON object and the doc ids it showed.
        note: a paragraph a task's start adds of the tool where the start is read as text
            (an MCP client's `start_task`), in a context; None: none.
        ends: its accepted call ends the episode (`submit`), unless `goes_on` says otherwise.
        goes_on: for a tool that `ends`, whether the episode went on after an accepted call,
            from its result as a JSON object (the user answered it, `--followup pressure`).
        submits: for a tool that `ends`, the response a call submits (its JSON text), from its
            arguments as a JSON object, read as the handler reads them (None: no response).
        hands_off: a call runs a sub-agent's episode: the tool is offered only where the
            session can carry it out (the task lists sub-agents and a delegator runs them).
        asked: the tool is offered only in a session that asks for it by name (a prompt
            protocol's `tools`, `escalate` under `structured_gap@2`), never by default: the
            shipped protocols' sessions, prompts and digests stay as they were.
        escalates: its accepted call hands the task to a human and ends the episode without
            a response (`escalate`; the reply's status is then `escalated`).
    """

    name: str
    description: Callable[[ToolContext], str]
    arguments: type[A]
    run: Callable[[CallContext, A], ToolOutcome]
    parameters: Callable[[ToolContext], dict[str, Any]] | None = None
    arun: Callable[[CallContext, A], Awaitable[ToolOutcome]] | None = None
    prompt: str = ""
    reminder: str = ""
    event: Callable[[A], CallEvent | None] | None = None
    opens: Callable[[Mapping[str, Any]], str | None] | None = None
    surfaces: (
        Callable[
            [CorpusIndex, np.ndarray, np.ndarray, Mapping[str, Any]],
            tuple[Sequence[int], Sequence[int]],
        ]
        | None
    ) = None
    render: Callable[[Mapping[str, Any], Sequence[str]], str] | None = None
    note: Callable[[ToolContext], str] | None = None
    ends: bool = False
    goes_on: Callable[[Mapping[str, Any]], bool] | None = None
    submits: Callable[[Mapping[str, Any]], str | None] | None = None
    hands_off: bool = False
    asked: bool = False
    escalates: bool = False

    def schema(self, context: ToolContext) -> dict[str, Any]:
        """The tool as an OpenAI-style function schema in `context`."""
        model = self.arguments
        if self.parameters is not None:
            parameters = self.parameters(context)
        elif issubclass(model, BaseModel):
            parameters = model.model_json_schema()
        else:
            raise ValueError(f"tool {self.name!r} reads its arguments as given: give parameters")
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description(context),
                "parameters": parameters,
            },
        }

    def read(self, arguments: dict[str, Any]) -> A | ToolOutcome:
        """`arguments` as the handler takes them, or the error result naming the first problem
        and what is expected."""
        model = self.arguments
        if not issubclass(model, BaseModel):
            return arguments  # type: ignore[return-value]  # A is dict: read as given
        try:
            return model.model_validate(arguments)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(map(str, error["loc"])) or "arguments"
            fields = ", ".join(
                f"{name}: {_KINDS.get(f.annotation, 'value')}"
                + ("" if f.is_required() else " (optional)")
                for name, f in model.model_fields.items()
            )
            return failed(f"{self.name}: {where}: {error['msg']}; expected {{{fields}}}")


_KINDS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
"""How an error names a field's type."""


TOOLS: dict[str, Tool[Any]] = {}
"""Every registered tool by name, in registration order."""


def register_tool(tool: Tool[A]) -> Tool[A]:
    """Add `tool` to `TOOLS` and return it; a ValueError for a name taken by another tool, or
    for a tool whose arguments are read as given (`dict`) without `parameters`."""
    if tool.parameters is None and not issubclass(tool.arguments, BaseModel):
        raise ValueError(f"tool {tool.name!r} reads its arguments as given: give parameters")
    if TOOLS.get(tool.name, tool) is not tool:
        raise ValueError(f"tool {tool.name!r} is already registered")
    TOOLS[tool.name] = tool
    return tool


def offered(handing: bool = False, asks: Sequence[str] = ()) -> list[str]:
    """The registered tools a session offers, by name: every one, less those that hand off
    unless it can (`handing`) and those offered only when asked for (`Tool.asked`) unless
    `asks` names them."""
    return [
        name
        for name, tool in TOOLS.items()
        if (handing or not tool.hands_off) and (not tool.asked or name in asks)
    ]


def asked_tools() -> list[str]:
    """The registered tools offered only when a session asks for them, by name."""
    return [name for name, tool in TOOLS.items() if tool.asked]


def tool_schemas(context: ToolContext, tools: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """`tools` (default: every tool offered in every session) as OpenAI-style function
    schemas."""
    return [TOOLS[name].schema(context) for name in (offered() if tools is None else tools)]


def failed(message: str) -> ToolOutcome:
    """The error result saying `message`."""
    return ToolOutcome(content=json.dumps({"error": message}), error=message)


def shown(result: BaseModel) -> str:
    """A result as the model is shown it: compact JSON, unset fields left out."""
    return result.model_dump_json(exclude_none=True)


def described(store: str, owner: str | None = None) -> str:
    """A store named and described (with its owner), as the tools tell of it."""
    return f"{store} ({STORES.get(store, store)}" + (f"; owned by {owner})" if owner else ")")


def listed(ids: Sequence[str], most: int = 5) -> str:
    """Ids listed for a person: the first `most`, and how many more."""
    more = f" and {len(ids) - most} more" if len(ids) > most else ""
    return ", ".join(ids[:most]) + more


# What later stages ask of a call by its tool's name: the registry's answer, so none of them
# branches on a name. A name no tool is registered under (a record of a tool since removed)
# opens, shows, ends and hands off nothing.


def _object(text: str) -> dict[str, Any]:
    """Text as recorded (a call's result), as a JSON object (empty when it is not one)."""
    try:
        parsed = read_json(text)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _arguments(arguments: str) -> dict[str, Any]:
    """A call's arguments as recorded, as the session read them: a JSON object, empty when they
    are not one or are longer than `MAX_CALL_ARGUMENTS` (the session read no further)."""
    return {} if len(arguments) > MAX_CALL_ARGUMENTS else _object(arguments)


def opened_id(name: str, arguments: str) -> str | None:
    """The doc id a call of tool `name` with `arguments` (as recorded) names to open, if any."""
    tool = TOOLS.get(name)
    return tool.opens(_arguments(arguments)) if tool is not None and tool.opens else None


def surfaced_ids(
    name: str, arguments: str, index: CorpusIndex, scopes: Sequence[str], stores: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The doc ids a call of tool `name` with `arguments` (as recorded) showed and those the
    scope filter withheld from it, found again in `index` under `scopes` in the `stores` it
    reached (empty for a tool that shows none, or arguments it would not take)."""
    tool = TOOLS.get(name)
    if tool is None or tool.surfaces is None:
        return [], []
    allowed, reach = index.allowed(tuple(scopes)), index.reach(tuple(stores))
    visible, withheld = tool.surfaces(index, allowed, reach, _arguments(arguments))
    ids = [d.doc_id for d in index.documents]
    return [ids[p] for p in visible], [ids[p] for p in withheld]


def rendered(name: str, result: str | None, shown: Sequence[str]) -> str:
    """One line of what a call of tool `name` that did not fail showed (its `render`, from
    `result` as recorded and the doc ids it showed); the result as it is for a tool without
    one."""
    tool = TOOLS.get(name)
    if tool is None or tool.render is None:
        return str(result)
    return tool.render(_object(result or ""), shown)


def ends_episode(name: str) -> bool:
    """Whether an accepted call of tool `name` ends the episode (unless its result says the
    episode went on: `went_on`)."""
    tool = TOOLS.get(name)
    return tool is not None and tool.ends


def went_on(name: str, result: str | None) -> bool:
    """Whether the episode went on after an accepted call of tool `name` that ends episodes,
    by its `result` as recorded: the user answered it (`--followup pressure`)."""
    tool = TOOLS.get(name)
    return tool is not None and tool.goes_on is not None and tool.goes_on(_object(result or ""))


def checked_by(name: str, result: str | None) -> str | None:
    """The platform's check that answered an accepted call of tool `name` that ends episodes,
    by its `result` as recorded (`SubmitResult.platform`: a run's intervention, the session's
    `SubmitCheck`); None when none did."""
    if not ends_episode(name):
        return None
    check = _object(result or "").get("platform")
    return check if isinstance(check, str) else None


def submitted_response(name: str, arguments: str) -> str | None:
    """The response a call of tool `name` with `arguments` (as recorded) submits, as its JSON
    text read as the tool reads it (None: the tool submits none, or not these arguments)."""
    tool = TOOLS.get(name)
    return tool.submits(_arguments(arguments)) if tool is not None and tool.submits else None


def hands_off(name: str) -> bool:
    """Whether a call of tool `name` runs a sub-agent's episode."""
    tool = TOOLS.get(name)
    return tool is not None and tool.hands_off


def escalates(name: str) -> bool:
    """Whether an accepted call of tool `name` hands the task to a human (`Tool.escalates`)."""
    tool = TOOLS.get(name)
    return tool is not None and tool.escalates
