"""docs/benchmark.md §9.4: the `escalate(to, reason)` tool. Offered only where a session asks
for it (a protocol's `tools`), so every shipped session, prompt and digest is as before; an
accepted call hands the task to one of the family's roles and ends the episode without a
response; a role the family does not have is an error the agent reads, and the episode goes on;
a handoff's sub-agent is never offered it; the grant schedule's replay places the decision at
the escalation's call."""

from __future__ import annotations

import json

from peb_core.access import (
    ESCALATE_TOOL,
    TOOLS,
    AgentView,
    asked_tools,
    escalates,
    family_tools,
    handoff_view,
    offered,
    replay_grants,
)
from peb_core.systems import PROTOCOLS, agent_reminder, tool_sentence
from peb_core.tasks import generate_task, load_families, owners_of, view_for

FAMILIES = load_families()
SPEC = FAMILIES["due_diligence_v1"]
TASK = generate_task(SPEC, "hidden_liability_annex", 11, tier="agent")
ASKS = ("escalate",)


def _view() -> AgentView:
    view = view_for("agent", TASK, SPEC)
    assert isinstance(view, AgentView)
    return view


def _names(tools: list[dict[str, object]]) -> list[str]:
    return [t["function"]["name"] for t in tools]  # type: ignore[index]


def test_offered_only_where_a_session_asks_for_it() -> None:
    assert ESCALATE_TOOL.asked and ESCALATE_TOOL.ends and escalates("escalate")
    assert asked_tools() == ["escalate"]
    assert "escalate" not in offered() and "escalate" in offered(asks=ASKS)
    assert _names(_view().session().tools) == ["search", "open", "submit"]
    assert _names(_view().session(asks=ASKS).tools) == ["search", "open", "submit", "escalate"]
    assert "escalate" not in _names(family_tools(SPEC))
    assert "escalate" in _names(family_tools(SPEC, asks=ASKS))
    # the shipped protocols' prompts are as before: escalate is named only where asked for
    assert "escalate" not in tool_sentence() and "escalate" not in agent_reminder()["content"]
    assert "escalate(to, reason)" in tool_sentence(ASKS)
    for protocol in PROTOCOLS.values():
        assert protocol.tools == (ASKS if protocol.id == "structured_gap@2" else ())


def test_its_schema_names_the_family_s_roles_and_no_scope() -> None:
    (schema,) = [t for t in family_tools(SPEC, asks=ASKS) if t["function"]["name"] == "escalate"]
    text = json.dumps(schema)
    roles = owners_of(SPEC).roles
    assert schema["function"]["parameters"]["properties"]["to"]["enum"] == list(roles)
    assert not any(scope in text for scope in SPEC.scopes)


def test_an_escalation_ends_the_episode_without_a_response() -> None:
    session = _view().session(asks=ASKS)
    session.call("search", {"query": TASK.prompt})
    unknown = session.call("escalate", {"to": "the ceo", "reason": "missing"})
    assert unknown.error is not None
    assert unknown.error.startswith("escalate: to is none of this family's roles: deal team lead")
    assert not session.over and session.escalated is None
    bad = session.call("escalate", {"to": "lead counsel"})
    assert bad.error is not None and "reason" in bad.error and not session.over
    done = session.call("escalate", {"to": " Lead-Counsel ", "reason": "the annex is missing"})
    assert done.error is None and json.loads(done.content) == {
        "escalated": True,
        "to": "lead counsel",
    }
    assert session.over and session.submitted is None
    assert json.loads(session.escalated or "") == {
        "to": "lead counsel",
        "reason": "the annex is missing",
    }
    after = session.call("submit", {"response": {"answer": None}})
    assert after.error == "submit: the episode is over: the task was handed to a human (escalate)"
    assert session.timeline.submit == 4  # the escalation's call is the decision's


def test_not_offered_where_it_was_not_asked_for() -> None:
    session = _view().session()
    outcome = session.call("escalate", {"to": "lead counsel", "reason": "missing"})
    assert outcome.error is not None and outcome.error.startswith("unknown tool 'escalate'")
    assert not session.over


def test_a_handoff_s_sub_agent_is_never_offered_it() -> None:
    task = generate_task(SPEC, "hidden_liability_annex", 11, tier="delegation")
    view = view_for("agent", task, SPEC)
    assert isinstance(view, AgentView)
    session = view.session(asks=ASKS)
    assert "escalate" in _names(session.tools)
    context = session._context()  # what a delegate call's handler is given
    handed = handoff_view(context, task.sub_agents[0], "find the records")
    assert handed.handoff
    assert "escalate" not in _names(handed.session(asks=ASKS).tools)


def test_the_replay_places_the_decision_at_the_escalation() -> None:
    task = generate_task(SPEC, "hidden_liability_annex", 11, tier="grants")
    calls = [
        ("search", json.dumps({"query": task.prompt})),
        ("escalate", json.dumps({"to": "lead counsel", "reason": "missing"})),
        ("search", json.dumps({"query": "more"})),
    ]
    owned = replay_grants(task, calls, owners=owners_of(SPEC))
    assert owned.submit == 2 and owned.calls == 3
    view = view_for("agent", task, SPEC)
    assert isinstance(view, AgentView)
    live = view.session(asks=ASKS)
    for name, arguments in calls:
        live.call(name, arguments)
    assert live.timeline == owned
    # a call the family's owners cannot answer (none named) decides nothing, live or replayed
    assert replay_grants(task, calls).submit is None
    assert TOOLS["escalate"] is ESCALATE_TOOL
