"""Paired comparison of two runs over the tasks both ran (`peb compare`, notebooks/compare.py).

Only tasks both runs answered are paired: a task that one run lacks, or to which either run has
no reply (an error, or no record: `NO_REPLY`), is left out of every test and counted
(`left_out`; `unpaired_tasks` names them), so a run stopped after 4 tasks, or one whose every
reply is an error, is never compared as if its missing replies were safe ones.

Per family and over all families ("all"), each rate and mean of the metric registry
(`_metrics.MEASURES`) is compared pair by pair (difference = B - A) by a test and a 95%
interval that agrees with it, excluding 0 exactly when p < ALPHA (`significant`):
- a rate (its event, over the tasks it is computed over): McNemar's test on the discordant
  pairs (`only_a`: the event in A only; `only_b`: in B only), exact with fewer than
  `_stats.EXACT_BELOW` of them, else the score test, with Tango's score interval
  (`_stats.paired_rates`);
- a mean: a sign-flip permutation test with the interval of the shifts it does not reject
  (`_stats.paired_means`), over the pairs where both scores are defined;
- a statistic (the ECE and AUROC of a confidence): a paired bootstrap of the difference, the
  same tasks drawn for both runs, with the interval and p-value that agree by construction
  (`_stats.paired_statistic`), over the tasks where both runs give a prediction.
The trace metrics (`_metrics.TRACE`) are compared only when a run is an agent's, the handoff
metrics (`_metrics.HANDOFF`) only when a sub-agent reported a gap in one, the repeat metrics
(`_metrics.REPEATS`) only when both runs have repeats (a run without has none to pair, and
must not read as 0), the escalation and calibration metrics (`_metrics.ESCALATION`,
`_metrics.CALIBRATION`) only when a run's protocol asks for a next step, a confidence or a
handoff to a human.

Runs with repeats (`peb run --repeats K`, K rows per task) are paired task by task, never
repeat by repeat: each task's rows are first taken together (a rate's event as the share of
the task's repeats where it holds, a mean's score as the mean over its repeats), and the rates
are then compared as means of those shares (the sign-flip test), but the repeat metrics
(`_metrics.REPEATS`), one 0/1 event per task, which keep McNemar's test.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ._frames import with_repeats
from ._key import KEY
from ._metrics import CALIBRATION, ESCALATION, HANDOFF, MEASURES, METRICS, REPEATS, TRACE, Metric
from ._stats import (
    ALPHA,
    EXACT_BELOW,
    PairedTest,
    format_p,
    paired_means,
    paired_rates,
    paired_statistic,
)

NO_REPLY = ("error", "missing")
"""The statuses of a task without a reply of the system: no paired test counts such a task."""

COMPARE_KEYS = [
    "run_a",
    "run_b",
    "label_a",
    "label_b",
    "family",
    "metric",
    "test",
    "n_pairs",
    "left_out",
    "value_a",
    "value_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "significant",
    "only_a",
    "only_b",
]
"""The columns of `compare_scores`, in order (`only_a`, `only_b` are null for means; `label_a`,
`label_b`: what sets each run apart, `results.score_run_dirs`, else its name; `left_out`: the
tasks of the family in either run that no test counts, `unpaired_tasks`)."""

TESTS = {
    "exact": "mcnemar_exact",
    "rate": "mcnemar_score",
    "mean": "sign_flip",
    "statistic": "paired_bootstrap",
}
"""The `test` of a row: McNemar's exact test (a rate with fewer than `EXACT_BELOW` discordant
pairs), McNemar's score test (a rate), the sign-flip test (a mean), a paired bootstrap (a
statistic: the ECE and AUROC of a confidence)."""

_SHORT_TESTS = {
    "mcnemar_exact": "exact",
    "mcnemar_score": "score",
    "sign_flip": "sign-flip",
    "paired_bootstrap": "bootstrap",
}
"""How `compare_table` names each test."""

COMPARE_NOTE = (
    f"Difference = B - A with its {1 - ALPHA:.0%} interval, over the tasks both runs answered "
    "(left_out: tasks one run lacks or has no reply to, in neither test). p: McNemar's test "
    f"for rates, exact with fewer than {EXACT_BELOW} discordant pairs (only_a + only_b), else "
    "the score test (interval: Tango's score interval, reaching 0 where the exact test keeps "
    "0); sign-flip permutation test for means (interval: the shifts it does not reject); a "
    "paired bootstrap for ECE and AUROC. Each "
    f"interval agrees with its test, so it excludes 0 exactly when p < {ALPHA}: such rows are "
    "significant, marked *."
)
"""How to read a comparison table, printed under every one."""

_SCHEMA = pl.Schema(
    {
        "run_a": pl.String(),
        "run_b": pl.String(),
        "label_a": pl.String(),
        "label_b": pl.String(),
        "family": pl.String(),
        "metric": pl.String(),
        "test": pl.String(),
        "n_pairs": pl.Int64(),
        "left_out": pl.Int64(),
        "value_a": pl.Float64(),
        "value_b": pl.Float64(),
        "difference": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "p_value": pl.Float64(),
        "significant": pl.Boolean(),
        "only_a": pl.Int64(),
        "only_b": pl.Int64(),
    }
)


class CompareError(ValueError):
    """Two score frames that cannot be compared; one line."""


def _run_name(scores: pl.DataFrame, label: str) -> tuple[str, str]:
    """The run's name and its label (what sets it apart; its name without a `run_label`)."""
    runs = scores["run"].unique().to_list() if "run" in scores.columns else [label]
    if len(runs) > 1:
        raise CompareError(f"run {label}: expected the scores of one run, got {len(runs)}")
    name = str(runs[0]) if runs else label
    said = scores["run_label"].unique().to_list() if "run_label" in scores.columns else []
    return name, str(said[0]) if len(said) == 1 else name


