"""What the workbench says about runs while it is open: one current status per run started from
it (with how it reads: success, warning, danger, running; and when), and when to rescore what is
on disk: at once when a run folder appears, ends or changes its manifest (a run started or
imported elsewhere too), at most every few seconds while records are only being added."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from ...runs import MANIFEST, RESPONSES, RunJob, RunStatus

Severity = Literal["success", "warn", "danger", "info"]
"""How a status reads (marimo's callout kinds): `success`, a finished run with a reply for every
task; `danger`, errors or a failure; `info`, still running; `warn`, anything else (stopped,
missing tasks)."""


def severity(status: RunStatus) -> Severity:
    if status.clean:
        return "success"
    if status.errors:
        return "danger"
    return "info" if status.state == "running" else "warn"


@dataclass(frozen=True)
class RunLine:
    """A run's current status as the workbench shows it: the run (its label), one line of text,
    its severity, and when it was last true (`HH:MM:SS`)."""

    run: str
    text: str
    severity: Severity
    at: datetime

    @property
    def time(self) -> str:
        return f"{self.at:%H:%M:%S}"


def run_lines(jobs: Sequence[RunJob], label: Callable[[Path], str]) -> list[RunLine]:
    """One line per run folder the `jobs` (oldest first) ran into, the latest word on each,
    newest first: running (tasks, or a run with repeats' replies, done of all; stopping),
    ended (its status then, and how many error records of an earlier attempt it retried), or
    the job's failure on it."""
    latest: dict[Path, RunLine] = {}
    for job in jobs:
        for run_dir, status, at in job.ended:
            retried = job.retrying.get(run_dir, 0)
            text = status.summary() + (f"; retried {retried} error records" if retried else "")
            latest[run_dir] = RunLine(label(run_dir), text, severity(status), at)
        if job.failed is not None:
            run_dir, at = job.failed
            latest[run_dir] = RunLine(label(run_dir), f"failed: {job.failure}", "danger", at)
        current, since = job.current, job.since
        if job.running and current is not None and since is not None:
            unit = "replies" if any(p.spec.repeats > 1 for p, _ in job.plan) else "tasks"
            text = f"running: {job.done} of {job.total} {unit}" + (
                " (stopping)" if job.stopped else ""
            )
            latest[current] = RunLine(label(current), text, "info", since)
    return sorted(latest.values(), key=lambda line: line.at, reverse=True)


@dataclass(frozen=True)
class RunsStamp:
    """What the run folders below a root look like on disk: each manifest's path and
    modification time, and each responses file's size."""

    manifests: frozenset[tuple[str, int]]
    responses: frozenset[tuple[str, int]]


def _stat(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns if path.name == MANIFEST else path.stat().st_size
    except OSError:
        return None


def runs_stamp(root: Path) -> RunsStamp:
    """The `RunsStamp` of every run folder below `root` (none if it is not a folder)."""
    manifests = sorted(root.rglob(MANIFEST)) if root.is_dir() else []
    return RunsStamp(
        manifests=_stamped(manifests),
        responses=_stamped(m.parent / RESPONSES for m in manifests),
    )


def _stamped(paths: Iterable[Path]) -> frozenset[tuple[str, int]]:
    return frozenset((str(p), s) for p in paths if (s := _stat(p)) is not None)


RESCORE_EVERY_S = 5.0
"""While records are only being added, rescore at most this often."""


def rescore_due(
    now: RunsStamp,
    then: RunsStamp | None,
    last_s: float,
    at_s: float,
    every_s: float = RESCORE_EVERY_S,
) -> bool:
    """Whether to rescore: the run folders' manifests changed (a run appeared, ended, was
    imported or removed) since `then`, the stamp last scored, or only their records did and
    `every_s` seconds have passed since that rescore (at `last_s`; `at_s` is now)."""
    if then is None or now.manifests != then.manifests:
        return True
    return now.responses != then.responses and at_s - last_s >= every_s
