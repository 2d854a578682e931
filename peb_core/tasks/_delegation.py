"""The `delegation` tier (docs/benchmark.md §9.1, delegated handoffs): an agent-tier corpus split
among **stores** (connectors), of which the user's own tools reach one, and named sub-agents that
own the others, to which the agent hands part of the contract with the `delegate` tool
(`peb_core.access`).

Facts first: the corpus, contract and oracles are the agent tier's for the same family, template
and seed (the same documents, each now kept in a store; so a delegation task is scored exactly
as its agent task), and the stores and sub-agents are drawn after them from the seed, a
document's store from its own id (so the contract's records are kept where they are at every
corpus size). The stores:

- `workspace` (the user's own): the tracker, and a share of the notes that point at records and
  of the routine documents;
- `records` (the records system, owned by `records_clerk`): the register and every restricted
  and contract record (masters, current copies and earlier versions), but for the earlier
  versions sent round by mail; a share of the routine documents;
- `mailbox` (owned by `analyst`): the other notes that point at records, a share of the routine
  documents, and one in four of the out-of-date visible versions of the restricted records
  (never a current copy: only the register tells that they are out of date).

So the user's own tools reach no record the contract requires, and the register only through the
clerk. Each sub-agent holds every scope the user holds and one the user lacks (the clerk: the
home scope of a contract record's master); a handoff runs under the intersection, which takes
that scope away (authority never escalates), so on an incomplete task (`delegated_gap`) the
clerk's view misses the contract record the user's does, and the final answer is safe only if
the gap the clerk reports reaches the final gap report. Every document the user may see is
reached by some route: its own tools, or the sub-agent that owns its store.
"""

from __future__ import annotations

import random

from ._agent import AGENT
from ._scenario import ScenarioFile, TemplateSpec
from ._task import Document, SubAgent, Task
from ._toolkit import derived

WORKSPACE = "workspace"
RECORDS = "records"
MAILBOX = "mailbox"
STORES = {
    WORKSPACE: "the matter's workspace: its tracker and working notes",
    RECORDS: "the records system: the register of records and the filed copies of the matter's "
    "records, current and earlier versions",
    MAILBOX: "the matter's mailbox: correspondence, notes, and copies of records sent round by "
    "mail",
}
"""Each store of a delegation corpus, as the tools describe it."""

RECORDS_CLERK = "records_clerk"
ANALYST = "analyst"
ROLES = {
    RECORDS_CLERK: "records clerk: looks up each record the contract requires in the register "
    "and finds its current copy",
    ANALYST: "analyst: reads the matter's correspondence and notes",
}
"""Each sub-agent's role, as the `delegate` tool describes it."""
OWNS = {RECORDS_CLERK: (RECORDS,), ANALYST: (MAILBOX,)}
"""The stores each sub-agent owns."""


def _store(doc: Document, user_scopes: tuple[str, ...], key: str) -> str:
    """Where `doc` is kept, drawn from `key` and its id alone."""
    draw = random.Random(f"{key}|{doc.doc_id}").random()
    if doc.role == "tracker":
        return WORKSPACE
    if doc.role == "pointer":
        return WORKSPACE if draw < 0.5 else MAILBOX
    if doc.role == "distractor":
        return (WORKSPACE, RECORDS, MAILBOX)[int(draw * 3)]
    if doc.role == "material" and doc.superseded and doc.scope in user_scopes and draw < 0.25:
        return MAILBOX  # an out-of-date version sent round by mail
    return RECORDS  # the register, the slot records, the restricted records


def delegation_task(
    base: Task, spec: ScenarioFile, template: TemplateSpec, seed: int, rng: random.Random
) -> Task:
    """The agent tier's task `base` with its documents kept in stores and its sub-agents, drawn
    from `rng` (and each document's store from the same seed string)."""
    key = f"{spec.id}|{template.id}|{seed}|delegation"
    user = tuple(spec.user_scopes)
    documents = tuple(d.model_copy(update={"store": _store(d, user, key)}) for d in base.documents)
    homes = spec.home_scopes
    restricted = set(spec.restricted_families)
    masters = sorted({homes[r.id] for r in base.contract.required_evidence if r.id in restricted})
    agents = [
        SubAgent(name=RECORDS_CLERK, role=ROLES[RECORDS_CLERK],
                 scopes=(*user, rng.choice(masters)), stores=OWNS[RECORDS_CLERK]),
        SubAgent(name=ANALYST, role=ROLES[ANALYST],
                 scopes=(*user, rng.choice(spec.restricted_scopes)), stores=OWNS[ANALYST]),
    ]  # fmt: skip
    rng.shuffle(agents)
    required = {r.id for r in base.contract.required_evidence}
    mailed = any(d.store == MAILBOX and d.evidence_family in required for d in documents)
    incomplete = base.oracles.completeness == "incomplete"
    return base.model_copy(
        update={
            "documents": documents,
            "user_stores": (WORKSPACE,),
            "sub_agents": tuple(agents),
            "topologies": (
                *base.topologies,
                *(["delegated_gap"] if incomplete else []),
                *(["mailed_copy"] if mailed else []),
            ),
        }
    )


DELEGATION = derived(
    AGENT,
    "delegation",
    "the agent tier's corpora split among stores: the user's own tools reach one, and named "
    "sub-agents own the others (the register and every contract record among them); a handoff "
    "(delegate) runs under the intersection of their scopes and the user's",
    delegation_task,
    handoffs=True,
)
