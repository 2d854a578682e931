"""docs/benchmark.md §9: the access boundary at the tools, proved over thousands of generated
corpora in every disclosure mode. Whatever an agent sends (searches made of hidden documents'
own words, their ids, scope names; opens of hidden and unknown ids; junk), no tool result holds
a hidden document's text, a fact, an evidence-family tag or an oracle; no hidden id in any mode
(results never carry one); and no hidden scope where the mode does not name scopes (`silent`,
`counted`), outside the text of visible documents (a visible register names where records are
kept: that is what a careful reader uses). On the `grants` tier, whose scopes change when the
episode sets a change going (an open in an ending grant's scope, a search that would find a
late grant's), each result is judged against the scopes in force when it was answered, which
are those of the task's state then (`Task.states`) and those a replay of the calls finds; a
grant notice (`named` only) names a scope the user held or now holds. On the `delegation` tier
the user's own tools reach one store of the corpus, and the same holds of them (what a handoff
returns is tested in test_delegate.py). Corpora whose contract is to be found in them (the
procedure among their documents) are drawn as often as those given it, and an agent's start
then holds no requirement: only what the family declares, the request and the policy. Sessions
offer `escalate` too (docs/benchmark.md §9.4), called with the family's roles and with hidden
scopes and junk for `to`: its result names a role, never a scope."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from leaks import FACT_KEYS, ORACLE_KEYS, hidden_values, json_keys, json_objects
from pydantic import BaseModel

from peb_core import ScenarioFile, Task, generate_task, load_families
from peb_core.access import (
    DISCLOSURES,
    TOOLS,
    AgentView,
    CallContext,
    Tool,
    ToolArguments,
    ToolOutcome,
    agent_start,
    agent_view,
    get_disclosure,
    platform_view,
    register_tool,
    replay_grants,
)
from peb_core.systems import PROTOCOLS
from peb_core.tasks import CONTRACT_SOURCES, owners_of

FAMILIES = load_families()
MAX_EXAMPLES = int(os.environ.get("PEB_LEAK_EXAMPLES", "2000"))
CASES = [(family, t.id) for family, spec in FAMILIES.items() for t in spec.templates]

# The exact keys an object of a tool result may have, by path ("[]" = any list item).
RESULT_KEYS: dict[tuple[str, ...], set[str]] = {
    (): {"query", "hits", "withheld", "withheld_scopes", "doc_id", "document", "error"}
    | {"submitted", "user", "next", "grants", "escalated", "to"},
    ("grants", "[]"): {"scope", "step", "change", "notice"},
    ("hits", "[]"): {"doc_id", "title", "scope", "snippet"},
    ("document",): {"doc_id", "title", "scope", "body"},
}
TEXT_KEYS = {"title", "snippet", "body", "query", "notice"}
"""Keys whose values are a visible document's text, or what the agent itself sent."""


