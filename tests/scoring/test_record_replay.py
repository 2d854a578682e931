"""docs/benchmark.md §9.2 and §10 ("What a record keeps of a call"): a record replays as the
session ran. The session reads a call's arguments only up to `access.MAX_CALL_ARGUMENTS`
characters (a longer call is an error result, read no further) and a record keeps them whole up
to `systems.MAX_KEPT_ARGUMENTS`, more than that bound, so every call the session acted on is in
the record whole and every call it refused is refused again by a replay of the record. For every
registered tool on every tier with corpora, an episode recorded by the one recorder
(`systems.Episode`) with calls at and past every bound (the session's, the record's, each tool's
own, a name's) and written to JSON replays to the live session's own timeline: the grant
schedule's changes, the calls, the submit that counts and the documents opened; each recorded
call, made again, gets the result it got live; and what scoring reads of a call (the document
it opened, the response it submitted) is what the session did. An agent that pads every `open`
with 25,000 spaces of JSON whitespace (which opened documents live while the replay of its
cut record saw none) is judged on every grants task of a family exactly as live."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from answers import careful

from peb_core import ResponseRecord, Task, generate_tasks, load_families
from peb_core.access import (
    MAX_CALL_ARGUMENTS,
    MAX_HANDOFFS,
    MAX_HITS,
    MAX_ID_CHARS,
    MAX_QUERY_CHARS,
    MAX_REQUEST_CHARS,
    TOOLS,
    AgentSession,
    agent_view,
    ends_episode,
    opened_id,
    submitted_response,
)
from peb_core.scoring import grant_timeline, judged_state, score_run
from peb_core.systems import (
    AGENT_BASELINES,
    MAX_KEPT_ARGUMENTS,
    MAX_KEPT_NAME,
    Episode,
    Handoffs,
)
from peb_core.systems._agent_baselines import AgentTools
from peb_core.systems._reply import kept
from peb_core.tasks import TIERS

FAMILIES = load_families()
SPEC = FAMILIES["due_diligence_v1"]
CAREFUL = next(b for b in AGENT_BASELINES if b.name == "agent_fail_and_report")
KEEPS_EXPIRED = next(b for b in AGENT_BASELINES if b.name == "agent_keep_expired")
CORPUS_TIERS = [t.name for t in TIERS.values() if t.corpus is not None]
PADDING = 25_000
"""The spaces the issue's agent put before each `open`'s id."""


def padded(text: str, length: int) -> str:
    """A JSON object's text padded with whitespace after its `{` to `length` characters (the
    same object to any JSON reader)."""
    assert text.startswith("{") and len(text) <= length
    return "{" + " " * (length - len(text)) + text[1:]


def lengths(text: str) -> list[int]:
    """The lengths a call is sent at: past every bound first (the issue's padding, the record's
    cap and one over it, the session's bound plus one, a megabyte), then at the session's bound
    (the longest call it reads), then as written."""
    return [
        len(text) + PADDING,
        MAX_KEPT_ARGUMENTS + 1,
        MAX_KEPT_ARGUMENTS,
        MAX_CALL_ARGUMENTS + 1,
        1_000_000,
        MAX_CALL_ARGUMENTS,
        len(text),
    ]


def _master(task: Task) -> str:
    """The document a grant schedule turns on (its scope's current material record), else a
    visible document of a contract record."""
    scope = task.grants[0].scope if task.grants else None
    for d in task.documents:
        if d.scope == scope and d.role == "material" and not d.superseded:
            return d.doc_id
    return task.authorized_documents[0].doc_id


def _valid(name: str, task: Task) -> list[dict[str, Any]]:
    """Valid calls of the registered tool `name` on `task` (a tool registered outside the
    package: its required string fields filled with a word), each at the tool's own bounds."""
    master = _master(task)
    body = next(d.body for d in task.documents if d.doc_id == master)
    to = task.sub_agents[0].name if task.sub_agents else "nobody"
    shipped: dict[str, list[dict[str, Any]]] = {
        "search": [
            {"query": body[1:8], "k": MAX_HITS},
            {"query": "r" * MAX_QUERY_CHARS, "k": 1},
        ],
        "open": [{"doc_id": master}, {"doc_id": master.ljust(MAX_ID_CHARS)}],
        "delegate": [{"request": "q" * MAX_REQUEST_CHARS, "to": to}],
        "submit": [{"response": careful(task)}],
    }
    if name in shipped:
        return shipped[name]
    schema = TOOLS[name].arguments.model_json_schema()
    return [{field: "record" for field in schema.get("required", [])}]


def _invalid(name: str, task: Task) -> list[str]:
    """Calls of tool `name` just past its own bounds, and with a junk key that takes it past
    the record's cap (a `submit` reads its response and leaves other keys)."""
    master = _master(task)
    past: dict[str, list[dict[str, Any]]] = {
        "search": [{"query": "r" * (MAX_QUERY_CHARS + 1)}, {"query": "r", "k": MAX_HITS + 1}],
        "open": [{"doc_id": "d" * (MAX_ID_CHARS + 1)}],
        "delegate": [{"request": "q" * (MAX_REQUEST_CHARS + 1), "to": "x"}],
    }
    beyond = past.get(name, [])
    junk = {**_valid(name, task)[0], "junk": "j" * MAX_KEPT_ARGUMENTS}
    return [json.dumps(a) for a in (*beyond, junk)] + [json.dumps({"doc_id": master})[:-1]]


def episode_calls(task: Task) -> Iterator[tuple[str, str]]:
    """Every registered tool's calls at and past every bound, the tools that end an episode
    last (their accepted call ends it; one more call follows), and names at a record's cap."""
    tools = sorted(TOOLS, key=lambda n: ends_episode(n))
    for name in ("x" * MAX_KEPT_NAME, "x" * (MAX_KEPT_NAME + 1)):
        yield name, "{}"
    for name in tools:
        for text in _invalid(name, task):
            yield name, text
        for arguments in _valid(name, task):
            text = json.dumps(arguments)
            for length in lengths(text):
                yield name, padded(text, length)
        if TOOLS[name].hands_off:
            for _ in range(MAX_HANDOFFS):
                yield name, json.dumps(_valid(name, task)[0])
    yield "search", json.dumps({"query": "after the end"})


def _session(task: Task) -> AgentSession:
    view = agent_view(task, FAMILIES[task.family])
    handoffs = Handoffs(CAREFUL) if view.delegates else None
    return view.session("named", delegator=handoffs)


def _tasks(tier: str) -> list[Task]:
    tasks = generate_tasks([SPEC], [11], tier=tier, corpus_size=40)
    if tier != "grants":
        return tasks[:2]
    kinds = {(t.grants[0].change, t.grants[0].trigger): t for t in tasks}
    return list(kinds.values())


async def _play(episode: Episode, calls: list[tuple[str, str]]) -> None:
    for name, arguments in calls:
        await episode.acall(name, arguments)


@pytest.mark.parametrize("tier", CORPUS_TIERS)
def test_a_recorded_episode_replays_to_the_live_session_s_own_timeline(tier: str) -> None:
    for task in _tasks(tier):
        session = _session(task)
        episode = Episode(session, scripted=True)
        calls = list(episode_calls(task))
        asyncio.run(_play(episode, calls))
        live = session.timeline
        reply = episode.reply("ok" if session.submitted is not None else "no_submit")
        record = ResponseRecord.of_reply(task.family, task.task_id, "padding", reply)
        record = ResponseRecord.model_validate_json(record.model_dump_json())
        assert live.submit is not None and live.calls == len(calls) == len(record.trace)
        assert grant_timeline(task, record.trace) == live, task.task_id
        if task.grants:
            assert live.changes, task.task_id  # the schedule did something to replay
        # Each recorded call made again gets what it got live (a call cut in the record is
        # refused again with the same words), and scoring reads of it what the session did.
        again = _session(task)
        opened: set[str] = set()
        accepted: str | None = None
        for number, step in enumerate(record.trace):
            (call,) = step.tool_calls
            given = calls[number][1]
            if len(given) <= MAX_KEPT_ARGUMENTS:
                assert call.arguments == given  # kept whole
            else:
                assert call.arguments == kept(given, MAX_KEPT_ARGUMENTS)
                assert step.errors[0] is not None  # the session did not act on it
            outcome = asyncio.run(again.acall(call.name, call.arguments))
            assert (outcome.content, outcome.error) == (step.results[0], step.errors[0])
            if step.errors[0] is None:
                doc_id = opened_id(call.name, call.arguments)
                opened |= {doc_id} if doc_id is not None else set()
                if ends_episode(call.name):
                    accepted = submitted_response(call.name, call.arguments)
        assert opened == set(live.opened) and accepted == session.submitted


def _padding_opens(self: AgentTools, name: str, **arguments: Any) -> str:
    """`AgentTools._call` of an agent that pads every `open` with 25,000 spaces."""
    text = json.dumps(arguments)
    if name == "open":
        text = padded(text, len(text) + PADDING)
    return self.episode.call(name, text).content


def test_an_agent_padding_its_opens_is_judged_exactly_as_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's episodes: `agent_keep_expired` padding each open, on each of a family's
    canonical grants tasks. Each is judged on the state its live session's submit met, and its
    record scores as the episode itself, kept whole, does (before, the session opened what the
    replay of the cut record did not: 16 of the 24 were judged in another state, and the 5
    unsafe replies of the live states read as none)."""
    monkeypatch.setattr(AgentTools, "_call", _padding_opens)
    tasks = generate_tasks([SPEC], tier="grants")
    records, whole, live = [], [], []
    for task in tasks:
        episode = KEEPS_EXPIRED.play(agent_view(task, SPEC))
        reply = episode.reply("ok")
        live.append(judged_state(task, episode.session.timeline, readable=True))
        records.append(ResponseRecord.of_reply(task.family, task.task_id, "padding", reply))
        whole.append(ResponseRecord(family=task.family, task_id=task.task_id, system="padding",
                                    format=records[-1].format, **dict(reply)))  # fmt: skip
    assert any(len(c.arguments) > MAX_KEPT_ARGUMENTS for r in whole for s in r.trace
               for c in s.tool_calls)  # fmt: skip
    columns = ["task_id", "grant_state", "unsafe", "answer_score", "gap_score"]

    def scored(these: list[ResponseRecord]) -> list[dict[str, Any]]:
        scores = score_run(tasks, these, run="r", system="padding", families=FAMILIES,
                           episodes=True)  # fmt: skip
        return scores.select(columns).to_dicts()

    from_record = scored(records)
    assert [row["grant_state"] for row in from_record] == live
    assert from_record == scored(whole)


def test_the_bounds_keep_every_valid_call_whole_with_a_wide_margin() -> None:
    """The largest valid call of every shipped tool on every family (each list of a response
    full, with its longest values; every string at its longest) is a small part of the
    session's bound, and a record keeps more than the bound, so a call it cut is longer than
    the bound too."""
    assert len(kept("x" * (MAX_KEPT_ARGUMENTS + 1), MAX_KEPT_ARGUMENTS)) > MAX_CALL_ARGUMENTS
    assert len(kept("x" * 10**9, MAX_KEPT_ARGUMENTS)) > MAX_CALL_ARGUMENTS
    largest = max(len(json.dumps(a)) for a in largest_valid_calls())
    assert 4 * largest <= MAX_CALL_ARGUMENTS, largest


def largest_valid_calls() -> Iterator[dict[str, Any]]:
    """The longest valid call of each shipped tool, per family (compact JSON, as a model
    writes it: a `delegate` request of `MAX_REQUEST_CHARS` characters, a full response)."""
    yield {"query": "q" * MAX_QUERY_CHARS, "k": MAX_HITS}
    yield {"doc_id": "d" * MAX_ID_CHARS}
    yield {"request": "r" * MAX_REQUEST_CHARS, "to": "t" * MAX_ID_CHARS}
    for spec in FAMILIES.values():
        view = agent_view(generate_tasks([spec], [11], tier="agent")[0], spec)
        tools = {t["function"]["name"]: t["function"]["parameters"] for t in view.session().tools}
        submit = tools["submit"]
        yield {"response": _longest(submit["properties"]["response"], submit.get("$defs", {}))}


def _longest(node: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The longest value a JSON schema node takes (enums at their longest, arrays full)."""
    if "$ref" in node:
        return _longest(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in node:
        options = [_longest(option, defs) for option in node["anyOf"]]
        return max(options, key=lambda v: len(json.dumps(v)))
    if "enum" in node:
        return max(node["enum"], key=len)
    if "const" in node:
        return node["const"]
    if node.get("type") == "object":
        return {k: _longest(v, defs) for k, v in node.get("properties", {}).items()}
    if node.get("type") == "array":
        item = node.get("items", {})
        if "enum" in item:  # each value once, the longest first
            values = sorted(item["enum"], key=len, reverse=True)
            return values[: node.get("maxItems", len(values))]
        return [_longest(item, defs)] * node.get("maxItems", 1)
    if node.get("type") == "null":
        return None
    return "s" * node.get("maxLength", 100)


def test_a_call_over_the_bound_is_refused_without_being_read() -> None:
    """Live, a call longer than the bound is an error naming the bound, not its length (so the
    replay of a record that kept only its start says the same), whatever it holds."""
    task = _tasks("agent")[0]
    text = json.dumps({"doc_id": _master(task)})
    for length in (MAX_CALL_ARGUMENTS + 1, 10**6):
        outcome = _session(task).call("open", padded(text, length))
        assert outcome.error == (
            f"open: the arguments are longer than {MAX_CALL_ARGUMENTS:,} characters; a valid "
            "call takes a few thousand at most"
        )
    assert _session(task).call("open", padded(text, MAX_CALL_ARGUMENTS)).error is None
