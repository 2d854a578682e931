"""`peb sweep`: a matrix of runs declared in one TOML file, each combination a run checked as
any front-end's, made into one folder under one concurrency budget and per-provider limits,
resumed as a whole after kill -9, and read by `peb score` as one table. Agent models against a
scripted tool-calling server over real HTTP, in a real `peb` process."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
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


def test_a_sweep_crosses_the_contract_source(tmp_path: Path) -> None:
    """Given and found contracts are two runs of an agent, each in its own folder, and one of a
    one-shot system (it reads no agent view); on a tier without corpora it applies to none."""
    path = tmp_path / "s.toml"
    path.write_text(
        '[base]\nfamily = "due_diligence_v1"\nseeds = "11"\ntier = "agent"\n'
        '[matrix]\nsystem = ["oracle", "agent_silent"]\ncontract = ["given", "corpus"]\n'
    )
    plans = plan_sweep(path, tmp_path / "out").runs
    made = sorted((plan.spec.system or "", plan.contract or "") for plan, _ in plans)
    assert made == [("agent_silent", "corpus"), ("agent_silent", "given"), ("oracle", "given")]
    assert len({folder for _, folder in plans}) == 3
    path.write_text(
        '[base]\nfamily = "due_diligence_v1"\n[matrix]\nsystem = ["agent_silent"]\n'
        'contract = ["corpus"]\n'
    )
    with pytest.raises(SweepError, match=r"contract: the paper tier has no corpus"):
        plan_sweep(path, tmp_path / "out")


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


# --- sweeps that never lose a run (issue 35) ---------------------------------------------------

DD = '[base]\nfamily = "due_diligence_v1"\nseeds = "11"\n'


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_every_distinct_run_of_a_matrix_gets_its_own_folder_and_is_made(tmp_path: Path) -> None:
    """Distractors and a task limit change what a run measures: 2 x 2 runs, four folders, four
    rows; asked again, every run resumes (none refused by the sweep's own lock)."""
    path = _write(
        tmp_path / "s.toml",
        f'{DD}[matrix]\nsystem = ["oracle"]\ndistractors = [0, 2]\nlimit = [1, 2]\n',
    )
    out = tmp_path / "out"
    runs = plan_sweep(path, out).runs
    assert len({folder for _, folder in runs}) == 4
    for _ in range(2):
        done = peb("sweep", str(path), "--out", str(out))
        assert done.returncode == 0 and "not run" not in done.stderr, done.stderr
        assert done.stdout.count("finished:") == 4, done.stdout
    scored = json.loads(peb("score", str(out), "--json").stdout)
    made = {(read_manifest(out / row["run"]).distractors, row["n_tasks"]) for row in scored}
    assert made == {(0, 1), (0, 2), (2, 1), (2, 2)}


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("concurrency", "[1, 2]"),
        ("cache", "[true, false]"),
        ("max_tasks", "[10, 20]"),
        ("retry_errors", "[true, false]"),
        ("local_port", "[8001, 8002]"),
    ],
)
def test_a_matrix_that_varies_how_runs_are_made_is_refused(
    name: str, values: str, tmp_path: Path
) -> None:
    """Options that say how a run is made, not what it measures, are not part of its folder: a
    matrix that varies one would make two runs one; given once, in base, they are taken."""
    path = _write(tmp_path / "s.toml", f'{DD}[matrix]\nsystem = ["oracle"]\n{name} = {values}\n')
    with pytest.raises(SweepError, match=rf"matrix.{name}: {name} is not part of what a run is"):
        expand(read_sweep(path), path)
    one = values.strip("[]").split(",")[0]
    _write(path, f'{DD}{name} = {one}\n[matrix]\nsystem = ["oracle", "oracle"]\n')
    assert len(expand(read_sweep(path), path)) == 1


def test_a_second_sweep_into_the_folder_keeps_the_first_ones_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _write(tmp_path / "a.toml", f'{DD}[matrix]\nsystem = ["oracle"]\n')
    second = _write(tmp_path / "b.toml", f'{DD}[matrix]\nsystem = ["silent_filter"]\n')
    for path in (first, second, first):
        assert peb("sweep", str(path), "--out", str(out)).returncode == 0
    listed = json.loads((out / SWEEP).read_text())["runs"]
    assert [run["spec"]["system"] for run in listed] == ["oracle", "silent_filter"]
    scored = json.loads(peb("score", str(out), "--json").stdout)
    assert sorted(row["system"] for row in scored) == ["oracle", "silent_filter"]
    (out / SWEEP).write_text("{}")
    with pytest.raises(SweepError, match=r"not a sweep's listing.*it would be replaced"):
        plan_sweep(first, out)


