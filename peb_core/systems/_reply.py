"""What a system returns for one task, and the record a run stores for it: the reply as given, and
for an agent the episode that led to it (its trace)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..tasks import Answer, Completeness, GapReport, NextStep


class SteppedGapReport(GapReport):
    """A gap report with the next step it calls for (`structured_gap@2`, docs/benchmark.md
    §2.2)."""

    next_step: NextStep


class Response(BaseModel):
    """A well-formed response, as the baselines give it and the response schema asks for:
    `answer` None when the system blocks. Under a protocol that asks for them (docs/benchmark.md
    §2.2) its gap report carries a next step (`SteppedGapReport`) and it states its
    `confidence` that the evidence is complete (left out of its JSON when None, so responses
    without one are written as before)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: Answer | None
    completeness: Completeness
    gap_report: GapReport | SteppedGapReport | None
    confidence: float | None = Field(
        default=None, ge=0, le=1, exclude_if=lambda confidence: confidence is None
    )


class Usage(BaseModel):
    """Cost of one reply. `cost_usd` is None when the price is unknown (never guessed as 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool = False


MAX_KEPT_ARGUMENTS = 20_000
"""The most characters of a tool call's arguments a record keeps: more than a session reads
(`access.MAX_CALL_ARGUMENTS`, 16,000; a valid call of a shipped tool takes a few thousand at
most), so every call a session acted on is kept whole, and one cut here is refused again by a
replay as it was live."""
MAX_KEPT_RESULT = 100_000
"""The most characters of what one tool call returned (and of its error) a record keeps (the
access layer's largest result, a search of 50 hits, is under 15,000)."""
MAX_KEPT_NAME = 200
"""The most characters of a tool call's name and id a record keeps (a tool's name is at most
64)."""
MAX_REPLY_CHARS = 1_000_000
"""Reply text beyond this is cut (the record says `truncated`); a record keeps at most this
much of a step's text and of its reasoning, as a model system keeps them."""
MAX_KEPT_MESSAGE = 100_000
"""The most characters of a message sent to the model before a step (`Step.sent`) a record
keeps: the start messages a prompt protocol renders take a few thousand, the reminder and a
user's push far less (what a team's own inspect agent adds is kept within it)."""


def kept(text: str, limit: int) -> str:
    """`text` as a record keeps it: whole if it is at most `limit` characters, else its start
    and a marker saying how long it was, `limit` characters in all (so keeping it again changes
    nothing)."""
    if len(text) <= limit:
        return text

    def marker(head: int) -> str:
        return f" ...[cut: {len(text):,} characters given, the first {head:,} kept]"

    head = max(limit - len(marker(limit)), 0)
    return (text[:head] + marker(head))[:limit]


class ToolCall(BaseModel):
    """A tool call as a model made it: `arguments` exactly as given (perhaps not JSON); in a
    record, cut to `MAX_KEPT_ARGUMENTS` with a marker saying so (`bounded`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    arguments: str
    reached: bool = Field(default=True, exclude_if=lambda reached: reached)
    """False for a call its front-end refused before any session saw it (inspect's check of a
    call against the tool's schema; an MCP call before a task was started): in the trace as
    the model made it, but not counted by the session, so a replay of the episode's calls
    (`scoring.grant_timeline`) leaves it out. Left out of the JSON when True, so records
    without such calls keep their bytes."""

    def bounded(self) -> ToolCall:
        """The call as a record keeps it: its id and name within `MAX_KEPT_NAME`, its arguments
        within `MAX_KEPT_ARGUMENTS` characters (`kept`); whether it reached a session as it
        was."""
        return self.model_copy(
            update={
                "id": kept(self.id, MAX_KEPT_NAME),
                "name": kept(self.name, MAX_KEPT_NAME),
                "arguments": kept(self.arguments, MAX_KEPT_ARGUMENTS),
            }
        )


class Step(BaseModel):
    """One step of an episode: the messages it sent besides the last step's results, the
    model's message as given (its text, its reasoning, the tool calls it made), what each tool
    call returned to it, and the step's tokens and latency. A trace thus holds the whole
    conversation, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sent: tuple[dict[str, str], ...] = ()
    """The messages added to the conversation before this step's request other than the
    previous step's reply and tool results: the start messages at the first step, the reminder
    after a step that called no tool."""
    content: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    results: tuple[str, ...] = ()
    """What the model was shown for each tool call, in order."""
    errors: tuple[str | None, ...] = ()
    """For each tool call, the error the tool answered with (its result says it to the model),
    or None when the call was carried out."""
    usage: Usage = Field(default_factory=Usage)
    delegations: tuple[Delegation | None, ...] = Field(
        default=(), exclude_if=lambda delegations: not delegations
    )
    """For each tool call, the handed-off episode a `delegate` call ran (None for any other
    call); empty (and left out of the record) for a step that handed nothing off, so records
    without handoffs are as before."""

    @classmethod
    def answered(
        cls,
        calls: Sequence[ToolCall],
        answers: Sequence[tuple[str, str | None]],
        delegations: Sequence[Delegation | None] = (),
        **fields: Any,
    ) -> Step:
        """The step of `calls`, each with its answer (what it returned to the model, and its
        error or None) and the handed-off episode it ran (None: none; `delegations` left empty
        when no call ran one), and the step's other `fields`."""
        return cls(
            tool_calls=tuple(calls),
            results=tuple(result for result, _ in answers),
            errors=tuple(error for _, error in answers),
            delegations=tuple(delegations) if any(delegations) else (),
            **fields,
        )

    def bounded(self) -> Step:
        """The step as a record keeps it: each message sent before it within
        `MAX_KEPT_MESSAGE` characters, its text and reasoning within `MAX_REPLY_CHARS`, each
        call `bounded`, what it returned and its error within `MAX_KEPT_RESULT` (`kept`), each
        handed-off episode bounded too."""
        return self.model_copy(
            update={
                "sent": tuple(
                    {key: kept(value, MAX_KEPT_MESSAGE) for key, value in message.items()}
                    for message in self.sent
                ),
                "content": _kept_text(self.content),
                "reasoning": _kept_text(self.reasoning),
                "tool_calls": tuple(call.bounded() for call in self.tool_calls),
                "results": tuple(kept(r, MAX_KEPT_RESULT) for r in self.results),
                "errors": tuple(e if e is None else kept(e, MAX_KEPT_RESULT) for e in self.errors),
                "delegations": tuple(d if d is None else d.bounded() for d in self.delegations),
            }
        )


def _kept_text(text: str | None) -> str | None:
    return None if text is None else kept(text, MAX_REPLY_CHARS)


ReplyStatus = Literal["ok", "error", "no_submit", "escalated"]


class Platform(BaseModel):
    """What the platform (a run's intervention, `peb_core.interventions`) added to or put in
    place of a system's response, kept apart from the system's own words (`Reply.raw`), so a
    replay shows who said what: the platform's own words for a person (`said`: a receipt of
    what was withheld, why a response was blocked) and the response the consumer is shown
    (`response`: JSON under `--interface submit`, words under `chat`), which scoring reads in
    place of `raw` where `raw` itself is readable (never an unreadable reply made readable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    intervention: str
    said: str
    response: str


class Reply(BaseModel):
    """What a system gives back for one task: `ok` with the reply as given in `raw` (a model's
    text; a baseline's response as JSON), `error` when no reply was obtained (`error` says
    why), `no_submit` when an agent's episode ended without an accepted submit (`error` says
    how: a budget reached), or `escalated` when an agent handed the task to a human owner
    (the `escalate` tool, docs/benchmark.md §9.4; `raw` the call's arguments as it read them:
    `{"to": ..., "reason": ...}`). The reply is read for what it decides at scoring time
    (`peb_core.scoring`), so a run keeps exactly what was said and a change to the reading
    rules rescores old runs. A model's whole message is kept: `raw` is its content, the text
    the decision is read from; beside it its reasoning, its refusal and any tool calls it made,
    none of them read for the decision. An agent's reply is what it submitted, and `trace`
    holds the episode (empty for one-shot systems)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: ReplyStatus
    raw: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    truncated: bool = False
    """The reply text (or its reasoning) was longer than a model system keeps
    (`MAX_REPLY_CHARS`) and was cut."""
    trace: tuple[Step, ...] = ()
    reasoning: str | None = None
    """A model's reasoning, as its provider gave it beside the content (`reasoning_content`,
    thinking blocks) or as a `<think>...</think>` block leading the content, which litellm
    moves out of the content; None when it gave none (or the record predates format 3)."""
    refusal: str | None = None
    """A model's refusal message, when its provider sends one apart from the content."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls the model made in its reply, exactly as given."""
    platform: Platform | None = Field(default=None, exclude_if=lambda platform: platform is None)
    """What the run's intervention added to or put in place of the response the consumer sees
    (None: nothing, and left out of the record, so records of runs without one are as
    before)."""

    def bounded(self) -> Reply:
        """The reply as a record keeps it: each step and tool call `bounded` (what one tool call
        passed and got is kept within the caps, a marker saying what was cut)."""
        return self.model_copy(
            update={
                "trace": tuple(step.bounded() for step in self.trace),
                "tool_calls": tuple(call.bounded() for call in self.tool_calls),
            }
        )

    @classmethod
    def of(cls, response: Response, usage: Usage | None = None) -> Reply:
        """The reply that states `response` (as a well-formed JSON object)."""
        return cls(status="ok", raw=response.model_dump_json(), usage=usage or Usage())


class Delegation(BaseModel):
    """A handed-off episode, nested in the requester's step: the sub-agent it went to, the
    request, the system that ran it and its reply (with its own trace)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    to: str
    request: str
    system: str
    reply: Reply

    def bounded(self) -> Delegation:
        """The handoff as a record keeps it: its episode `bounded`."""
        return self.model_copy(update={"reply": self.reply.bounded()})


Step.model_rebuild()


class _RecordKey(BaseModel):
    family: str
    task_id: str
    system: str
    repeat: int = Field(default=0, ge=0)
    """Which of a run's repeats of the task it answers (`peb run --repeats K`: 0 to K-1);
    records written before repeats are repeat 0."""


RECORD_FORMAT = 6
"""The format of the records a run writes: 2 adds `format` and a reply's `trace`; 3 keeps a
model's whole message (`reasoning`, `refusal`, `tool_calls` beside `raw`); 4 adds the status
`no_submit` and a step's `sent` and `errors`; 5 adds `repeat`; 6 adds the reply's `platform`
part (what a run's intervention said, apart from the system's words). Format 1 is every record
written before (no `format` key); each still loads."""


class ResponseRecord(Reply, _RecordKey):
    """One line of `responses.jsonl`: a reply keyed by family and task id, in a versioned format
    (`RECORD_FORMAT`; build new records with `ResponseRecord.of_reply`).

    Lines written before replies were read at scoring time are read too: an `invalid` record
    was a reply (its `raw` is read as any other), and a `response` without `raw` is that
    response's JSON."""

    format: int = 1
    """The record format it was written in (absent, so 1, before formats were versioned)."""

    @classmethod
    def of_reply(
        cls, family: str, task_id: str, system: str, reply: Reply, repeat: int = 0
    ) -> ResponseRecord:
        """The record of `reply` to one task (in its `repeat`), in the current format, each
        tool call within the caps (`Reply.bounded`)."""
        return cls(
            family=family,
            task_id=task_id,
            system=system,
            repeat=repeat,
            format=RECORD_FORMAT,
            **dict(reply.bounded()),
        )

    @property
    def key(self) -> tuple[str, str, int]:
        """(family, task id, repeat): what a run holds one record of."""
        return self.family, self.task_id, self.repeat

    @model_validator(mode="before")
    @classmethod
    def _earlier_records(cls, data: Any) -> Any:
        if not isinstance(data, dict) or (
            "response" not in data and data.get("status") != "invalid"
        ):
            return data
        data = dict(data)
        response = data.pop("response", None)
        if data.get("status") == "invalid":
            data["status"] = "ok"
        if data.get("raw") is None and response is not None:
            data["raw"] = json.dumps(response)
        return data
