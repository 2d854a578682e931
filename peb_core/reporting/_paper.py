"""The paper's tables and figures, regenerated from `scenarios/` and the run folders on disk.

- `table1_families()`: the shipped scenario families (paper, Table 1);
- `table2_composition()`: task composition per family, from the generated tasks (Table 2);
- `table3_worked_example()`: one task as field / value rows (Table 3);
- `table4_baselines(runs)`: the paper-tier baseline runs measured, beside the published
  numbers (`peb_core/data/published_table4.json`), mismatches flagged (Table 4);
- `model_results(runs)`: every model run per family and protocol (Tables 5 and 6);
- `figures(runs)`: the charts of the runs.

`runs` is what `results.select_runs` takes: None (every finished, clean run under the runs root
but its scratch area), a folder of runs (the same below it), or a list of run folders (taken as
given).

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

from ..results import is_agent_run, run_labels, score_run_dirs, select_runs
from ..runs import read_manifest
from ..scoring import HEADLINE, SURFACES, TRACE, metric, scorecard
from ..systems import BASELINES, Baseline
from ..tasks import (
    Tier,
    families_with_template,
    generate_task,
    generate_tasks,
    load_families,
    parse_task_id,
    view_for,
)
from . import _charts as charts

WORKED_EXAMPLE = "hidden_liability_annex__s11"
"""The task of the paper's Table 3."""

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


def table2_composition(tier: Tier = "paper") -> pl.DataFrame:
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


