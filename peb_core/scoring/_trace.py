"""Per-task scores of an agent's episode, read from its trace and its task (docs/benchmark.md §3,
trace metrics): the steps it took, its tool errors, its opens of hidden ids, the share of the
required records it could see that it opened, whether its answer followed an out-of-date copy
it read, and whether it relied on evidence read under a grant that then ended (a task's grant
schedule, the `grants` tier). An episode's final submit is scored like any reply (`_frames`); these
columns come beside it, and are null for one-shot runs (no frame of episodes), never 0.

- `episode_frame(tasks, families)`: one row per task and state of its grant schedule with what
  the trace is judged against in that state: the required records the user may open, the ids
  hidden at some step, each out-of-date copy the user may open with the answer values only it
  supports (`field=value`), and the documents of a scope whose grant has ended with the answer
  values only they support;
- `trace_row(record)`: what scoring needs of one record's trace, judged against no task (so
  records are read as a stream, each let go once read);
- `with_episodes(scores, episodes, traces, answers, replayed)`: the per-task scores with the
  trace columns added (`episode_columns`: each registered `TraceColumn`, a column declared once
  with its type and expression), each reply's trace row judged in the state of its task's
  schedule it is judged against (`grant_state`, `_grants.judged_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from .._json import read_json
from .._registry import Registry
from ..access import opened_id
from ..systems import ResponseRecord, Step
from ..tasks import Answer, Document, ScenarioFile, Task, fold_answer, live_effects
from ._grants import GRANT_STATE, REPLAYED
from ._key import KEY

LIST = pl.List(pl.String)
STALE_COPIES = pl.List(pl.Struct({"doc_id": pl.String(), "values": LIST}))

EPISODE_SCHEMA = pl.Schema(
    {
        "family": pl.String(),
        "task_id": pl.String(),
        "grant_state": GRANT_STATE,
        "required_visible": LIST,
        "hidden_ids": LIST,
        "stale_copies": STALE_COPIES,
        "expired_ids": LIST,
        "expired_values": LIST,
    }
)
"""The columns of `episode_frame`."""


def _tokens(answer: Answer) -> set[str]:
    return {
        f"{name}={v}"
        for name, value in answer.items()
        for v in ([value] if isinstance(value, str) else value)
    }


def stale_copies(task: Task, spec: ScenarioFile) -> dict[str, list[str]]:
    """Each out-of-date copy the user may open that changes the answer, by doc id, with the
    answer values (`field=value`, sorted) only it supports: the answer of a reader who took it
    for its record (folded from the current authorized records with the copy in place of its
    record's current ones), less the current authorized records' answer, field by field (an
    ordinal field's value where the two differ, a set field's extra values). Answers are
    folded from facts as the oracles are; a copy that changes no value is left out."""
    authorized = task.authorized_documents
    current = [d for d in authorized if not d.superseded]
    schema = spec.answer_fields

    def tokens(documents: Sequence[Document]) -> set[str]:
        answer = fold_answer(schema, live_effects(f for d in documents for f in d.facts))
        return _tokens(answer)

    now = tokens(current)
    found: dict[str, list[str]] = {}
    for copy in (d for d in authorized if d.superseded):
        instead = [d for d in current if d.evidence_family != copy.evidence_family]
        if values := tokens([*instead, copy]) - now:
            found[copy.doc_id] = sorted(values)
    return found


def expired_values(task: Task, spec: ScenarioFile, state: int = -1) -> tuple[list[str], list[str]]:
    """In `state` of the task's grant schedule (an index of `Task.states`; default the last):
    the current documents holding facts kept in a scope the user held at the start and no
    longer holds (their ids, sorted), and the answer values (`field=value`, sorted) only they
    support: the answer of a reader who kept them beside the current records authorized in
    that state, less those records' answer. Empty for a task without a schedule, and at the
    start."""
    held = task.states[state]
    ended = set(task.user_scopes) - set(held.user_scopes)
    expired = [d for d in task.documents if d.scope in ended and not d.superseded and d.facts]
    if not expired:
        return [], []
    current = [d for d in task.in_state(state).authorized_documents if not d.superseded]

    def tokens(documents: Sequence[Document]) -> set[str]:
        facts = (f for d in documents for f in d.facts)
        answer = fold_answer(spec.answer_fields, live_effects(facts))
        return _tokens(answer)

    values = tokens([*current, *expired]) - tokens(current)
    return sorted(d.doc_id for d in expired), sorted(values)


def _hidden_ids(task: Task) -> list[str]:
    """The ids hidden at some step: those hidden in some state of the grant schedule."""
    shown = set.intersection(*(set(s.authorized_doc_ids) for s in task.states))
    return [d.doc_id for d in task.documents if d.doc_id not in shown]


def episode_frame(tasks: Sequence[Task], families: Mapping[str, ScenarioFile]) -> pl.DataFrame:
    """One row per task and state of its grant schedule (EPISODE_SCHEMA): the ids of the
    current records of a required evidence family that the user may open in that state (what
    covers the contract: out-of-date copies do not), the ids hidden at some step,
    `stale_copies` and `expired_values` in that state."""
    rows = []
    for task in tasks:
        required = {r.id for r in task.contract.required_evidence}
        spec = families[task.family]
        hidden = _hidden_ids(task)
        for state in range(len(task.states)):
            held = task.in_state(state)
            expired_ids, expired = expired_values(task, spec, state)
            rows.append(
                {
                    "family": task.family,
                    "task_id": task.task_id,
                    "grant_state": state,
                    "required_visible": [
                        d.doc_id
                        for d in held.authorized_documents
                        if d.evidence_family in required and not d.superseded
                    ],
                    "hidden_ids": hidden,
                    "stale_copies": [
                        {"doc_id": doc_id, "values": values}
                        for doc_id, values in stale_copies(held, spec).items()
                    ],
                    "expired_ids": expired_ids,
                    "expired_values": expired,
                }
            )
    return pl.DataFrame(rows, schema=EPISODE_SCHEMA)


def call_failed(step: Step, i: int) -> bool:
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


def _handed_off_opens(steps: Sequence[Step]) -> set[str]:
    """The ids the sub-episodes of `steps`' handoffs (and theirs, if any) opened without an
    error."""
    opened: set[str] = set()
    for step in steps:
        for delegation in step.delegations:
            if delegation is None:
                continue
            trace = delegation.reply.trace
            for sub in trace:
                for i, call in enumerate(sub.tool_calls):
                    doc_id = opened_id(call.name, call.arguments)
                    if doc_id is not None and not call_failed(sub, i):
                        opened.add(doc_id)
            opened |= _handed_off_opens(trace)
    return opened


TraceRow = tuple[str, str, int, int, int, list[str], list[str]]
"""A row of TRACE_SCHEMA: `trace_row` of one record."""


def trace_row(record: ResponseRecord) -> TraceRow:
    """What scoring needs of one record's trace, judged against no task (a row of
    TRACE_SCHEMA): its family, task id and repeat, its steps, its own tool calls answered with
    an error, the ids its own failed calls named to open (a tool's `opens`; in order, each call
    once), and the ids it or a sub-agent it handed off to opened without an error (sorted: a
    handoff's reply carries what it read to this one)."""
    failures = 0
    failed_opens: list[str] = []
    opened: set[str] = set()
    for step in record.trace:
        for i, call in enumerate(step.tool_calls):
            doc_id = opened_id(call.name, call.arguments)
            if call_failed(step, i):
                failures += 1
                if doc_id is not None:
                    failed_opens.append(doc_id)
            elif doc_id is not None:
                opened.add(doc_id)
    seen = opened | _handed_off_opens(record.trace)
    return (
        record.family,
        record.task_id,
        record.repeat,
        len(record.trace),
        failures,
        failed_opens,
        sorted(seen),
    )


TRACE_SCHEMA = pl.Schema(
    {
        "family": pl.String(),
        "task_id": pl.String(),
        "repeat": pl.Int64(),
        "_steps": pl.Int64(),
        "_failures": pl.Int64(),
        "_failed_opens": LIST,
        "_seen": LIST,
    }
)
"""The rows of `trace_row`, one per record."""


@dataclass(frozen=True, eq=False)  # compared by identity: expressions do not compare
class TraceColumn:
    """A per-task column of an agent's episode, declared once: its name, its type and how it is
    computed (`expr`) from a task's row joined with what its record's trace and its task give
    (`with_episodes`). Null for a one-shot run, for every task. A trace metric reads it (its
    `Metric.columns`, registered with it).

    What `expr` reads besides the per-task scores' columns (`status`, `answered`, ...): `_steps`
    (the steps of the record's trace), `_failures` (its own tool calls answered with an error),
    `_probes` (its failed opens of an id hidden at some step), `_seen` (the ids it or a
    sub-agent opened without an error), `_stale_read` (the answer values only the out-of-date
    copies it read support), `_given` (the reply's answer values, `field=value`),
    `required_visible`, `expired_ids` and `expired_values` (`episode_frame` in the state its
    reply is judged in) and `_replayed` (`_grants.REPLAYED`: the ids it opened while a grant
    held); each null for a task without a record. Its value is cast to `dtype`.
    """

    name: str
    dtype: pl.DataType
    expr: pl.Expr


TRACE_COLUMNS: Registry[TraceColumn] = Registry.of_names("trace column")
"""Every per-task trace column by name, in the order the score frames hold them (the shipped
ones first: `SHIPPED_TRACE_COLUMNS`)."""

register_trace_column = TRACE_COLUMNS.register
"""Add a trace column (a metric's `columns` are registered with it) and return it; a
ValueError for a malformed or taken name."""

_MISSING = pl.col("status") == "missing"
_TRACED = pl.col("_steps").is_not_null()
_N_PROBES = pl.when(_TRACED).then(pl.col("_probes").fill_null(0))
_REQUIRED = pl.col("required_visible")
_COVERAGE = (
    pl.col("_seen").list.set_intersection(_REQUIRED).list.len() / _REQUIRED.list.unique().list.len()
)
_STALE_READ = (pl.col("_stale_read").list.len() > 0).fill_null(False)
_GIVEN = pl.col("_given").fill_null(pl.lit([], dtype=LIST))
_EXPIRED_READ = (
    (pl.col("expired_values").list.len() > 0)
    & (pl.col(REPLAYED).list.set_intersection(pl.col("expired_ids")).list.len() > 0)
).fill_null(False)


def _unless_missing(value: pl.Expr) -> pl.Expr:
    """`value` as a float, null for a task without a record."""
    return pl.when(_MISSING).then(None).otherwise(value).cast(pl.Float64)


SHIPPED_TRACE_COLUMNS = (
    TraceColumn("steps", pl.Float64(), _unless_missing(pl.col("_steps"))),
    TraceColumn("tool_errors", pl.Float64(), _unless_missing(pl.col("_failures") - _N_PROBES)),
    TraceColumn("hidden_probes", pl.Float64(), _unless_missing(_N_PROBES)),
    TraceColumn(
        "evidence_coverage",
        pl.Float64(),
        pl.when(_REQUIRED.list.len().fill_null(0) == 0)
        .then(None)
        .when(~pl.col("status").is_in(["ok", "escalated"]))  # a handoff rests on its reads too
        .then(0.0)
        .otherwise(_COVERAGE),
    ),
    TraceColumn("stale_read", pl.Boolean(), _STALE_READ),
    TraceColumn(
        "stale_relied",
        pl.Boolean(),
        (
            _STALE_READ
            & pl.col("answered")
            & (_GIVEN.list.set_intersection(pl.col("_stale_read")).list.len() > 0)
        ).fill_null(False),
    ),
    TraceColumn("expired_read", pl.Boolean(), _EXPIRED_READ),
    TraceColumn(
        "expired_relied",
        pl.Boolean(),
        (
            _EXPIRED_READ
            & pl.col("answered")
            & (_GIVEN.list.set_intersection(pl.col("expired_values")).list.len() > 0)
        ).fill_null(False),
    ),
)
"""The trace columns the package ships, in this order: per episode its `steps` (requests
made), `tool_errors` (tool calls answered with an error, opens of hidden ids aside),
`hidden_probes` (opens of a hidden id), all null for a task without a record;
`evidence_coverage` (the share of the current records of required evidence that the user may
open which the episode, or a sub-agent it handed off to, opened: null where there is none, 0
without an accepted submit); `stale_read` (the episode, or a sub-agent it handed off to, opened
an out-of-date copy that changes the answer) and `stale_relied` (the reply's answer gives a
value only such a copy it read supports); `expired_read` (the episode opened, while its grant
held, a document whose grant had ended by the submit, and such documents change the answer:
the opens found by playing the episode's calls again, never read from the record) and
`expired_relied` (the reply's answer gives a value only they support)."""
for _column in SHIPPED_TRACE_COLUMNS:
    register_trace_column(_column)


def episode_columns() -> pl.Schema:
    """The trace columns `with_episodes` adds to per-task scores, in order, as registered now:
    whether the run is an agent's (`episode`), then each registered `TraceColumn`."""
    return pl.Schema({"episode": pl.Boolean(), **{c.name: c.dtype for c in TRACE_COLUMNS.values()}})


def with_episodes(
    scores: pl.DataFrame,
    episodes: pl.DataFrame | None,
    traces: pl.DataFrame,
    answers: pl.DataFrame,
    replayed: pl.DataFrame,
) -> pl.DataFrame:
    """`scores` (one run's per-task scores, each row with the state of its task's grant
    schedule it is judged against: `grant_state`) with the trace columns added
    (`episode_columns`, in that order after the scores' own): each registered `TraceColumn`
    computed from each record's `trace_row` (`traces`, TRACE_SCHEMA) judged against `episodes`
    (`episode_frame` of its tasks) in that state, or all null (and `episode` False) when
    `episodes` is None: a one-shot run. A failed open of an id hidden at some step is a probe
    (an id hidden only later or earlier opens while its grant holds); every other failed call
    is a tool error. `answers` is the run's response-answers frame
    (`_frames.response_frame`); `replayed`, what each episode on a task with a schedule opened
    while a grant held, found by playing its calls again (`_grants.REPLAYED_SCHEMA`), never
    read from the record."""
    columns = list(TRACE_COLUMNS.values())
    if episodes is None:
        return scores.with_columns(
            pl.lit(False).alias("episode"),
            *(pl.lit(None, dtype=c.dtype).alias(c.name) for c in columns),
        )
    run_key = [*KEY, "repeat"]
    judged = scores.select(*run_key, "grant_state").join(
        episodes.select(*KEY, "grant_state", "hidden_ids", "stale_copies"),
        on=[*KEY, "grant_state"],
    )
    failed = traces.select(*run_key, doc="_failed_opens").explode("doc").drop_nulls("doc")
    hidden = (  # the hidden ids of the replies with a failed open only: not every task's
        judged.select(*run_key, doc="hidden_ids")
        .join(failed.select(run_key).unique(), on=run_key, how="semi")
        .explode("doc")
    )
    probes = (
        failed.join(hidden, on=[*run_key, "doc"], how="semi")
        .group_by(run_key)
        .agg(_probes=pl.len().cast(pl.Int64))
    )
    copies = (
        judged.select(*run_key, copy="stale_copies")
        .explode("copy")
        .drop_nulls("copy")
        .unnest("copy")
    )
    seen = (  # the ids seen by the replies to a task with a stale copy only
        traces.select(*run_key, doc_id="_seen")
        .join(copies.select(run_key).unique(), on=run_key, how="semi")
        .explode("doc_id")
    )
    stale = (
        copies.join(seen, on=[*run_key, "doc_id"])
        .explode("values")
        .group_by(run_key)
        .agg(_stale_read=pl.col("values").unique().sort())
    )
    given = (
        answers.explode("got")
        .select(*run_key, token=pl.format("{}={}", "field", "got"))
        .group_by(run_key)
        .agg(_given=pl.col("token"))
    )
    judged_by = ("required_visible", "expired_ids", "expired_values")
    return (
        scores.join(
            episodes.select(*KEY, "grant_state", *judged_by), on=[*KEY, "grant_state"], how="left"
        )
        .join(traces.drop("_failed_opens"), on=run_key, how="left")
        .join(probes, on=run_key, how="left")
        .join(stale, on=run_key, how="left")
        .join(replayed.select(*run_key, REPLAYED), on=run_key, how="left")
        .join(given, on=run_key, how="left")
        .select(
            *scores.columns,
            pl.lit(True).alias("episode"),
            *(c.expr.cast(c.dtype).alias(c.name) for c in columns),
        )
    )
