"""The Task: a frozen value holding every document, the contract and the oracles, and the
vocabulary of answers and gap reports the oracles are written in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from ._tiers import DEFAULT_TIER, Tier

Completeness = Literal["complete", "incomplete"]
GapStatus = Literal["partial", "blocked"]
GapReason = Literal["partial_answer_permitted", "policy_requires_block"]
GrantEvent = Literal["expires", "revoked", "granted"]
"""How a grant changes mid-episode: it ends (`expires`, `revoked`) or begins (`granted`)."""
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
    cover its evidence family (hard tier)."""

    doc_id: str
    title: str
    role: str
    """A slot role of the family (`ROLES`) or one a tier adds (`distractor`, `register`)."""
    scope: str
    evidence_family: str
    body: str
    facts: tuple[Fact, ...]
    superseded: bool = False


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
    role, and the scopes it holds. A handed-off episode runs under the intersection of these
    and the requester's scopes (`peb_core.access`), so authority never escalates."""

    name: str
    role: str
    scopes: tuple[str, ...]


class GrantChange(_Value):
    """A change of the user's grants during an episode (docs/benchmark.md, grant schedules):
    from the `step`-th tool call on, `scope` is no longer held (`expires`, `revoked`) or is
    held (`granted`). Never shown to a model; under `named` disclosure a tool result announces
    it once it holds."""

    scope: str
    step: int
    change: GrantEvent

    @property
    def ends(self) -> bool:
        return self.change != "granted"


class Task(_Value):
    """One task. `topologies` names how its evidence is laid out (`named_gap`, `silent_gap`,
    `superseded`, `two_missing`, `decoy_notice`, `decoy_supersession`); never shown to a model."""

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

    grants: tuple[GrantChange, ...] = ()
    """The grant schedule, in step order (the `grants` tier); `user_scopes` and the oracles are
    those after it, at the submit. Left out of the JSON when empty, so tasks without a schedule
    keep their bytes."""

    @model_serializer(mode="wrap")
    def _without_empty_grants(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if not self.grants:
            data.pop("grants", None)
        return data

    def scopes_at(self, step: int) -> tuple[str, ...]:
        """The scopes the user holds when the `step`-th tool call (from 1) is answered: the
        final scopes with the schedule's changes after `step` undone."""
        scopes = list(self.user_scopes)
        for change in reversed(self.grants):
            if change.step > step:
                if change.ends:
                    scopes.append(change.scope)
                elif change.scope in scopes:
                    scopes.remove(change.scope)
        return tuple(dict.fromkeys(scopes))

    @property
    def authorized_documents(self) -> tuple[Document, ...]:
        ids = set(self.authorized_doc_ids)  # a corpus holds hundreds: no scan of a list each
        return tuple(d for d in self.documents if d.doc_id in ids)

    @property
    def hidden_documents(self) -> tuple[Document, ...]:
        ids = set(self.authorized_doc_ids)
        return tuple(d for d in self.documents if d.doc_id not in ids)