def table3_worked_example(task_id: str = WORKED_EXAMPLE) -> pl.DataFrame:
    """Paper Table 3: one canonical-family task as field / value rows, with what the
    silent_filter baseline answers on it (computed by running it)."""
    template, seed, tier = parse_task_id(task_id)
    matches = families_with_template(list(load_families().values()), template)
    if len(matches) != 1:
        raise ValueError(f"task {task_id!r} is in {len(matches)} families; expected one")
    spec = matches[0]
    task = generate_task(spec, template, seed, tier=tier)
    o = task.oracles
    gap = o.gap_report
    visible = " ".join(f"{d.title}: {d.body}" for d in task.authorized_documents)
    hidden = " ".join(
        f"{d.title} in scope {d.scope} ({', '.join(f.id for f in d.facts)}): {d.body}"
        for d in task.hidden_documents
    )
    silent = BASELINES["silent_filter"]
    assert isinstance(silent, Baseline)
    reply = silent.policy(view_for(silent.view, task, spec))
    behaviour = (
        f"answer: {_answer_text(reply.answer)}; claims {reply.completeness}; "
        f"gap report: {'none' if reply.gap_report is None else reply.gap_report.status}"
    )
    if o.completeness == "incomplete" and reply.answer is not None and reply.gap_report is None:
        behaviour += " (unsafe completeness: answered as if complete)"
    rows = [
        ("Task", f"{task.task_id} ({task.family})"),
        ("Prompt", task.prompt),
        ("Completeness", o.completeness),
        (
            "Policy",
            "partial answer permitted"
            if task.contract.partial_response_permitted
            else "block required",
        ),
        ("Authorized visible evidence", visible),
        ("Hidden evidence outside scope", hidden or "none (the material document is visible)"),
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


BASELINE_METRICS = ("unsafe", "unsafe_max", "answer", "gap", "over_block", "aware", "format")
"""The columns (metric labels) of `baseline_results`."""


def baseline_results(runs: Runs = None, tier: Tier = "paper") -> pl.DataFrame:
    """Every baseline run of `runs` on `tier`, per baseline and family: the four surfaces, the
    worst case, completeness awareness and format compliance (cue_reader included: it shows how
    far surface cues go on the tier)."""
    columns: dict[str, Any] = {"baseline": pl.String, "family": pl.String, "n_tasks": pl.Int64}
    columns |= {label: pl.Float64 for label in BASELINE_METRICS}
    dirs = _runs(runs, baselines=True)
    if not dirs:
        return pl.DataFrame(schema=columns)
    scores, _ = score_run_dirs(dirs)
    card = scorecard(scores.filter(pl.col("tier") == tier))
    return (
        card.rename({metric(label).name: label for label in BASELINE_METRICS})
        .with_columns(baseline=pl.col("system"))
        .select(pl.col(name).cast(dtype) for name, dtype in columns.items())
        .sort("baseline", "family")
    )


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
        for line in scorecard(scores.filter(pl.col("tier") == "paper")).iter_rows(named=True):
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


MODEL_METRICS = tuple(dict.fromkeys((*SURFACES, *HEADLINE)))
"""The metrics of `model_results`: the four surfaces, the worst case and format compliance."""
MODEL_COLUMNS: dict[str, Any] = {
    "run": pl.String,
    "model": pl.String,
    "protocol": pl.String,
    "tier": pl.String,
    "family": pl.String,
    "n_tasks": pl.Int64,
    "n_incomplete": pl.Int64,
    **{m.label: pl.Float64 for m in MODEL_METRICS},
    "invalid": pl.Float64,
}
"""The columns of `model_results`."""


def model_results(runs: Runs = None, tier: Tier | None = None) -> pl.DataFrame:
    """Paper Tables 5 and 6, for every model run of `runs` (a run whose system is not a
    baseline), on `tier` (None: every tier): per run, family, protocol and tier, the four
    surfaces (unsafe completeness, answer correctness, gap-report quality, over-blocking), the
    worst-case unsafe rate, format compliance and the invalid rate. No model runs: an empty
    frame with the same columns."""
    dirs = _runs(runs, baselines=False)
    if not dirs:
        return pl.DataFrame(schema=MODEL_COLUMNS)
    models = {
        label: str(read_manifest(d).config.get("model", read_manifest(d).system))
        for d, label in run_labels(dirs).items()
    }
    scores, _ = score_run_dirs(dirs)
    if tier is not None:
        scores = scores.filter(pl.col("tier") == tier)
    card = scorecard(scores)
    return (
        card.with_columns(model=pl.col("run").replace_strict(models, default=pl.col("system")))
        .rename({m.name: m.label for m in (*MODEL_METRICS, metric("invalid"))})
        .select(pl.col(name).cast(dtype) for name, dtype in MODEL_COLUMNS.items())
        .sort("model", "protocol", "tier", "family", "run")
    )


AGENT_METRICS = (*(metric(n) for n in ("unsafe", "unsafe_max", "answer", "gap")), *TRACE)
"""The metrics of `agent_results`: the headline and its worst case, answer correctness and
gap-report quality, then the trace metrics."""
AGENT_COLUMNS: dict[str, Any] = {
    "run": pl.String,
    "system": pl.String,
    "disclosure": pl.String,
    "max_steps": pl.Int64,
    "tier": pl.String,
    "family": pl.String,
    "n_tasks": pl.Int64,
    **{m.label: pl.Float64 for m in AGENT_METRICS},
}
"""The columns of `agent_results`."""


def agent_results(runs: Runs = None, tier: Tier | None = None) -> pl.DataFrame:
    """Every agent run of `runs` (agent baselines and agent models) on `tier` (None: every
    tier), per run and family: its disclosure mode and step budget, the headline and its worst
    case, answer correctness and gap-report quality, and the trace metrics (evidence coverage,
    hidden-id probes, steps, tool errors, episodes without a submit, stale reliance). No agent
    run: an empty frame with the same columns."""
    dirs = [d for d in run_dirs(runs) if is_agent_run(read_manifest(d))]
    if not dirs:
        return pl.DataFrame(schema=AGENT_COLUMNS)
    scores, _ = score_run_dirs(dirs)
    if tier is not None:
        scores = scores.filter(pl.col("tier") == tier)
    return (
        scorecard(scores)
        .rename({m.name: m.label for m in AGENT_METRICS})
        .select(pl.col(name).cast(dtype) for name, dtype in AGENT_COLUMNS.items())
        .sort("system", "disclosure", "tier", "family", "run")
    )


def all_scores(runs: Runs = None, tier: Tier | None = None) -> pl.DataFrame:
    """Per-task scores of the runs on `tier` (None: every tier; empty without any run)."""
    dirs = run_dirs(runs)
    if not dirs:
        return pl.DataFrame()
    scores, _ = score_run_dirs(dirs)
    return scores if tier is None else scores.filter(pl.col("tier") == tier)


def figures(runs: Runs = None, tier: Tier | None = None) -> dict[str, alt.TopLevelMixin]:
    """The paper's figures over the runs on `tier` (None: every tier), by file stem, each seven
    inches wide: the operating profile, the four surfaces per system and family, the
    completeness confusion matrices and the per-task outcome grid. Series are coloured over the
    runs of every tier, so a system has one colour in the figures of every tier. No runs: no
    figures."""
    every = all_scores(runs)
    scores = every if tier is None or every.is_empty() else every.filter(pl.col("tier") == tier)
    if scores.is_empty():
        return {}
    card = scorecard(scores)
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
            scorecard(agents), series_names=names, metrics=TRACE, title="What agents' episodes did"
        )
    return found


