"""An agent's episode in the worked example, step by step beside its corpus, and a corpus
through the access layer in the task explorer: what they say agrees with what the tools showed
the agent (`AgentSession`), what was withheld is named for the researcher only, and the gap
between what the agent saw and what it claimed is marked on the page."""

from __future__ import annotations

import html
import json
from pathlib import Path

import polars as pl
import pytest

from peb_core.access import agent_view
from peb_core.frontends.workbench import (
    CORPUS_STATES,
    access_search,
    access_view,
    contract_line,
    corpus_access,
    corpus_at,
    corpus_counts,
    default_query,
    episode_replay,
    has_corpus,
    replay_view,
    run_example,
    step_calls,
    step_table,
    worked_example,
)
from peb_core.runs import run_system
from peb_core.scoring import RunReading
from peb_core.systems import BASELINES, ResponseRecord, Step, ToolCall
from peb_core.tasks import Task, generate_task, generate_tasks, load_families

SPEC = load_families()["due_diligence_v1"]
TASKS = generate_tasks([SPEC], [11], tier="agent")
INCOMPLETE = next(t for t in TASKS if t.oracles.completeness == "incomplete")


def _text(element: object) -> str:
    return html.unescape(str(element.text))  # type: ignore[attr-defined]


def _run(tmp_path: Path, system: str, disclosure: str = "silent") -> Path:
    run_dir = tmp_path / f"{system}-{disclosure}"
    baseline = BASELINES[system]
    if disclosure != "silent":
        baseline = baseline.under(disclosure)  # type: ignore[union-attr]
    run_system(baseline, [SPEC], run_dir, seeds=[11], tier="agent")
    return run_dir


def _probing_episode(task: Task, disclosure: str) -> ResponseRecord:
    """A hand-made episode through a real session: a search, an open of a hidden id (a probe),
    an open of the first hit, a call to an unknown tool, then a submit claiming completeness."""
    session = agent_view(task, SPEC).session(disclosure)
    hidden = task.hidden_documents[0].doc_id
    calls = [("search", {"query": default_query(task), "k": 10}), ("open", {"doc_id": hidden})]
    steps = []
    for i, (name, arguments) in enumerate(calls, 1):
        text = json.dumps(arguments)
        outcome = session.call(name, text)
        steps.append(
            Step(
                tool_calls=(ToolCall(id=f"c{i}", name=name, arguments=text),),
                results=(outcome.content,),
                errors=(outcome.error,),
            )
        )
    first_hit = json.loads(steps[0].results[0])["hits"][0]["doc_id"]
    opened = session.call("open", json.dumps({"doc_id": first_hit}))
    unknown = session.call("delete", "{}")
    steps.append(
        Step(
            content="Reading the first hit.",
            tool_calls=(
                ToolCall(id="c3", name="open", arguments=json.dumps({"doc_id": first_hit})),
                ToolCall(id="c4", name="delete", arguments="{}"),
            ),
            results=(opened.content, unknown.content),
            errors=(opened.error, unknown.error),
        )
    )
    return ResponseRecord(
        family=task.family,
        task_id=task.task_id,
        system="prober",
        status="ok",
        raw=json.dumps({"answer": None, "completeness": "complete", "gap_report": None}),
        trace=tuple(steps),
    )


def test_a_one_shot_reply_has_no_replay(tmp_path: Path) -> None:
    run_dir = tmp_path / "oracle"
    run_system(BASELINES["oracle"], [SPEC], run_dir, seeds=[11], tier="agent")
    example = run_example(run_dir, "oracle", SPEC.id, INCOMPLETE.task_id)
    assert example.record is not None and episode_replay(example) is None


