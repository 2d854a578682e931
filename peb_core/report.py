"""Run folders to scorecards: the one place the CLI and the notebooks get their numbers from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from .runs import MANIFEST, RESPONSES, read_manifest, read_records, run_tasks
from .scenarios import load_families, scenario_hash
from .scoring import score_run, scorecard
from .tasks import Task

SCORECARD_KEYS = [
    "run",
    "system",
    "protocol",
    "family",
    "n_tasks",
    "n_incomplete",
    "unsafe_completeness_rate",
    "answer_correctness",
    "gap_report_quality",
    "blocked_when_safe_to_answer_rate",
    "correct_complete",
    "correct_incomplete",
    "false_complete",
    "false_incomplete",
    "invalid_rate",
    "n_missing",
    "n_errors",
]
"""The columns of `peb score --json`, in order."""


def discover_runs(root: Path) -> list[Path]:
    """Every run folder below `root` (a folder holding a manifest), sorted."""
    return sorted(p.parent for p in root.rglob(MANIFEST))


def score_run_dirs(dirs: Sequence[Path]) -> tuple[pl.DataFrame, list[str]]:
    """Per-task scores of each run folder (recomputed from its responses), and the warnings met
    on the way: corrupt or repeated records skipped, runs made on other scenario files. The
    prompt protocol (from the manifest; `-` for systems without one) is a column."""
    families = load_families()
    current = scenario_hash()
    frames, warnings = [], []
    for run_dir in dirs:
        manifest = read_manifest(run_dir)
        if manifest.scenario_hash != current:
            warnings.append(
                f"{run_dir}: was run on other scenario files; scored on the current ones"
            )
        records, problems = read_records(run_dir / RESPONSES)
        warnings.extend(problems)
        tasks = run_tasks(run_dir, manifest, families)
        scores = score_run(tasks, records, run=run_dir.name, system=manifest.system)
        protocol = str(manifest.config.get("protocol", "-"))
        frames.append(scores.with_columns(protocol=pl.lit(protocol)))
    return pl.concat(frames), warnings


def scorecard_of(dirs: Sequence[Path]) -> tuple[pl.DataFrame, list[str]]:
    """The scorecard (SCORECARD_KEYS) of run folders, and the warnings."""
    scores, warnings = score_run_dirs(dirs)
    return scorecard(scores).select(SCORECARD_KEYS), warnings


def documents_frame(task: Task) -> pl.DataFrame:
    """A task's documents, one row each, with whether the caller's view holds it."""
    return pl.DataFrame(
        [
            {
                "visible": d.doc_id in task.authorized_doc_ids,
                "doc_id": d.doc_id,
                "role": d.role,
                "scope": d.scope,
                "evidence_family": d.evidence_family,
                "title": d.title,
                "body": d.body,
            }
            for d in task.documents
        ]
    )