def tables(runs: Runs = None, tier: Tier = "paper") -> dict[str, pl.DataFrame]:
    """Every table of `tier`, by file stem (see CAPTIONS): Tables 1 and 4 are the paper's
    whatever the tier; Tables 2 and 3 are computed on the tier's tasks; the baselines and the
    model runs are those of `runs` on the tier."""
    runs = run_dirs(runs)
    return {
        "table1_families": table1_families(),
        "table2_composition": table2_composition(tier),
        "table3_worked_example": table3_worked_example(
            WORKED_EXAMPLE if tier == "paper" else WORKED_EXAMPLE.replace("__s", f"__{tier}__s")
        ),
        "table4_baselines": table4_baselines(runs),
        "table_baselines": baseline_results(runs, tier),
        "table5_models": model_results(runs, tier),
        "table_agents": agent_results(runs, tier),
    }


CAPTIONS: dict[str, str] = {
    "table1_families": "Table 1: Shipped scenario families.",
    "table2_composition": "Table 2: Task composition by scenario family, from the generated "
    "tasks. Partial and block: whether the contract permits a partial answer. Hidden-outside: "
    "tasks whose material evidence stays outside the authorized view.",
    "table3_worked_example": f"Table 3: Worked example, task {WORKED_EXAMPLE} (on the hard "
    "tier, its hard instance).",
    "table4_baselines": "Table 4: Baseline results measured from the checked-in runs, beside "
    "the published numbers (compared at 3 decimals).",
    "table_baselines": "Every baseline run on the tier: aware is completeness awareness (the "
    "share of tasks whose completeness is claimed correctly), format the share of "
    "format-compliant replies; cue_reader decides by surface cues alone.",
    "table5_models": "Tables 5 and 6: Every model run on disk. over_block: the rate of "
    "blocking when an answer was allowed; unsafe_max: unsafe completeness counting unreadable "
    "replies and errors as unsafe; format: the share of format-compliant replies.",
    "table_agents": "Every agent run on the tier, by disclosure mode: unsafe completeness, "
    "answer correctness, and what its episodes did: coverage (the share of the required "
    "records in view it opened), probes (opens of hidden ids), steps, tool errors, no_submit "
    "(episodes without a submit) and stale (answers following an out-of-date copy).",
    "figure_operating_profile": "Operating profile of every run: over-blocking against unsafe "
    "completeness.",
    "figure_metric_bars": "The four scored surfaces per system and family.",
    "figure_confusion": "Completeness awareness: true versus claimed completeness.",
    "figure_outcome_grid": "Verdict of every task and run.",
    "figure_trace_metrics": "What agents' episodes did, per system and family: the trace metrics.",
}
"""A caption per table and figure stem."""
