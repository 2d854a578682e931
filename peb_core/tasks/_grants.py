"""The `grants` tier (docs/benchmark.md §9.2): the agent tier's corpora, with temporal validity
as a task property. Each task has a grant schedule of one change, drawn facts first from the
seed, set going by what the episode does: the grant of a contract record's home scope ends (it
`expires` or is `revoked`) a few calls after the episode first opens a document in that scope,
or the scope is `granted` late, at an early call or on the first search that would have found
one of its documents. The access session applies the schedule call by call; the task holds the
state at the start (its own `user_scopes`, `authorized_doc_ids` and oracles) and the state
after the change (`grant_states`), and a reply is judged against the state in force when its
submit was answered (`scoring.judged_state`).

The corpus is the agent tier's for the same family, template, seed and size (the schedule is
drawn from its own generator, after the contract's records and before nothing else), so the two
tiers' tasks differ only by the schedule and what follows from it."""

from __future__ import annotations

import functools
import random

from ._agent import AGENT, record_ref
from ._draw import ContractData, DocumentData, build_oracles
from ._scenario import ScenarioFile, TemplateSpec
from ._task import Document, GrantChange, GrantEvent, GrantState, GrantTrigger, Oracles, Task
from ._toolkit import derived, gap_topologies, scheduled, spread

GRANT_LAGS: dict[GrantTrigger, tuple[int, int]] = {
    "open": (2, 4),
    "start": (2, 4),
    "search": (0, 0),
}
"""How many calls after its trigger a change holds from (`GrantChange.lag`, drawn in the
range): an ending grant ends 2 to 4 calls after the first call that opened a document in its
scope (1 to 3 calls between are answered under the grant, so an episode that submits straight
after reading is judged on the state it read in); a late grant set going at the start holds
from call 2 to 4; one set going by a search holds from that search, which is answered under
it (the grant arrives as the agent asks)."""

GRANT_TRIGGERS: dict[bool, tuple[GrantTrigger, ...]] = {True: ("open",), False: ("start", "search")}
"""The triggers a change is drawn from: an ending grant's is the first open in its scope, a
late grant's a call at the start or the first search that would have found its scope."""

EVENTS: tuple[GrantEvent, ...] = ("expires", "revoked", "granted")

GRANT_TOPOLOGIES = ("grant_ends", "late_grant", "expired_gap", "late_cover")
"""What the schedule adds to a task's topologies: a grant ends or begins; `expired_gap`: the
grant that ends held the only current copy of a required record (it is missing after the
change); `late_cover`: the late grant holds the only current copy of one (it is covered after
the change). A grants task's gap topologies are those of the state after the change."""

_KEPT = ("decoy_notice", "multi_hop")
"""The agent tier's topologies that do not depend on which requirements are missing."""


@functools.cache
def _events(family: str, n: int) -> tuple[GrantEvent, ...]:
    """The changes of a family's `n` canonical tasks: each event as often, shuffled."""
    return spread(EVENTS, n, f"{family}|grants-schedule")


def _event(spec: ScenarioFile, template: TemplateSpec, seed: int, rng: random.Random) -> GrantEvent:
    """A canonical seed's change from the family's schedule; a fresh seed's drawn."""
    event = scheduled(spec, template, seed, _events)
    return rng.choice(EVENTS) if event is None else event


def _data(doc: Document) -> DocumentData:
    data: DocumentData = {
        "doc_id": doc.doc_id,
        "title": doc.title,
        "role": doc.role,
        "scope": doc.scope,
        "evidence_family": doc.evidence_family,
        "body": doc.body,
        "facts": list(doc.facts),
    }
    if doc.superseded:
        data["superseded"] = True
    return data


def _covered(documents: tuple[Document, ...], scopes: tuple[str, ...]) -> set[str]:
    """The evidence families a current document in `scopes` covers."""
    return {d.evidence_family for d in documents if d.scope in scopes and not d.superseded}


