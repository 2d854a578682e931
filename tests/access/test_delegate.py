"""docs/benchmark.md §9.1, delegated handoffs: the `delegate` tool at the access layer. Authority
never escalates: over generated delegation corpora, for requesters holding any set of scopes and
each sub-agent a task lists, in every disclosure mode, a sub-agent that probes everything it can
(searches made of every document's words, ids and scopes; opens of every id) and returns all it
was shown never returns an id or text of a document outside its view: the stores it owns, under
the scopes it holds with the requester; so never from a scope the requester lacks. The
requester's own tools, probed the same way, show nothing outside its own stores and scopes. The
check fails when a sub-agent is given its own scopes, or every store, instead. Bad calls are
errors the model reads."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from peb_core import ScenarioFile, Task, generate_task, load_families
from peb_core.access import (
    DISCLOSURES,
    MAX_HANDOFFS,
    TOOLS,
    AgentSession,
    AgentView,
    Corpus,
    DelegateResult,
    Handoff,
    agent_view,
    family_tools,
    get_disclosure,
    offered,
)
from peb_core.tasks import STORES, SubAgent

FAMILIES = load_families()
MAX_EXAMPLES = int(os.environ.get("PEB_LEAK_EXAMPLES", "2000")) // 10
CASES = [(family, t.id) for family, spec in FAMILIES.items() for t in spec.templates]


@dataclass
class Prober:
    """A sub-agent that makes `calls` (and opens every id of the task) and returns everything
    it was shown as its response (but the queries a search echoes: the test makes them of
    hidden text, which a sub-agent could not), whole: more than one `submit` call takes
    (`MAX_CALL_ARGUMENTS`), so the check covers whatever a sub-agent could carry back."""

    task: Task
    calls: list[tuple[str, dict[str, Any]]]
    mode: str
    views: list[AgentView] = field(default_factory=list)

    async def __call__(self, to: str, view: AgentView) -> Handoff:
        self.views.append(view)
        session = view.session(self.mode)
        shown = [json.loads(session.call(name, a).content) for name, a in self.calls]
        for result in shown:
            result.pop("query", None)  # its own words echoed (made of hidden text by the test)
        shown += [session.call("open", {"doc_id": d.doc_id}).content for d in self.task.documents]
        response = {"answer": None, "completeness": "incomplete", "gap_report": None, "seen": shown}
        return Handoff(status="ok", submitted=json.dumps(response, ensure_ascii=False))


def escalations(
    text: str, task: Task, scopes: set[str], stores: tuple[str, ...] = ()
) -> list[str]:
    """Ids and text of documents outside `scopes` or `stores` (none: every store) found in
    `text` (a title or body that a document inside them also holds tells nothing)."""

    def inside(doc: Any) -> bool:
        return doc.scope in scopes and (not stores or doc.store in stores)

    seen = [t for d in task.documents if inside(d) for t in (d.title, d.body)]
    problems = []
    for doc in task.documents:
        if inside(doc):
            continue
        if f'"{doc.doc_id}"' in text:
            problems.append(f"id of {doc.doc_id} ({doc.scope}, {doc.store})")
        for what in ("title", "body"):
            value = getattr(doc, what)
            if value in text and not any(value in t for t in seen):
                problems.append(f"{what} of {doc.doc_id} ({doc.scope}, {doc.store})")
    return problems


def _handoff(
    task: Task, spec: ScenarioFile, requester: tuple[str, ...], agent: SubAgent, prober: Prober
) -> str:
    narrowed = task.model_copy(update={"user_scopes": requester})
    session = agent_view(narrowed, spec).session(prober.mode, delegator=prober)
    outcome = asyncio.run(
        session.acall("delegate", {"request": "find everything", "to": agent.name})
    )
    assert outcome.error is None, outcome.error
    assert DelegateResult.model_validate_json(outcome.content).response is not None
    return outcome.content


@st.composite
def handoffs(draw: st.DrawFn) -> tuple[Task, ScenarioFile, tuple[str, ...], list[Any]]:
    family, template = draw(st.sampled_from(CASES))
    spec = FAMILIES[family]
    seed = draw(st.one_of(st.sampled_from(spec.canonical_seeds), st.integers(0, 10**9)))
    size = draw(st.sampled_from([20, 30, 60]))
    task = generate_task(spec, template, seed, tier="delegation", corpus_size=size)
    every = sorted({d.scope for d in task.documents} | set(task.user_scopes))
    every += sorted({s for a in task.sub_agents for s in a.scopes} - set(every))
    requester = tuple(draw(st.lists(st.sampled_from(every), min_size=1, unique=True)))
    words = st.sampled_from(sorted({w for d in task.documents for w in d.body.split()}))
    queries = st.one_of(
        st.sampled_from([d.body[:300] for d in task.documents]),
        st.lists(words, min_size=1, max_size=6).map(" ".join),
        st.sampled_from([d.doc_id for d in task.documents] + every),
    )
    calls = st.builds(lambda q: ("search", {"query": q, "k": 50}), queries)
    return task, spec, requester, draw(st.lists(calls, min_size=1, max_size=6))


def _own(task: Task, spec: ScenarioFile, requester: tuple[str, ...], prober: Prober) -> str:
    """All the requester's own tools show a prober that searches and opens everything."""
    narrowed = task.model_copy(update={"user_scopes": requester})
    session = agent_view(narrowed, spec).session(prober.mode)
    shown = [json.loads(session.call(name, a).content) for name, a in prober.calls]
    for result in shown:
        result.pop("query", None)
    shown += [session.call("open", {"doc_id": d.doc_id}).content for d in task.documents]
    return json.dumps(shown)