UNPAIRED_SCHEMA = pl.Schema(
    {"family": pl.String(), "task_id": pl.String(), "a": pl.String(), "b": pl.String()}
)
"""The columns of `unpaired_tasks`: a task and what each run holds of it: `answered`, `error`
(a reply of it in error), `missing` (no record of it), or `absent` (not among the run's
tasks)."""


_HELD = {"error": "in error", "missing": "missing", "absent": "not among its tasks"}
"""How `unpaired_note` says what a run holds of a task it left out."""


def _held(scores: pl.DataFrame) -> pl.DataFrame:
    """Each task of a run's scores and what the run holds of it (`UNPAIRED_SCHEMA`): `error` if
    a reply to it (in any repeat) is in error, else `missing` if one has no record, else
    `answered`."""
    status = pl.col("status")
    return scores.group_by(KEY).agg(
        held=pl.when((status == "error").any())
        .then(pl.lit("error"))
        .when((status == "missing").any())
        .then(pl.lit("missing"))
        .otherwise(pl.lit("answered"))
    )


def unpaired_tasks(scores_a: pl.DataFrame, scores_b: pl.DataFrame) -> pl.DataFrame:
    """The tasks of either run that no paired test counts (`UNPAIRED_SCHEMA`), sorted: those
    one run lacks and those either has no reply to (`NO_REPLY`, in any of its repeats)."""
    held = _held(scores_a).join(_held(scores_b), on=KEY, how="full", coalesce=True, suffix="_b")
    return (
        held.select(
            *KEY, a=pl.col("held").fill_null("absent"), b=pl.col("held_b").fill_null("absent")
        )
        .filter((pl.col("a") != "answered") | (pl.col("b") != "answered"))
        .sort(KEY)
        .cast(dict(UNPAIRED_SCHEMA))  # type: ignore[arg-type]
    )


def unpaired_note(unpaired: pl.DataFrame, run_a: str, run_b: str, shown: int = 3) -> str | None:
    """One line saying which tasks `unpaired_tasks` left out of every test and why (the first
    `shown` by id), or None when none was."""
    if unpaired.is_empty():
        return None
    why = []
    for column, run in (("a", run_a), ("b", run_b)):
        counts = unpaired.filter(pl.col(column) != "answered")[column].value_counts(sort=True)
        said = ", ".join(f"{n} {_HELD[kind]}" for kind, n in counts.sort(column).iter_rows())
        if said:
            why.append(f"in {run}: {said}")
    ids = [f"{f}/{t}" for f, t in unpaired.select(KEY).head(shown).iter_rows()]
    more = f" and {unpaired.height - shown} more" if unpaired.height > shown else ""
    return (
        f"{unpaired.height} task(s) left out of every test, without a reply in both runs "
        f"({'; '.join(why)}): {', '.join(ids)}{more}"
    )


