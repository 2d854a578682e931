"""The Task: a frozen value holding every document, the contract and the oracles, and the
vocabulary of answers and gap reports the oracles are written in."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ._tiers import DEFAULT_TIER, Tier

Completeness = Literal["complete", "incomplete"]
GapStatus = Literal["partial", "blocked"]
GapReason = Literal["partial_answer_permitted", "policy_requires_block"]
GrantEvent = Literal["expires", "revoked", "granted"]
"""How a grant changes mid-episode: it ends (`expires`, `revoked`) or begins (`granted`)."""
GrantTrigger = Literal["open", "search", "start"]
"""What an episode does that sets a grant change going (docs/benchmark.md §9.2): the first open
of a document in its scope that is answered with the document (`open`), the first search whose
best matches over the whole corpus hold a document of its scope (`search`), or nothing: the
episode's start (`start`)."""
ContractSource = Literal["given", "corpus"]
"""Where an agent finds what a request requires (docs/benchmark.md §9.3): `given`, listed in
its start; `corpus`, in the organisation's procedure document among the corpus it searches."""
CONTRACT_SOURCES: tuple[ContractSource, ...] = get_args(ContractSource)
DEFAULT_CONTRACT: ContractSource = "given"
COMPLETENESS: tuple[Completeness, ...] = get_args(Completeness)
"""What a task is, and what a reply may claim it is."""
GAP_VALUES: dict[str, tuple[str, ...]] = {
    "status": get_args(GapStatus),
    "reason": get_args(GapReason),
}
"""The parts of a gap report that hold one value, with the values each may take."""
GAP_LISTS: tuple[str, ...] = ("missing_requirements", "missing_scopes", "affected_claims")
"""The parts of a gap report that list ids: of required evidence, of scopes, of answer fields
(a family's ids for each: `tasks.gap_vocabulary`)."""
NextAction = Literal["escalate", "request_access", "human_review"]
"""What a missing scope calls for next (docs/benchmark.md §2.2): escalate the decision to the
scope's owner, request access from the owner, or send the matter to the family's reviewer."""
NEXT_ACTIONS: tuple[NextAction, ...] = get_args(NextAction)
Answer = dict[str, str | list[str]]
"""An answer: each field of the family's answer schema, a value (ordinal) or a list (set)."""


class GapReport(BaseModel):
    """A structured statement of what evidence is missing, from where, and what it affects."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: GapStatus
    missing_requirements: list[str]
    missing_scopes: list[str]
    affected_claims: list[str]
    reason: GapReason

    @classmethod
    def of(
        cls, missing: Sequence[RequiredEvidence], scopes: Iterable[str], *, partial: bool
    ) -> GapReport:
        """The report of `missing` requirements held in `scopes` (docs/benchmark.md §1): status
        and reason follow the policy; the affected claims are the fields the missing inform."""
        return cls(
            status="partial" if partial else "blocked",
            missing_requirements=[r.id for r in missing],
            missing_scopes=list(dict.fromkeys(scopes)),
            affected_claims=list(dict.fromkeys(c for r in missing for c in r.informs)),
            reason="partial_answer_permitted" if partial else "policy_requires_block",
        )


class NextStep(BaseModel):
    """The next step a gap calls for (docs/benchmark.md §2.2): an action and the human role it
    goes to (a scope's owner, or the family's reviewer)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: NextAction
    to: str


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Fact(_Value):
    """Structured ground truth a document's text was rendered from. Never shown to a model.
    `retracts`: ids of facts this one contradicts; where both are in the evidence, their effects
    are dropped (`tasks.live_effects`)."""

    id: str
    effects: dict[str, list[str]]
    variables: dict[str, str]
    retracts: list[str] = []


class Document(_Value):
    """One document. `superseded`: a later version of it exists in the task, so it does not
    cover its evidence family (hard tier). `store`: the store (connector) it is kept in, on a
    tier whose corpora have stores (`delegation`); None elsewhere, and then left out of the
    JSON, so other tiers' tasks are the same bytes as before."""

    doc_id: str
    title: str
    role: str
    """A slot role of the family (`ROLES`) or one a tier adds (`distractor`, `register`)."""
    scope: str
    evidence_family: str
    body: str
    facts: tuple[Fact, ...]
    superseded: bool = False
    store: str | None = Field(default=None, exclude_if=lambda store: store is None)


def reached(store: str | None, stores: Collection[str]) -> bool:
    """Whether a connector reaching `stores` reaches a document kept in `store`: every document
    when `stores` is empty (a corpus without stores), and one kept in no store."""
    return not stores or store is None or store in stores


class RequiredEvidence(_Value):
    id: str
    description: str
    informs: tuple[str, ...]


class Contract(_Value):
    """What a complete answer needs, and whether a partial answer is permitted without it."""

    required_evidence: tuple[RequiredEvidence, ...]
    partial_response_permitted: bool


class Oracles(_Value):
    complete_answer: Answer
    authorized_answer: Answer
    completeness: Completeness
    gap_report: GapReport | None


