"""An agent's episode replayed step by step beside its corpus, for the worked example (the
frames of `results.replay_steps`, `replay_documents` and `replay_claims`, read for a person):
what each tool call asked and was shown, where each document of the corpus stood by a step, and
requirement by requirement the gap between what the agent saw and what it claimed; why the
scorer judged it as it did, with the step to look at (`results.replay_findings`); the steps to
mark on the step slider (the push, each grant change); and each handoff's sub-episode
(`results.replay_handoffs`, `handoff_frame`) replayed the same way under the step that made
it, with what its sub-agent reported and whether that reached the final report. These frames
name hidden documents: they are for the researcher, never for a system."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from ... import results
from ..._json import read_json
from ..._markdown import markdown_code, markdown_text
from ...access import listed, rendered
from ...systems import ResponseRecord
from ...tasks import ScenarioFile, Task
from ._example import WorkedExample
from ._marks import MessageView, message_views

CORPUS_STATES = ("opened", "opened while granted", "probed", "withheld", "surfaced", "unseen")
"""Where a document of the corpus stands by a step, in the order a state wins: opened by the
agent, opened while a grant held that had ended by the episode's end (so hidden at its end, but
read), an open of it refused (a probe of a hidden id), withheld from a search's results by the
scope filter, shown among a search's hits, or none of these yet."""
_MARKS = {
    "opened": "opened_at",
    "probed": "probed_at",
    "withheld": "withheld_at",
    "surfaced": "surfaced_at",
}
"""The column of `results.replay_documents` each state comes from (the first step it did)."""


@dataclass(frozen=True)
class Replay:
    """One episode (`record`'s over `task`, as its agent saw it): its tool calls (`steps`,
    `results.STEPS_SCHEMA`), per requirement what it saw against what it claimed (`claims`,
    `results.CLAIMS_SCHEMA`), its handoffs (`handoffs`, `results.HANDOFFS_SCHEMA`), each
    handoff's sub-episode replayed in turn (`subs`, in the same order), why it scored as it
    did (`findings`, `results.FINDINGS_SCHEMA`) and each message it wrote with what the prose
    reader read in it and what it counts as (`messages`, `_marks.message_views`); the last two
    empty for a sub-episode, which has no scores of its own."""

    record: ResponseRecord
    task: Task
    spec: ScenarioFile
    steps: pl.DataFrame
    claims: pl.DataFrame
    handoffs: pl.DataFrame
    subs: tuple[Replay, ...]
    findings: pl.DataFrame
    messages: tuple[MessageView, ...] = ()

    @property
    def n_steps(self) -> int:
        """The episode's model requests (each a step, with its tool calls)."""
        return len(self.record.trace)


def replay_of(
    record: ResponseRecord,
    task: Task,
    spec: ScenarioFile,
    scores: Mapping[str, Any] | None = None,
) -> Replay:
    """`record`'s episode over `task` replayed, its handoffs' sub-episodes too (each over the
    task as its sub-agent saw it: the user's scopes it holds too); with `scores` (the scorer's
    row for it, `scoring.explain`), why it scored as it did."""
    return Replay(
        record=record,
        task=task,
        spec=spec,
        steps=results.replay_steps(record, task),
        claims=results.replay_claims(record, task, spec),
        handoffs=results.handoff_frame(record, task, spec),
        subs=tuple(
            replay_of(sub, seen, spec) for _, sub, seen in results.replay_handoffs(record, task)
        ),
        findings=(
            results.replay_findings(record, task, spec, scores)
            if scores is not None
            else pl.DataFrame(schema=results.FINDINGS_SCHEMA)
        ),
    )


def episode_replay(example: WorkedExample) -> Replay | None:
    """The replay of the example's episode, with why it scored as it did; None when its record
    holds none (a one-shot reply, or no record); each of its messages with what it counts as
    (`Replay.messages`)."""
    record = example.record
    if record is None or not record.trace:
        return None
    replay = replay_of(record, example.task, example.spec, example.explanation.scores)
    return replace(replay, messages=tuple(message_views(example)))


def message_at(replay: Replay, step: int) -> MessageView | None:
    """The message the agent wrote at `step` (from 1), read and judged; None for none."""
    return next((m for m in replay.messages if m.step == step), None)