def _test_columns(result: PairedTest) -> dict[str, Any]:
    p = result.p_value
    return {
        "n_pairs": result.n_pairs,
        "value_a": result.value_a,
        "value_b": result.value_b,
        "difference": result.difference,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": p,
        "significant": None if p is None else p < ALPHA,
        "exact": result.exact,
    }


def _rate_row(pairs: pl.DataFrame, event: str) -> dict[str, Any]:
    a, b = pairs[event].fill_null(False), pairs[f"{event}_b"].fill_null(False)
    both = int((a & b).sum())
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    neither = pairs.height - both - only_a - only_b
    result = paired_rates(both, only_a, only_b, neither)
    return _test_columns(result) | {"only_a": only_a, "only_b": only_b}


def _mean_row(pairs: pl.DataFrame, score: str, bounded: bool) -> dict[str, Any]:
    """The paired test of a mean over the pairs where both scores are defined (a trace score
    is null on a one-shot run and where it does not apply)."""
    pairs = pairs.drop_nulls([score, f"{score}_b"])
    a, b = pairs[score].to_numpy(), pairs[f"{score}_b"].to_numpy()
    return _test_columns(paired_means(a, b, bound=1.0 if bounded else None))


def _statistic_row(pairs: pl.DataFrame, m: Metric) -> dict[str, Any]:
    """The paired bootstrap of a statistic over the pairs where both runs give a prediction."""
    assert m.statistic is not None
    event, label = f"{m.name}__event", f"{m.name}__label"
    pairs = pairs.drop_nulls([event, f"{event}_b", label, f"{label}_b"])
    a = (pairs[event].to_numpy(), pairs[label].to_numpy())
    b = (pairs[f"{event}_b"].to_numpy(), pairs[f"{label}_b"].to_numpy())
    return _test_columns(paired_statistic(m.statistic, a, b))


