"""Which runs a notebook offers, shows and charts: one label per run folder for every picker and
table of a page, the runs and the tier a page opens on (the newest), the picks kept when runs
appear and the tiers shown when runs are picked, the scores of the picked runs under those
labels (and which were left out, and why), and what is said of rows that are not finished
numbers or hidden by the families and tiers shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..._markdown import markdown_code, markdown_text
from ...results import discover_runs, run_labels, score_readable
from ...runs import SWEEP, RunError, read_manifest, run_status, sweep_runs
from ...scoring import (
    REPEATS,
    compare_table,
    compare_to_reference,
    finished_scores,
    metric_differences,
)
from ...tasks import TIERS


def run_label(run_dir: Path, root: Path) -> str:
    """A run folder's label on a page: its path below `root` (`baselines/oracle`), or its whole
    path if it is elsewhere."""
    return run_dir.relative_to(root).as_posix() if run_dir.is_relative_to(root) else str(run_dir)


def run_options(root: Path, dirs: Sequence[Path] | None = None) -> dict[str, Path]:
    """Run folders by label (`run_label`), in order: `dirs`, or every run below `root` (none if
    `root` is not a folder)."""
    if dirs is None:
        dirs = discover_runs(root) if root.is_dir() else []
    return {run_label(d, root): d for d in dirs}


def sweep_options(root: Path) -> dict[str, Path]:
    """Each sweep's folder below `root` (one holding `runs.SWEEP`, as `peb sweep` writes it) by
    its path under `root`, sorted; none when `root` is not a folder."""
    if not root.is_dir():
        return {}
    found = sorted(p.parent for p in root.rglob(SWEEP))
    return {d.relative_to(root).as_posix(): d for d in found}


def sweep_picks(options: Mapping[str, Path], sweep: Path) -> list[str]:
    """The labels among `options` of the runs the sweep in `sweep` lists, in option order (a
    sweep's folder read as one table)."""
    listed = {d.resolve() for d in sweep_runs(sweep)}
    return [label for label, d in options.items() if d.resolve() in listed]


def keep_picks(options: Sequence[str], known: Sequence[str], picked: Sequence[str]) -> list[str]:
    """The runs picked once the runs below the root changed: those picked before that are still
    there, and every run that is new (not among `known`, the options before), in option order."""
    kept, before = set(picked), set(known)
    return [o for o in options if o in kept or o not in before]


NEWEST_RUNS = 8
"""The most runs a page opens on."""


def _started(options: Mapping[str, Path]) -> dict[str, tuple[str, str]]:
    """(when it started, its tier) of each run whose manifest can be read, by label."""
    found = {}
    for label, run_dir in options.items():
        try:
            manifest = read_manifest(run_dir)
        except RunError:
            continue
        found[label] = (manifest.started_at, manifest.tier)
    return found


def newest_runs(options: Mapping[str, Path], most: int = NEWEST_RUNS) -> list[str]:
    """The runs a page opens on (the workbench, compare): the `most` newest of the newest
    run's tier, by when each started (so the runs just made, not every run on disk), in
    option order; none when no run can be read."""
    started = _started(options)
    if not started:
        return []
    _, tier = max(started.values())
    newest = sorted((s for s in started.items() if s[1][1] == tier), key=lambda s: s[1])
    picked = {label for label, _ in newest[-most:]}
    return [label for label in options if label in picked]


def run_tiers(options: Mapping[str, Path], picked: Sequence[str]) -> list[str]:
    """The tiers of the `picked` runs (labels of `options`), in registry order."""
    tiers = {tier for label, (_, tier) in _started(options).items() if label in picked}
    return [t for t in TIERS if t in tiers]


@dataclass(frozen=True)
class PickedScores:
    """What the runs picked on a page score: the per-task scores of those that could be read,
    each run's `run` column its label (None when none was picked or none could be read), the
    warnings met, and one line (Markdown) per picked run left out, naming it and why."""

    scores: pl.DataFrame | None
    warnings: list[str]
    left_out: list[str]


def score_runs(options: Mapping[str, Path], picked: Sequence[str]) -> PickedScores:
    """The scores of the `picked` runs (labels of `options`); a run that cannot be read or
    scored is left out, saying why, and hides no other (`results.score_readable`). Unchanged
    runs are not rescored."""
    dirs = [options[label] for label in picked]
    if not dirs:
        return PickedScores(None, [], [])
    read = score_readable(dirs)
    left_out = [
        f"{markdown_code(p)}: left out, it cannot be read: {markdown_text(why)}"
        for p in picked
        if (why := read.left_out.get(options[p])) is not None
    ]
    if read.scores is None:
        return PickedScores(None, read.warnings, left_out)
    by_dir = run_labels(dirs)
    label = {by_dir[options[p]]: p for p in picked if options[p] in by_dir}
    scores = read.scores.with_columns(pl.col("run").replace_strict(label))
    return PickedScores(scores, read.warnings, left_out)


def shown_tiers(
    options: Mapping[str, Path], known: Sequence[str], tiers: Sequence[str]
) -> list[str]:
    """The tiers a page shows: those picked to show (`tiers`), and the tier of every run
    among `options` that is new since the runs `known` (new runs are picked, their tier shown);
    in registry order."""
    new = [label for label in options if label not in known]
    shown = {*tiers, *run_tiers(options, new)}
    return [t for t in TIERS if t in shown]


def tiers_on_pick(
    options: Mapping[str, Path], before: Sequence[str], picked: Sequence[str], tiers: Sequence[str]
) -> list[str]:
    """The tiers shown once the runs picked change from `before` to `picked`: those shown
    (`tiers`), and the tier of each run newly picked, so a run picked is never hidden by the
    tiers shown; in registry order."""
    new = [p for p in picked if p not in before]
    shown = {*tiers, *run_tiers(options, new)}
    return [t for t in TIERS if t in shown]


def hidden_note(scores: pl.DataFrame, families: Sequence[str], tiers: Sequence[str]) -> str | None:
    """One line (Markdown) when the families and tiers shown hide every row of the runs'
    `scores`: which families and tiers the runs hold; None when some row is shown."""
    shown = scores["family"].is_in(list(families)) & scores["tier"].is_in(list(tiers))
    if scores.is_empty() or shown.any():
        return None
    held = {
        name: ", ".join(map(markdown_code, scores[name].unique(maintain_order=True).to_list()))
        for name in ("family", "tier")
    }
    return (
        "The families and tiers shown hide every row of the runs picked: they hold families "
        f"{held['family']} on tiers {held['tier']}. Pick those under Families shown and Tiers "
        "shown."
    )


def unfinished_notes(card: pl.DataFrame, options: Mapping[str, Path]) -> list[str]:
    """One line (Markdown) per run with a scorecard row that is not a finished number (`status`
    not `ok`): its label and what its folder holds now."""
    runs = card.filter(pl.col("status") != "ok")["run"].unique(maintain_order=True)
    return [
        f"{markdown_code(run)}: {markdown_text(run_status(options[run]).summary())}" for run in runs
    ]


def finished(card: pl.DataFrame, scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the charts draw: the scorecard rows that are finished numbers (`status` `ok`), and
    their per-task scores (`scoring.finished_scores`)."""
    return card.filter(pl.col("status") == "ok"), finished_scores(scores, card)


def has_repeats(card: pl.DataFrame) -> bool:
    """Whether a scorecard has a row of a run with K > 1 repeats (`peb run --repeats`)."""
    return "repeats" in card.columns and card.select((pl.col("repeats") > 1).any()).item() is True


def differences(card: pl.DataFrame, reference: str) -> pl.DataFrame:
    """Each run's metrics minus the reference run's (`scoring.metric_differences`), without the
    repeat metrics unless a row has K > 1 repeats (else they are null for every run)."""
    diff = metric_differences(card, reference)
    if has_repeats(card):
        return diff
    return diff.filter(~pl.col("metric").is_in([m.name for m in REPEATS]))


def paired_tests(scores: pl.DataFrame, reference: str) -> pl.DataFrame:
    """Paired tests of every run against `reference` (`scoring.compare_to_reference`) as the
    compare notebook shows them (`scoring.compare_table`), the pooled rows (`all`) of each run
    first."""
    tests = compare_to_reference(scores, reference)
    return compare_table(tests.sort(pl.col("family") != "all", maintain_order=True))