def _gap_topologies(
    spec: ScenarioFile, documents: tuple[Document, ...], gaps: list[str]
) -> list[str]:
    """The agent tier's gap topologies (§9) for the requirements `gaps` missing after the change:
    read from the corpus as the agent tier lays it out (the tracker names a scope by its id; a
    pointer names a record by its reference)."""
    homes = spec.home_scopes
    tracker = next(d.body for d in documents if d.role == "tracker")
    named = [f for f in gaps if homes[f] in tracker]
    refs = {record_ref(d.body) for d in documents if d.evidence_family in gaps}
    pointed = " ".join(d.body for d in documents if d.role == "pointer")
    topologies = gap_topologies(len(gaps), len(named))
    return topologies + (["hidden_hop"] if any(r and r in pointed for r in refs) else [])


def grants_task(
    base: Task, spec: ScenarioFile, template: TemplateSpec, seed: int, rng: random.Random
) -> Task:
    """The agent tier's task `base` with a grant schedule of one change, drawn from `rng`: the
    task's own scopes, authorized documents and oracles those at the start, the state after the
    change in `grant_states`."""
    event = _event(spec, template, seed, rng)
    ends = event != "granted"
    m1 = template.material.evidence_family
    restricted = base.contract.required_evidence
    records = [m1, *(r.id for r in restricted if r.id in spec.restricted_families and r.id != m1)]
    covered = _covered(base.documents, base.user_scopes)
    stale = [f for f in records if f not in covered]
    # Mostly a record whose only current copy the scope holds: the material record (M1, whose
    # master states the findings) when a grant ends, any such record for a late grant.
    sole = [m1] if ends and m1 in stale else stale
    family = rng.choice(sole if sole and rng.random() < 0.75 else records)
    scope = spec.home_scopes[family]
    trigger = rng.choice(GRANT_TRIGGERS[ends])
    lag = rng.randint(*GRANT_LAGS[trigger])

    documents = [_data(d) for d in base.documents]
    contract: ContractData = {
        "required_evidence": list(base.contract.required_evidence),
        "partial_response_permitted": base.contract.partial_response_permitted,
    }
    held = (*base.user_scopes, scope)
    start, after = (held, base.user_scopes) if ends else (base.user_scopes, held)
    first, then = (_state(spec, contract, documents, scopes) for scopes in (start, after))
    gap = then.oracles.gap_report
    gaps = list(gap.missing_requirements) if gap is not None else []
    topologies = [t for t in base.topologies if t in _KEPT]
    topologies += _gap_topologies(spec, base.documents, gaps)
    topologies.append("grant_ends" if ends else "late_grant")
    if family in stale:  # the scope holds the record's only current copy
        topologies.append("expired_gap" if ends else "late_cover")
    return base.model_copy(
        update={
            "user_scopes": first.user_scopes,
            "authorized_doc_ids": first.authorized_doc_ids,
            "oracles": first.oracles,
            "topologies": tuple(topologies),
            "grants": (GrantChange(scope=scope, change=event, trigger=trigger, lag=lag),),
            "grant_states": (then,),
        }
    )


def _state(
    spec: ScenarioFile,
    contract: ContractData,
    documents: list[DocumentData],
    scopes: tuple[str, ...],
) -> GrantState:
    """The state in which the user holds `scopes`: the documents they may open and the
    oracles computed from them (section 1)."""
    authorized = [d for d in documents if d["scope"] in scopes]
    oracles = build_oracles(spec, contract, documents, authorized)
    return GrantState(
        user_scopes=scopes,
        authorized_doc_ids=tuple(d["doc_id"] for d in authorized),
        oracles=Oracles.model_validate(oracles),
    )


GRANTS = derived(
    AGENT,
    "grants",
    "the agent tier's corpora with a grant schedule: a contract record's scope is granted at "
    "the start and ends (expires or is revoked) mid-episode, or is granted late",
    grants_task,
)
