"""The intervention study in the paper's output (docs/benchmark.md §11): where the selected runs
hold runs with an intervention, the frontier they trace, as a table (`intervention_results`)
and a figure (`intervention_figure`), each run pooled over its families.

- `frontier_card(scores)`, `frontier_table(card)`: the same from scores in hand (a notebook's);
- `intervention_results(runs, tier)`: per system (as every table names it), whatever else sets
  the study's runs apart (protocol, interface, disclosure, contract, follow-up, budget: only
  where they differ) and intervention (`none` among them), unsafe completeness, its worst case,
  over-blocking, answer correctness, gap-report quality and awareness, each with its 95%
  interval;
- `intervention_figure(runs, tier)`: `charts.intervention_frontier` of the same rows.
Neither exists for a selection without an intervention (every earlier report is unchanged)."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import polars as pl

from ..interventions import DEFAULT_INTERVENTION
from ..results import run_labels, score_run_dirs, system_label, with_intervention
from ..runs import read_manifest
from ..scoring import RUN_FOLDER_KEYS, finished_only, metric, scorecard
from ..tasks import Tier
from . import charts
from ._paper import Runs, _results, run_dirs

FRONTIER = tuple(
    metric(name)
    for name in (
        "unsafe_completeness_rate",
        "unsafe_completeness_upper",
        "blocked_when_safe_to_answer_rate",
        "answer_correctness",
        "gap_report_quality",
        "completeness_accuracy",
    )
)
"""What the frontier table shows of each run, each with its interval."""


def frontier_card(scores: pl.DataFrame) -> pl.DataFrame:
    """The scorecard of per-task scores with each run pooled over its families (one row per
    run, `family` `all`), its `intervention` `none` where it has none; empty where no run of
    `scores` has an intervention."""
    if scores.is_empty():
        return pl.DataFrame()
    scores = with_intervention(scores)
    if (scores["intervention"] == DEFAULT_INTERVENTION).all():
        return pl.DataFrame()
    pooled = scores.with_columns(
        task_id=pl.format("{}/{}", "family", "task_id"), family=pl.lit("all")
    )
    return scorecard(pooled)


def _study(runs: Runs, tier: Tier | None) -> pl.DataFrame:
    """`frontier_card` of the selected runs on `tier`, each run's system named as every table
    names it (`results.system_label`)."""
    dirs: list[Path] = run_dirs(runs)
    if not dirs:
        return pl.DataFrame()
    scores, _ = score_run_dirs(dirs)
    if tier is not None:
        scores = scores.filter(pl.col("tier") == tier)
    card = frontier_card(scores)
    if card.is_empty():
        return card
    names = {label: system_label(read_manifest(d)) for d, label in run_labels(dirs).items()}
    return card.with_columns(
        pl.col("run").replace_strict(names, default=pl.col("system")).alias("system")
    )


def _keys(card: pl.DataFrame) -> list[str]:
    """The table's keys: the system, what else sets the runs apart, the intervention."""
    varying = [
        k
        for k in RUN_FOLDER_KEYS
        if k not in ("intervention", "run_label") and k in card.columns and card[k].n_unique() > 1
    ]
    return ["system", *varying, "intervention"]


def frontier_table(card: pl.DataFrame) -> pl.DataFrame:
    """The frontier as a table, from a `frontier_card`: one row per run (see the module
    docstring), sorted by system and what else sets the runs apart, then the intervention
    (`none` first)."""
    if card.is_empty():
        return pl.DataFrame()
    keys = _keys(card)
    frame = _results(card, {k: pl.col(k) for k in keys}, FRONTIER)
    first = pl.col("intervention") != DEFAULT_INTERVENTION
    return frame.sort([*keys[:-1], first, "intervention"])


def intervention_results(runs: Runs = None, tier: Tier | None = None) -> pl.DataFrame:
    """The frontier of the selected runs on `tier` as a table (`frontier_table`); empty (no
    columns) where no run of the selection has an intervention."""
    return frontier_table(_study(runs, tier))


def intervention_figure(runs: Runs = None, tier: Tier | None = None) -> alt.FacetChart | None:
    """The frontier as a figure (`charts.intervention_frontier`), of finished runs only; None
    where no run of the selection has an intervention."""
    card = _study(runs, tier)
    if card.is_empty():
        return None
    return charts.intervention_frontier(finished_only(card))


NAMES: dict[str, str] = {
    "table_interventions": "Interventions: the frontier",
    "figure_interventions": "Figure: the frontier of interventions",
}
"""What the study's table and figure are called where they are shown."""


def captions(tier: Tier | None = None) -> dict[str, str]:
    """A caption for the study's table and figure, saying the tier they are on."""
    on = "on every tier" if tier is None else f"on the {tier} tier"
    return {
        "table_interventions": f"The intervention study {on}: each system's run with each "
        "intervention (none among them), pooled over its families: unsafe completeness, its "
        "worst case, over-blocking, answer correctness, gap-report quality and awareness, each "
        "with its 95% interval (Wilson for rates, bootstrap for means).",
        "figure_interventions": f"The frontier of interventions {on}: over-blocking against "
        "unsafe completeness and against answer correctness, per system and intervention, with "
        "95% intervals.",
    }