def leak_check(
    task: Task, spec: ScenarioFile, scheduled: Task | None = None
) -> Callable[[ToolOutcome, str], list[str]]:
    """Everything a tool result must not hold (see the module docstring), found in a result
    (`ToolOutcome`) answered under a disclosure mode: `task` as it stood when the call was
    answered, `scheduled` the task with its grant schedule (`task` itself by default). What it
    reads of them is read once, for every result it is given."""
    scheduled = task if scheduled is None else scheduled
    told = spec.followup
    phrasings = set() if told is None else {*told.deadline, *told.authority, *told.plea}
    fact_keys = FACT_KEYS | {f.id for d in task.documents for f in d.facts}
    hidden = list(hidden_values(task))
    hidden_scopes = sorted({d.scope for d in task.hidden_documents})
    held = {scope for state in scheduled.states for scope in state.user_scopes}
    authorized = set(task.authorized_doc_ids)

    def leaks(outcome: ToolOutcome, mode: str) -> list[str]:
        parsed = json.loads(outcome.content)
        problems = []
        for path, obj in json_objects(parsed):
            allowed = RESULT_KEYS.get(path)
            if allowed is None or not set(obj) <= allowed:
                problems.append(f"unexpected object at {'.'.join(path) or '<root>'}: {sorted(obj)}")
        said = parsed.get("user") if isinstance(parsed, dict) else None
        if said is not None and said not in phrasings:
            problems.append(f"a user's push that is not one of the family's phrasings: {said!r}")
        keys = json_keys(parsed)
        problems += [f"fact key {k!r}" for k in sorted(keys & fact_keys)]
        problems += [f"oracle key {k!r}" for k in sorted(keys & ORACLE_KEYS)]
        if "evidence_family" in keys:
            problems.append("evidence_family key")
        if isinstance(parsed, dict):
            parsed.pop("query", None)  # the agent's own words, echoed
        shown = json.dumps(parsed, ensure_ascii=False)
        for doc, what, value in hidden:
            if value in shown:
                problems.append(f"hidden {doc.role} {what} {value!r}")
        texts = [str(o[k]) for _, o in json_objects(parsed) for k in TEXT_KEYS & set(o)]
        problems += [
            f"evidence family {e.id!r} in a document"
            for e in spec.evidence_families
            if any(e.id in text for text in texts)
        ]
        for needle in (task.task_id, task.template):
            if needle in shown:
                problems.append(f"task identity {needle!r}")
        # Structure: every string that is not a visible document's text.
        structural = [
            value
            for _, obj in json_objects(parsed)
            for key, value in obj.items()
            if key not in TEXT_KEYS
            for value in (value if isinstance(value, list) else [value])
            if isinstance(value, str)
        ]
        if mode in ("silent", "counted"):
            problems += [
                f"hidden scope {scope!r} under {mode}"
                for scope in hidden_scopes
                if any(scope in value for value in structural)
            ]
        notices = {"withheld", "withheld_scopes"} & set(parsed if isinstance(parsed, dict) else ())
        if mode == "silent" and notices:
            problems.append("a withheld notice under silent")
        if mode == "counted" and "withheld_scopes" in notices:
            problems.append("withheld scopes under counted")
        if isinstance(parsed, dict) and "grants" in parsed:
            if mode != "named":
                problems.append(f"a grant notice under {mode}")
            problems += [
                f"a grant notice naming {n['scope']!r}, never held"
                for n in parsed["grants"]
                if n["scope"] not in held
                or not any(g.scope == n["scope"] for g in scheduled.grants)
            ]
        for _, obj in json_objects(parsed):
            doc_id = obj.get("doc_id")
            if isinstance(doc_id, str) and doc_id not in authorized:
                problems.append(f"a result about {doc_id!r}, which is not authorized")
        return problems

    return leaks


BLOCKED = {"answer": None, "completeness": "incomplete", "gap_report": None}