def test_a_listing_stays_inside_its_sweep_and_peb_score_writes_nothing_outside(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(ROOT / "runs" / "baselines" / "oracle", outside, ignore=_unsaved)
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "link").symlink_to(outside)
    for name in (str(outside), "../outside", "link", "a/../../outside"):
        (sweep / SWEEP).write_text(json.dumps({"runs": [{"folder": name}]}))
        done = peb("score", str(sweep))
        assert done.returncode == 2 and "outside the sweep" in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1
    assert sorted(p.name for p in outside.iterdir()) == ["manifest.json", "responses.jsonl"]


def _unsaved(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("scores.") or n == ".lock"]


def test_peb_score_names_a_listed_run_that_is_doubled_or_missing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = _write(tmp_path / "s.toml", f'{DD}[matrix]\nsystem = ["oracle"]\n')
    assert peb("sweep", str(path), "--out", str(out)).returncode == 0
    listed = json.loads((out / SWEEP).read_text())["runs"]
    (out / SWEEP).write_text(json.dumps({"runs": [*listed, *listed, {"folder": "never"}]}))
    done = peb("score", str(out), "--json")
    assert done.returncode == 0 and len(json.loads(done.stdout)) == 1
    assert f"lists the run {listed[0]['folder']} twice; it counts once" in done.stderr
    assert "lists the run never, which was not made (no manifest.json)" in done.stderr


def test_the_run_cap_is_counted_before_the_matrix_is_built(tmp_path: Path) -> None:
    """64,000 combinations refused without building them (a few more lines of values make
    billions: 2.8 GB and a MemoryError when they were built first)."""
    values = ", ".join(map(str, range(1, 41)))
    path = _write(
        tmp_path / "s.toml",
        f"[matrix]\nrepeats = [{values}]\ndistractors = [{values}]\nmax_tokens = [{values}]\n",
    )
    sweep = read_sweep(path)
    tracemalloc.start()
    try:
        with pytest.raises(SweepError, match="the matrix makes 64,000 runs; at most 1,000"):
            expand(sweep, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_a_long_model_name_makes_a_folder_and_a_long_out_is_refused_at_planning(
    tmp_path: Path,
) -> None:
    model = "openai/" + "m" * 300
    path = _write(
        tmp_path / "s.toml",
        f'{DD}api_base = "http://127.0.0.1:9/v1"\n[matrix]\nsystem = ["{model}"]\n',
    )
    [(plan, folder)] = plan_sweep(path, tmp_path / "out").runs
    plan.release()
    assert len(folder.name) <= 100 and folder.name.startswith("openai_mmm")
    folder.mkdir(parents=True)
    deep = tmp_path.joinpath(*["d" * 200] * 21)
    with pytest.raises(SweepError, match="choose a shorter --out"):
        plan_sweep(path, deep)
    assert not (tmp_path / ("d" * 200)).exists()


def test_a_sweep_file_is_read_with_strict_types(tmp_path: Path) -> None:
    """TOML has types: a count given as text or a boolean, a switch as text are refused, as is
    a limit for a provider no run goes to (a typo)."""
    path = tmp_path / "s.toml"
    for text, needle in [
        ('concurrency = "8"\n', r"concurrency: Input should be a valid integer, got '8'"),
        ("concurrency = true\n", "concurrency: Input should be a valid integer, got True"),
        ('[limits]\nopenai = "2"\n', "limits.openai: Input should be a valid integer"),
        ('[base]\nrepeats = "2"\n', r"base.repeats: expected an integer from 1 to 100, got '2'"),
        ("[base]\nrepeats = 2.0\n", r"base.repeats: expected an integer from 1 to 100, got 2.0"),
        ('[base]\ncache = "no"\n', r"base.cache: expected true or false, got 'no'"),
        ("[base]\nfamily = 5\n", "base.family: expected names"),
        ('[limits]\nopneai = 2\n[base]\napi_base = "http://127.0.0.1:9/v1"\n', "limits.opneai: "
         "no run of this sweep goes to provider 'opneai'; its runs go to: baseline, openai"),
    ]:  # fmt: skip
        _write(path, f'{text}[matrix]\nsystem = ["oracle", "openai/m"]\n')
        with pytest.raises(SweepError, match=needle):
            plan_sweep(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
