"""Runs in the background of a long-lived process (the workbench): started, watched and stopped
from a notebook that stays responsive meanwhile, and still listed when its page is reloaded."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from ..systems import ResponseRecord
from ._runner import run_async
from ._spec import RunPlan
from ._store import MANIFEST, RunError, RunStatus, read_manifest, run_status


class Ended(NamedTuple):
    """A run of a job that ended (finished, or stopped), with its status then and the time."""

    run_dir: Path
    status: RunStatus
    at: datetime


@dataclass(eq=False)
class RunJob:
    """Runs made one after another, each into its own run folder, in a thread of their own.
    Read its fields from any thread; `stop()` ends the run in progress (its manifest then says
    `interrupted`, its records are kept) and skips the rest."""

    plan: list[tuple[RunPlan, Path]]
    retrying: dict[Path, int]
    """Each run folder's error records from an earlier attempt, retried by this job."""
    done: int = 0
    """Replies of the current run recorded (earlier ones included): its tasks times repeats."""
    total: int = 0
    current: Path | None = None
    since: datetime | None = None
    """When the current run started."""
    ended: list[Ended] = field(default_factory=list)
    """Each run finished or stopped so far, with its status at the time."""
    failure: str | None = None
    """Why the job ended early other than by `stop()` (one line)."""
    failed: tuple[Path, datetime] | None = None
    """The run folder the job failed on, and when."""
    stopped: bool = False
    _thread: threading.Thread | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> RunJob:
        self._thread = threading.Thread(target=asyncio.run, args=(self._all(),), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the run in progress and skip the rest (no effect once the job has ended)."""
        self.stopped = True
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            loop.call_soon_threadsafe(task.cancel)

    def wait(self, timeout_s: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _progress(self, _record: ResponseRecord, done: int, total: int) -> None:
        self.done, self.total = done, total

    async def _all(self) -> None:
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        try:
            for plan, run_dir in self.plan:
                if self.stopped:
                    break
                self.current, self.since, self.done = run_dir, datetime.now(), 0
                self.total = plan.n_replies
                await run_async(plan, run_dir, progress=self._progress)
                self.ended.append(Ended(run_dir, run_status(run_dir), datetime.now()))
        except asyncio.CancelledError:
            self.stopped = True
            if self.current is not None and (self.current / MANIFEST).exists():
                self.ended.append(Ended(self.current, run_status(self.current), datetime.now()))
        except (RunError, OSError, ValueError) as exc:
            self.failure = str(exc)
            if self.current is not None:
                self.failed = (self.current, datetime.now())
        finally:
            self.current = None


_JOBS: list[RunJob] = []
"""Every job started in this process, oldest first."""


def start_runs(plan: Sequence[tuple[RunPlan, Path]]) -> RunJob:
    """Start making each (run plan, run folder) of `plan` in turn in the background, resuming
    what each folder holds and retrying its error records; the job is listed by
    `run_jobs()`."""
    retrying = {}
    for _, run_dir in plan:
        if (run_dir / MANIFEST).exists():
            retrying[run_dir] = read_manifest(run_dir).counts.error
    job = RunJob(plan=list(plan), retrying=retrying)
    _JOBS.append(job)
    return job.start()


def run_jobs() -> list[RunJob]:
    """The jobs started in this process, oldest first."""
    return list(_JOBS)