@pytest.mark.parametrize("disclosure", ["silent", "counted", "named"])
def test_each_call_says_what_the_tool_showed_and_what_it_withheld(
    disclosure: str, tmp_path: Path
) -> None:
    run_dir = _run(tmp_path, "agent_fail_and_report", disclosure)
    example = run_example(run_dir, "r", SPEC.id, INCOMPLETE.task_id)
    replay = episode_replay(example)
    assert replay is not None and example.record is not None
    assert replay.n_steps == len(example.record.trace) > 1
    steps = step_table(replay)
    assert steps.height == sum(len(s.tool_calls) for s in example.record.trace)
    hidden = {d.doc_id for d in INCOMPLETE.hidden_documents}
    searches = replay.steps.filter(pl.col("tool") == "search")
    for row, saw in zip(
        searches.iter_rows(named=True),
        steps.filter(pl.col("tool") == "search")["saw"],
        strict=True,
    ):
        shown = json.loads(row["result"])
        assert saw.startswith(f"{len(shown['hits'])} hits: ")
        assert set(row["withheld"]) <= hidden
        if disclosure == "silent":
            assert saw.endswith("nothing said of withheld records")
        else:
            assert f"told {len(row['withheld'])} withheld" in saw
        assert ("(scopes " in saw) == (disclosure == "named" and bool(row["withheld"]))
    assert steps.filter(pl.col("tool") == "search")["withheld"].null_count() < searches.height
    calls = step_calls(replay, replay.n_steps)
    assert [c["tool"] for c in calls] == ["submit"]
    assert calls[0]["saw"] == "submitted; the episode ends"


def test_the_corpus_by_a_step_grows_as_the_agent_goes(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, "agent_fail_and_report")
    replay = episode_replay(run_example(run_dir, "r", SPEC.id, INCOMPLETE.task_id))
    assert replay is not None
    before = None
    for step in range(1, replay.n_steps + 1):
        corpus = corpus_at(replay, step)
        assert corpus.height == len(INCOMPLETE.documents)
        assert set(corpus["state"]) <= set(CORPUS_STATES)
        assert (corpus.filter(pl.col("at").is_not_null())["at"] <= step).all()
        assert corpus.filter(pl.col("state") == "unseen")["at"].null_count() == (
            corpus.filter(pl.col("state") == "unseen").height
        )
        # Hidden documents are never opened, and nothing touched is untouched later.
        assert corpus.filter(~pl.col("visible") & (pl.col("state") == "opened")).is_empty()
        touched = set(corpus.filter(pl.col("state") != "unseen")["doc_id"])
        if before is not None:
            assert before <= touched
        before = touched
    last = corpus_at(replay, replay.n_steps)
    opened = replay.steps.filter((pl.col("tool") == "open") & pl.col("error").is_null())
    assert set(last.filter(pl.col("state") == "opened")["doc_id"]) == set(opened["doc_id"])
    assert corpus_at(replay, 1).filter(pl.col("state") == "opened").is_empty()  # a search first
    counts = corpus_counts(last)
    n_visible = len(INCOMPLETE.authorized_doc_ids)
    assert counts.startswith(f"{n_visible} visible (")
    assert f"; {len(INCOMPLETE.documents) - n_visible} hidden (" in counts


def test_a_probe_a_refusal_and_a_tool_error_are_shown_as_the_agent_saw_them() -> None:
    record = _probing_episode(INCOMPLETE, "named")
    replay = episode_replay(
        worked_example(INCOMPLETE, SPEC, record, RunReading("hand-made", "prober"))
    )
    assert replay is not None and replay.n_steps == 3
    (probe,) = step_calls(replay, 2)
    hidden = INCOMPLETE.hidden_documents[0]
    assert probe["saw"].startswith("error: ") and hidden.scope in probe["saw"]
    opened, unknown = step_calls(replay, 3)
    assert opened["saw"].startswith("opened doc-") and opened["content"] == "Reading the first hit."
    assert unknown["saw"].startswith("error: ") and "delete" in unknown["saw"]
    corpus = corpus_at(replay, 3)
    assert corpus.filter(pl.col("doc_id") == hidden.doc_id)["state"].to_list() == ["probed"]
    assert corpus_at(replay, 1).filter(pl.col("state") == "probed").is_empty()
    # It claimed a complete answer having opened one document: every requirement parts.
    claims = replay.claims
    assert claims["gap"].null_count() == 0
    missing = set(claims.filter(pl.col("missing"))["requirement"])
    assert set(claims.filter(pl.col("gap") == "unreported gap")["requirement"]) == missing


def test_the_replay_on_the_page_marks_the_step_the_corpus_and_the_gaps() -> None:
    record = _probing_episode(INCOMPLETE, "silent")
    replay = episode_replay(worked_example(INCOMPLETE, SPEC, record, RunReading("h", "prober")))
    assert replay is not None
    shown = _text(replay_view(replay, 2))
    for part in (
        "Episode replay: step 2 of 3",
        "Step 2: its tool calls",
        "The corpus by step 2",
        "What it saw against what it claimed",
        "unreported gap",
        "Every tool call of the episode",
    ):
        assert part in shown, part
    assert "Episode replay: step 3 of 3" in _text(replay_view(replay, 99))  # clamped