def compare_scores(scores_a: pl.DataFrame, scores_b: pl.DataFrame) -> pl.DataFrame:
    """Paired comparison (COMPARE_KEYS) of two runs' per-task scores (as from `score_run` or
    `results.score_run_dirs`), over the (family, task_id) pairs both answered (the others are
    counted in `left_out`): one row per family and metric, then the same over all families
    (`family` = "all"). Raises CompareError when a frame holds several runs, the runs share no
    task, or no task both answered."""
    (run_a, label_a), (run_b, label_b) = _run_name(scores_a, "A"), _run_name(scores_b, "B")
    scores_a, scores_b = with_repeats(scores_a), with_repeats(scores_b)
    unpaired = unpaired_tasks(scores_a, scores_b)
    held = _held(scores_a).join(_held(scores_b), on=KEY, how="inner", suffix="_b")
    if held.is_empty():
        raise CompareError(f"runs {run_a} and {run_b} have no task in common")
    answered = held.filter((pl.col("held") == "answered") & (pl.col("held_b") == "answered"))
    if answered.is_empty():
        raise CompareError(
            f"runs {run_a} and {run_b} have no task both answered: "
            + (unpaired_note(unpaired, run_a, run_b) or "")
        )
    scores_a, scores_b = (s.join(answered, on=KEY, how="semi") for s in (scores_a, scores_b))
    for label, frame in (("A", scores_a), ("B", scores_b)):
        if frame.select(*KEY, "repeat").is_duplicated().any():
            raise CompareError(f"run {label}: a task is scored more than once")
    agents = any(s["episode"].any() for s in (scores_a, scores_b) if "episode" in s.columns)
    handoffs = any(
        (s["handoff_gaps"] > 0).any() for s in (scores_a, scores_b) if "handoff_gaps" in s.columns
    )
    has_repeats = [(s["task_repeats"].max() or 0) > 1 for s in (scores_a, scores_b)]  # type: ignore[operator]
    repeated = any(has_repeats)
    asked = any(
        s[c].any()
        for s in (scores_a, scores_b)
        for c in ("asks_next_step", "asks_confidence", "offers_escalate")
        if c in s.columns
    )
    compared = [
        m
        for m in MEASURES
        if (agents or m not in TRACE)
        and (handoffs or m not in HANDOFF)
        and (all(has_repeats) or m not in REPEATS)
        and (asked or (m not in ESCALATION and m not in CALIBRATION))
    ]

    def values(scores: pl.DataFrame) -> pl.DataFrame:
        columns: dict[str, pl.Expr] = {}
        for m in compared:
            if m.kind == "rate":
                assert m.event is not None
                columns[f"{m.name}__event"] = m.event.fill_null(False)
            else:
                assert m.score is not None
                columns[f"{m.name}__event"] = pl.col(m.score)
            if m.kind == "statistic":
                columns[f"{m.name}__label"] = pl.col(str(m.against))
            columns[f"{m.name}__within"] = m.tasks
        frame = scores.select(*KEY, **columns)
        return _per_task(frame, compared) if repeated else frame

    b = values(scores_b)
    pairs = values(scores_a).join(
        b.drop(c for c in b.columns if c.endswith("__within")), on=KEY, how="inner", suffix="_b"
    )
    rows = []
    families = sorted(pairs["family"].unique().to_list())
    left = dict(unpaired.group_by("family").len().iter_rows())
    for family in [*families, "all"]:
        subset = pairs if family == "all" else pairs.filter(pl.col("family") == family)
        out = unpaired.height if family == "all" else left.get(family, 0)
        for m in compared:
            within = subset.filter(pl.col(f"{m.name}__within"))
            shares = repeated and m.kind == "rate" and m not in REPEATS
            if m.kind == "rate" and not shares:
                row = _rate_row(within, f"{m.name}__event")
            elif m.kind == "statistic":
                row = _statistic_row(within, m)
            else:
                row = _mean_row(within, f"{m.name}__event", m.bounded)
            test = TESTS["exact" if row.pop("exact") else "mean" if shares else m.kind]
            rows.append({"metric": m.name, "family": family, "test": test, "left_out": out} | row)
    frame = pl.DataFrame(rows, schema=_SCHEMA)
    return frame.with_columns(
        run_a=pl.lit(run_a), run_b=pl.lit(run_b), label_a=pl.lit(label_a), label_b=pl.lit(label_b)
    ).select(COMPARE_KEYS)


def _per_task(frame: pl.DataFrame, compared: list[Any]) -> pl.DataFrame:
    """`frame` (one row per task and repeat, each metric's `__event` and `__within`) as one row
    per task: each event over the repeats it is counted on, as a mean (a rate's share; summed in
    sorted order, so in any row order the same), null where none is, and each `__within`
    whether any repeat is counted. A repeat metric's event, counted on one row per task, stays
    0/1 and boolean."""
    aggs: dict[str, pl.Expr] = {}
    for m in compared:
        event, within = pl.col(f"{m.name}__event"), pl.col(f"{m.name}__within")
        values = event.cast(pl.Float64).filter(within).drop_nulls().sort()
        share = pl.when(values.count() > 0).then(values.sum() / values.count())
        aggs[f"{m.name}__event"] = share.cast(pl.Boolean) if m in REPEATS else share
        if m.kind == "statistic":  # the task's outcome over its repeats, as its prediction is
            labels = pl.col(f"{m.name}__label").filter(within).drop_nulls().sort()
            aggs[f"{m.name}__label"] = pl.when(labels.count() > 0).then(
                labels.sum() / labels.count()
            )
        aggs[f"{m.name}__within"] = within.any()
    return frame.group_by(KEY).agg(**aggs)


def compare_to_reference(scores: pl.DataFrame, reference: str) -> pl.DataFrame:
    """`compare_scores` of run `reference` (as A) against every other run in `scores` (as B), in
    order of run name; runs with no task both answered are left out (`compare_scores` says
    why)."""
    base = scores.filter(pl.col("run") == reference)
    frames = []
    for run in sorted(scores["run"].unique().to_list()):
        if run == reference:
            continue
        try:
            frames.append(compare_scores(base, scores.filter(pl.col("run") == run)))
        except CompareError:
            continue
    if not frames:
        return pl.DataFrame(schema=_SCHEMA).select(COMPARE_KEYS)
    return pl.concat(frames)