@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True)
@given(handoffs())
def test_a_sub_agent_never_returns_text_from_a_scope_the_requester_lacks(
    case: tuple[Task, ScenarioFile, tuple[str, ...], list[Any]],
) -> None:
    task, spec, requester, calls = case
    assert task.sub_agents and task.user_stores
    for mode in DISCLOSURES:
        own = _own(task, spec, requester, Prober(task, calls, mode))
        assert escalations(own, task, set(requester), task.user_stores) == [], (mode, requester)
        for agent in task.sub_agents:
            assert agent.stores and not set(agent.stores) & set(task.user_stores)
            prober = Prober(task, calls, mode)
            text = _handoff(task, spec, requester, agent, prober)
            held = set(requester) & set(agent.scopes)
            assert prober.views[0]._corpus.user_scopes == tuple(
                s for s in requester if s in agent.scopes
            )
            found = escalations(text, task, held, agent.stores)
            assert found == [], (mode, agent.name, requester)
            assert escalations(text, task, set(requester)) == []


def test_the_escalation_check_fails_for_a_sub_agent_given_its_own_scopes() -> None:
    """Were a handoff to run under the sub-agent's own scopes, the clerk (who holds a contract
    record master's home scope) would return that master: the check finds it. Were it to run
    in every store, it would return what the other stores keep: the check finds that too."""
    spec = FAMILIES["due_diligence_v1"]
    task = generate_task(spec, spec.templates[0].id, 11, tier="delegation")
    clerk = next(a for a in task.sub_agents if a.name == "records_clerk")
    own = task.model_copy(update={"user_scopes": clerk.scopes})
    prober = Prober(task, [], "named")
    asyncio.run(prober("records_clerk", agent_view(own, spec)))
    view = prober.views[0]
    assert isinstance(view._corpus, Corpus)
    text = _handoff(task, spec, clerk.scopes, clerk, Prober(task, [], "named"))
    found = escalations(text, task, set(task.user_scopes))
    assert any(clerk.scopes[-1] in problem for problem in found), found
    # Under the intersection, the same prober returns nothing of it.
    text = _handoff(task, spec, tuple(task.user_scopes), clerk, Prober(task, [], "named"))
    assert escalations(text, task, set(task.user_scopes), clerk.stores) == []
    # A clerk reaching every store returns documents of the workspace and the mailbox.
    everywhere = clerk.model_copy(update={"stores": ()})
    unbound = task.model_copy(update={"sub_agents": (everywhere,)})
    text = _handoff(unbound, spec, tuple(task.user_scopes), everywhere, Prober(task, [], "named"))
    found = escalations(text, task, set(task.user_scopes), clerk.stores)
    assert any("workspace" in p for p in found) and any("mailbox" in p for p in found), found


