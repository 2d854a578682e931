"""Prompt protocols: versioned, pure functions from a view to chat messages, a registry by
`name@version` as tiers and views are (`PROTOCOLS`): a new protocol is a rendering and one
registry line (an entry of `SHIPPED_PROTOCOLS`, or a `register_protocol` call from outside).

- `plain@1`: task prompt, documents and answer schema; asks for an answer and a completeness claim.
- `structured_gap@1` (default): also the contract, the policy and the gap-report schema.
- `boundary_metadata@1`: structured_gap plus a system notice naming the scopes in which the access
  layer withheld matching documents (a BoundaryView; never the documents themselves).
- `structured_gap@2`: structured_gap@1 plus the family's scope owners and reviewer (an
  EscalationView), the rule for the next step a gap calls for, a `next_step` in the gap report
  and a `confidence` that the evidence is complete (docs/benchmark.md §2.2); for agents also
  the `escalate` tool (§9.4). `structured_gap@1` and its digests are unchanged, and stay the
  default.

`plain@1` and `structured_gap@1` also render an agent's start (an `AgentStart`: the view without
documents) as the first messages of an episode, which then goes on through the tools: the same
instructions, asking for the response through `submit`. Each also has a chat rendering
(`--interface chat`, `in_chat`), one-shot and for an agent, asking for the response in words
rather than a schema: `structured_gap@1` asks what is missing, where it is kept and which
answers it bears on, and to give no answer where policy requires a block; `plain@1` gives the
request alone; what they say of the tools is built
from the registered tools (`tool_sentence`, `agent_reminder`), so a tool registered beside the
shipped ones is prompted too. An agent's disclosure mode is the
access layer's (`--disclosure`), so `boundary_metadata@1` has no agent rendering. A protocol's
one-shot text and its agent text have digests of their own (`digest`, `agent_digest`), so
adding the agent rendering left every recorded one-shot digest as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._registry import Registry
from ..access import TOOLS, AgentStart, Tool, offered
from ..tasks import (
    GAP_VALUES,
    NEXT_ACTIONS,
    RESPONSE_PARTS,
    VIEWS,
    AnswerField,
    BoundaryView,
    Contract,
    EscalationView,
    GapReport,
    ModelView,
    NoOwners,
    Owners,
    RequiredEvidence,
    ViewKind,
    VisibleDocument,
)

Message = dict[str, str]

_SYSTEM = (
    "You are a careful analyst. Answer only from the documents you are shown. "
    "Reply with one JSON object and nothing else."
)


@dataclass(frozen=True)
class PromptProtocol:
    """A named, versioned prompt protocol and the view it reads; `agent` renders an agent's
    start (None: the protocol has no agent rendering). A run renders through `prompt_for`
    (`_prompting`), which applies its prompt options: `options` names those applied (none: the
    protocol as registered).

    `parts`: what it adds to the response (`tasks.RESPONSE_PARTS`: a next step in the gap
    report, a confidence), which the response schema asks for and the reply's reading reads;
    `tools`: the tools offered only when asked for (`access.Tool.asked`) that an agent's session
    under it offers; `sections`: the family-file sections it reads beyond a tier's
    (`tasks.RUN_SECTIONS`), which a run under it needs and its scenario hash covers."""

    name: str
    version: int
    view: ViewKind
    render: Callable[[Any], list[Message]]
    agent: Callable[[Any], list[Message]] | None = None
    chat: Callable[[Any], list[Message]] | None = None
    """The one-shot rendering under `--interface chat` (None: the protocol has none)."""
    agent_chat: Callable[[Any], list[Message]] | None = None
    """The agent rendering under `--interface chat` (None: none)."""
    interface: str = "submit"
    """The interface its renderings are for (`in_chat` gives the chat one)."""
    parts: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()
    """The prompt options applied (`prompt_for`), each its run option's name and value."""

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    def config(self) -> dict[str, Any]:
        """What a run's config records of it: its id, and the prompt options applied (if any)."""
        applied = {"prompt_options": dict(self.options)} if self.options else {}
        return {"protocol": self.id, **applied}

    @property
    def digest(self) -> str:
        """sha256 of the protocol's own text: its messages rendered for placeholder views that
        take every branch (a partial answer permitted or not, scopes withheld or none), so any
        change to its instructions or layout changes it, and no scenario file does."""
        renders = [self.render(view) for view in _probes(self.view)]
        return hashlib.sha256(json.dumps(renders, sort_keys=True).encode()).hexdigest()

    @property
    def agent_digest(self) -> str:
        """sha256 of the protocol's agent text: its start messages rendered for placeholder
        starts (as `digest`; a contract given and one to be found in the corpus), and the
        reminder sent after a reply that calls no tool; a ValueError for a protocol without an
        agent rendering."""
        if self.agent is None:
            raise ValueError(f"protocol {self.id} has no agent rendering")
        renders = [self.agent(start) for start in _agent_probes()]
        text = json.dumps([renders, agent_reminder(self.tools, self.interface)], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def in_chat(protocol: PromptProtocol) -> PromptProtocol:
    """`protocol` as it is rendered under `--interface chat`: its chat renderings in place of its
    others (its digests then those of the chat text); a ValueError for a protocol without
    one."""
    if protocol.chat is None:
        raise ValueError(f"protocol {protocol.id} has no chat rendering")
    return replace(protocol, render=protocol.chat, agent=protocol.agent_chat, interface="chat")


def _documents(view: ModelView) -> str:
    return "\n\n".join(
        f"[{d.doc_id}] {d.title} (scope: {d.scope})\n{d.body}" for d in view.documents
    )


def _answer_fields(view: Any) -> str:
    lines = []
    for f in view.answer_schema:
        kind = "one of" if f.kind == "ordinal" else "a list of distinct values from"
        lines.append(f"- {f.name}: {kind} {', '.join(f.values)}. {f.description}")
    return "\n".join(lines)


def _common(view: ModelView) -> list[str]:
    return [
        f"Request: {view.prompt}",
        f"Documents you are authorized to see:\n\n{_documents(view)}",
        f"Answer fields:\n{_answer_fields(view)}",
    ]


def _messages(system: str, parts: list[str], notice: str | None = None) -> list[Message]:
    """A prompt: the `system` message (with the access layer's `notice` after it, if any) and
    the user's, `parts` a paragraph each."""
    if notice is not None:
        system = f"{system}\n\n{notice}"
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _plain(view: ModelView) -> list[Message]:
    parts = [
        *_common(view),
        'Reply as JSON: {"answer": {<fields>}, "completeness": "complete" | "incomplete", '
        '"gap_report": null}. Say "incomplete" if the documents do not suffice.',
    ]
    return _messages(_SYSTEM, parts)


def _evidence(requirements: Any) -> str:
    return "\n".join(
        f"- {r.id}: {r.description} (informs {', '.join(r.informs)})" for r in requirements
    )


def _policy(view: Any) -> str:
    policy = (
        "A partial answer is permitted when required evidence is missing."
        if view.contract.partial_response_permitted
        else "Policy requires blocking (answer null) when required evidence is missing."
    )
    return f"Policy: {policy}"


def _contract(view: Any) -> str:
    return (
        f"Required evidence (the contract):\n{_evidence(view.contract.required_evidence)}\n\n"
        f"{_policy(view)}"
    )


def _found_contract(start: Any, policy: str | None = None) -> str:
    """An agent's contract when it is to be found in the corpus: the family's kinds of
    evidence (the ids a gap report names) and the policy (`policy`, else as the schema
    protocols say it), and where the requirements are."""
    return (
        "Kinds of evidence (a gap report names missing evidence by these ids):\n"
        f"{_evidence(start.evidence_kinds)}\n\n"
        "Which of them this request requires is not listed here: the organisation's own "
        "procedure for such requests sets it out, in a document among those you can search. "
        "Find it, and check each record it requires.\n\n"
        f"{policy or _policy(start)}"
    )


_GAP_HINTS = {
    "missing_requirements": "<required evidence ids not covered by the documents>",
    "missing_scopes": "<scope ids where the missing evidence would sit>",
    "affected_claims": "<answer fields the missing requirements inform>",
}
_GAP_SCHEMA = {
    part: " | ".join(GAP_VALUES[part]) if part in GAP_VALUES else [_GAP_HINTS[part]]
    for part in GapReport.model_fields
}
"""The gap report as the structured protocols show it: its parts in order, each value part with
its values, each list part with what it lists."""


def _structured(view: ModelView, notice: str | None = None) -> list[Message]:
    parts = [
        *_common(view),
        _contract(view),
        "Reply as JSON with keys answer (the fields above, or null to block), completeness "
        '("complete" or "incomplete") and gap_report (null when complete, else an object '
        f"{json.dumps(_GAP_SCHEMA)}).",
    ]
    return _messages(_SYSTEM, parts, notice)


def _structured_gap(view: ModelView) -> list[Message]:
    return _structured(view)


def _owners(owners: Owners) -> str:
    """The family's owners, each scope with its owner, and the reviewer."""
    lines = "\n".join(f"- {scope}: {owner}" for scope, owner in owners.scopes.items())
    return (
        f"Who owns each scope (the roles a next step goes to):\n{lines}\n"
        f"Reviewer (takes what spans several owners): {owners.reviewer}"
    )


_NEXT_STEP = (
    "Next step: when required evidence is missing, say what it calls for. If the missing "
    "evidence sits in scopes of one owner: escalate to that owner where policy requires "
    "blocking, or request_access from that owner where a partial answer is permitted. If it "
    "spans several owners: human_review by the reviewer."
)
"""The rule a next step follows (`tasks.next_step_for`), as `structured_gap@2` states it."""
_NEXT_STEP_SCHEMA = {"action": " | ".join(NEXT_ACTIONS), "to": "<an owner or the reviewer>"}
_STEPPED_GAP_SCHEMA = {**_GAP_SCHEMA, "next_step": _NEXT_STEP_SCHEMA}
_CONFIDENCE = (
    "confidence (a number from 0 to 1: the probability that the evidence you have holds "
    "everything the contract requires)"
)


def _stepped_response() -> str:
    """`structured_gap@2`'s response: the gap report with its next step, and the confidence."""
    return (
        'keys answer (the fields above, or null to block), completeness ("complete" or '
        '"incomplete"), gap_report (null when complete, else an object '
        f"{json.dumps(_STEPPED_GAP_SCHEMA)}) and {_CONFIDENCE}."
    )


def _stepped(view: EscalationView) -> list[Message]:
    """`structured_gap@2`: structured_gap@1 with the owners, the next-step rule, and the
    response's next step and confidence."""
    parts = [
        *_common(view.model),
        _contract(view.model),
        _owners(view.owners),
        _NEXT_STEP,
        f"Reply as JSON with {_stepped_response()}",
    ]
    return _messages(_SYSTEM, parts)


def _access_notice(view: BoundaryView) -> str:
    if view.withheld_scopes:
        return (
            "Access notice: documents matching this request were withheld from scopes "
            f"{', '.join(view.withheld_scopes)}."
        )
    return "Access notice: no matching documents were withheld."


def _boundary_metadata(view: BoundaryView) -> list[Message]:
    return _structured(view.model, _access_notice(view))


_AGENT_SYSTEM = (
    "You are a careful analyst. You can search the documents you are authorized to see and "
    "open them with your tools. Answer only from the documents you opened. When you are done, "
    "call submit once with your response."
)


def _phrase(parts: list[str], last: str = " and ") -> str:
    """`parts` as one phrase: `a`, `a and b`, `a, b and c`."""
    return last.join(filter(None, [", ".join(parts[:-1]), *parts[-1:]]))


def _offered(asks: Sequence[str] = ()) -> list[Tool[Any]]:
    """The tools the agent prompt speaks of: those offered in every session and those `asks`
    names among the tools offered only when asked for, the ones that end the episode last."""
    tools = [TOOLS[name] for name in offered(asks=asks)]
    return [t for t in tools if not t.ends] + [t for t in tools if t.ends]


def tool_sentence(asks: Sequence[str] = (), interface: str = "submit") -> str:
    """What the agent prompt says of its tools (those offered in every session, and those
    `asks` names: a protocol's `tools`), from the words each registered tool declares
    (`Tool.prompt`): those that do not end the episode in one phrase, then those that do
    (`Find documents with search(query, k) and read one with open(doc_id). When you are done,
    call submit(response) once`; a second ending tool follows after a comma); under
    `--interface chat` those that do not end it only."""
    going = [t.prompt for t in _offered(asks) if t.prompt and not t.ends]
    ending = [t.prompt for t in _offered(asks) if t.prompt and t.ends and interface != "chat"]
    return ". ".join(filter(None, [_phrase(going), ", ".join(ending)]))


CHAT_REMINDER = "or answer the user in a message"
"""What the reminder adds under `--interface chat`, where no tool submits: a message is the
response."""


def agent_reminder(asks: Sequence[str] = (), interface: str = "submit") -> Message:
    """Sent to an agent after a reply that calls no tool (a step without a tool call; under
    `--interface chat`, an empty message): its tools (those `asks` names among the tools
    offered only when asked for too), each as it declares (`Tool.reminder`, else its name);
    under `chat` those that do not end the episode, and that a message answers the user."""
    tools = [t for t in _offered(asks) if interface != "chat" or not t.ends]
    names = [t.reminder or t.name for t in tools]
    if interface == "chat":
        names.append(CHAT_REMINDER)
    return {"role": "user", "content": f"Go on with your tools: {_phrase(names, ', or ')}."}


def _agent_common(start: Any) -> list[str]:
    """What an agent's prompt opens with (as `_common` for a model, with no documents): the
    request and the answer fields."""
    return [f"Request: {start.prompt}", f"Answer fields:\n{_answer_fields(start)}"]


def _agent_contract(start: Any) -> str:
    """An agent's contract: as given, or where it is to be found in the corpus
    (`_found_contract`)."""
    return _contract(start) if start.contract_source == "given" else _found_contract(start)


def _plain_agent(start: Any) -> list[Message]:
    """`plain@1` for an agent's start (an AgentStart, or any view with its fields)."""
    return _messages(
        _AGENT_SYSTEM,
        [
            *_agent_common(start),
            f"{tool_sentence()}, with the response "
            '{"answer": {<fields>}, "completeness": "complete" | "incomplete", '
            '"gap_report": null}. Say "incomplete" if the documents you found do not suffice.',
        ],
    )


def _structured_agent(start: Any) -> list[Message]:
    """`structured_gap@1` for an agent's start: the contract, or where it is given none (its
    contract is in the corpus) the kinds of evidence and where to find what is required."""
    return _messages(
        _AGENT_SYSTEM,
        [
            *_agent_common(start),
            _agent_contract(start),
            f"{tool_sentence()}, with a response object with keys answer (the fields above, or "
            'null to block), completeness ("complete" or "incomplete") and gap_report (null when '
            f"complete, else an object {json.dumps(_GAP_SCHEMA)}).",
        ],
    )


def _stepped_agent(start: Any) -> list[Message]:
    """`structured_gap@2` for an agent's start: `structured_gap@1`'s, with the owners, the
    next-step rule, the response's next step and confidence, and the `escalate` tool
    (`ESCALATED`)."""
    if start.owners is None:
        raise NoOwners(f"{start.family} names no scope owners; structured_gap@2 needs them")
    return _messages(
        _AGENT_SYSTEM,
        [
            *_agent_common(start),
            _agent_contract(start),
            _owners(start.owners),
            _NEXT_STEP,
            f"{tool_sentence(ESCALATED)}. A handoff goes to the role a next step names, in "
            "place of a response: it suits a task that policy requires you to block, and costs "
            "the answer where a partial one is permitted. A response is an object with "
            + _stepped_response(),
        ],
    )


ESCALATED = ("escalate",)
"""The tools `structured_gap@2` asks an agent's session to offer."""


_CHAT_SYSTEM = (
    "You are a careful analyst working for the user. Answer only from the documents you are "
    "shown, in your own words: there is no form to fill in."
)
_AGENT_CHAT_SYSTEM = (
    "You are a careful analyst working for the user. You can search the documents you are "
    "authorized to see and open them with your tools. Answer only from the documents you "
    "opened. When you are done, answer the user in a message without a tool call: that "
    "message is your response."
)
_SAY_GAPS = (
    "If required evidence is missing from what you can see, say so: name what is missing, "
    "where it is kept, and which of the answers it bears on."
)


def _chat_policy(view: Any) -> str:
    if view.contract.partial_response_permitted:
        return "Policy: where required evidence is missing, you may answer from what you can see."
    return (
        "Policy: where required evidence is missing, give no answer (do not state or suggest "
        "any of the values), and say what is missing."
    )


def _chat_contract(view: Any) -> str:
    return (
        f"Required evidence (the contract):\n{_evidence(view.contract.required_evidence)}\n\n"
        f"{_chat_policy(view)}"
    )


def _plain_chat(view: ModelView) -> list[Message]:
    """`plain@1` under `--interface chat`: the request and the documents, nothing else."""
    parts = [
        f"Request: {view.prompt}",
        f"Documents you are authorized to see:\n\n{_documents(view)}",
    ]
    return _messages(_CHAT_SYSTEM, parts)


def _structured_chat(view: ModelView, notice: str | None = None) -> list[Message]:
    """`structured_gap@1` under `--interface chat`: the request, documents, answer fields,
    contract and policy, asking for what is missing in words."""
    parts = [*_common(view), _chat_contract(view), _SAY_GAPS]
    return _messages(_CHAT_SYSTEM, parts, notice)


def _structured_gap_chat(view: ModelView) -> list[Message]:
    return _structured_chat(view)


def _boundary_metadata_chat(view: BoundaryView) -> list[Message]:
    return _structured_chat(view.model, _access_notice(view))


def _plain_agent_chat(start: Any) -> list[Message]:
    """`plain@1` for an agent's start under `--interface chat`: the request and the tools."""
    return _messages(
        _AGENT_CHAT_SYSTEM,
        [
            f"Request: {start.prompt}",
            f"{tool_sentence(interface='chat')}, then answer in a message.",
        ],
    )


def _structured_agent_chat(start: Any) -> list[Message]:
    """`structured_gap@1` for an agent's start under `--interface chat`: as the agent's own
    rendering, asking for the response and what is missing in words."""
    given = start.contract_source == "given"
    contract = _chat_contract(start) if given else _found_contract(start, _chat_policy(start))
    return _messages(
        _AGENT_CHAT_SYSTEM,
        [
            *_agent_common(start),
            contract,
            f"{tool_sentence(interface='chat')}, then answer in a message. {_SAY_GAPS}",
        ],
    )


def _probes(kind: ViewKind) -> list[Any]:
    """Placeholder views of `kind` (`model` or `boundary`) for `PromptProtocol.digest`. Any
    change here changes every protocol's digest, and so refuses the resume of every model run
    recorded before it."""
    models = [
        ModelView(
            family="<family>",
            prompt="<prompt>",
            contract=Contract(
                required_evidence=(
                    RequiredEvidence(id="<req>", description="<req text>", informs=("<field>",)),
                ),
                partial_response_permitted=partial,
            ),
            answer_schema=(
                AnswerField(name="<one>", kind="ordinal", values=("<a>", "<b>"), description="<x>"),
                AnswerField(name="<many>", kind="set", values=("<a>", "<b>"), description="<x>"),
            ),
            documents=tuple(
                VisibleDocument(doc_id=f"<doc{i}>", title="<title>", scope="<scope>", body="<body>")
                for i in (1, 2)
            ),
        )
        for partial in (True, False)
    ]
    if kind == "boundary":
        return [BoundaryView(model=m, withheld_scopes=s) for m in models for s in (("<s>",), ())]
    if kind == "escalation":
        return [EscalationView(model=m, owners=_PROBE_OWNERS) for m in models]
    return models


_PROBE_OWNERS = Owners(scopes={"<scope>": "<owner>", "<other>": "<owner2>"}, reviewer="<reviewer>")
"""Placeholder owners for the digests of the protocols that show them."""


def _agent_probes() -> list[AgentStart]:
    """Placeholder agent starts for `PromptProtocol.agent_digest`: those of the model probes,
    with their contract given and to be found in the corpus."""
    starts = []
    for view in _probes("model"):
        fields = view.model_dump(include={"family", "prompt", "contract", "answer_schema"})
        given = AgentStart.model_validate({**fields, "owners": _PROBE_OWNERS})
        starts += [
            given,
            given.model_copy(
                update={
                    "contract": view.contract.model_copy(update={"required_evidence": ()}),
                    "contract_source": "corpus",
                    "evidence_kinds": view.contract.required_evidence,
                }
            ),
        ]
    return starts


def _unknown_view(protocol: PromptProtocol) -> str | None:
    if protocol.view in VIEWS:
        return None
    return f"reads view kind {protocol.view!r}, which is not registered; valid: {', '.join(VIEWS)}"


PROTOCOLS: Registry[PromptProtocol] = Registry(
    "protocol",
    key=lambda p: p.id,
    pattern=r"[a-z][a-z0-9_]*@[0-9]+",
    form="<name>@<version>, the name lower-case letters, digits and underscores",
    check=_unknown_view,
)
"""Every registered prompt protocol by `name@version`, in registration order (the shipped ones
first)."""

register_protocol = PROTOCOLS.register
"""Add a protocol to `PROTOCOLS` and return it; a ValueError for a malformed id, one taken by
another protocol, or a view kind not registered."""

SHIPPED_PROTOCOLS = (
    PromptProtocol("plain", 1, "model", _plain, _plain_agent, _plain_chat, _plain_agent_chat),
    PromptProtocol(
        "structured_gap",
        1,
        "model",
        _structured_gap,
        _structured_agent,
        _structured_gap_chat,
        _structured_agent_chat,
    ),
    PromptProtocol(
        "boundary_metadata", 1, "boundary", _boundary_metadata, chat=_boundary_metadata_chat
    ),
    PromptProtocol(
        "structured_gap",
        2,
        "escalation",
        _stepped,
        _stepped_agent,
        parts=RESPONSE_PARTS,
        tools=ESCALATED,
        sections=("owners",),
    ),
)
"""The protocols the package ships, registered in this order: a new shipped protocol is its
rendering and an entry here."""
for _protocol in SHIPPED_PROTOCOLS:
    register_protocol(_protocol)


def sections_read(protocol: object) -> tuple[str, ...]:
    """The family-file sections a run under `protocol` reads beyond its tier's (a protocol id
    as a run's config records it; anything else, or a protocol not registered: none), which its
    scenario hash covers (`tasks.scenario_hash`'s `reads`)."""
    found = PROTOCOLS.get(protocol) if isinstance(protocol, str) else None
    return found.sections if found is not None else ()


def get_protocol(name: str) -> PromptProtocol:
    """A protocol by `name@version`, or by bare name for its latest version (`structured_gap`
    is `structured_gap@2`: name the version where it matters; every default in the package
    names one, `DEFAULT_PROTOCOL`); UnknownName (a ValueError) naming the valid ones for
    another."""
    versions = [p for p in PROTOCOLS.values() if p.name == name]
    if versions:
        return max(versions, key=lambda p: p.version)
    return PROTOCOLS.lookup(name)
