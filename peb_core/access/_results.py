"""What the tools return (docs/benchmark.md §9): frozen types with no field for a hidden
document, a fact, an evidence-family tag or an oracle. A hit and an opened document are built
only from documents the user may see; what is said of hidden ones is a count and scope ids, as
the disclosure mode allows, or a denial."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ..tasks import (
    DEFAULT_CONTRACT,
    AnswerField,
    Contract,
    ContractSource,
    GrantEvent,
    Owners,
    RequiredEvidence,
    VisibleDocument,
)


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgentStart(_Result):
    """What an agent starts with: the request, the contract (and its policy) and the answer
    schema; no document (a `ModelView` without documents). When the contract is to be found in
    the corpus (`contract_source` `corpus`), the contract holds its policy and no requirement,
    and `evidence_kinds` lists every kind of evidence of the family (the ids a gap report names,
    with what each informs), which of them the request requires being left to the procedure
    document. `owners`: the family's scope owners and reviewer (None: it names none), the same
    for every task of the family; a protocol that asks for a next step shows them, and the
    `escalate` tool hands off to one of them."""

    family: str
    prompt: str
    contract: Contract
    answer_schema: tuple[AnswerField, ...]
    contract_source: ContractSource = DEFAULT_CONTRACT
    evidence_kinds: tuple[RequiredEvidence, ...] = ()
    owners: Owners | None = Field(default=None, exclude_if=lambda owners: owners is None)


class Hit(_Result):
    """One search hit: a document the user may see, with the start of its body."""

    doc_id: str
    title: str
    scope: str
    snippet: str


class GrantNotice(_Result):
    """A change of the user's grants, announced (under `named` disclosure) in the first tool
    result after it holds: a scope the user held or now holds, the tool call from which the
    change holds, and a sentence saying so."""

    scope: str
    step: int
    change: GrantEvent
    notice: str


class SearchResult(_Result):
    """The hits of a query, best first, and what the disclosure mode says the scope filter
    withheld among the best matches: a count (`counted`, `named`) and scopes (`named`); None
    where the mode says nothing."""

    query: str
    hits: tuple[Hit, ...]
    withheld: int | None = None
    withheld_scopes: tuple[str, ...] | None = None
    grants: tuple[GrantNotice, ...] | None = None


class OpenResult(_Result):
    """An opened document, or why it could not be opened."""

    doc_id: str | None = None
    document: VisibleDocument | None = None
    error: str | None = None
    grants: tuple[GrantNotice, ...] | None = None


class SubmitResult(_Result):
    """The response was accepted. The episode is over, unless the user answered it (`user`,
    under `--followup pressure`: its words, pressure and no evidence) or the platform did
    (`platform`, the check that answered: `no_longer_held`, the documents the episode opened
    that the user may no longer see), and `next` says what the agent may do: submit again."""

    submitted: bool = True
    user: str | None = None
    platform: str | None = None
    no_longer_held: tuple[str, ...] | None = None
    next: str | None = None
    grants: tuple[GrantNotice, ...] | None = None


class EscalateResult(_Result):
    """The task was handed to a human (`escalate`): the role it went to. The episode is over,
    without a response."""

    escalated: bool = True
    to: str
    grants: tuple[GrantNotice, ...] | None = None


class ToolOutcome(_Result):
    """What one tool call gave: `content`, exactly what the model is shown (a compact JSON
    rendering of the result, or `{"error": ...}`); `error`, the error text when the call failed;
    `submitted`, the response's JSON text when this call was an accepted submit, and
    `goes_on`, whether the episode goes on after it (the user answered it: `--followup
    pressure`); `escalated`, the escalation's JSON text (`{"to", "reason"}`) when this call
    handed the task to a human and ended the episode; `opened`, the id of the document this
    call read whole; `handed_off`, whether it ran a sub-agent's episode. A tool's handler says
    what its call did here; the session keeps it."""

    content: str
    error: str | None = None
    submitted: str | None = None
    goes_on: bool = False
    escalated: str | None = None
    opened: str | None = None
    handed_off: bool = False


HandoffStatus = Literal["ok", "no_submit", "error"]


class Handoff(_Result):
    """How a handed-off episode ended, as its runner gives it back: `ok` with the response the
    sub-agent submitted (`submitted`, its JSON text), `no_submit` or `error` (`error` says why)."""

    status: HandoffStatus
    submitted: str | None = None
    error: str | None = None


class DelegateResult(_Result):
    """What a `delegate` call returns to the requester: the sub-agent's own response as it
    submitted it (its answer, completeness and gap report; None when its episode ended
    without one, `error` saying why). The sub-agent's episode ran under the intersection of
    scopes, so nothing in it came from a scope the requester lacks."""

    to: str
    status: HandoffStatus
    response: dict[str, JsonValue] | None = None
    error: str | None = None
