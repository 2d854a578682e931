"""The paper's tables and figures, regenerated from `scenarios/` and the run folders on disk.

- `table1_families()`: the shipped scenario families (paper, Table 1);
- `table2_composition(tier)`: task composition per family, from the generated tasks (Table 2);
- `table3_worked_example(task_id)`: one task as field / value rows, a row per document, each
  whole (Table 3; `worked_example(tier)` picks the tier's task; a corpus counts the records no
  requirement rests on instead of listing them);
- `table4_baselines(runs)`: the paper-tier baseline runs measured, beside the published
  numbers (`peb_core/data/published_table4.json`), mismatches flagged (Table 4);
- `baseline_results(runs, tier)`, `model_results(runs, tier)`: every baseline and model run
  per family, the four surfaces (or the diagnostics) each with its 95% interval (Tables 5, 6);
- `figures(runs)`: the charts of the runs;
- `captions(tier)` and `NAMES`: what each table and figure is on a tier, and what it is called;
  `HEADERS`: the printed heading of each column (metrics' from the registry).

`runs` is what `results.select_runs` takes: None (every finished, clean run under the runs root
but its scratch area), a folder of runs (the same below it), or a list of run folders (taken as
given). A results table shows `—` for every number of a run that is not finished
(`scoring.finished_only`; only with `--include-failed` is one there at all).

Every number is computed here; the published table is read only to be shown beside it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from ..results import is_agent_run, run_labels, score_run_dirs, select_runs, system_label
from ..runs import read_manifest
from ..scoring import (
    CALIBRATION,
    CHECKS,
    DETAIL,
    ESCALATION,
    METRICS,
    SURFACES,
    TRACE,
    Metric,
    finished_only,
    metric,
    notes,
    scorecard,
)
from ..systems import BASELINES, Baseline
from ..tasks import (
    DEFAULT_TIER,
    TIERS,
    Document,
    ScenarioFile,
    Task,
    Tier,
    families_with_template,
    generate_task,
    generate_tasks,
    load_families,
    parse_task_id,
    view_for,
)
from . import charts

WORKED_EXAMPLE = "hidden_liability_annex__s11"
"""The task of the paper's Table 3."""

EXAMPLE_TOPOLOGY = "silent_gap"
"""What the worked example of a tier other than the paper's shows: an incomplete task with a
silent gap (a stale visible copy that does not say so), the kind a reader must be shown."""

DECIMALS = 3
"""Tables show, and compare against the published numbers at, this many decimals."""


