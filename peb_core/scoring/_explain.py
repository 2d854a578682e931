"""Why a task scored what it did: the oracle answer against the response field by field, and the
oracle gap report against the response's part by part, each with its score.

The per-field and per-part scores here follow SPEC section 3 exactly as `_frames.score_frames`
does, so their mean is the task's `answer_score` / `gap_score` (tests check it).
"""

from __future__ import annotations

import json

import polars as pl

from ..systems import ResponseRecord
from ..tasks import Answer, GapReport, Task

BLOCKED = "(blocked)"
NONE = "(none)"
INVALID = "(no valid response)"

GAP_PARTS = ("status", "reason", "missing_requirements", "missing_scopes", "affected_claims")
"""The five parts of a gap report that are scored (SPEC section 3), in order."""

_COMPARISON = pl.Schema(
    {"field": pl.String(), "oracle": pl.String(), "response": pl.String(), "score": pl.Float64()}
)
_GAP_COMPARISON = pl.Schema(
    {"part": pl.String(), "oracle": pl.String(), "response": pl.String(), "score": pl.Float64()}
)


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _show(value: str | list[str] | None) -> str:
    if value is None:
        return NONE
    if isinstance(value, str):
        return value
    return ", ".join(value) if value else "(empty)"


def _jaccard(got: list[str] | None, expected: list[str] | None) -> float:
    if got is None or expected is None:
        return 0.0
    a, b = set(got), set(expected)
    return 1.0 if not a | b else len(a & b) / len(a | b)


def answer_target(task: Task) -> tuple[str, Answer | None]:
    """What a response's answer is judged against: (`complete_answer`, the answer) on a complete
    task, (`authorized_answer`, the answer) where a partial answer is permitted, (`block`, None)
    where policy requires a block."""
    if task.oracles.completeness == "complete":
        return "complete_answer", task.oracles.complete_answer
    if task.contract.partial_response_permitted:
        return "authorized_answer", task.oracles.authorized_answer
    return "block", None


def field_comparison(task: Task, record: ResponseRecord | None) -> pl.DataFrame:
    """The oracle answer against the response, one row per answer field (field, oracle,
    response, score); where policy requires a block, one row `(block required)` scoring 1 iff the
    response blocked. The mean of `score` is the task's answer score. `record` None (no record)
    and an unparsed reply score 0."""
    response = record.response if record is not None and record.status == "ok" else None
    _, target = answer_target(task)
    if target is None:
        if response is None:
            shown, score = INVALID, 0.0
        elif response.answer is None:
            shown, score = BLOCKED, 1.0
        else:
            shown, score = json.dumps(response.answer, sort_keys=True), 0.0
        return pl.DataFrame(
            [{"field": "(block required)", "oracle": BLOCKED, "response": shown, "score": score}],
            schema=_COMPARISON,
        )
    rows = []
    for field, expected in target.items():
        if response is None:
            shown, score = INVALID, 0.0
        elif response.answer is None:
            shown, score = BLOCKED, 0.0
        else:
            got = response.answer.get(field)
            shown = _show(got)
            if got is None:
                score = 0.0
            elif isinstance(expected, str):
                score = float(_as_list(got) == [expected])
            else:
                score = _jaccard(_as_list(got), list(expected))
        rows.append({"field": field, "oracle": _show(expected), "response": shown, "score": score})
    return pl.DataFrame(rows, schema=_COMPARISON)


def _gap_value(gap: GapReport, part: str) -> str | list[str]:
    value: str | list[str] = getattr(gap, part)
    return value


def gap_comparison(task: Task, record: ResponseRecord | None) -> pl.DataFrame:
    """The oracle gap report against the response's, part by part (part, oracle, response,
    score). On a complete task, one row `(no report)` scoring 1 iff the response claimed complete
    without a report. The mean of `score` is the task's gap score."""
    response = record.response if record is not None and record.status == "ok" else None
    expected = task.oracles.gap_report
    if expected is None:
        if response is None:
            shown, score = INVALID, 0.0
        else:
            claims_incomplete = response.answer is None or response.completeness == "incomplete"
            report = response.gap_report
            shown = f"claims {'incomplete' if claims_incomplete else 'complete'}, " + (
                f"report {report.model_dump_json()}" if report else "no report"
            )
            score = float(not claims_incomplete and report is None)
        return pl.DataFrame(
            [
                {
                    "part": "(no report)",
                    "oracle": "claims complete, no report",
                    "response": shown,
                    "score": score,
                }
            ],
            schema=_GAP_COMPARISON,
        )
    got = response.gap_report if response is not None else None
    rows = []
    for part in GAP_PARTS:
        want = _gap_value(expected, part)
        if got is None:
            shown, score = INVALID if response is None else NONE, 0.0
        else:
            have = _gap_value(got, part)
            shown = _show(have)
            score = float(have == want) if isinstance(want, str) else _jaccard(_as_list(have), want)
        rows.append({"part": part, "oracle": _show(want), "response": shown, "score": score})
    return pl.DataFrame(rows, schema=_GAP_COMPARISON)