def test_the_access_layer_view_follows_the_disclosure_mode() -> None:
    task = INCOMPLETE
    assert has_corpus(task) and not has_corpus(generate_tasks([SPEC], [11])[0])
    query = default_query(task)
    missing = set(task.oracles.gap_report.missing_requirements)  # type: ignore[union-attr]
    assert query in [r.description for r in task.contract.required_evidence if r.id in missing]
    hidden = {d.doc_id: d.scope for d in task.hidden_documents}
    found = {
        mode: access_search(task, SPEC, mode, query) for mode in ("silent", "counted", "named")
    }
    for mode, result in found.items():
        session = agent_view(task, SPEC).session(mode)
        told = json.loads(session.call("search", json.dumps({"query": query, "k": 10})).content)
        assert result.shown["doc_id"].to_list() == [h["doc_id"] for h in told["hits"]]
        assert set(result.withheld["doc_id"]) <= set(hidden) and result.withheld.height > 0
    assert found["silent"].told == "The tool says nothing of what it withheld (silent)."
    n = found["counted"].withheld.height
    assert found["counted"].told.startswith(f"The tool says {n} matching record")
    scopes = sorted({hidden[d] for d in found["named"].withheld["doc_id"]})
    assert all(s in found["named"].told for s in scopes) and "scopes" not in found["counted"].told
    nothing = access_search(task, SPEC, "named", "zzxqv qqwpl")  # no word of any record
    assert nothing.shown.is_empty() and nothing.withheld.is_empty()
    assert nothing.told == "The tool says 0 matching records were withheld."
    refused = access_search(task, SPEC, "named", "")
    assert refused.told.startswith("The tool refuses the query: ") and refused.shown.is_empty()
    with pytest.raises(ValueError, match="unknown disclosure mode 'loud'; valid: silent"):
        access_search(task, SPEC, "loud", query)


def test_open_answers_a_hidden_id_as_each_mode_says() -> None:
    task = INCOMPLETE
    for mode in ("silent", "counted", "named"):
        corpus = corpus_access(task, SPEC, mode)
        assert corpus.height == len(task.documents) and "open" in corpus.columns
        assert not any(c.startswith("open_") for c in corpus.columns)
        assert corpus["visible"].to_list() == sorted(corpus["visible"], reverse=True)
        assert set(corpus.filter(pl.col("visible"))["open"]) == {"document"}
        denials = corpus.filter(~pl.col("visible"))
        for row in denials.iter_rows(named=True):
            assert (row["scope"] in row["open"]) == (mode == "named"), (mode, row["open"])
    shown = _text(access_view(task, SPEC, "named", default_query(task)))
    assert "Withheld by the scope filter (" in shown and "answers for each document" in shown


def test_an_agent_task_regenerates_at_its_run_corpus_size(tmp_path: Path) -> None:
    run_dir = tmp_path / "small"
    run_system(BASELINES["agent_silent"], [SPEC], run_dir, seeds=[11], tier="agent", corpus_size=30)
    task = generate_task(SPEC, INCOMPLETE.template, 11, tier="agent", corpus_size=30)
    example = run_example(run_dir, "small", SPEC.id, task.task_id)
    assert example.task == task and len(example.task.documents) == 30