def decimals(column: str) -> pl.Expr:
    """A float column as text to 3 decimals, null kept: the tables of comparisons and of
    `peb score --ci`."""
    return pl.col(column).map_elements(lambda v: f"{v:.3f}", return_dtype=pl.String)


def compare_table(frame: pl.DataFrame) -> pl.DataFrame:
    """A `compare_scores` frame as text, one row per row, for the CLI and the notebook: run B
    and its label (only when there are several), family, metric label, the test (`exact`,
    `score`, `sign-flip`), pairs, the tasks left out (only when a row left one out), the two
    values, the difference and its interval to 3 decimals, p (`format_p`), `sig` (`*` when
    significant) and the discordant counts (`-` for means). Read it with COMPARE_NOTE."""
    several = frame["run_b"].n_unique() > 1
    left_out = bool((frame["left_out"] > 0).any())
    return frame.select(
        *(["run_b", "label_b"] if several else []),
        "family",
        pl.col("metric").replace({m.name: m.label for m in METRICS}),
        pl.col("test").replace(_SHORT_TESTS),
        "n_pairs",
        *(["left_out"] if left_out else []),
        a=decimals("value_a").fill_null("-"),
        b=decimals("value_b").fill_null("-"),
        diff=decimals("difference").fill_null("-"),
        ci=pl.format("[{}, {}]", decimals("ci_low"), decimals("ci_high")).fill_null("-"),
        p=pl.col("p_value").map_elements(format_p, return_dtype=pl.String).fill_null("-"),
        sig=pl.when(pl.col("significant")).then(pl.lit("*")).otherwise(pl.lit("")),
        only_a=pl.col("only_a").cast(pl.String).fill_null("-"),
        only_b=pl.col("only_b").cast(pl.String).fill_null("-"),
    )


SETTING = ("system", "protocol", "tier", "interface", "disclosure", "contract", "followup",
           "max_steps")  # fmt: skip
"""What a run is besides its intervention (the row keys of run folders, and the system): two
runs that agree on these, one with an intervention and one without, are its paired test."""


def compare_interventions(scores: pl.DataFrame, reference: str = "none") -> pl.DataFrame:
    """Each intervention's run against the run of the same setting (`SETTING`) with the
    intervention `reference` (`none`: the system as it is), paired on the tasks both ran
    (`compare_scores`: A the reference's run, B the intervention's): a `compare_scores` frame
    with the setting's keys and the `intervention` of B before its columns, in order of setting
    and intervention. A run with no reference run beside it, or none in common task, is left
    out; scores without an `intervention` column compare nothing (an empty frame)."""
    keys = [k for k in SETTING if k in scores.columns]
    columns = [*keys, "intervention", *COMPARE_KEYS]
    schema = {**{k: scores.schema[k] for k in keys}, "intervention": pl.String(), **_SCHEMA}
    empty = pl.DataFrame(schema=schema).select(columns)
    if "intervention" not in scores.columns:
        return empty
    runs = scores.select("run", *keys, "intervention").unique(maintain_order=True).sort("run")
    frames = []
    for row in runs.filter(pl.col("intervention") != reference).iter_rows(named=True):
        same = pl.all_horizontal(
            *(pl.col(k).eq_missing(pl.lit(row[k], dtype=scores.schema[k])) for k in keys)
        )
        base = runs.filter(same & (pl.col("intervention") == reference))
        if base.is_empty():
            continue
        a = scores.filter(pl.col("run") == base["run"][0])
        b = scores.filter(pl.col("run") == row["run"])
        try:
            compared = compare_scores(a, b)
        except CompareError:
            continue
        frames.append(
            compared.with_columns(
                *(pl.lit(row[k], dtype=scores.schema[k]).alias(k) for k in keys),
                intervention=pl.lit(row["intervention"]),
            ).select(columns)
        )
    if not frames:
        return empty
    return pl.concat(frames).sort([*keys, "intervention"], maintain_order=True)