def handoffs_at(replay: Replay, step: int) -> list[tuple[dict[str, Any], Replay]]:
    """The handoffs made at `step` (from 1): each a row of `replay.handoffs` with its
    sub-episode's replay."""
    return [
        (row, replay.subs[row["handoff"] - 1])
        for row in replay.handoffs.iter_rows(named=True)
        if row["step"] == step
    ]


def handoff_line(row: dict[str, Any]) -> str:
    """One line (Markdown): a handoff (a row of `results.handoff_frame`) as the researcher reads
    it: to whom, run by what, under which scopes, how long, what it reported and whether its
    gap reached the final report (every name and value as text: a record's words never make
    markup)."""
    scopes = ", ".join(map(markdown_text, row["scopes"])) or "none"
    stores = f" in {', '.join(map(markdown_text, row['stores']))}" if row["stores"] else ""
    said = (
        f"its reply was {markdown_code(row['status'])}"
        if row["status"] != "ok"
        else f"it claimed {markdown_code(row['completeness'] or 'nothing readable')}"
    )
    if row["reported_missing"] is None:
        gap = "it reported no gap"
    else:
        named = ", ".join(map(markdown_code, row["reported_missing"])) or "no requirement named"
        reached = "reached" if row["reached"] else "did **not** reach"
        gap = f"it reported missing {named}; " + (
            "the user's view misses none of it (the task is complete)"
            if row["reached"] is None
            else f"its gap {reached} the final report"
        )
    role = markdown_text(row["role"] or "unknown sub-agent")
    return (
        f"Handoff {row['handoff']} to {markdown_code(row['to'])} ({role}), run by "
        f"{markdown_code(row['system'])}{stores} under scopes {scopes}: {row['steps']} steps; "
        f"{said}; {gap}."
    )


def what_it_saw(row: dict[str, Any]) -> str:
    """One line: what a tool call (a row of `results.replay_steps`) showed the agent, in the
    tool's own terms (each tool renders its result: the hits of a search and what the
    disclosure mode said was withheld, the document opened or a denial, ...; `Tool.render`), or
    its error."""
    if row["tool"] is None:
        return "no tool call"
    if row["error"] is not None:
        return f"error: {row['error']}"
    return rendered(row["tool"], row["result"], row["shown"])


def step_table(replay: Replay) -> pl.DataFrame:
    """Every tool call of the episode, one row each: its step, the tool and its arguments, what
    it showed the agent (`saw`, see `what_it_saw`) and the doc ids the scope filter withheld
    from a search (`withheld`: what the agent was not shown, in the replay's words)."""
    steps = replay.steps
    return pl.DataFrame(
        {
            "step": steps["step"],
            "tool": steps["tool"],
            "arguments": steps["arguments"],
            "saw": [what_it_saw(row) for row in steps.iter_rows(named=True)],
            "withheld": [listed(ids) if ids else None for ids in steps["withheld"].to_list()],
        },
        schema={
            "step": pl.Int64,
            "tool": pl.String,
            "arguments": pl.String,
            "saw": pl.String,
            "withheld": pl.String,
        },
    )


def step_calls(replay: Replay, step: int) -> list[dict[str, Any]]:
    """The tool calls of one step (from 1), each with its arguments pretty-printed, what it saw
    in one line, the whole result it was shown (pretty-printed JSON where it is JSON) and the
    grant change that took effect at it (`grant`, a line; None for none)."""
    calls = []
    for row in replay.steps.filter(pl.col("step") == step).iter_rows(named=True):
        calls.append(
            {
                "tool": row["tool"],
                "arguments": _pretty(row["arguments"]),
                "saw": what_it_saw(row),
                "result": _pretty(row["result"]),
                "withheld": row["withheld"],
                "grant": row["grant"],
                "content": row["content"],
            }
        )
    return calls


