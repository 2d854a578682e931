"""docs/benchmark.md §9: an episode's tools. Search, open and submit answer from the corpus
under each disclosure mode; every bad call a model can make is an error result it can read,
never an exception; only the first submit counts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from peb_core import Task, generate_task, load_families
from peb_core.access import (
    DISCLOSURES,
    NOT_FOUND,
    TOOLS,
    AgentSession,
    AgentView,
    CorpusIndex,
    IndexedDocument,
    SearchResult,
    agent_view,
    family_tools,
    offered,
)
from peb_core.tasks import response_model, view_for

FAMILIES = load_families()
SPEC = FAMILIES["due_diligence_v1"]
TASK = generate_task(SPEC, "hidden_liability_annex", 11, tier="agent")
HIDDEN = TASK.hidden_documents[0]
VISIBLE = TASK.authorized_documents[0]


@pytest.fixture(scope="module")
def view() -> AgentView:
    built = view_for("agent", TASK, SPEC)
    assert isinstance(built, AgentView)
    return built


def _content(session: AgentSession, name: str, arguments: Any) -> dict[str, Any]:
    outcome = session.call(name, arguments if isinstance(arguments, str) else json.dumps(arguments))
    parsed = json.loads(outcome.content)
    assert isinstance(parsed, dict)
    return parsed


def test_the_view_starts_from_the_request_and_no_document(view: AgentView) -> None:
    start = view.start
    assert (start.family, start.prompt, start.contract) == (TASK.family, TASK.prompt, TASK.contract)
    assert "documents" not in start.model_dump()


def test_tools_are_openai_function_schemas_and_submit_takes_the_response_schema(
    view: AgentView,
) -> None:
    tools = view.session().tools
    assert [t["function"]["name"] for t in tools] == offered()
    assert offered() == [n for n, t in TOOLS.items() if not t.hands_off and not t.asked]
    for tool in tools:
        assert tool["type"] == "function"
        assert tool["function"]["parameters"]["type"] == "object"
    submit = tools[2]["function"]["parameters"]
    schema = response_model(SPEC).model_json_schema()
    assert submit["required"] == ["response"]
    assert submit["properties"]["response"]["properties"] == schema["properties"]
    assert submit["$defs"] == schema["$defs"]


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_the_search_tool_says_what_its_notices_mean(view: AgentView, mode: str) -> None:
    description = view.session(mode).tools[0]["function"]["description"]
    assert ("`withheld` counts" in description) == (mode != "silent")
    assert ("`withheld_scopes`" in description) == (mode == "named")
    assert description == family_tools(SPEC, mode)[0]["function"]["description"]


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_search_shows_visible_documents_and_what_the_mode_allows(
    view: AgentView, mode: str
) -> None:
    session = view.session(mode)
    # The hidden master's own text finds it first, so the filter withholds it on this page.
    result = SearchResult.model_validate(
        _content(session, "search", {"query": HIDDEN.body, "k": 5})
    )
    visible = set(TASK.authorized_doc_ids)
    assert result.hits and all(h.doc_id in visible for h in result.hits)
    assert len(result.hits) <= 5
    if mode == "silent":
        assert (result.withheld, result.withheld_scopes) == (None, None)
    else:
        assert result.withheld is not None and result.withheld >= 1
        if mode == "counted":
            assert result.withheld_scopes is None
        else:
            assert result.withheld_scopes is not None
            assert HIDDEN.scope in result.withheld_scopes


def test_search_is_the_same_in_every_session(view: AgentView) -> None:
    first = _content(view.session(), "search", {"query": "version", "k": 50})
    assert first == _content(view.session(), "search", {"query": "version", "k": 50})
    stamped = [d for d in TASK.authorized_documents if "version" in d.body.lower()]
    assert len(first["hits"]) == min(50, len(stamped))


def test_ties_are_broken_by_doc_id() -> None:
    """Documents with the same text score the same: they rank in doc-id order, whatever the
    order they were indexed in, and a scope filter keeps that order."""
    ids = [f"doc-{i:06x}" for i in (9, 3, 12, 1, 7)]
    documents = [IndexedDocument(i, "Note", "same words", "ba"[n % 2]) for n, i in enumerate(ids)]
    index = CorpusIndex(documents)
    ranking = index.rank("same words", index.allowed({"a", "b"}), 10)
    assert [index.documents[p].doc_id for p in ranking.visible] == sorted(ids)
    only_b = index.rank("same words", index.allowed({"b"}), 2)
    assert [index.documents[p].doc_id for p in only_b.visible] == sorted(ids[0::2])[:2]
    # The best two of all are in scope a: what the filter took off this page.
    assert [index.documents[p].doc_id for p in only_b.withheld] == sorted(ids)[:2]


@pytest.mark.parametrize("mode", DISCLOSURES)
def test_open_shows_a_visible_document_and_denies_a_hidden_one_as_the_mode_says(
    view: AgentView, mode: str
) -> None:
    session = view.session(mode)
    opened = _content(session, "open", {"doc_id": VISIBLE.doc_id})
    assert opened["document"] == {
        "doc_id": VISIBLE.doc_id,
        "title": VISIBLE.title,
        "scope": VISIBLE.scope,
        "body": VISIBLE.body,
    }
    unknown = session.call("open", json.dumps({"doc_id": "doc-zzzzzz"}))
    hidden = session.call("open", json.dumps({"doc_id": HIDDEN.doc_id}))
    assert unknown.error == f"open: {NOT_FOUND}"
    if mode == "silent":  # a hidden document is indistinguishable from no document at all
        assert hidden == unknown
    else:
        assert hidden.error is not None and hidden.error.startswith("open: access denied")
        assert (HIDDEN.scope in hidden.error) == (mode == "named")
    assert HIDDEN.doc_id not in hidden.content


BAD_CALLS: list[tuple[Any, Any, str]] = [
    ("frobnicate", "{}", "unknown tool 'frobnicate'"),
    (None, "{}", "unknown tool 'NoneType'"),
    ("search", "{not json", "search: the arguments are not valid JSON"),
    ("search", "[" * 10_000, "search: the arguments are not valid JSON (arrays or objects nested"),
    ("open", '{"doc_id": ' + "[" * 10_000, "open: the arguments are not valid JSON (arrays"),
    ("open", "{" + " " * 16_000 + '"doc_id": "d"}', "open: the arguments are longer than 16,000"),
    ("search", "[" * 100_000, "search: the arguments are longer than 16,000 characters"),
    ("search", "[1, 2]", "search: the arguments must be a JSON object"),
    ("search", "42", "search: the arguments must be a JSON object"),
    ("search", "{}", "search: query: Field required"),
    ("search", '{"query": 7}', "search: query: Input should be a valid string"),
    ("search", '{"query": ""}', "search: query: String should have at least 1 character"),
    ("search", '{"query": "annex", "k": 0}', "search: k: Input should be greater than"),
    ("search", '{"query": "annex", "k": "many"}', "search: k: Input should be a valid integer"),
    ("search", '{"query": "annex", "limit": 3}', "search: limit: Extra inputs"),
    ("open", '{"id": "doc-1"}', "open: doc_id: Field required"),
    ("open", '{"doc_id": ["doc-1"]}', "open: doc_id: Input should be a valid string"),
    ("open", '{"doc_id": "no-such-doc"}', f"open: {NOT_FOUND}"),
    ("submit", "{}", "submit: expected {\"response\""),
    ("submit", '{"response": 3}', "submit: expected {\"response\""),
    ("submit", '{"response": "not json"}', "submit: expected {\"response\""),
    ("submit", {"response": "[" * 10_000}, "submit: expected {\"response\""),
    ("submit", {"response": "[" * 16_000}, "submit: the arguments are longer than 16,000"),
]


@pytest.mark.parametrize(("name", "arguments", "error"), BAD_CALLS)
def test_a_bad_call_is_an_error_the_model_reads(
    view: AgentView, name: Any, arguments: Any, error: str
) -> None:
    session = view.session()
    outcome = session.call(name, arguments)
    assert outcome.error is not None and outcome.error.startswith(error), outcome.error
    assert json.loads(outcome.content) == {"error": outcome.error}
    assert outcome.submitted is None and session.submitted is None
    assert session.calls == 1
    # The episode goes on.
    assert session.call("search", '{"query": "annex"}').error is None


def test_only_the_first_submit_counts_and_ends_the_episode(view: AgentView) -> None:
    session = view.session()
    first = {"answer": None, "completeness": "incomplete", "gap_report": None}
    accepted = session.call("submit", json.dumps({"response": first}))
    assert accepted.error is None and json.loads(accepted.content) == {"submitted": True}
    assert accepted.submitted == session.submitted == json.dumps(first)
    second = session.call("submit", json.dumps({"response": {**first, "completeness": "complete"}}))
    assert second.error is not None and "already submitted" in second.error
    later = session.call("search", '{"query": "annex"}')
    assert later.error is not None and "episode is over" in later.error
    assert session.submitted == json.dumps(first) and session.calls == 3


@pytest.mark.parametrize(
    "arguments",
    [
        {"response": {"answer": None, "completeness": "complete", "gap_report": None}},
        {"response": '{"answer": null, "completeness": "complete", "gap_report": null}'},
        {"answer": None, "completeness": "complete", "gap_report": None},  # given flat
    ],
)
def test_a_submit_is_read_as_given_whatever_its_wrapping(
    view: AgentView, arguments: dict[str, Any]
) -> None:
    session = view.session()
    assert session.call("submit", arguments).error is None
    assert json.loads(session.submitted or "") == {
        "answer": None,
        "completeness": "complete",
        "gap_report": None,
    }


def test_an_unknown_disclosure_is_refused_with_the_valid_ones(view: AgentView) -> None:
    with pytest.raises(ValueError, match="valid: silent, counted, named"):
        view.session("loud")


def test_any_task_is_a_corpus(families: dict[str, Any]) -> None:
    """The agent view reads any tier: a paper task's six documents are its corpus."""
    paper: Task = generate_task(SPEC, "hidden_liability_annex", 11)
    session = agent_view(paper, SPEC).session("named")
    result = _content(session, "search", {"query": paper.hidden_documents[0].body})
    assert result["withheld_scopes"] == ["target_internal"]
