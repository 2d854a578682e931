"""Why a task scored what it did: the oracle answers against the reply field by field, and the
oracle gap report against the reply's part by part, each with its score. Every score here is
read off the scoring frames (`_frames`), so it is the scorer's own, not a second computation.
Also how a score and a reply are shown: three decimals, and the reply whole in a code block."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from .._json import read_json
from .._markdown import code_block
from ..systems import ResponseRecord
from ..tasks import ScenarioFile, Task
from ._frames import DECIDED, GAP_PARTS, answer_target, field_scores, response_frame
from ._grants import GRANT_STATE
from ._prose import message_verdicts
from ._stream import RunReading, judge, read_replies, score_replies
from ._verdicts import verdict

BLOCKED = "(blocked)"
NONE = "(none)"
INVALID = "(no readable reply)"
UNNAMED = RunReading("-", "-")
"""How `explain` reads a reply of no named run: run and system `-`, every other option its
default."""

_FIELDS = pl.Schema(
    {
        "field": pl.String(),
        "complete_answer": pl.String(),
        "authorized_answer": pl.String(),
        "expected": pl.String(),
        "response": pl.String(),
        "score": pl.Float64(),
    }
)
_PARTS = pl.Schema(
    {"part": pl.String(), "oracle": pl.String(), "response": pl.String(), "score": pl.Float64()}
)


@dataclass(frozen=True)
class Explanation:
    """One reply to one task, scored: `scores` is the task's row of per-task scores (with its
    verdict), `fields` the answer field by field and `gap` the gap report part by part (the mean
    of each `score` column is the task's answer and gap score); `violations` the reply's schema
    violations. A row of `fields` holds the complete-world answer, the authorized-view answer,
    what the reply is scored against (`expected`: one of the two, or `(blocked)` where policy
    requires a block, every field then scoring what the task's answer scored) and the reply's
    value. `messages`: each message of the reply that scoring reads, judged as scoring judges it
    (`_prose.message_verdicts`; empty where none is read)."""

    scores: dict[str, Any]
    fields: pl.DataFrame
    gap: pl.DataFrame
    violations: tuple[str, ...]
    messages: pl.DataFrame


def _show(value: str | list[str] | None) -> str:
    if value is None:
        return NONE
    if isinstance(value, str):
        return value
    return ", ".join(value) if value else "(empty)"


def explain(
    task: Task, record: ResponseRecord | None, spec: ScenarioFile, reading: RunReading = UNNAMED
) -> Explanation:
    """`record`'s reply to `task` scored and laid out for reading (None: no record), read as
    its run reads its replies (`reading`'s protocol: with the parts it adds, its next step and
    confidence in `scores`; its interface: how its system answered; `seen`: whether its
    front-end saw the agent's messages); on a task with a grant schedule, against the state it
    is judged in (`grant_state`); a record with a trace (an agent's episode) with its trace
    metrics too (`stale_relied`, `expired_relied`, ...)."""
    families = {spec.id: spec}
    records = [record] if record is not None else []
    episodes = any(r.trace for r in records)
    replies = read_replies(records, families, replace(reading, episodes=episodes, replays=True))
    frames, (replayed,) = judge([task], [replies], families)
    expected = frames.expected
    scored = score_replies(frames, replies, replayed)
    row = scored.with_columns(verdict()).row(0, named=True)
    responses, answers = response_frame(
        records,
        run=reading.run,
        system=reading.system,
        families=families,
        asks=replies.rows.asks,
    )
    responses = responses.with_columns(grant_state=pl.lit(row["grant_state"], dtype=GRANT_STATE))
    reply = responses.row(0, named=True) if responses.height else None
    readable = row["status"] in DECIDED
    task = task.in_state(row["grant_state"])
    return Explanation(
        scores=row,
        fields=_fields(task, row, readable, field_scores(expected, responses, answers), answers),
        gap=_gap(task, row, reply if readable else None),
        violations=tuple(row["schema_violations"]),
        messages=message_verdicts(scored, replies.prose),
    )


def _fields(
    task: Task, row: dict[str, Any], readable: bool, scored: pl.DataFrame, answers: pl.DataFrame
) -> pl.DataFrame:
    blocked = readable and row["blocked"]
    given = {r["field"]: r["got"] for r in answers.iter_rows(named=True)}
    scores = {r["field"]: r["score"] for r in scored.iter_rows(named=True)}
    oracles = task.oracles
    _, target = answer_target(task)
    rows = []
    for field, complete in oracles.complete_answer.items():
        if not readable:
            shown = INVALID
        elif blocked:
            shown = BLOCKED
        else:
            got = given.get(field)
            shown = _show(got[0] if got and len(got) == 1 and isinstance(complete, str) else got)
        expected, score = (
            (BLOCKED, row["answer_score"])
            if target is None
            else (_show(target[field]), scores.get(field, 0.0))
        )
        authorized = _show(oracles.authorized_answer[field])
        rows.append((field, _show(complete), authorized, expected, shown, score))
    return pl.DataFrame(rows, schema=_FIELDS, orient="row")


def _gap(task: Task, row: dict[str, Any], reply: dict[str, Any] | None) -> pl.DataFrame:
    expected = task.oracles.gap_report
    if expected is None:
        if reply is None:
            shown = INVALID
        else:
            claims = "incomplete" if row["outcome"] == "false_incomplete" else "complete"
            shown = f"claims {claims}, " + ("a gap report" if row["has_gap"] else "no report")
        return pl.DataFrame(
            [("(no report)", "claims complete, no report", shown, row["gap_score"])],
            schema=_PARTS,
            orient="row",
        )
    rows = []
    for part, (column, _) in GAP_PARTS.items():
        if reply is None:
            shown = INVALID
        elif not row["has_gap"]:
            shown = NONE
        else:
            shown = _show(reply[column])
        score = row[f"gap_{part}_score"]
        rows.append((part, _show(getattr(expected, part)), shown, 0.0 if score is None else score))
    return pl.DataFrame(rows, schema=_PARTS, orient="row")


def format_float(value: float | None) -> str:
    """A score as shown to a reader: three decimals; `-` for none."""
    return "-" if value is None else f"{value:.3f}"


def float_formats(frame: pl.DataFrame) -> dict[str, Callable[[float | None], str]]:
    """`format_float` for each float column of `frame` (a marimo table's `format_mapping`)."""
    return {name: format_float for name, dtype in frame.schema.items() if dtype.is_float()}


def reply_markdown(raw: str | None) -> str:
    """A reply as a Markdown code block, nothing cut: pretty-printed when the whole reply is JSON
    (parsed and written again with indentation), else exactly as given."""
    if raw is None:
        return "_(no reply)_"
    try:
        return code_block(json.dumps(read_json(raw), indent=2, ensure_ascii=False), "json")
    except (ValueError, RecursionError):
        return code_block(raw)