class SubAgent(_Value):
    """A sub-agent a task lists for delegated handoffs (the `delegation` tier): its name, its
    role, the scopes it holds and the stores it owns (its connectors; none: it reaches every
    store). A handed-off episode reaches its stores under the intersection of its scopes and
    the requester's (`peb_core.access`), so authority never escalates."""

    name: str
    role: str
    scopes: tuple[str, ...]
    stores: tuple[str, ...] = ()


class GrantChange(_Value):
    """A change of the user's grants during an episode (docs/benchmark.md §9.2): `scope` is no
    longer held (`expires`, `revoked`) or is held (`granted`) from the `lag`-th tool call after
    the call that sets it going (`trigger`; 0 for `start`), that call itself for a `lag` of 0.
    Never shown to a model; under `named` disclosure the result of the call at which it takes
    effect announces it. The changes of a schedule take effect in order: each one's trigger is
    watched for once the one before it holds."""

    scope: str
    change: GrantEvent
    trigger: GrantTrigger
    lag: int

    @property
    def ends(self) -> bool:
        return self.change != "granted"


class GrantState(_Value):
    """What holds in one state of a grant schedule: the scopes the user holds, the documents
    they may open, and the oracles a reply submitted in that state is judged against."""

    user_scopes: tuple[str, ...]
    authorized_doc_ids: tuple[str, ...]
    oracles: Oracles


class Task(_Value):
    """One task. `topologies` names how its evidence is laid out (`named_gap`, `silent_gap`,
    `superseded`, `two_missing`, `decoy_notice`, `decoy_supersession`); never shown to a model.
    `contract` is what a complete answer needs, whatever a system is shown of it
    (`shown_contract`)."""

    task_id: str
    family: str
    template: str
    seed: int
    tier: Tier = DEFAULT_TIER
    prompt: str
    documents: tuple[Document, ...]
    user_scopes: tuple[str, ...]
    authorized_doc_ids: tuple[str, ...]
    contract: Contract
    promoted: bool
    oracles: Oracles
    topologies: tuple[str, ...] = ()
    sub_agents: tuple[SubAgent, ...] = Field(default=(), exclude_if=lambda agents: not agents)
    """The sub-agents it lists (the `delegation` tier); left out of the JSON when there are
    none, so the other tiers' tasks are the same bytes as before."""

    user_stores: tuple[str, ...] = Field(default=(), exclude_if=lambda stores: not stores)
    """The stores the user's own tools reach (the `delegation` tier; others only through the
    sub-agents that own them); none: every store. Left out of the JSON when empty."""

    grants: tuple[GrantChange, ...] = Field(default=(), exclude_if=lambda grants: not grants)
    """The grant schedule, in the order its changes take effect (the `grants` tier). The task's
    own `user_scopes`, `authorized_doc_ids` and `oracles` are those at the start, before any
    change. Left out of the JSON when empty, as is `grant_states`, so tasks without a schedule
    keep their bytes."""
    grant_states: tuple[GrantState, ...] = Field(
        default=(), exclude_if=lambda states: not states
    )
    """The state after each change of `grants` (one per change, in the same order)."""
    contract_source: ContractSource = Field(
        default=DEFAULT_CONTRACT, exclude_if=lambda source: source == DEFAULT_CONTRACT
    )
    """Where a system finds the contract (a generation parameter of the tiers with corpora):
    `given` with the request, or `corpus`, in the procedure document (role `procedure`) among
    the documents. Left out of the JSON when `given`, so those tasks keep their bytes."""

    @property
    def shown_contract(self) -> Contract:
        """The contract as a system is shown it: whole when `given`; under `corpus` its policy
        only, with no requirement (the procedure document in the corpus lists them)."""
        if self.contract_source == "given":
            return self.contract
        return self.contract.model_copy(update={"required_evidence": ()})

    @property
    def states(self) -> tuple[GrantState, ...]:
        """The states of the grant schedule in order: at the start (the task's own scopes,
        authorized documents and oracles), then after each change; one state without one."""
        start = GrantState(
            user_scopes=self.user_scopes,
            authorized_doc_ids=self.authorized_doc_ids,
            oracles=self.oracles,
        )
        return (start, *self.grant_states)

    def in_state(self, state: int) -> Task:
        """The task as it stands with the first `state` changes of its schedule in force, as a
        task without a schedule: that state's scopes, authorized documents and oracles in place
        of its own (the task itself where it has no schedule)."""
        if not self.grants:
            return self
        held = self.states[state]
        return self.model_copy(
            update={
                "user_scopes": held.user_scopes,
                "authorized_doc_ids": held.authorized_doc_ids,
                "oracles": held.oracles,
                "grants": (),
                "grant_states": (),
            }
        )

    @property
    def authorized_documents(self) -> tuple[Document, ...]:
        ids = set(self.authorized_doc_ids)  # a corpus holds hundreds: no scan of a list each
        return tuple(d for d in self.documents if d.doc_id in ids)

    @property
    def hidden_documents(self) -> tuple[Document, ...]:
        ids = set(self.authorized_doc_ids)
        return tuple(d for d in self.documents if d.doc_id not in ids)