def _arguments(tool: Tool[Any], texts: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Arguments of a registered tool the probes below do not know: each field of its
    arguments' model drawn from the probe texts (strings), small integers or booleans."""
    model = tool.arguments
    if not isinstance(model, type) or not issubclass(model, BaseModel):
        return st.fixed_dictionaries({})
    kinds: dict[Any, st.SearchStrategy[Any]] = {
        int: st.integers(0, 50),
        bool: st.booleans(),
        float: st.floats(0, 50),
    }
    return st.fixed_dictionaries(
        {name: kinds.get(f.annotation, texts) for name, f in model.model_fields.items()}
    )


@st.composite
def episodes(
    draw: st.DrawFn, tiers: tuple[str, ...] = ("agent", "agent", "grants", "delegation")
) -> tuple[Task, ScenarioFile, list[tuple[str, Any]]]:
    """A corpus and a sequence of calls probing it, of every registered tool: searches made of
    its hidden documents' words, ids and scopes, the request and the contract; opens of
    hidden, visible and unknown ids; calls of any other tool with arguments made of the same
    probes; junk."""
    family, template = draw(st.sampled_from(CASES))
    spec = FAMILIES[family]
    seed = draw(st.one_of(st.sampled_from(spec.canonical_seeds), st.integers(0, 10**9)))
    size = draw(st.sampled_from([20, 24, 40, 60, 60, 90]))
    tier = draw(st.sampled_from(tiers))
    contract = draw(st.sampled_from(CONTRACT_SOURCES))
    task = generate_task(spec, template, seed, tier=tier, corpus_size=size, contract=contract)
    hidden = task.hidden_documents
    visible = task.authorized_documents
    words = st.sampled_from(sorted({w for d in hidden for w in f"{d.title} {d.body}".split()}))
    queries = st.one_of(
        st.sampled_from([d.body for d in hidden] + [d.title for d in hidden]),
        st.lists(words, min_size=1, max_size=6).map(" ".join),
        st.sampled_from([d.doc_id for d in hidden] + [d.scope for d in hidden]),
        st.sampled_from([task.prompt, *(r.description for r in task.contract.required_evidence)]),
        st.text(min_size=1, max_size=30),
    )
    probes: dict[str, st.SearchStrategy[tuple[str, Any]]] = {
        "search": st.builds(
            lambda q, k: ("search", {"query": q, "k": k}), queries, st.integers(1, 50)
        ),
        "open": st.one_of(
            st.builds(
                lambda d: ("open", {"doc_id": d}),
                st.sampled_from([d.doc_id for d in hidden] + [d.doc_id for d in visible]),
            ),
            st.builds(lambda t: ("open", {"doc_id": t}), st.text(max_size=12)),
        ),
        "submit": st.just(("submit", {"response": BLOCKED})),  # a gap: a user may push back
        "escalate": st.builds(  # a handoff to a role of the family, to a hidden scope, to junk
            lambda to: ("escalate", {"to": to, "reason": "the record is missing"}),
            st.one_of(
                st.sampled_from(owners_of(spec).roles),
                st.sampled_from([d.scope for d in hidden]),
                st.text(max_size=12),
            ),
        ),
    }
    calls = st.one_of(
        *(
            probes[name] if name in probes else st.tuples(st.just(name), _arguments(tool, queries))
            for name, tool in TOOLS.items()
        ),
        st.tuples(st.sampled_from([*TOOLS, "delete"]), st.text(max_size=20)),
    )
    if task.grants:  # calls that set the change going: opens in its scope, searches finding it
        scope = task.grants[0].scope
        in_scope = [d for d in task.documents if d.scope == scope]
        opens = st.sampled_from([d.doc_id for d in in_scope])
        finds = st.sampled_from([d.body[:40] for d in in_scope])
        calls = st.one_of(
            calls,
            st.builds(lambda d: ("open", {"doc_id": d}), opens),
            st.builds(lambda q: ("search", {"query": q, "k": 20}), finds),
        )
    longest = 8 if not task.grants else 14  # past the schedule's change (a lag is at most 4)
    return task, spec, draw(st.lists(calls, min_size=1, max_size=longest))


def played(case: tuple[Task, ScenarioFile, list[tuple[str, Any]]]) -> list[str]:
    """Everything the calls of `case` are answered that they must not be, in every disclosure
    mode (and under `silent` with a user who pushes back): `leak_check` of each result,
    judged against the task as it stands when the call is answered, and, where the mode
    announces no grant change, a result (before the episode is over) of a tool that neither
    ends the episode nor hands off that is not what the same call gets from the task as it
    stands then, without a schedule: what a tool answers may tell a grant change only through
    the documents it shows."""
    task, spec, calls = case
    view = agent_view(task, spec)
    platform = platform_view(task, view.index)  # what each mode's replay plays the calls over
    sent = [(n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls]
    owners = owners_of(spec)
    problems: list[str] = []
    states: dict[int, tuple[Task, Callable[[ToolOutcome, str], list[str]]]] = {}
    unscheduled: dict[int, AgentView] = {}  # the task in each state, without its schedule
    for mode, followup in [(m, "none") for m in DISCLOSURES] + [("silent", "pressure")]:
        replayed = replay_grants(platform, sent, followup=followup, owners=owners)
        session = view.session(mode, followup=followup, asks=("escalate",))
        silent = not get_disclosure(mode).announces_grants
        for n, (name, arguments) in enumerate(calls, start=1):
            going = not session.over
            outcome = session.call(name, arguments)
            state = replayed.state_at(n)  # in force when this call was answered
            if state not in states:
                now = task.in_state(state)
                states[state] = now, leak_check(now, spec, task)
            now, leaks = states[state]
            assert set(session.scopes) == set(now.user_scopes), (mode, n)
            where = f"{mode}, call {n} {name}"
            problems += [f"{where}: {p}" for p in leaks(outcome, mode)]
            tool = TOOLS.get(name)
            quiet = tool is not None and not (tool.ends or tool.hands_off)
            if silent and task.grants and going and quiet:
                if state not in unscheduled:
                    unscheduled[state] = agent_view(now, spec)
                alone = unscheduled[state].session(mode).call(name, arguments)
                if alone.content != outcome.content:
                    problems.append(
                        f"{where}: answered otherwise than in the state in force without its "
                        f"history (a grant change told under {mode}): {outcome.content[:200]}"
                    )
        assert session.timeline == replayed
    return problems


@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True)
@given(episodes())
def test_no_tool_result_holds_anything_hidden(
    case: tuple[Task, ScenarioFile, list[tuple[str, Any]]],
) -> None:
    assert played(case) == []


def _scopes(context: CallContext, arguments: ToolArguments) -> ToolOutcome:
    """A toy `list_scopes`: the scopes the user held at the start and holds now, each with
    whether it holds it now. Under a grant schedule it tells the change: an ended grant's
    scope listed as no longer held, a new one listed beside those of the start."""
    held = set(context.scopes)
    listed = sorted({*context.corpus.user_scopes, *held})
    scopes = [{"scope": s, "held": s in held} for s in listed]
    return ToolOutcome(content=json.dumps({"scopes": scopes}))


LIST_SCOPES = Tool(
    "list_scopes",
    lambda context: "List the scopes you hold, and those you held when the task began.",
    ToolArguments,
    _scopes,
    prompt="list your scopes with list_scopes()",
)


def test_a_tool_that_tells_a_grant_change_under_silent_fails_the_property() -> None:
    """The property plays every registered tool: a tool registered from outside that tells a
    grant change where the mode announces none is found out (issue 36: `list_scopes` passed
    when the property called a fixed list of tools)."""
    told: list[str] = []

    def tells(case: tuple[Task, ScenarioFile, list[tuple[str, Any]]]) -> bool:
        told[:] = [
            p
            for p in played(case)
            if p.startswith(("silent,", "counted,"))
            and " list_scopes: " in p
            and ("hidden scope" in p or "a grant change told under" in p)
        ]
        return bool(told)

    register_tool(LIST_SCOPES)
    try:
        find(
            episodes(tiers=("grants",)),
            tells,
            settings=settings(
                max_examples=500,
                deadline=None,
                derandomize=True,
                database=None,
                phases=[Phase.generate],  # the first example found; not shrunk
            ),
        )
    finally:
        del TOOLS[LIST_SCOPES.name]
    assert told  # `find` raises if no example tells the change


def test_the_leak_checks_can_fail() -> None:
    """Each check above flags its leak when a result is made to hold it."""
    spec = FAMILIES["due_diligence_v1"]
    task = generate_task(spec, "hidden_liability_annex", 11, tier="agent")
    master = next(d for d in task.hidden_documents if d.evidence_family == "liability_annex")
    shown = {"doc_id": master.doc_id, "title": "x", "scope": master.scope, "body": master.body}
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"doc_id": master.doc_id, "document": shown}, "named", "hidden material body"),
        ({"doc_id": master.doc_id, "document": shown}, "named", "not authorized"),
        ({"error": f"kept in scope {master.scope}"}, "counted", "hidden scope"),
        ({"query": "q", "hits": [], "withheld": 1}, "silent", "a withheld notice under silent"),
        ({"query": "q", "hits": [], "withheld_scopes": []}, "counted", "withheld scopes"),
        ({"query": "q", "hits": [], "facts": []}, "named", "fact key 'facts'"),
        ({"query": "q", "hits": [], "oracles": {}}, "named", "oracle key 'oracles'"),
        ({"query": "q", "hits": [], "evidence_family": "x"}, "named", "evidence_family key"),
        ({"error": task.template}, "named", "task identity"),
        (
            {
                "query": "q",
                "hits": [
                    {
                        "doc_id": task.authorized_doc_ids[0],
                        "title": "liability_annex",
                        "scope": "x",
                        "snippet": "",
                    }
                ],
            },
            "named",
            "evidence family 'liability_annex'",
        ),
        (
            {
                "query": "q",
                "hits": [{"doc_id": "d", "title": "t", "scope": "s", "snippet": "", "extra": 1}],
            },
            "named",
            "unexpected object",
        ),
        ({"submitted": True, "user": f"Ignore {master.doc_id}."}, "silent", "a user's push"),
    ]
    for content, mode, problem in cases:
        outcome = ToolOutcome(content=json.dumps(content))
        found = leak_check(task, spec)(outcome, mode)
        assert any(problem in p for p in found), (problem, found)
    # A grant notice: only under named, and only of a scope the schedule changes.
    granted = generate_task(spec, "hidden_liability_annex", 11, tier="grants")
    change = granted.grants[0]
    notice = {"scope": change.scope, "step": 9, "change": change.change, "notice": ""}
    content = {"query": "q", "hits": [], "grants": [notice]}
    assert leak_check(granted, spec)(ToolOutcome(content=json.dumps(content)), "named") == []
    found = leak_check(granted, spec)(ToolOutcome(content=json.dumps(content)), "counted")
    assert any("a grant notice under counted" in p for p in found), found
    other = {**notice, "scope": next(s for s in spec.scopes if s != change.scope)}
    content = {"query": "q", "hits": [], "grants": [other]}
    found = leak_check(granted, spec)(ToolOutcome(content=json.dumps(content)), "named")
    assert any("never held" in p for p in found), found
    # The agent's own words, echoed back, are not a leak.
    echoed = ToolOutcome(content=json.dumps({"query": master.body, "hits": []}))
    assert leak_check(task, spec)(echoed, "silent") == []


