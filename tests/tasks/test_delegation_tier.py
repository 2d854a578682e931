"""docs/benchmark.md §9.1: the delegation tier. A delegation task is the agent task of the same
family, template and seed (documents, contract and oracles) with each document kept in a store
and sub-agents that own the stores the user's own tools do not reach: the register and every
record the contract requires are in the records system (the records clerk's), never in the
user's workspace. Every document the user may see is reached by exactly the routes the task
lists (its own tools, or the owner of its store), none it may not see by any; so a requester
that never delegates cannot reach a required record the user may see, on every canonical task
in every disclosure mode. Adding stores changed no other tier's bytes (their digests are pinned
in test_determinism.py, this tier's too)."""

from __future__ import annotations

import asyncio
import json

from peb_core import generate_task, generate_tasks, load_families
from peb_core.access import DELEGATE_TOOL, DISCLOSURES, AgentView, Handoff, agent_view
from peb_core.tasks import MAILBOX, RECORDS, STORES, TIERS, WORKSPACE, Task, scenario_hash

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
TASKS = generate_tasks(SPECS, tier="delegation")


def test_a_delegation_task_is_its_agent_task_kept_in_stores_with_sub_agents() -> None:
    agent = generate_tasks(SPECS, tier="agent")
    assert len(TASKS) == len(agent) == 168
    mailed = 0
    for a, d in zip(agent, TASKS, strict=True):
        assert d.task_id == a.task_id.replace("__agent__", "__delegation__")
        assert d.tier == "delegation" and not a.sub_agents and not a.user_stores
        assert [doc.model_copy(update={"store": None}) for doc in d.documents] == list(a.documents)
        assert (d.contract, d.oracles) == (a.contract, a.oracles)
        assert d.user_stores == (WORKSPACE,)
        assert {doc.store for doc in d.documents} <= set(STORES)
        spec = FAMILIES[d.family]
        user = set(d.user_scopes)
        required = {r.id for r in d.contract.required_evidence}
        for doc in d.documents:
            if doc.role == "register" or doc.evidence_family in required:
                # The register and the contract's records are filed in the records system,
                # but for out-of-date versions sent round by mail.
                mail = doc.store == MAILBOX and doc.superseded and doc.scope in user
                assert doc.store == RECORDS or mail, doc
                mailed += mail
            if doc.role == "tracker":
                assert doc.store == WORKSPACE
        agents = {s.name: s for s in d.sub_agents}
        assert set(agents) == {"records_clerk", "analyst"}
        assert agents["records_clerk"].stores == (RECORDS,)
        assert agents["analyst"].stores == (MAILBOX,)
        homes = {spec.home_scopes[r.id] for r in d.contract.required_evidence
                 if r.id in spec.restricted_families}  # fmt: skip
        for agent_ in agents.values():  # every scope the user holds, and one it lacks
            assert user < set(agent_.scopes) and len(set(agent_.scopes) - user) == 1
            assert set(agent_.scopes) - user <= set(spec.restricted_scopes)
        assert set(agents["records_clerk"].scopes) - user <= homes
        incomplete = d.oracles.completeness == "incomplete"
        assert ("delegated_gap" in d.topologies) == incomplete
        assert ("mailed_copy" in d.topologies) == any(
            doc.store == MAILBOX and doc.evidence_family in required for doc in d.documents
        )
        assert d.topologies[: len(a.topologies)] == a.topologies
    assert mailed > 0


def _openable(view: AgentView, mode: str, task: Task) -> set[str]:
    session = view.session(mode)
    return {
        d.doc_id
        for d in task.documents
        if session.call("open", json.dumps({"doc_id": d.doc_id})).error is None
    }


def _handed(view: AgentView, mode: str, to: str) -> AgentView:
    """The view a `delegate` call to `to` hands off on, as its delegator is given it."""
    seen: list[AgentView] = []

    async def delegator(name: str, handed: AgentView) -> Handoff:
        seen.append(handed)
        return Handoff(status="no_submit")

    session = view.session(mode, delegator=delegator)
    outcome = asyncio.run(session.acall(DELEGATE_TOOL.name, {"request": "x", "to": to}))
    assert outcome.error is None and len(seen) == 1
    return seen[0]


def test_each_visible_document_has_a_route_and_the_requester_alone_misses_one() -> None:
    for task in TASKS:
        spec = FAMILIES[task.family]
        view = agent_view(task, spec)
        authorized = set(task.authorized_doc_ids)
        by_id = {d.doc_id: d for d in task.documents}
        required = {r.id for r in task.contract.required_evidence}
        in_view = {  # the current records of the contract the user may see, by any route
            d.doc_id
            for d in task.authorized_documents
            if d.evidence_family in required and not d.superseded
        }
        for mode in DISCLOSURES:
            own = _openable(view, mode, task)
            assert own == {i for i in authorized if by_id[i].store == WORKSPACE}
            routes = {
                agent.name: _openable(_handed(view, mode, agent.name), mode, task)
                for agent in task.sub_agents
            }
            for agent in task.sub_agents:
                owned = {i for i in authorized if by_id[i].store in agent.stores}
                assert routes[agent.name] == owned
            assert own.union(*routes.values()) == authorized, (task.task_id, mode)
            # Alone, the requester reaches no current record of the contract and no register:
            # a covered requirement's records are all out of its reach.
            assert in_view and not own & in_view, (task.task_id, mode)
            assert not any(by_id[i].role == "register" for i in own)


def test_the_delegation_tier_takes_corpus_sizes_and_shares_the_agent_sections() -> None:
    spec = FAMILIES["procurement_v1"]
    small = generate_task(spec, spec.templates[0].id, 7001, tier="delegation", corpus_size=20)
    big = generate_task(spec, spec.templates[0].id, 7001, tier="delegation", corpus_size=200)
    assert (small.contract, small.oracles, small.sub_agents) == (
        big.contract,
        big.oracles,
        big.sub_agents,
    )
    # The contract's records are kept in the same stores at every size.
    required = {r.id for r in small.contract.required_evidence}
    stores = {d.doc_id: d.store for d in big.documents}
    for doc in small.documents:
        if doc.evidence_family in required or doc.role == "register":
            assert stores[doc.doc_id] == doc.store
    assert TIERS["delegation"].sections == TIERS["agent"].sections == ("hard", "agent")
    # A run on either reads the [agent] section; one on another tier leaves it out.
    assert scenario_hash(tier="delegation") == scenario_hash(tier="agent")
    assert scenario_hash(tier="delegation") != scenario_hash(tier="hard")