def test_the_tools_say_which_stores_they_reach_and_who_owns_the_others() -> None:
    spec = FAMILIES["legal_review_v1"]
    task = generate_task(spec, spec.templates[0].id, 11, tier="delegation")
    view = agent_view(task, spec)
    prober = Prober(task, [], "silent")
    assert [t["function"]["name"] for t in view.session().tools] == offered()
    tools = view.session(delegator=prober).tools
    named = {t["function"]["name"]: t["function"] for t in tools}
    assert list(named) == offered(handing=True) == [*offered(), "delegate"]
    search, delegate = named["search"], named["delegate"]
    assert delegate["parameters"]["properties"]["to"]["enum"] == [a.name for a in task.sub_agents]
    restricted = set(spec.restricted_scopes)
    for agent in task.sub_agents:
        assert agent.name in delegate["description"]
        assert set(agent.scopes) & restricted  # each holds a restricted scope of its own...
        (store,) = agent.stores
        assert f"owns: {store} ({STORES[store]})" in delegate["description"]
        assert f"{store} ({STORES[store]}; owned by {agent.name})" in search["description"]
    (own,) = task.user_stores
    assert f"The stores you reach: {own} ({STORES[own]})." in search["description"]
    # ...never shown, nor any doc id (submit's response schema lists every scope a gap report
    # may name, restricted ones among them)
    for tool in (f for name, f in named.items() if not TOOLS[name].ends):
        text = json.dumps(tool)
        assert not any(s in text for s in restricted)
        assert not any(d.doc_id in text for d in task.documents)
    # The sub-agent is told the stores it reaches, and of no others.
    handed = view.session(delegator=prober)
    asyncio.run(handed.acall("delegate", {"request": "x", "to": task.sub_agents[0].name}))
    sub = prober.views[0].session().tools[0]["function"]["description"]
    (store,) = task.sub_agents[0].stores
    assert f"The stores you reach: {store} ({STORES[store]})." in sub
    assert not any(text in sub for other, text in STORES.items() if other != store)
    # The agent tier lists none: no delegate, whatever the session can run.
    plain = generate_task(spec, spec.templates[0].id, 11, tier="agent")
    assert not plain.sub_agents and "sub_agents" not in plain.model_dump_json()
    names = [t["function"]["name"] for t in agent_view(plain, spec).session(delegator=prober).tools]
    assert names == offered()
    assert [t["function"]["name"] for t in family_tools(spec)] == offered()


def test_bad_delegate_calls_are_errors_the_model_reads() -> None:
    spec = FAMILIES["legal_review_v1"]
    task = generate_task(spec, spec.templates[0].id, 11, tier="delegation")
    prober = Prober(task, [], "silent")
    session = agent_view(task, spec).session(delegator=prober)
    name = task.sub_agents[0].name

    def call(arguments: Any) -> str | None:
        return asyncio.run(session.acall("delegate", arguments)).error

    assert "no sub-agent 'nobody'" in (call({"request": "x", "to": "nobody"}) or "")
    assert "request" in (call({"to": name}) or "")
    assert "not valid JSON" in (call("{") or "")
    assert "cannot wait" in (session.call("delegate", {"request": "x", "to": name}).error or "")
    for _ in range(MAX_HANDOFFS):
        assert call({"request": "x", "to": name}) is None
    assert f"at most {MAX_HANDOFFS}" in (call({"request": "x", "to": name}) or "")
    assert len(prober.views) == MAX_HANDOFFS
    # Each handoff's view lists no sub-agents: handoffs are one level deep.
    assert not prober.views[0].delegates
    session.call("submit", {"response": {"answer": None, "completeness": "incomplete",
                                          "gap_report": None}})  # fmt: skip
    assert "episode is over" in (call({"request": "x", "to": name}) or "")
    # A session without a delegator (a caller that runs no sub-agent) refuses a handoff.
    view = agent_view(task, spec)
    alone = AgentSession(view.start, view._corpus, get_disclosure("silent"), tools=list(TOOLS))
    assert "cannot hand off" in (asyncio.run(alone.acall("delegate", {"request": "x", "to": name}))
                                 .error or "")  # fmt: skip
    assert json.loads(session.call("open", {"doc_id": "x"}).content)["error"]