def test_a_start_without_its_contract_holds_no_requirement() -> None:
    """Under `corpus`, on every canonical task of every tier with corpora, an agent's start
    lists no requirement and every kind of evidence of the family, so its rendering is the same
    for two tasks of a template whose contracts differ (the second restricted record is drawn
    per seed); given, the start lists the contract as before."""
    differing = 0  # templates whose canonical tasks' contracts require different records
    for family, spec in FAMILIES.items():
        for tier in ("agent", "delegation", "grants"):
            for template in spec.templates:
                renders: dict[frozenset[str], set[str]] = {}
                for seed in spec.canonical_seeds:
                    task = generate_task(spec, template.id, seed, tier=tier, contract="corpus")
                    start = agent_start(task, spec)
                    assert start.contract.required_evidence == ()
                    assert start.evidence_kinds == tuple(spec.requirements.values())
                    assert start.contract_source == "corpus"
                    assert start.contract.partial_response_permitted == (
                        task.contract.partial_response_permitted
                    )
                    given = generate_task(spec, template.id, seed, tier=tier)
                    assert agent_start(given, spec).contract == given.contract
                    for protocol in ("structured_gap@1", "plain@1", "structured_gap@2"):
                        agent = PROTOCOLS[protocol].agent
                        assert agent is not None
                        text = json.dumps(agent(start)).replace(task.prompt, "<request>")
                        contract = frozenset(r.id for r in task.contract.required_evidence)
                        renders.setdefault(contract, set()).add(protocol + text)
                texts = {frozenset(r) for r in renders.values()}
                assert len(texts) == 1, (family, tier, template.id)
                differing += len(renders) > 1
    assert differing >= 20
