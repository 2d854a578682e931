"""What the workbench says about runs started from it: one current status per run folder, the
newest word on it (never a stale "interrupted" beside a later "finished"), with its severity and
time; and when what is on disk is rescored."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted_server import ScriptedServer, Step

from peb_core.frontends.workbench import (
    RunForm,
    check_run,
    rescore_due,
    run_label,
    run_lines,
    runs_stamp,
    severity,
    start_launch,
)
from peb_core.runs import RunStatus, run_folder_name, run_system
from peb_core.systems import BASELINES
from peb_core.tasks import load_families

ONE = ["due_diligence_v1"]


def _status(state: str, errors: int = 0, missing: int = 0) -> RunStatus:
    return RunStatus(
        state=state, n_tasks=4, ok=4 - errors - missing, errors=errors, missing=missing, reasons=[]
    )


def test_severity_reads_a_status_as_a_person_would() -> None:
    assert severity(_status("finished")) == "success"
    assert severity(_status("finished", errors=1)) == "danger"
    assert severity(_status("interrupted", errors=1)) == "danger"
    assert severity(_status("interrupted", missing=2)) == "warn"
    assert severity(_status("finished", missing=2)) == "warn"
    assert severity(_status("running", missing=2)) == "info"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


def _launch(root: Path, server: ScriptedServer) -> list[str]:
    values = {"family": ONE, "api_base": server.url, "limit": "4"}
    form = RunForm(["openai/scripted"], values, name="m")
    launch = check_run(form, root)
    job = start_launch(launch)
    job.wait(120)
    return [f"{line.run} {line.severity} {line.text}" for line in run_lines([job], str)]


def test_one_line_per_run_the_latest_word_with_its_time(
    tmp_path: Path, server: ScriptedServer
) -> None:
    from peb_core.runs import run_jobs

    root = tmp_path / "scratch"
    server.script.default = Step(kind="status", status=401)
    before = len(run_jobs())
    failed = _launch(root, server)
    assert len(failed) == 1 and failed[0].startswith(f"{root / 'm'} danger finished: 4 tasks, 0")
    server.script.default = Step()
    _launch(root, server)
    jobs = run_jobs()[before:]
    assert len(jobs) == 2
    lines = run_lines(jobs, lambda d: run_label(d, tmp_path))
    (line,) = lines  # the second attempt's word replaces the first's
    assert (line.run, line.severity) == ("scratch/m", "success")
    assert line.text == "finished: 4 tasks, 4 replies; retried 4 error records"
    assert line.at >= jobs[0].ended[0].at and len(line.time) == 8


def test_a_running_job_reads_running_with_its_progress(
    tmp_path: Path, server: ScriptedServer
) -> None:
    server.script.default = Step(delay=1.0)
    form = RunForm(["openai/scripted"], {"family": ONE, "api_base": server.url, "limit": "16"})
    job = start_launch(check_run(form, tmp_path))
    deadline = time.monotonic() + 60
    while not (job.running and job.current is not None and job.since is not None):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (line,) = run_lines([job], str)
    assert line.severity == "info" and line.text.startswith("running: ")
    assert line.text.endswith(" of 16 tasks")
    job.stop()
    job.wait(60)
    (line,) = run_lines([job], str)
    assert line.severity == "warn" and line.text.startswith("interrupted: 16 tasks")


def test_rescoring_is_at_once_for_a_new_or_ended_run_and_throttled_while_records_grow(
    tmp_path: Path,
) -> None:
    root = tmp_path / "runs"
    assert runs_stamp(root).manifests == frozenset()
    families = [load_families()[ONE[0]]]
    system = BASELINES["oracle"]
    run_dir = root / run_folder_name(system, families, [11])
    run_system(system, families, run_dir, seeds=[11], limit=2)
    first = runs_stamp(root)
    assert rescore_due(first, None, 0.0, 0.0)
    assert not rescore_due(first, first, 0.0, 100.0)
    # Records only: a second rescore waits until RESCORE_EVERY_S has passed.
    with (run_dir / "responses.jsonl").open("a", encoding="utf-8") as f:
        f.write("\n")
    grown = runs_stamp(root)
    assert grown.manifests == first.manifests and grown.responses != first.responses
    assert not rescore_due(grown, first, 10.0, 11.0)
    assert rescore_due(grown, first, 10.0, 15.0)
    # A run that appears (as `peb run` or `peb import` writes one): at once.
    other = root / "imported"
    run_system(system, families, other, seeds=[23], limit=1)
    assert rescore_due(runs_stamp(root), grown, 10.0, 10.5)
