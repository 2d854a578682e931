"""An episode over one task: the tools an agent calls (the registry, `_tool.py`; the shipped
`search`, `open`, `submit` and `delegate` in `tools/`), each answered by its handler from the
corpus index, the user's scopes and the stores the session reaches, under a disclosure mode
(docs/benchmark.md §9, §9.1). A session never reads a Task, and `call` never raises for anything
a model can send: an unknown tool, arguments longer than `MAX_CALL_ARGUMENTS` (never read,
so that a record, which keeps every call within that bound whole, replays as the session ran),
not JSON or of the wrong shape, an unknown or hidden document id, a call once the episode is
over each give an error result the model reads. Before each call is answered the session
applies the grant changes due at it (`GrantClock`; the call's own search or open may set one
going), then gives the tool's handler the public `CallContext` of the call, and keeps what the
call did (an accepted submit, a document read, a handoff). A tool that runs an episode of its
own (`delegate`) is awaited through `acall`. The episode is over (`over`) at the first accepted
submit, unless the user answers it (`--followup pressure`, `_followup.py`): then at the next
one, or, with `--pushes N`, at the first that the user does not answer (a response that claims
complete, or one after its N-th push); or at an accepted `escalate` (offered where the session
asks for it), which hands the task to a human owner without a response. A session may also be
given the platform's checks of an accepted submit (`SubmitCheck`, a run's intervention:
`--intervention recheck_at_submit`): a check may answer the submit in the platform's words
instead, and the episode goes on (the user has not seen the response; it stands if the agent
submits no other); an escalation is not a submit and is never checked. Under `--interface chat`
(`_interface.py`) no tool submits: the agent answers in a message (`say`), which is its
response, and the user answers a message that reports a gap (as the family's prose reader reads
it, `Corpus.reads_gap`) as it answers a submit."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._json import read_json
from .._registry import Registry
from ..tasks import GrantChange, SubAgent
from ._disclosure import Disclosure
from ._followup import DEFAULT_FOLLOWUP, DEFAULT_PUSHES, check_followup, check_pushes
from ._grants import GrantClock, GrantTimeline
from ._index import CorpusIndex
from ._interface import DEFAULT_INTERFACE, check_interface
from ._results import AgentStart, GrantNotice, Hit, SubmitResult, ToolOutcome
from ._tool import (
    MAX_CALL_ARGUMENTS,
    MAX_ID_CHARS,
    TOOLS,
    CallContext,
    Delegator,
    Tool,
    ToolContext,
    arguments_text,
    failed,
    offered,
    shown,
    too_long,
    tool_schemas,
)


@dataclass(frozen=True)
class SubmitCheck:
    """The platform's check of each accepted submit (an intervention's, docs/benchmark.md §11),
    registered by name (`SUBMIT_CHECKS`): `answer(session)`, given the session (what its calls
    opened, the scopes now in force, how often the platform answered before), is the result the
    platform answers the submit with instead (the episode goes on; the response stands if the
    agent submits no other), or None to let the submit's own result stand. The session marks
    its answer with the check's name (`SubmitResult.platform`), so a replay of the episode's
    calls (`replay_grants`) gives its session the checks the trace shows answered, which answer
    as the live ones did: a check must be deterministic."""

    name: str
    answer: Callable[[AgentSession], SubmitResult | None]


SUBMIT_CHECKS: Registry[SubmitCheck] = Registry("submit check")
"""Every registered submit check by name (`register_submit_check`)."""
register_submit_check = SUBMIT_CHECKS.register

SNIPPET_CHARS = 160
"""A hit shows about this many characters of the start of its body."""


@dataclass(frozen=True)
class Corpus:
    """What a session searches: a task's documents indexed with their scopes and stores, the
    scopes the user holds at the start, the family's response schema (the `submit` tool's
    parameters), the sub-agents the task lists (each with its own scopes and stores; none but on
    the `delegation` tier), the task's grant schedule (changes of the user's scopes, set going
    by the episode's calls: `_grants.py`), the stores the session's tools reach (none: every
    store; a document of another store is, to them, an id that does not exist), what the user
    says at each push if it pushes back on a response that reports a gap (`--followup
    pressure`, in order; none: no user answers, as for a handoff's sub-agent) and how a
    message in prose is read for whether it reports a gap (`--interface chat`; None: every
    message is taken to report one)."""

    index: CorpusIndex
    user_scopes: tuple[str, ...]
    response_schema: dict[str, Any]
    agents: tuple[SubAgent, ...] = ()
    grants: tuple[GrantChange, ...] = ()
    stores: tuple[str, ...] = ()
    pressures: tuple[str, ...] = ()
    reads_gap: Callable[[str], bool] | None = field(default=None, repr=False, compare=False)
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


def _snippet(body: str) -> str:
    if len(body) <= SNIPPET_CHARS:
        return body
    cut = body[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return f"{cut} ..."


class AgentSession:
    """One episode over one task: the tools, their calls, and the response once submitted.

    Args:
        start: what the agent starts with.
        corpus: the task's indexed documents, the user's scopes and the response schema.
        disclosure: what the access layer tells of what it withholds.
        tools: the tools offered, by name (default: every registered tool, those that hand off
            only when the task lists sub-agents and `delegator` is given).
        delegator: what runs a handed-off episode (None: this session cannot hand off).
        followup: what the user does after a response (`FOLLOWUPS`): under `pressure` it
            answers an accepted response that claims incomplete or blocks with the corpus's
            words for its next push, and the episode goes on.
        asks: the tools offered only when asked for (`Tool.asked`: `escalate`) that this
            session offers (a prompt protocol's `tools`); ignored when `tools` is given.
        pushes: how many times the user pushes back at most (1 to `MAX_PUSHES`).
        interface: how the agent answers (`INTERFACES`): `submit`, through the tool; `chat`,
            in a message (`say`), with no tool that ends the episode offered (`submit`, nor
            `escalate`: no chat rendering asks for it).
        checks: the platform's checks of each accepted submit, in order (`SubmitCheck`); the
            first that answers one answers it, and the user (`followup`) does not see it; an
            escalation is never checked.
    """

    def __init__(
        self,
        start: AgentStart,
        corpus: Corpus,
        disclosure: Disclosure,
        tools: Sequence[str] | None = None,
        delegator: Delegator | None = None,
        followup: str = DEFAULT_FOLLOWUP,
        asks: Sequence[str] = (),
        pushes: int = DEFAULT_PUSHES,
        interface: str = DEFAULT_INTERFACE,
        checks: Sequence[SubmitCheck] = (),
    ) -> None:
        self.start = start
        self.disclosure = disclosure
        self.delegator = delegator
        self.followup = check_followup(followup)
        self.max_pushes = check_pushes(pushes)
        self.interface = check_interface(interface)
        self.handoffs = 0
        """How many handed-off episodes the session has run."""
        self._corpus = corpus
        handing = bool(corpus.agents) and delegator is not None
        chosen = offered(handing, asks) if tools is None else tools
        if interface == "chat":  # no tool that ends the episode: a message does
            chosen = [name for name in chosen if name in TOOLS and not TOOLS[name].ends]
        self._tools = tuple(chosen)
        for name in self._tools:
            if name not in TOOLS:
                raise ValueError(f"unknown tool {name!r}; valid: {', '.join(TOOLS)}")
        self._grants = GrantClock(corpus.index, corpus.user_scopes, corpus.grants)
        self._reach = corpus.index.reach(corpus.stores)
        self._calls = 0
        self._submitted: str | None = None
        self._escalated: str | None = None
        self._submit_call: int | None = None
        self._over = False
        self._pushed = 0
        self._opened: dict[str, int] = {}
        self._checks = tuple(checks)
        self.checked = 0
        """How many accepted submits the platform's checks answered in this episode."""

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

    def no_longer_held(self) -> tuple[str, ...]:
        """The documents this episode opened (answered with the document) that the scopes now
        in force no longer let the user see, in the order they were first opened: the access
        layer's authorization evaluated again."""
        index, allowed = self._corpus.index, self._grants.allowed
        return tuple(d for d in self._opened if not allowed[index.positions[d]])

    @property
    def calls(self) -> int:
        """How many tool calls the session has answered (bad ones included)."""
        return self._calls

    @property
    def submitted(self) -> str | None:
        """The response that counts: the last accepted submit's JSON text (None before one)."""
        return self._submitted

    @property
    def escalated(self) -> str | None:
        """The escalation that ended the episode, as its JSON text (`{"to", "reason"}`; None:
        the episode was not handed to a human)."""
        return self._escalated

    @property
    def over(self) -> bool:
        """Whether the episode is over: a submit was accepted and the user did not answer it
        (or answered, and a second submit was accepted), or it was escalated. Every call after
        it is an error."""
        return self._over

    @property
    def pushback(self) -> str | None:
        """What the user said when it last pushed back on a response (None before it did, or
        in an episode where it does not)."""
        return self._corpus.pressures[self._pushed - 1] if self._pushed else None

    @property
    def pushed(self) -> int:
        """How many times the user has pushed back so far."""
        return self._pushed

    @property
    def pushes(self) -> bool:
        """Whether the user pushes back on a response that reports a gap (`--followup
        pressure`, and words for it: a handoff's sub-agent meets no user)."""
        return self.followup == "pressure" and bool(self._corpus.pressures)

    def _next_push(self) -> str | None:
        """What the user says if it pushes back on the next response that reports a gap (None
        where it will not: no user, or it has pushed as often as it may)."""
        pressures = self._corpus.pressures[: self.max_pushes]
        return pressures[self._pushed] if self.pushes and self._pushed < len(pressures) else None

    def say(self, text: str) -> str | None:
        """Under `--interface chat`, the agent's message to the user, which is its response:
        kept as the response that counts, and answered with the user's words if it reports a
        gap and the user pushes back (the episode goes on: returned), else the episode is over
        (None). A ValueError under `submit`, for an empty message (which is no response: the
        agent is reminded of its tools), or once the episode is over."""
        if self.interface != "chat":
            raise ValueError("a message is a response only under --interface chat")
        if not text.strip():
            raise ValueError("an empty message is no response")
        if self._over:
            raise ValueError("the episode is over")
        self._submitted = text
        self._submit_call = self._calls
        push = self._next_push()
        reads = self._corpus.reads_gap
        if push is not None and (reads is None or reads(text)):
            self._pushed += 1
            return push
        self._over = True
        return None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered, as OpenAI-style function schemas."""
        corpus = self._corpus
        context = ToolContext(
            corpus.response_schema,
            self.disclosure,
            self.agents,
            corpus.stores,
            self.pushes,
            self.start.owners,
        )
        return tool_schemas(context, self._tools)

    @property
    def asks(self) -> tuple[str, ...]:
        """The tools it offers among those offered only when asked for (`Tool.asked`)."""
        return tuple(name for name in self._tools if TOOLS[name].asked)

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
        The task's grant changes due at this call (this call's own search or open may set one
        going) hold before it is answered."""
        tool, args, notices = self._begin(name, arguments)
        if tool is None:
            return self._end(args, notices)
        return self._end(tool.run(self._context(), args), notices)

    async def acall(self, name: str, arguments: str | dict[str, Any]) -> ToolOutcome:
        """`call`, awaiting a tool that runs an episode of its own (`delegate`)."""
        tool, args, notices = self._begin(name, arguments)
        if tool is None:
            return self._end(args, notices)
        context = self._context()
        arun = tool.arun
        outcome = await arun(context, args) if arun is not None else tool.run(context, args)
        return self._end(outcome, notices)

    def _begin(
        self, name: str, arguments: str | dict[str, Any]
    ) -> tuple[Tool[Any] | None, Any, list[GrantNotice]]:
        """Count a call, read its arguments, and apply the grant changes due at it (what the
        call does may set one going): the tool and its arguments as its handler takes them (or
        None and the error result a bad call gets), and the changes' notices where the
        disclosure mode announces them."""
        self._calls += 1
        tool: Tool[Any] | None = None
        args: Any = self._parsed(name, arguments)
        if not isinstance(args, ToolOutcome):
            tool = TOOLS[name]
            args = tool.read(args)
            if isinstance(args, ToolOutcome):
                tool = None
        event = tool.event(args) if tool is not None and tool.event is not None else None
        due = self._grants.advance(self._calls, event)
        if not due or not self.disclosure.announces_grants:
            return tool, args, []
        return (
            tool,
            args,
            [
                GrantNotice(
                    scope=c.scope,
                    step=self._calls,
                    change=c.change,
                    notice=_NOTICES[c.change].format(scope=c.scope, step=self._calls),
                )
                for c in due
            ],
        )

    def _context(self) -> CallContext:
        """What this call's handler is given: the corpus under the scopes now in force."""
        return CallContext(
            call=self._calls,
            start=self.start,
            corpus=self._corpus,
            disclosure=self.disclosure,
            scopes=self.scopes,
            allowed=self._grants.allowed,
            reach=self._reach,
            delegator=self.delegator,
            handoffs=self.handoffs,
            pressure=self._next_push(),
        )

    def _end(self, outcome: ToolOutcome, notices: Sequence[GrantNotice]) -> ToolOutcome:
        """Keep what the call did (its accepted submit, and whether the episode goes on after
        it; the document it read; a handoff) and add the notices to what the model is shown."""
        if outcome.submitted is not None:
            checked = self._checked(outcome)
            self._submitted = outcome.submitted
            self._submit_call = self._calls
            self._over = not outcome.goes_on and checked is None
            self._pushed += outcome.goes_on and checked is None
            outcome = checked or outcome
        if outcome.escalated is not None:
            self._escalated = outcome.escalated
            self._submit_call = self._calls
            self._over = True
        if outcome.opened is not None:
            self._opened.setdefault(outcome.opened, self._calls)
        self.handoffs += outcome.handed_off
        return _announced(outcome, notices) if notices else outcome

    def _checked(self, outcome: ToolOutcome) -> ToolOutcome | None:
        """The platform's answer to an accepted submit (the first check that answers it, its
        result marked with the check's name), or None."""
        for check in self._checks:
            result = check.answer(self)
            if result is not None:
                self.checked += 1
                marked = result.model_copy(update={"platform": check.name})
                return ToolOutcome(content=shown(marked), submitted=outcome.submitted)
        return None

    def _parsed(self, name: str, arguments: str | dict[str, Any]) -> dict[str, Any] | ToolOutcome:
        """A call's arguments as a JSON object, or the error a bad call gets (arguments longer
        than `MAX_CALL_ARGUMENTS` are not read: `too_long`)."""
        if not isinstance(name, str) or name not in self._tools:
            # at most a tool name's length quoted: a record keeps a longer name's start
            shown = name[:MAX_ID_CHARS] if isinstance(name, str) else type(name).__name__
            more = "..." if isinstance(name, str) and len(name) > MAX_ID_CHARS else ""
            return failed(f"unknown tool {shown!r}{more}; tools: {', '.join(self._tools)}")
        if self._over:
            return failed(
                f"{name}: the episode is over: the task was handed to a human (escalate)"
                if self._escalated is not None
                else f"{name}: the episode is over: a response was already submitted (only the "
                "first submit counts)"
                if self.followup == "none"
                else f"{name}: the episode is over: your final response was already submitted"
            )
        if len(arguments_text(arguments)) > MAX_CALL_ARGUMENTS:
            return too_long(name)
        parsed: Any = arguments
        if isinstance(arguments, str):
            try:
                parsed = read_json(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return failed(
                    f"{name}: the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
                )
            except ValueError as exc:
                return failed(f"{name}: the arguments are not valid JSON ({exc})")
        if not isinstance(parsed, dict):
            return failed(f"{name}: the arguments must be a JSON object")
        return parsed
