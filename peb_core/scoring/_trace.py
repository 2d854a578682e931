"""Per-task scores of an agent's episode, read from its trace and its task (docs/benchmark.md §3,
trace metrics): the steps it took, its tool errors, its opens of hidden ids, the share of the
required records it could see that it opened, whether its answer followed an out-of-date copy,
and whether it relied on evidence read under a grant that then ended (a task's grant schedule,
the `grants` tier). An episode's final submit is scored like any reply (`_frames`); these
columns come beside it, and are null for one-shot runs (no frame of episodes), never 0.

- `episode_frame(tasks, families)`: one row per task with what the trace is judged against:
  the required records the user may open, the ids hidden at some step, the answer values only
  an out-of-date copy supports (`field=value`), and the documents of a scope whose grant ends
  with the answer values only they support;
- `trace_counts(record)`: what scoring needs of one record's trace, judged against no task (so
  records are read as a stream, each let go once counted);
- `with_episodes(scores, episodes, traces, answers)`: the per-task scores with the trace
  columns added (EPISODE_COLUMNS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from .._json import read_json
from ..systems import ResponseRecord, Step
from ..tasks import Answer, Document, ScenarioFile, Task, fold_answer, live_effects

KEY = ["family", "task_id"]
LIST = pl.List(pl.String)
OPEN_TOOL = "open"
"""The tool whose calls open a document (`open(doc_id)`)."""

EPISODE_SCHEMA = pl.Schema(
    {
        "family": pl.String(),
        "task_id": pl.String(),
        "required_visible": LIST,
        "hidden_ids": LIST,
        "stale_values": LIST,
        "expired_ids": LIST,
        "expired_values": LIST,
    }
)
"""The columns of `episode_frame`."""

EPISODE_COLUMNS = pl.Schema(
    {
        "episode": pl.Boolean(),
        "steps": pl.Float64(),
        "tool_errors": pl.Float64(),
        "hidden_probes": pl.Float64(),
        "evidence_coverage": pl.Float64(),
        "stale_possible": pl.Boolean(),
        "stale_relied": pl.Boolean(),
        "expired_read": pl.Boolean(),
        "expired_relied": pl.Boolean(),
    }
)
"""The trace columns `with_episodes` adds to per-task scores: whether the run is an agent's
(`episode`); per episode its `steps` (requests made), `tool_errors` (tool calls answered with an
error, opens of hidden ids aside), `hidden_probes` (opens of a hidden id), all null for a task
without a record; `evidence_coverage` (the share of the current records of required evidence
that the user may open which the episode opened: null where there is none, 0 without an
accepted submit); `stale_possible`
(the task has an out-of-date copy the user may open that changes the answer) and
`stale_relied` (the reply's answer gives a value only such a copy supports); `expired_read`
(the episode opened, while its grant held, a document whose grant then ended, and such documents
change the answer) and `expired_relied` (the reply's answer gives a value only they support)."""


def _tokens(answer: Answer) -> set[str]:
    return {
        f"{name}={v}"
        for name, value in answer.items()
        for v in ([value] if isinstance(value, str) else value)
    }


def stale_values(task: Task, spec: ScenarioFile) -> list[str]:
    """The answer values (`field=value`, sorted) that only an out-of-date copy the user may
    open supports: for each such copy, the answer of a reader who took it for its record
    (folded from the current authorized records with the copy in place of its record's
    current ones), less the current authorized records' answer, field by field (an ordinal
    field's value where the two differ, a set field's extra values). Answers are folded from
    facts as the oracles are."""
    authorized = task.authorized_documents
    current = [d for d in authorized if not d.superseded]
    schema = spec.answer_fields

    def tokens(documents: Sequence[Document]) -> set[str]:
        answer = fold_answer(schema, live_effects(f for d in documents for f in d.facts))
        return _tokens(answer)

    now = tokens(current)
    found: set[str] = set()
    for copy in (d for d in authorized if d.superseded):
        instead = [d for d in current if d.evidence_family != copy.evidence_family]
        found |= tokens([*instead, copy]) - now
    return sorted(found)


def expired_values(task: Task, spec: ScenarioFile) -> tuple[list[str], list[str]]:
    """The current documents holding facts kept in a scope whose grant ends in the task's
    schedule (their ids, sorted), and the answer values (`field=value`, sorted) only they
    support: the answer of a reader who kept them beside the current authorized records, less
    the current authorized records' answer. Empty for a task without a schedule."""
    ended = {c.scope for c in task.grants if c.ends} - set(task.user_scopes)
    expired = [d for d in task.documents if d.scope in ended and not d.superseded and d.facts]
    if not expired:
        return [], []
    current = [d for d in task.authorized_documents if not d.superseded]

    def tokens(documents: Sequence[Document]) -> set[str]:
        facts = (f for d in documents for f in d.facts)
        answer = fold_answer(spec.answer_fields, live_effects(facts))
        return _tokens(answer)

    values = tokens([*current, *expired]) - tokens(current)
    return sorted(d.doc_id for d in expired), sorted(values)


def _hidden_ids(task: Task) -> list[str]:
    """The ids hidden at some step: those hidden at the submit, and those of a scope granted
    late (hidden until then)."""
    late = {c.scope for c in task.grants if not c.ends}
    authorized = set(task.authorized_doc_ids)
    return [d.doc_id for d in task.documents if d.doc_id not in authorized or d.scope in late]


def episode_frame(tasks: Sequence[Task], families: Mapping[str, ScenarioFile]) -> pl.DataFrame:
    """One row per task (EPISODE_SCHEMA): the ids of the current records of a required evidence
    family that the user may open at the submit (what covers the contract: out-of-date copies
    do not), the ids hidden at some step, `stale_values` and `expired_values`."""
    rows = []
    for task in tasks:
        required = {r.id for r in task.contract.required_evidence}
        expired_ids, expired = expired_values(task, families[task.family])
        rows.append(
            {
                "family": task.family,
                "task_id": task.task_id,
                "required_visible": [
                    d.doc_id
                    for d in task.authorized_documents
                    if d.evidence_family in required and not d.superseded
                ],
                "hidden_ids": _hidden_ids(task),
                "stale_values": stale_values(task, families[task.family]),
                "expired_ids": expired_ids,
                "expired_values": expired,
            }
        )
    return pl.DataFrame(rows, schema=EPISODE_SCHEMA)


def _opened(arguments: str) -> str | None:
    """The doc id an `open` call's arguments name (as the access layer reads it: trimmed), if
    they name one."""
    try:
        parsed = read_json(arguments)
    except ValueError:
        return None
    doc_id = parsed.get("doc_id") if isinstance(parsed, dict) else None
    return doc_id.strip() if isinstance(doc_id, str) else None


def _failed(step: Step, i: int) -> bool:
    """Whether a step's `i`-th call was answered with an error: as recorded, or (a trace that
    records no errors) as its result says."""
    if i < len(step.errors) and step.errors[i] is not None:
        return True
    if i >= len(step.results):
        return False
    try:
        shown = read_json(step.results[i])
    except ValueError:
        return False
    return isinstance(shown, dict) and "error" in shown


def trace_counts(record: ResponseRecord) -> tuple[str, str, int, int, int, list[str], list[str]]:
    """What scoring needs of one record's trace, judged against no task (TRACE_SCHEMA's row):
    its family, task id and repeat, its steps, its tool calls answered with an error, the ids
    its failed `open` calls named (in order, each call once), and the ids it opened (sorted)."""
    failures = 0
    failed_opens: list[str] = []
    opened: set[str] = set()
    for step in record.trace:
        for i, call in enumerate(step.tool_calls):
            doc_id = _opened(call.arguments) if call.name == OPEN_TOOL else None
            if _failed(step, i):
                failures += 1
                if doc_id is not None:
                    failed_opens.append(doc_id)
            elif doc_id is not None:
                opened.add(doc_id)
    return (
        record.family,
        record.task_id,
        record.repeat,
        len(record.trace),
        failures,
        failed_opens,
        sorted(opened),
    )


TRACE_SCHEMA = pl.Schema(
    {
        "family": pl.String(),
        "task_id": pl.String(),
        "repeat": pl.Int64(),
        "_steps": pl.Int64(),
        "_failures": pl.Int64(),
        "_failed_opens": LIST,
        "_opened": LIST,
    }
)
"""The rows of `trace_counts`, one per record."""


def with_episodes(
    scores: pl.DataFrame,
    episodes: pl.DataFrame | None,
    traces: Sequence[tuple[str, str, int, int, int, list[str], list[str]]],
    answers: pl.DataFrame,
) -> pl.DataFrame:
    """`scores` (one run's per-task scores) with EPISODE_COLUMNS added: from each record's
    `trace_counts` (`traces`) judged against `episodes` (`episode_frame` of its tasks), or all
    null (and `episode` False) when `episodes` is None: a one-shot run. A failed open of an id
    hidden at some step is a probe (an id hidden only later or earlier opens while its grant
    holds); every other failed call is a tool error. `answers` is the run's response-answers
    frame (`_frames.response_frame`)."""
    if episodes is None:
        return scores.with_columns(
            pl.lit(False).alias("episode"),
            *(pl.lit(None, dtype=t).alias(c) for c, t in EPISODE_COLUMNS.items() if c != "episode"),
        )
    counts = pl.DataFrame(traces, schema=TRACE_SCHEMA, orient="row")
    failed = counts.select(*KEY, "repeat", doc="_failed_opens").explode("doc").drop_nulls("doc")
    hidden = (
        episodes.select(*KEY, doc="hidden_ids")
        .join(failed.select(KEY).unique(), on=KEY, how="semi")
        .explode("doc")
    )
    probes = (
        failed.join(hidden, on=[*KEY, "doc"], how="semi")
        .group_by(*KEY, "repeat")
        .agg(_probes=pl.len().cast(pl.Int64))
    )
    given = (
        answers.explode("got")
        .select(*KEY, "repeat", token=pl.format("{}={}", "field", "got"))
        .group_by(*KEY, "repeat")
        .agg(_given=pl.col("token"))
    )
    missing = pl.col("status") == "missing"
    traced = pl.col("_steps").is_not_null()
    n_probes = pl.when(traced).then(pl.col("_probes").fill_null(0))
    required = pl.col("required_visible")
    coverage = (
        pl.col("_opened").list.set_intersection(required).list.len()
        / required.list.unique().list.len()
    )
    stale = pl.col("stale_values").list.len() > 0
    given_values = pl.col("_given").fill_null(pl.lit([], dtype=LIST))
    expired_read = (
        (pl.col("expired_values").list.len() > 0)
        & (pl.col("_opened").list.set_intersection(pl.col("expired_ids")).list.len() > 0)
    ).fill_null(False)
    judged_columns = ("required_visible", "stale_values", "expired_ids", "expired_values")
    return (
        scores.join(episodes.select(*KEY, *judged_columns), on=KEY, how="left")
        .join(counts.drop("_failed_opens"), on=[*KEY, "repeat"], how="left")
        .join(probes, on=[*KEY, "repeat"], how="left")
        .join(given, on=[*KEY, "repeat"], how="left")
        .with_columns(
            episode=pl.lit(True),
            steps=pl.when(missing).then(None).otherwise(pl.col("_steps")).cast(pl.Float64),
            tool_errors=pl.when(missing)
            .then(None)
            .otherwise(pl.col("_failures") - n_probes)
            .cast(pl.Float64),
            hidden_probes=pl.when(missing).then(None).otherwise(n_probes).cast(pl.Float64),
            evidence_coverage=pl.when(required.list.len().fill_null(0) == 0)
            .then(None)
            .when(pl.col("status") != "ok")
            .then(0.0)
            .otherwise(coverage),
            stale_possible=stale.fill_null(False),
            stale_relied=(
                stale
                & pl.col("answered")
                & (given_values.list.set_intersection(pl.col("stale_values")).list.len() > 0)
            ).fill_null(False),
            expired_read=expired_read,
            expired_relied=(
                expired_read
                & pl.col("answered")
                & (given_values.list.set_intersection(pl.col("expired_values")).list.len() > 0)
            ).fill_null(False),
        )
        .drop(*judged_columns, "_steps", "_failures", "_opened", "_probes", "_given")
    )