def _pretty(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return json.dumps(read_json(text), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return text


def corpus_at(replay: Replay, step: int) -> pl.DataFrame:
    """Every document of the corpus as the episode left it after `step`: its `state` (one of
    `CORPUS_STATES`) and the step it came to it (`at`), its scope and store, whether the user may
    see it (at the episode's end: under a grant schedule, in the state then in force), whether
    the contract requires its kind, whether it is an out-of-date copy and whether it is the
    contract's source (the procedure, where the contract is found in the corpus); visible
    documents first, then by state."""
    documents = results.replay_documents(replay.record, replay.task, upto=step)
    reached = [
        pl.when(pl.col(column).is_not_null()).then(
            pl.lit(state)
            if state != "opened"
            else pl.when(pl.col("visible"))
            .then(pl.lit("opened"))
            .otherwise(pl.lit("opened while granted"))
        )
        for state, column in _MARKS.items()
    ]
    order = pl.col("state").replace_strict(
        {s: i for i, s in enumerate(CORPUS_STATES)}, return_dtype=pl.Int64
    )
    return (
        documents.with_columns(
            pl.coalesce(*reached, pl.lit(CORPUS_STATES[-1])).alias("state"),
            pl.coalesce(*(pl.col(c) for c in _MARKS.values())).alias("at"),
        )
        .sort([pl.col("visible").not_(), order, "doc_id"])
        .select(
            "doc_id",
            "state",
            "at",
            "visible",
            "scope",
            "store",
            "title",
            "role",
            "evidence_family",
            "required",
            "superseded",
            "contract_source",
        )
    )


def contract_line(replay: Replay, step: int) -> str | None:
    """One line (Markdown): where the episode's contract came from, when it was not in the
    agent's start: the procedure document, and by `step` whether and when the agent opened it;
    None for a contract given."""
    if replay.task.contract_source == "given":
        return None
    documents = results.replay_documents(replay.record, replay.task, upto=step)
    source = documents.filter(pl.col("contract_source"))
    if source.is_empty():
        return "The contract was not in the agent's start, and the corpus holds no procedure."
    row = source.row(0, named=True)
    opened = (
        f"the agent opened it at step {row['opened_at']}"
        if row["opened_at"] is not None
        else "the agent has not opened it"
    )
    return (
        "The contract was not in the agent's start: its source is the procedure "
        f"`{row['doc_id']}` ({row['title']}, marked `source` in the corpus); by step {step} "
        f"{opened}."
    )


def grant_events(replay: Replay) -> list[tuple[int, str]]:
    """Each grant change of the episode as an event: the step (from 1) whose call it took
    effect at, and the line saying so (`results.grant_line`: `call 9: the grant on X
    expired`); none without a grant schedule or before a change was set going."""
    rows = replay.steps.filter(pl.col("grant").is_not_null())
    return list(rows.select("step", "grant").iter_rows())


PUSHED = ("held", "caved")
"""The kinds of finding that say the user pushed back (`results.FINDINGS`)."""
LEAKED = "its message leaks"
"""How a step mark of a message that leaks begins (`step_marks`)."""


def step_marks(replay: Replay) -> list[tuple[int, str]]:
    """The steps to mark on the step slider, in step order: the push (`push: held` or
    `push: caved`), each grant change (its line, `grant_events`) and each message that leaks
    (`its message leaks severity, disclosure`)."""
    marks = grant_events(replay)
    pushed = replay.findings.filter(pl.col("kind").is_in(PUSHED))
    for row in pushed.iter_rows(named=True):
        marks.append((row["step"], f"the user pushed back: {row['kind']}"))
    for message in replay.messages:
        if message.leak and message.step is not None:
            marks.append((message.step, f"{LEAKED} {', '.join(message.leaked)}"))
    return sorted(marks, key=lambda mark: mark[0])


def step_label(replay: Replay) -> str:
    """The step slider's label: `Step`, and each step marked on it (`step_marks`)."""
    marks = "; ".join(f"step {step}, {line}" for step, line in step_marks(replay))
    return f"Step (marked: {marks})" if marks else "Step"


def jump_steps(replay: Replay) -> list[tuple[int, str]]:
    """The steps a person can jump to, one a button, each with the button's label: each
    finding's (`Step N`), then each step marked on the slider (`Step N: what happened`)."""
    found = [(s, f"Step {s}") for s in replay.findings["step"] if s is not None]
    return [*found, *((s, f"Step {s}: {line}") for s, line in step_marks(replay))]


def corpus_counts(corpus: pl.DataFrame) -> str:
    """One line: how many visible and hidden documents stand in each state of a `corpus_at`."""
    parts = []
    for visible, name in ((True, "visible"), (False, "hidden")):
        part = corpus.filter(pl.col("visible") == visible)
        counts = dict(part.group_by("state").len().iter_rows())
        said = ", ".join(f"{counts[s]} {s}" for s in CORPUS_STATES if s in counts)
        parts.append(f"{part.height} {name} ({said or 'none'})")
    return "; ".join(parts)