def test_a_grant_change_is_an_event_and_its_evidence_opened_while_granted(tmp_path: Path) -> None:
    """On the grants tier (docs/benchmark.md §9.2): the change is an event at the call it took
    effect at, on the slider's label and the page ("call 9: the grant on X expired"), and a
    document read under a grant that then ended is `opened while granted`, not a hidden
    document the agent never saw."""
    from peb_core.frontends.workbench import example_view, grant_events, step_label
    from peb_core.scoring import grant_timeline

    run_dir = tmp_path / "keep"
    run_system(BASELINES["agent_keep_expired"], [SPEC], run_dir, seeds=[11, 12], tier="grants")
    tasks = generate_tasks([SPEC], [11, 12], tier="grants")
    task = next(t for t in tasks if "expired_gap" in t.topologies)
    replay = episode_replay(run_example(run_dir, "r", SPEC.id, task.task_id))
    assert replay is not None and replay.record is not None
    ((at, change),) = grant_timeline(task, replay.record.trace).changes
    ended = "expired" if change.change == "expires" else "was revoked"
    line = f"call {at}: the grant on {change.scope} {ended}"
    assert grant_events(replay) == [(at, line)]  # one call a step: the step is the call
    assert line in step_label(replay)
    (call,) = step_calls(replay, at)
    assert call["grant"] == line
    before, after = corpus_at(replay, at - 1), corpus_at(replay, replay.n_steps)
    read = after.filter(pl.col("state") == "opened while granted")
    assert read.height >= 1 and not read["visible"].any()
    assert set(read["scope"]) == {change.scope}
    earlier = before.filter(pl.col("state") == "opened while granted")
    assert set(read["doc_id"]) <= set(earlier["doc_id"])
    assert f"{read.height} opened while granted" in corpus_counts(after)
    shown = _text(replay_view(replay, replay.n_steps))
    assert f"step {at}, {line}" in shown and "opened while granted" in shown
    example = run_example(run_dir, "r", SPEC.id, task.task_id)
    assert example.explanation.scores["grant_state"] == 1
    heading = _text(example_view(example, "x"))
    assert "judged in the state of its grant schedule after change 1" in heading
    completeness = task.states[1].oracles.completeness
    assert f"Completeness <code>{completeness}</code> (judged" in heading
    # The change is in bold once the slider has reached it.
    bold = f"<strong>step {at}, {line}</strong>"
    assert bold in _text(replay_view(replay, at)) and bold not in _text(replay_view(replay, at - 1))


def test_the_procedure_is_marked_as_the_contract_s_source(tmp_path: Path) -> None:
    """A run that had to find its contract: its example regenerates the task with the
    procedure (the run's contract source), the replay marks the procedure `contract_source`
    and says when the agent opened it; a run given its contract marks nothing."""
    run_dir = tmp_path / "corpus"
    careful = BASELINES["agent_fail_and_report"]
    run_system(careful, [SPEC], run_dir, seeds=[11], tier="agent", contract="corpus")
    replay = episode_replay(run_example(run_dir, "r", SPEC.id, INCOMPLETE.task_id))
    assert replay is not None and replay.task.contract_source == "corpus"
    [source] = [d for d in replay.task.documents if d.role == "procedure"]
    corpus = corpus_at(replay, replay.n_steps)
    assert corpus.filter(pl.col("contract_source"))["doc_id"].to_list() == [source.doc_id]
    opened = corpus.filter(pl.col("contract_source"))["at"].item()
    line = contract_line(replay, replay.n_steps)
    assert line is not None and f"`{source.doc_id}`" in line
    assert f"the agent opened it at step {opened}" in line
    assert "has not opened it" in (contract_line(replay, opened - 1) or "")
    page = _text(replay_view(replay, replay.n_steps))
    assert "its source is the procedure" in page and f"opened it at step {opened}" in page
    given = episode_replay(run_example(_run(tmp_path, "agent_fail_and_report"), "r", SPEC.id,
                                       INCOMPLETE.task_id))  # fmt: skip
    assert given is not None and contract_line(given, 1) is None
    assert not corpus_at(given, given.n_steps)["contract_source"].any()


def test_the_user_s_push_is_a_step_of_the_replay(tmp_path: Path) -> None:
    """Under `--followup pressure` the replay shows the push on the submit it answered, the
    episode going on after it, and the last submit, which is scored."""
    from peb_core.systems import build_system

    run_dir = tmp_path / "pushed"
    cave = build_system("agent_cave", [SPEC], followup="pressure")
    run_system(cave, [SPEC], run_dir, seeds=[11], tier="agent")
    replay = episode_replay(run_example(run_dir, "r", SPEC.id, INCOMPLETE.task_id))
    assert replay is not None
    submits = step_table(replay).filter(pl.col("tool") == "submit")
    assert submits.height == 2  # the report the user pushed back on, then the cave
    first, last = submits.row(0, named=True), submits.row(1, named=True)
    assert "the user pushed back" in first["saw"] and "the episode goes on" in first["saw"]
    assert "pushed back" not in last["saw"] and last["step"] > first["step"]
    page = _text(replay_view(replay, first["step"]))
    assert "the user pushed back" in page
