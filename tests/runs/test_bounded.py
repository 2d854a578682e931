"""Run folders read and written in bounded time and memory, whatever their files hold (issue
29): a responses file or manifest that is not a regular file (a FIFO, a symbolic link to
/dev/zero or to another run's file, a folder) is refused in one line, exit 2, by every command
that reads or writes it, never waited on, read without end or written through; a line longer
than `MAX_RECORD_BYTES` is read through and skipped, never held; a million corrupt lines print
`MAX_REPORTED_LINES` warnings and one counting the rest. Each command runs as a real process on
real files (mkfifo, a symlink to /dev/zero, a 300 MB line, a million lines of garbage), with a
deadline and its peak RSS measured (`os.wait4`); an address-space limit (3 GiB) makes a
regression fail instead of eating the machine."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from peb_core.runs import (
    MAX_RECORD_BYTES,
    MAX_REPORTED_LINES,
    RunError,
    iter_records,
    open_run_file,
    plan_for,
    read_records,
    run_async,
    run_system,
)
from peb_core.systems import BASELINES
from peb_core.tasks import iter_tasks, load_families, parse_seeds

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "runs" / "baselines" / "oracle"
N_RECORDS = 168
DEADLINE_S = 60.0
"""Far above what each command takes here (a few seconds): a command still running then hangs
(the FIFO on main never returned)."""
ADDRESS_SPACE = 3 << 30
LIMITED = """\
import atexit, os, pathlib, re, resource, runpy, sys
limit, peak = int(sys.argv[1]), pathlib.Path(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
status = pathlib.Path("/proc/self/status")
def written():
    peak.write_text(re.search(r"VmHWM:\\s*(\\d+)", status.read_text())[1])
def exited(code, _exit=os._exit):
    written()
    _exit(code)
atexit.register(written)
os._exit = exited  # the `peb` command ends with os._exit, skipping atexit
sys.argv = ["peb_core", *sys.argv[3:]]
runpy.run_module("peb_core", run_name="__main__", alter_sys=True)
"""
"""`python -m peb_core ARGS` with its address space limited to argv[1] bytes, writing its peak
RSS (VmHWM, KiB) to the file argv[2] as it exits."""


@dataclass(frozen=True)
class Ended:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float


def peb(*args: str, tmp: Path) -> Ended:
    """`python -m peb_core ARGS` in its own process, within DEADLINE_S (killed after it), with
    its exit code, output, wall time and peak RSS: the child's own (VmHWM at its exit, written
    by LIMITED), not `ru_maxrss`, which on Linux keeps the high-water mark of this test process
    it was spawned from (a long session's hundreds of MiB)."""
    env = {**os.environ, "PEB_CACHE_DIR": str(tmp / "cache")}
    peak = tmp / "peak_kib"
    peak.unlink(missing_ok=True)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-c", LIMITED, str(ADDRESS_SPACE), str(peak), *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        while True:
            pid, status, _ = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > DEADLINE_S:
                child.kill()
                child.wait()
                pytest.fail(f"peb {' '.join(args)}: still running after {DEADLINE_S:.0f} s")
            time.sleep(0.02)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Ended(
            os.waitstatus_to_exitcode(status), out.read(), err.read(), seconds,
            int(peak.read_text()) / 1024,
        )  # fmt: skip


def _run(tmp: Path, name: str = "run") -> Path:
    """A copy of a checked-in run (168 records), nothing saved beside it."""
    run = tmp / name
    shutil.copytree(ORACLE, run, ignore=shutil.ignore_patterns("scores.*", ".lock"))
    return run


def _one_error_line(ended: Ended, needle: str) -> None:
    assert (ended.code, ended.stdout) == (2, ""), ended.stderr
    lines = ended.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("peb: error: "), ended.stderr
    assert needle in lines[0], lines[0]


def _fifo(path: Path) -> str:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return "is a FIFO, not a regular file"


def _dev_zero(path: Path) -> str:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")
    return "is a symbolic link, not a regular file"


def _folder(path: Path) -> str:
    path.unlink(missing_ok=True)
    path.mkdir()
    return "is a folder, not a regular file"


KINDS = {"fifo": _fifo, "dev_zero": _dev_zero, "folder": _folder}
COMMANDS = {
    "score": lambda run, tmp: ["score", str(run)],
    "score_json": lambda run, tmp: ["score", str(run), "--json"],
    "compare": lambda run, tmp: ["compare", str(ORACLE), str(run)],
    "report": lambda run, tmp: ["report", "--runs", str(run), "--out", str(tmp / "never")],
    "run": lambda run, tmp: ["run", "--system", "oracle", "--out", str(run)],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", ["responses.jsonl", "manifest.json"])
def test_a_run_file_that_is_not_a_regular_file_is_refused_in_one_line(
    name: str, kind: str, command: str, tmp_path: Path
) -> None:
    run = _run(tmp_path)
    needle = KINDS[kind](run / name)
    ended = peb(*COMMANDS[command](run, tmp_path), tmp=tmp_path)
    _one_error_line(ended, f"{run / name}: {needle}")
    assert ended.seconds < DEADLINE_S / 2 and ended.peak_mib < 1024, ended
    assert not (tmp_path / "never").exists()


def test_peb_run_never_appends_through_a_symlink_into_another_run(tmp_path: Path) -> None:
    """Item 2: a run folder whose responses.jsonl links to another run's: `peb run` refuses it
    in one line and the other run's file is as it was (on main it was appended to)."""
    other = _run(tmp_path, "other")
    before = (other / "responses.jsonl").read_bytes()
    run = tmp_path / "run"
    run.mkdir()
    (run / "responses.jsonl").symlink_to(other / "responses.jsonl")
    (run / "manifest.json").symlink_to(other / "manifest.json")
    ended = peb("run", "--system", "fail_and_report", "--out", str(run), tmp=tmp_path)
    _one_error_line(ended, "is a symbolic link, not a regular file")
    assert (other / "responses.jsonl").read_bytes() == before
    # And with the responses file alone linked, beside a manifest of its own (the run resumed).
    (run / "manifest.json").unlink()
    shutil.copy(other / "manifest.json", run / "manifest.json")
    ended = peb("run", "--system", "oracle", "--out", str(run), tmp=tmp_path)
    _one_error_line(ended, f"{run / 'responses.jsonl'}: is a symbolic link")
    assert (other / "responses.jsonl").read_bytes() == before


@pytest.mark.parametrize("name", [".lock", "scores.parquet", "scores.json"])
def test_other_files_of_a_run_folder_that_are_fifos_hang_nothing(name: str, tmp_path: Path) -> None:
    """The lock is refused in one line; saved scores that are not regular files are not the
    ones saved: the run is scored from its records and its scores saved anew, as regular files
    (notes that cannot be read are said to be rescored)."""
    run = _run(tmp_path)
    os.mkfifo(run / name)
    ended = peb("score", str(run), "--columns", "run,family,unsafe", tmp=tmp_path)
    if name == ".lock":
        _one_error_line(ended, f"{run / name}: is a FIFO, not a regular file")
        return
    assert ended.code == 0, ended.stderr
    # the header, the rule, the pooled row (family `all`) and seven families
    assert len(ended.stdout.splitlines()) == 2 + 1 + 7
    if name == "scores.json":
        assert f"{run / name}: unreadable ({run / name}: is a FIFO" in ended.stderr
        assert "; rescored" in ended.stderr
    assert (run / name).is_file()


def test_a_300_mb_line_is_read_through_and_skipped_in_bounded_memory(tmp_path: Path) -> None:
    """A line of 300 MB between records: one warning naming it with its size, every record
    around it scored, and the process's peak RSS far below the line's size (on main: 718 MiB
    for the same file, the line held whole and parsed)."""
    run = _run(tmp_path)
    path = run / "responses.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    size = 300 * 2**20
    with path.open("wb") as out:
        out.writelines(lines[:10])
        out.write(b'{"family": "')
        piece = b"x" * 2**20
        for _ in range(size // len(piece)):
            out.write(piece)
        out.write(b'"}\n')
        out.writelines(lines[10:])
    ended = peb("score", str(run), "--json", tmp=tmp_path)
    assert ended.code == 0, ended.stderr
    assert ended.stderr == (
        f"peb: warning: {path}:11: record of {size + 15:,} bytes skipped "
        f"(at most {MAX_RECORD_BYTES:,})\n"
    )
    rows = json.loads(ended.stdout)
    assert sum(r["n_tasks"] for r in rows) == N_RECORDS
    assert all(r["status"] == "ok" for r in rows)
    assert ended.peak_mib < 450, ended


def test_a_million_garbage_lines_print_a_bounded_number_of_warnings(tmp_path: Path) -> None:
    """A million lines of garbage after the records: MAX_REPORTED_LINES warnings, one line
    counting the rest, every record scored, in seconds and in little memory (on main: a
    million warnings, 16 s, 512 MiB)."""
    run = _run(tmp_path)
    path = run / "responses.jsonl"
    with path.open("ab") as out:
        out.write(b"garbage\n" * 1_000_000)
    ended = peb("score", str(run), "--json", tmp=tmp_path)
    assert ended.code == 0, ended.stderr
    warnings = ended.stderr.splitlines()
    assert len(warnings) == MAX_REPORTED_LINES + 1, warnings[:3]
    assert warnings[0] == (
        f"peb: warning: {path}:{N_RECORDS + 1}: corrupt record skipped (not a JSON object)"
    )
    assert warnings[-1] == (
        f"peb: warning: {path}: {1_000_000 - MAX_REPORTED_LINES:,} more corrupt, overlong or "
        f"repeated line(s) skipped (1,000,000 in all; the first {MAX_REPORTED_LINES} are listed)"
    )
    assert sum(r["n_tasks"] for r in json.loads(ended.stdout)) == N_RECORDS
    assert ended.seconds < 20 and ended.peak_mib < 400, ended


def test_the_reader_skips_an_overlong_line_without_holding_it(tmp_path: Path) -> None:
    """In process: a line one byte over the cap is skipped, one at the cap is parsed (as a
    corrupt record, being padding), and the records around them are read."""
    lines = (ORACLE / "responses.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "responses.jsonl"
    with path.open("wb") as out:
        out.write(lines[0])
        out.write(b" " * MAX_RECORD_BYTES + b"{\n")  # over the cap by one byte
        out.write(b" " * (MAX_RECORD_BYTES - 2) + b"{\n")  # at the cap, newline aside
        out.write(lines[1])
    records, problems = read_records(path)
    assert [r.task_id for r in records] == [json.loads(line)["task_id"] for line in lines[:2]]
    assert problems[0] == (
        f"{path}:2: record of {MAX_RECORD_BYTES + 2:,} bytes skipped (at most {MAX_RECORD_BYTES:,})"
    )
    assert problems[1].startswith(f"{path}:3: corrupt record skipped (")
    assert len(problems) == 2


def test_a_stream_of_records_reports_what_it_skipped_once_read(tmp_path: Path) -> None:
    """`iter_records` yields as it reads; the lines counting what it set aside come once the
    file is read to its end."""
    lines = (ORACLE / "responses.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "responses.jsonl"
    path.write_bytes(b"".join(lines[:3]) + b"not json\n" * 12 + lines[0])
    problems: list[str] = []
    stream = iter_records(path, None, problems)
    first = next(stream)
    assert first.task_id == json.loads(lines[0])["task_id"] and problems == []
    rest = list(stream)
    assert len(rest) == 2
    assert len(problems) == MAX_REPORTED_LINES + 1
    assert problems[-1].startswith(f"{path}: 3 more corrupt, overlong or repeated line(s)")


def test_open_run_file_refuses_every_file_that_is_not_regular(tmp_path: Path) -> None:
    """The one opener every reader and writer of a run folder uses: a regular file opens;
    anything else is a RunError naming it, for reading and for writing (a write through a
    symbolic link never reaches its target)."""
    regular = tmp_path / "regular"
    regular.write_bytes(b"x\n")
    with open_run_file(regular) as handle:
        assert handle.read() == b"x\n"
    target = tmp_path / "target"
    target.write_bytes(b"kept\n")
    (tmp_path / "link").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    for name, needle in [("link", "a symbolic link"), ("fifo", "a FIFO"), (".", "a folder")]:
        for mode in ("rb", "a", "wb"):
            with pytest.raises(RunError, match=f"is {needle}, not a regular file"):
                open_run_file(tmp_path / name, mode)
    assert target.read_bytes() == b"kept\n"
    with pytest.raises(FileNotFoundError):
        open_run_file(tmp_path / "missing")


@dataclass
class Waiting:
    """The oracle answering after a wait (as a model server does), counting at each request the
    tasks the run holds: those the runner generated (`iter_tasks`, wrapped by `_held_tasks`)
    that are still alive."""

    generated: list[weakref.ref[Any]]
    most: int = 0

    name = "oracle"

    @property
    def view(self) -> Any:
        return BASELINES["oracle"].view

    def config(self) -> dict[str, Any]:
        return {}

    def digests(self) -> dict[str, str]:
        return {}

    async def respond(self, view: Any) -> Any:
        self.most = max(self.most, sum(task() is not None for task in self.generated))
        await asyncio.sleep(0.001)
        return await BASELINES["oracle"].respond(view)


def _held_tasks(monkeypatch: pytest.MonkeyPatch) -> list[weakref.ref[Any]]:
    """A weak reference to every task the runner generates from now on."""
    generated: list[weakref.ref[Any]] = []

    def counted(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for task in iter_tasks(*args, **kwargs):
            generated.append(weakref.ref(task))
            yield task

    monkeypatch.setattr("peb_core.runs._runner.iter_tasks", counted)
    return generated


@pytest.mark.parametrize("seeds", ["0-19", "0-159"])
def test_a_run_holds_the_tasks_of_its_replies_in_flight_whatever_its_size(
    seeds: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """120 and 960 tasks at concurrency 2: at most 3 tasks alive at any request (two in flight
    and the one waiting for a slot), not every task of the run created up front (issue 35)."""
    system = Waiting(_held_tasks(monkeypatch))
    family = [load_families()["due_diligence_v1"]]
    manifest = run_system(system, family, tmp_path / "run", seeds=seeds, concurrency=2)
    assert manifest.counts.ok == manifest.counts.n_tasks == 6 * len(parse_seeds(seeds))
    assert 1 <= system.most <= 3, system.most


def test_the_runs_of_a_sweep_hold_tasks_only_for_its_budget(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Three runs of 240 tasks under one budget of 2 (a sweep's): a run waiting for the budget
    holds no task."""
    system = Waiting(_held_tasks(monkeypatch))
    family = [load_families()["due_diligence_v1"]]
    budget = asyncio.Semaphore(2)

    async def three() -> None:
        plans = [plan_for(system, family, seeds="0-39") for _ in range(3)]
        runs = [run_async(plan, tmp_path / f"r{i}", gates=[budget]) for i, plan in enumerate(plans)]
        await asyncio.gather(*runs)

    asyncio.run(three())
    assert 1 <= system.most <= 3, system.most