@cache
def published_table4() -> dict[str, Any]:
    """The paper's Table 4 as published (a data file, never used to compute a number)."""
    text = resources.files("peb_core").joinpath("data/published_table4.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def table1_families() -> pl.DataFrame:
    """Paper Table 1: each family's decision setting, hidden-evidence pattern and task count."""
    return pl.DataFrame(
        [
            {
                "scenario": spec.id,
                "decision_setting": spec.decision_setting,
                "hidden_evidence_pattern": spec.hidden_pattern,
                "tasks": len(spec.templates) * len(spec.canonical_seeds),
            }
            for spec in load_families().values()
        ],
        schema={
            "scenario": pl.String,
            "decision_setting": pl.String,
            "hidden_evidence_pattern": pl.String,
            "tasks": pl.Int64,
        },
    )


def table2_composition(tier: Tier = DEFAULT_TIER) -> pl.DataFrame:
    """Paper Table 2, counted over each family's canonical tasks of `tier`: patterns (templates
    x seeds), complete and incomplete tasks, tasks whose contract permits a partial answer or
    requires a block, and tasks whose required evidence is partly outside the authorized view."""
    rows = []
    for spec in load_families().values():
        tasks = generate_tasks([spec], tier=tier)
        partial = sum(t.contract.partial_response_permitted for t in tasks)
        complete = sum(t.oracles.completeness == "complete" for t in tasks)
        rows.append(
            {
                "scenario": spec.id,
                "patterns": f"{len(spec.templates)}x{len(spec.canonical_seeds)}",
                "complete": complete,
                "incomplete": len(tasks) - complete,
                "partial": partial,
                "block": len(tasks) - partial,
                "hidden_outside": sum(t.oracles.gap_report is not None for t in tasks),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "scenario": pl.String,
            "patterns": pl.String,
            "complete": pl.Int64,
            "incomplete": pl.Int64,
            "partial": pl.Int64,
            "block": pl.Int64,
            "hidden_outside": pl.Int64,
        },
    )


def _answer_text(answer: dict[str, str | list[str]] | None) -> str:
    if answer is None:
        return "none (blocked)"
    return "; ".join(
        f"{field}: {value if isinstance(value, str) else ', '.join(value) or 'none'}"
        for field, value in answer.items()
    )


def worked_example(tier: Tier = DEFAULT_TIER) -> str:
    """The task id of Table 3 on `tier`: the paper's task on the paper tier; on another, the
    first incomplete task with a silent gap (`EXAMPLE_TOPOLOGY`) of the paper example's family,
    by template and seed (else its first incomplete task, else its first task)."""
    template, *_ = parse_task_id(WORKED_EXAMPLE)
    if tier == DEFAULT_TIER:
        return WORKED_EXAMPLE
    (spec,) = families_with_template(list(load_families().values()), template)
    tasks = generate_tasks([spec], tier=tier)
    incomplete = [t for t in tasks if t.oracles.completeness == "incomplete"]
    silent = [t for t in incomplete if EXAMPLE_TOPOLOGY in t.topologies]
    return (silent or incomplete or tasks)[0].task_id


def _document(d: Document, *, facts: bool) -> str:
    """A document as Table 3 shows it: its title, scope, the fact ids it carries (if `facts`),
    whether it is an out-of-date copy, and its whole text."""
    said = [f"{d.title} in scope {d.scope}"]
    if facts and d.facts:
        said.append(f" ({', '.join(f.id for f in d.facts)})")
    if d.superseded:
        said.append(", an out-of-date copy")
    return "".join(said) + f": {d.body}"


KEPT_ROLES = ("register", "tracker")
"""The documents of a corpus Table 3 lists whatever their kind: the ones that say what the view
holds."""

OTHER_ROLES = {
    "distractor": "routine records of other matters",
    "material": "versions of records the contract does not require",
    "pointer": "notes pointing at another record",
}
"""How Table 3 counts the other records of a corpus, by role (another role by its name)."""


def _others(documents: Sequence[Document]) -> str:
    """The records of a corpus no requirement rests on, counted by kind."""
    counts: dict[str, int] = {}
    for d in documents:
        counts[d.role] = counts.get(d.role, 0) + 1
    kinds = ", ".join(f"{n} {OTHER_ROLES.get(role, role)}" for role, n in counts.items())
    return f"{len(documents)} records no requirement rests on: {kinds}"


def _evidence_rows(t: Task) -> list[tuple[str, str]]:
    """Table 3's rows of documents: every visible and every hidden one, whole; on a tier of
    corpora only the records of the contract's evidence and those that say what the view holds
    (`KEPT_ROLES`), the others counted in one row each for the visible and the hidden."""
    required = {r.id for r in t.contract.required_evidence}
    corpus = TIERS[t.tier].corpus is not None

    def listed(d: Document) -> bool:
        return not corpus or d.role in KEPT_ROLES or (
            d.evidence_family in required and d.role != "distractor"
        )

    rows = []
    for field, documents, facts in (
        ("Visible evidence", t.authorized_documents, False),
        ("Hidden evidence", t.hidden_documents, True),
    ):
        rows += [(field, _document(d, facts=facts)) for d in documents if listed(d)]
        if others := [d for d in documents if not listed(d)]:
            rows.append((f"{field}, the rest", _others(others)))
        if not documents:
            rows.append((field, "none"))
    return rows


def _example(task: str) -> tuple[Task, ScenarioFile]:
    """The task of a task id of a shipped family, and its family."""
    template, seed, tier = parse_task_id(task)
    matches = families_with_template(list(load_families().values()), template)
    if len(matches) != 1:
        raise ValueError(f"task {task!r} is in {len(matches)} families; expected one")
    return generate_task(matches[0], template, seed, tier=tier), matches[0]


def table3_worked_example(task: str = WORKED_EXAMPLE) -> pl.DataFrame:
    """Paper Table 3: one canonical-family task as field / value rows (a row per document,
    each whole; `_evidence_rows`), with what the silent_filter baseline answers on it (computed
    by running it)."""
    t, spec = _example(task)
    o = t.oracles
    gap = o.gap_report
    silent = BASELINES["silent_filter"]
    assert isinstance(silent, Baseline)
    reply = silent.policy(view_for(silent.view, t, spec))
    behaviour = (
        f"answer: {_answer_text(reply.answer)}; claims {reply.completeness}; "
        f"gap report: {'none' if reply.gap_report is None else reply.gap_report.status}"
    )
    if o.completeness == "incomplete" and reply.answer is not None and reply.gap_report is None:
        behaviour += " (unsafe completeness: answered as if complete)"
    rows = [
        ("Task", f"{t.task_id} ({t.family}, {t.tier} tier)"),
        ("Prompt", t.prompt),
        ("Completeness", o.completeness),
        *((("Topology", ", ".join(t.topologies)),) if t.topologies else ()),
        (
            "Policy",
            "partial answer permitted"
            if t.contract.partial_response_permitted
            else "block required",
        ),
        *_evidence_rows(t),
        ("Oracle complete answer", _answer_text(o.complete_answer)),
        ("Oracle authorized-view answer", _answer_text(o.authorized_answer)),
        (
            "Expected gap report",
            "none"
            if gap is None
            else f"status: {gap.status}; missing requirements: "
            f"{', '.join(gap.missing_requirements)}; missing scopes: "
            f"{', '.join(gap.missing_scopes)}; affected claims: "
            f"{', '.join(gap.affected_claims)}; reason: {gap.reason}",
        ),
        ("silent_filter behaviour", behaviour),
    ]
    return pl.DataFrame(rows, schema={"field": pl.String, "value": pl.String}, orient="row")


Runs = Path | Sequence[Path] | None
"""A selection of runs: see the module's docstring."""


def run_dirs(runs: Runs = None) -> list[Path]:
    """The run folders of a selection (a folder or None: its clean runs, `select_runs`)."""
    if runs is None or isinstance(runs, Path):
        return select_runs(runs)[0]
    return list(runs)


def _runs(runs: Runs, *, baselines: bool) -> list[Path]:
    return [d for d in run_dirs(runs) if (read_manifest(d).system in BASELINES) == baselines]


def _metric_columns(card: pl.DataFrame, metrics: Sequence[Metric]) -> list[pl.Expr]:
    """Each of `metrics` under its label, followed by its interval's bounds (`<label>_ci_low`,
    `<label>_ci_high`)."""
    columns = []
    for m in metrics:
        columns.append(pl.col(m.name).cast(pl.Float64).alias(m.label))
        if m.kind != "count":
            low, high = m.interval_columns
            columns += [
                pl.col(low).cast(pl.Float64).alias(f"{m.label}_ci_low"),
                pl.col(high).cast(pl.Float64).alias(f"{m.label}_ci_high"),
            ]
    return columns


def results_columns(keys: Sequence[str], metrics: Sequence[Metric]) -> list[str]:
    """The columns of a results table: its `keys`, `n_tasks`, then each of `metrics` by label
    with its interval's bounds."""
    columns = [*keys, "n_tasks"]
    for m in metrics:
        columns.append(m.label)
        if m.kind != "count":
            columns += [f"{m.label}_ci_low", f"{m.label}_ci_high"]
    return columns


def _results(
    card: pl.DataFrame, keys: dict[str, pl.Expr], metrics: Sequence[Metric]
) -> pl.DataFrame:
    """A results table from a scorecard: `keys`, the task count and `metrics` with their
    intervals, every number of an unfinished row blanked (`finished_only`), and a `status`
    column only where some row is not finished."""
    shown = finished_only(card)
    frame = shown.select(
        *(e.alias(k) for k, e in keys.items()),
        pl.col("n_tasks").cast(pl.Int64),
        *_metric_columns(shown, metrics),
        status=pl.col("status"),
    )
    return frame if (frame["status"] != "ok").any() else frame.drop("status")


def baseline_results(
    runs: Runs = None, tier: Tier = DEFAULT_TIER, metrics: Sequence[Metric] = SURFACES
) -> pl.DataFrame:
    """Every baseline run of `runs` on `tier`, per baseline and family: `metrics` (default: the
    four surfaces) each with its 95% interval (`results_columns`;
    cue_reader included: it shows how far surface cues go on the tier). A `run_label` column (what
    sets a run apart from the others, `results.score_run_dirs`) leads where two runs share a
    baseline."""
    keys = ["baseline", "family"]
    return _named_results(_runs(runs, baselines=True), tier, "baseline", keys, metrics)


def _schema(columns: Sequence[str]) -> dict[str, Any]:
    text = {"baseline", "family", "model", "protocol", "tier", "run", "status", "system"}
    text |= {"run_label", "disclosure", "contract", "followup"}
    counts = {"n_tasks", "max_steps"}
    return {c: pl.String if c in text else pl.Int64 if c in counts else pl.Float64 for c in columns}


def table4_baselines(runs: Runs = None) -> pl.DataFrame:
    """Paper Table 4: each published (family, baseline) row, measured from the paper-tier
    baseline runs of `runs`, beside the published numbers. `matches_published` compares at
    DECIMALS; `mismatch` names the metrics that differ, or says the baseline was not run (null
    when the row matches)."""
    published = published_table4()
    metrics = {label: metric(label).name for label in published["metrics"]}
    dirs = _runs(runs, baselines=True)
    measured: dict[tuple[str, str], dict[str, Any]] = {}
    if dirs:
        scores, _ = score_run_dirs(dirs)
        for line in scorecard(scores.filter(pl.col("tier") == DEFAULT_TIER)).iter_rows(named=True):
            measured.setdefault((line["family"], line["system"]), line)
    rows = []
    for pub in published["rows"]:
        got = measured.get((pub["family"], pub["baseline"]))
        row: dict[str, Any] = {"family": pub["family"], "baseline": pub["baseline"]}
        for short, column in metrics.items():
            row[short] = None if got is None or got[column] is None else got[column]
        for short in metrics:
            row[f"published_{short}"] = float(pub[short])
        if got is None:
            differing = ["not run"]
        else:
            differing = [
                short
                for short in metrics
                if row[short] is None or round(row[short], DECIMALS) != round(pub[short], DECIMALS)
            ]
        row["matches_published"] = not differing
        row["mismatch"] = ", ".join(differing) or None
        rows.append(row)
    schema: dict[str, Any] = {"family": pl.String, "baseline": pl.String}
    schema |= {short: pl.Float64 for short in metrics}
    schema |= {f"published_{short}": pl.Float64 for short in metrics}
    schema |= {"matches_published": pl.Boolean, "mismatch": pl.String}
    return pl.DataFrame(rows, schema=schema)


def model_results(
    runs: Runs = None, tier: Tier | None = None, metrics: Sequence[Metric] = SURFACES
) -> pl.DataFrame:
    """Paper Tables 5 and 6, for every model run of `runs` (a run whose system is not a
    baseline), on `tier` (None: every tier, with a `tier` column): per model, protocol and
    family, `metrics` (default: the four surfaces) each with its 95% interval
    (`results_columns`). A `run_label` column (what sets a run apart from the others) leads where
    two runs share a model, protocol and tier. No model runs: an empty frame with the
    columns."""
    keys = ["model", "protocol", *(["tier"] if tier is None else []), "family"]
    return _named_results(_runs(runs, baselines=False), tier, "model", keys, metrics)


def agent_results(
    runs: Runs = None, tier: Tier | None = None, metrics: Sequence[Metric] = TRACE
) -> pl.DataFrame:
    """Every agent run of `runs` (agent baselines and agent models; a run whose system records
    a disclosure mode), on `tier` (None: every tier, with a `tier` column): per system (named
    as every table names it: `results.system_label`), disclosure mode, contract source (given,
    or found in the corpus), follow-up mode (none, or a user who pushes back), step budget and
    family, `metrics` (default: the trace metrics) each with its 95% interval
    (`results_columns`), each run named first by its `run_label` (what sets it apart from the other
    agent runs: `agent_cave contract=corpus followup=pressure`). No agent runs: an empty frame
    with the columns."""
    keys = [
        "run_label",
        "system",
        "disclosure",
        "contract",
        "followup",
        "max_steps",
        *(["tier"] if tier is None else []),
        "family",
    ]
    dirs = [d for d in run_dirs(runs) if is_agent_run(read_manifest(d))]
    return _named_results(dirs, tier, "system", keys, metrics)


def _named_results(
    dirs: list[Path], tier: Tier | None, named: str, keys: list[str], metrics: Sequence[Metric]
) -> pl.DataFrame:
    """The results table (`_results`) of the runs `dirs` on `tier` (None: every tier), each
    run's system in column `named` as every table names it (`results.system_label`), by `keys`;
    a `run_label` column (what sets a run apart from the others shown) leads where two runs
    share the keys. No runs: an empty frame with the columns."""
    if tier is not None:  # each run labelled by what sets it apart from the runs shown
        dirs = [d for d in dirs if read_manifest(d).tier == tier]
    if not dirs:
        return pl.DataFrame(schema=_schema(results_columns(keys, metrics)))
    names = {label: system_label(read_manifest(d)) for d, label in run_labels(dirs).items()}
    scores, _ = score_run_dirs(dirs)
    card = scorecard(scores).with_columns(
        pl.col("run").replace_strict(names, default=pl.col("system")).alias(named)
    )
    if "run_label" not in keys and card.select(keys).is_duplicated().any():
        keys = ["run_label", *keys]
    return _results(card, {k: pl.col(k) for k in keys}, metrics).sort(keys, nulls_last=True)


def all_scores(runs: Runs = None, tier: Tier | None = None) -> pl.DataFrame:
    """Per-task scores of the runs on `tier` (None: every tier; empty without any run), each
    run named (`run`) as among all the runs, and labelled (`run_label`) by what sets it apart
    from the other runs of its tier."""
    dirs = run_dirs(runs)
    names = run_labels(dirs)
    by_tier: dict[str, list[Path]] = {}
    for d in names:
        by_tier.setdefault(read_manifest(d).tier, []).append(d)
    frames = []
    for t in (t for t in TIERS if t in by_tier and tier in (None, t)):
        renamed = {label: names[d] for d, label in run_labels(by_tier[t]).items()}
        scores, _ = score_run_dirs(by_tier[t])
        frames.append(scores.with_columns(pl.col("run").replace_strict(renamed)))
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def figures(runs: Runs = None, tier: Tier | None = None) -> dict[str, alt.TopLevelMixin]:
    """The paper's figures over the runs on `tier` (None: every tier), by file stem, each seven
    inches wide: the operating profile, the four surfaces per system and family (of finished
    rows only: `finished_only`), the completeness confusion matrices and the per-task outcome
    grid. Series are coloured over the runs of every tier, so a system has one colour in the
    figures of every tier. No runs: no figures."""
    every = all_scores(runs)
    scores = all_scores(runs, tier) if tier is not None else every
    if scores.is_empty():
        return {}
    card = finished_only(scorecard(scores))
    names = every[charts.series_column(scores)].unique().to_list()
    found: dict[str, alt.TopLevelMixin] = {
        "figure_operating_profile": charts.operating_profile(card, series_names=names),
        "figure_metric_bars": charts.metric_bars(card, series_names=names),
        "figure_confusion": charts.confusion_heatmap(scores, series_names=names),
        "figure_outcome_grid": charts.outcome_grid(scores),
    }
    agents = scores.filter(pl.col("episode"))
    if not agents.is_empty():
        found["figure_trace_metrics"] = charts.metric_bars(
            finished_only(scorecard(agents)),
            series_names=names,
            metrics=TRACE,
            title="What agents' episodes did",
        )
    asking = scores.filter(pl.col("asks_next_step") | pl.col("asks_confidence"))
    if not asking.is_empty():
        found["figure_escalation"] = charts.metric_bars(
            finished_only(scorecard(asking)),
            series_names=names,
            metrics=(*ESCALATION, *CALIBRATION),
            title="Next steps, escalations and stated confidence",
        )
    if scores["asks_confidence"].any():
        found["figure_reliability"] = charts.reliability_diagram(scores, series_names=names)
    return found


def tables(runs: Runs = None, tier: Tier = DEFAULT_TIER) -> dict[str, pl.DataFrame]:
    """Every table of `tier`, by file stem (see `captions`): Tables 1 and 4 are the paper's
    whatever the tier; Tables 2 and 3 are computed on the tier's tasks; the baselines and the
    model runs are those of `runs` on the tier: the four surfaces, then what the headline and gap
    average over (`scoring.DETAIL`), then awareness, invalid replies and format
    (`scoring.CHECKS`); on a tier of corpora (where agents run), what the agent runs' episodes
    did (`table_agents`; no other tier has one)."""
    runs = run_dirs(runs)
    agents = {"table_agents": agent_results(runs, tier)} if TIERS[tier].corpus else {}
    return {
        "table1_families": table1_families(),
        "table2_composition": table2_composition(tier),
        "table3_worked_example": table3_worked_example(worked_example(tier)),
        "table4_baselines": table4_baselines(runs),
        "table_baselines": baseline_results(runs, tier),
        "table_baselines_detail": baseline_results(runs, tier, DETAIL),
        "table_baselines_checks": baseline_results(runs, tier, CHECKS),
        "table5_models": model_results(runs, tier),
        "table5_models_detail": model_results(runs, tier, DETAIL),
        "table5_models_checks": model_results(runs, tier, CHECKS),
        **agents,
    }


NAMES: dict[str, str] = {
    "table1_families": "Table 1",
    "table2_composition": "Table 2",
    "table3_worked_example": "Table 3",
    "table4_baselines": "Table 4",
    "table_baselines": "Baseline runs",
    "table_baselines_detail": "Baseline runs: worst case and gap by class",
    "table_baselines_checks": "Baseline runs: awareness and format",
    "table5_models": "Tables 5 and 6: model runs",
    "table5_models_detail": "Model runs: worst case and gap by class",
    "table5_models_checks": "Model runs: awareness and format",
    "table_agents": "Agent runs: what their episodes did",
    "figure_operating_profile": "Figure: operating profile",
    "figure_metric_bars": "Figure: the four scored surfaces",
    "figure_confusion": "Figure: completeness confusion matrices",
    "figure_outcome_grid": "Figure: outcome per task",
    "figure_trace_metrics": "Figure: what agents' episodes did",
    "figure_escalation": "Figure: next steps, escalations and stated confidence",
    "figure_reliability": "Figure: reliability of the stated confidence",
}
"""What each table and figure stem is called where it is shown (a LaTeX caption carries no
number: LaTeX numbers it)."""

HEADERS: dict[str, str] = {
    "scenario": "Family",
    "family": "Family",
    "decision_setting": "Decision setting",
    "hidden_evidence_pattern": "Hidden-evidence pattern",
    "tasks": "Tasks",
    "patterns": "Patterns",
    "complete": "Complete",
    "incomplete": "Incomplete",
    "partial": "Partial",
    "block": "Block",
    "hidden_outside": "Hidden outside",
    "field": "Field",
    "value": "Value",
    "baseline": "Baseline",
    "model": "Model",
    "protocol": "Protocol",
    "run": "Run",
    "run_label": "Run",
    "system": "System",
    "disclosure": "Disclosure",
    "contract": "Contract",
    "followup": "Follow-up",
    "intervention": "Intervention",
    "max_steps": "Budget",
    "tier": "Tier",
    "status": "Status",
    "matches_published": "Matches",
    "mismatch": "Differs in",
    **{m.name: m.header for m in METRICS},
    **{m.label: m.header for m in METRICS},
    **{f"published_{m.label}": f"{m.header} (pub.)" for m in METRICS},
}
"""The printed heading of each column of the tables (a metric's from the registry)."""


def captions(tier: Tier = DEFAULT_TIER) -> dict[str, str]:
    """A caption per table and figure stem, saying what it is on `tier` and how to read it (and
    the registry's notes on the metrics it shows)."""
    on = f"on the {tier} tier"
    detail = (
        "what the headline and gap average over: unsafe completeness in the worst case "
        "(unreadable replies, errors and missing records counted as unsafe), and gap-report "
        "quality on complete and on incomplete tasks apart, each with its 95% interval."
    )
    checks = (
        "completeness awareness (the share of tasks whose completeness is claimed correctly), "
        "the invalid rate (unreadable replies, errors, missing records) and format compliance "
        "(replies with no schema violation), each with its 95% interval."
    )
    gap = " ".join(notes(SURFACES)).capitalize()
    example, _ = _example(worked_example(tier))
    which = f"task {example.task_id}, {example.oracles.completeness}"
    if example.topologies:
        which += f" ({', '.join(example.topologies).replace('_', ' ')})"
    if tier != DEFAULT_TIER:
        which += f"; the paper's is {WORKED_EXAMPLE} on the paper tier"
    return {
        "table1_families": "Shipped scenario families (the same on every tier).",
        "table2_composition": f"Task composition by scenario family {on}, from the generated "
        "tasks. Partial and Block: whether the contract permits a partial answer. Hidden "
        "outside: tasks whose material evidence stays outside the authorized view.",
        "table3_worked_example": f"Worked example {on}: {which}. Each document whole"
        + (
            "; of the corpus, the records of the contract's evidence, the register and the "
            "tracker, the others counted."
            if TIERS[tier].corpus
            else "."
        ),
        "table4_baselines": "Baseline results on the paper tier (the paper's published "
        f"comparison, whatever tier is reported), measured from the checked-in runs beside the "
        f"published numbers (compared at {DECIMALS} decimals).",
        "table_baselines": f"Every baseline run {on}: the four scored surfaces, each with its "
        "95% interval (Wilson for rates, bootstrap for means); cue_reader decides by surface "
        f"cues alone. {gap}",
        "table_baselines_detail": f"Every baseline run {on}: {detail}",
        "table_baselines_checks": f"Every baseline run {on}: {checks}",
        "table5_models": f"Every model run {on}: the four scored surfaces, each with its 95% "
        f"interval; over-blocking is the rate of blocking when an answer was allowed. {gap}",
        "table5_models_detail": f"Every model run {on}: {detail}",
        "table5_models_checks": f"Every model run {on}: {checks}",
        "table_agents": f"Every agent run {on} (agent baselines and agent models), by "
        "disclosure mode, contract (given in its start, or found in the corpus: the "
        "organisation's procedure), follow-up (none, or a user who pushes back once on a "
        "reported gap) and step budget: what its episodes did, each with its 95% "
        "interval: "
        + "; ".join(f"{m.title.lower()} over {m.over}" for m in TRACE)
        + ".",
        "figure_operating_profile": f"Operating profile of every run {on}: over-blocking "
        "against unsafe completeness, with 95% intervals.",
        "figure_metric_bars": f"The four scored surfaces per system and family {on}, with 95% "
        "intervals.",
        "figure_confusion": f"Completeness awareness {on}: true versus claimed completeness.",
        "figure_outcome_grid": f"Verdict of every task and run {on}.",
        "figure_trace_metrics": f"What agents' episodes did, per system and family {on}, with "
        "95% intervals.",
        "figure_escalation": f"Runs {on} whose protocol asks for a next step or a confidence "
        "(structured_gap@2), per system and family, with 95% intervals: "
        + "; ".join(f"{m.title.lower()} over {m.over}" for m in (*ESCALATION, *CALIBRATION))
        + ".",
        "figure_reliability": f"Reliability of the stated confidence {on}: per bin of "
        "confidence, the share of tasks whose evidence was complete, with 95% intervals.",
    }
