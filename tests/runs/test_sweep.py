"""`peb sweep`: a matrix of runs declared in one TOML file, each combination a run checked as
any front-end's, made into one folder under one concurrency budget and per-provider limits,
resumed as a whole after kill -9, and read by `peb score` as one table. Agent models against a
scripted tool-calling server over real HTTP, in a real `peb` process."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli import peb
from scripted_server import ScriptedServer, agent_route

from peb_core.runs import (
    SWEEP,
    SweepError,
    expand,
    plan_sweep,
    read_manifest,
    read_records,
    read_sweep,
    run_status,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted agent: two searches, then a submit, each reply after 50 ms."""
    s = ScriptedServer().start()
    route = agent_route(3)
    s.script.route = lambda body: dataclasses.replace(route(body), delay=0.05)
    s.script.keep_bodies = False
    yield s
    s.stop()


def _sweep_file(tmp_path: Path, api_base: str, *, concurrency: int, openai: int) -> Path:
    """2 x 2 x 2: two agent models x the agent and grants tiers x two disclosure modes."""
    path = tmp_path / "matrix.toml"
    path.write_text(
        f"concurrency = {concurrency}\n"
        f"[limits]\nopenai = {openai}\n"
        "[base]\n"
        f'family = "due_diligence_v1"\nseeds = "11"\napi_base = "{api_base}"\n'
        "[matrix]\n"
        'system = ["agent:openai/one", "agent:openai/two"]\n'
        'tier = ["agent", "grants"]\n'
        'disclosure = ["silent", "named"]\n',
        encoding="utf-8",
    )
    return path


def _peb_sweep(path: Path, out: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "peb_core", "sweep", str(path), "--out", str(out)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_2x2x2_sweep_runs_under_one_budget_and_resumes_after_kill_9(
    server: ScriptedServer, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    env = {"PEB_CACHE_DIR": str(tmp_path / "cache")}
    path = _sweep_file(tmp_path, server.url, concurrency=3, openai=2)
    first = _peb_sweep(path, out, env)
    deadline = time.monotonic() + 60
    while server.script.stats()["requests"] < 30 and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    assert first.returncode == -signal.SIGKILL
    listed = json.loads((out / SWEEP).read_text())["runs"]
    assert len(listed) == 8
    killed = [out / run["folder"] for run in listed]
    assert any(not run_status(d).clean for d in killed if (d / "manifest.json").exists())

    second = _peb_sweep(path, out, env)
    stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    assert stdout.count("finished: 6 tasks, 6 replies") == 8, stdout
    # One budget: never more than the provider's limit of 2 requests in flight (below the
    # budget of 3), in either process.
    assert server.script.stats()["max_in_flight"] == 2
    systems, tiers, modes = set(), set(), set()
    for run in listed:
        folder = out / run["folder"]
        manifest = read_manifest(folder)
        records, problems = read_records(folder / "responses.jsonl", manifest.system)
        assert not problems and len(records) == 6 and len({r.key for r in records}) == 6
        assert all(r.status == "ok" and len(r.trace) == 3 for r in records)
        systems.add(manifest.system)
        tiers.add(manifest.tier)
        modes.add(manifest.config["disclosure"])
    assert (len(systems), tiers, modes) == (2, {"agent", "grants"}, {"silent", "named"})
    scored = json.loads(peb("score", str(out), "--json").stdout)
    assert len(scored) == 8 and {row["tier"] for row in scored} == {"agent", "grants"}


def test_options_that_apply_to_no_run_are_refused_and_others_collapse(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        '[base]\nfamily = "due_diligence_v1"\nseeds = "11"\n'
        '[matrix]\nsystem = ["oracle", "agent_silent"]\ndisclosure = ["silent", "named"]\n'
    )
    runs = expand(read_sweep(path), path)
    # The oracle reads no agent view: its two disclosure modes are one run.
    assert sorted((s.system, s.disclosure) for s in runs) == [
        ("agent_silent", "named"),
        ("agent_silent", "silent"),
        ("oracle", "silent"),
    ]
    path.write_text(
        '[base]\nfamily = "due_diligence_v1"\nmax_steps = 5\n[matrix]\nsystem = ["oracle"]\n'
    )
    with pytest.raises(SweepError, match=r"run oracle .*max_steps applies to agent models only"):
        plan_sweep(path, tmp_path / "out")
    path.write_text('[matrix]\nsystem = ["oracle"]\nrepeats = [0, 2]\n')
    with pytest.raises(SweepError, match=r"matrix.repeats\[0\]: expected an integer from 1"):
        plan_sweep(path, tmp_path / "out")
    path.write_text("concurrency = 0\n")
    with pytest.raises(SweepError, match="concurrency: Input should be greater"):
        plan_sweep(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_bad_sweep_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text("[matrix\n")
    done = peb("sweep", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"peb: error: {path}: not TOML")
    path.write_text('[matrix]\nsystem = ["nosuch"]\n')
    done = peb("sweep", str(path))
    assert done.returncode == 2
    assert "run nosuch: system: no provider in model 'nosuch'" in done.stderr
