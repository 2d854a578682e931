"""The package outside the repository, as a user installs it: a wheel built as a release is (a
source distribution of the tracked files, then the wheel from it) ships exactly the repository's
scenario files and the `peb` and inspect_ai entry points; installed with its locked
dependencies (base and the `inspect` extra) into a clean venv, run from a folder outside the
repository, `peb tasks list`, `peb run --system oracle`, `peb score` and `inspect eval
partial_evidence_bench/partial_evidence` (against a scripted server) work there, runs go under
the user's data folder, and the environment overrides still apply.

The locked wheels are kept in a wheelhouse reused across runs (`$PEB_WHEELHOUSE`, else
`~/.cache/peb/wheelhouse`, checked against the lock's hashes): only the first run downloads
them."""

from __future__ import annotations

import email
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from scripted_server import ScriptedServer

from peb_core.tasks import load_families

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = Path(os.environ.get("PEB_WHEELHOUSE") or Path.home() / ".cache" / "peb" / "wheelhouse")
TASK = "partial_evidence_bench/partial_evidence"
EXTRAS = ("inspect",)
"""The extras the clean venv gets (inspect: the registered task)."""


BUILDER = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
"""The environment of the build and of pip: this one, without a path that could put the
repository (or an editable install's metadata in it) before what is built and installed."""


def _run(
    *command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `command` (in `env`, else BUILDER); fails the test with its stderr's end unless it
    exits 0."""
    args = [str(c) for c in command]
    result = subprocess.run(
        args, capture_output=True, text=True, cwd=cwd, env=env or BUILDER, check=False
    )
    assert result.returncode == 0, f"{' '.join(args)}: {result.stderr[-3000:]}"
    return result


def _release_files() -> list[str]:
    """What a release is built from: the repository's files that git does not ignore."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the release's files are git's")
    listed = _run(
        "git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=ROOT
    ).stdout
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


BUILD_SDIST = (
    "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
)
"""setuptools' own sdist hook (what `python -m build` calls), printing the archive's name."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the sdist of a copy of the repository's files (as `python -m build`
    does; the copy keeps the build's leftovers out of the checkout)."""
    base = tmp_path_factory.mktemp("build")
    source, dist = base / "source", base / "dist"
    for name in _release_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    sdist = dist / _run(sys.executable, "-c", BUILD_SDIST, dist, cwd=source).stdout.split()[-1]
    with tarfile.open(sdist) as archive:
        archive.extractall(base / "unpacked", filter="data")
    (unpacked,) = (base / "unpacked").iterdir()
    _run(
        sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--wheel-dir", dist, unpacked,
    )  # fmt: skip
    (built,) = dist.glob("*.whl")
    return built


def test_the_wheel_ships_the_repositorys_scenarios_and_entry_points(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        shipped = {
            name.removeprefix("peb_core/scenarios/"): archive.read(name)
            for name in names
            if name.startswith("peb_core/scenarios/")
        }
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entries = archive.read(entry_points).decode()
    repository = {p.name: p.read_bytes() for p in (ROOT / "scenarios").glob("*.toml")}
    assert len(repository) >= 7 and shipped == repository
    data = {p.name for p in (ROOT / "peb_core" / "data").iterdir() if p.is_file()}
    assert {n.removeprefix("peb_core/data/") for n in names if "/data/" in n} >= data
    assert "prose_cues.toml" in data  # the prose reader's cues ship in the package
    assert {n.split("/")[0] for n in names if not n.startswith("partial_evidence_bench-")} == {
        "peb_core",
        "partial_evidence_bench.py",
    }
    assert "[inspect_ai]\npartial_evidence_bench = partial_evidence_bench\n" in entries
    assert "[console_scripts]\npeb = peb_core.frontends.cli:run\n" in entries


def _closure(requirements: Iterable[Requirement], extras: Iterable[str]) -> set[str]:
    """The distributions `requirements` need (with `extras` on the first level), walked through
    the metadata of this venv's installed packages (the lock's versions)."""

    def wanted(r: Requirement, extras: Iterable[str]) -> bool:
        return r.marker is None or any(r.marker.evaluate({"extra": e}) for e in ("", *extras))

    needed: set[str] = set()
    todo = [r for r in requirements if wanted(r, extras)]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        requirement = todo.pop()
        name, its_extras = canonicalize_name(requirement.name), frozenset(requirement.extras)
        if (name, its_extras) in seen:
            continue
        seen.add((name, its_extras))
        needed.add(name)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            pytest.fail(f"{name} is needed but not installed here: run ./dev setup")
        todo += [r for r in map(Requirement, requires) if wanted(r, its_extras)]
    return needed


def _locked(names: set[str]) -> str:
    """The entries of requirements.lock (pins with their markers and hashes) for `names`."""
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    entries = [
        (canonicalize_name(m[1]), m[0])
        for m in re.finditer(r"^([A-Za-z0-9][^=\s]*)==.*\n(?:    --hash=.*\n)+", lock, re.M)
    ]
    missing = names - {name for name, _ in entries}
    assert not missing, f"requirements.lock pins none of {sorted(missing)}: run ./dev lock"
    return "".join(entry for name, entry in entries if name in names)


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A clean venv (no pip of its own: this venv's pip installs into it) holding the wheel and
    exactly the locked packages it needs, from the wheelhouse; removed after the tests (about
    900 MB)."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = email.message_from_bytes(archive.read(metadata)).get_all("Requires-Dist")
    lock = tmp_path_factory.mktemp("lock") / "requirements.lock"
    lock.write_text(_locked(_closure(map(Requirement, requires or []), EXTRAS)), encoding="utf-8")
    folder = tmp_path_factory.mktemp("venv") / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", folder)
    python = folder / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", python)
    offline = (*pip, "install", "--quiet", "--no-compile", "--no-index", "--find-links", WHEELHOUSE)
    locked = (*offline, "--require-hashes", "-r", lock)
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    if subprocess.run([str(c) for c in locked], env=BUILDER, capture_output=True).returncode:
        # a wheel missing from the wheelhouse: fetch what the lock pins, then install again
        fetch = ("download", "--quiet", "--no-deps", "--require-hashes", "--dest", WHEELHOUSE)
        _run(*pip, *fetch, "-r", lock)
        _run(*locked)
    _run(*offline, "--no-deps", wheel)
    _run(*pip, "check")
    yield folder
    shutil.rmtree(folder)


DEAD = "http://127.0.0.1:9"
"""A proxy that refuses every connection: whatever tries the internet fails at once."""


def _env(home: Path) -> dict[str, str]:
    """A user's environment: the venv's commands first, HOME and the XDG folders in `home`,
    nothing of this repository or this test run (no PYTHONPATH, no PEB_ variables), and no way
    out but to 127.0.0.1."""
    return {
        "PATH": f"{home.parent / 'venv' / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "LANG": "C.UTF-8",
        **dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"), DEAD),
        "NO_PROXY": "127.0.0.1,localhost",
    }


@pytest.fixture
def user(venv: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working folder outside the repository, and the environment to run the venv's commands
    in (the venv linked beside HOME)."""
    (tmp_path / "venv").symlink_to(venv)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return work, _env(home)


WHERE = """
import json, peb_core
from peb_core.tasks import load_families, scenarios_dir
from peb_core.results import runs_root
print(json.dumps({"package": peb_core.__file__, "scenarios": str(scenarios_dir()),
                  "families": list(load_families()), "runs": str(runs_root())}))
"""


def test_the_installed_package_reads_its_own_scenarios_and_keeps_runs_in_the_users_data(
    user: tuple[Path, dict[str, str]], venv: Path
) -> None:
    work, env = user
    where = json.loads(_run("python", "-c", WHERE, cwd=work, env=env).stdout)
    site = venv.resolve() / "lib"
    assert Path(where["package"]).resolve().is_relative_to(site)
    assert Path(where["scenarios"]).resolve().is_relative_to(site)
    assert where["families"] == list(load_families())
    assert where["runs"] == f"{env['XDG_DATA_HOME']}/partial-evidence-bench/runs"
    scenarios = work / "mine"
    scenarios.mkdir()
    shutil.copy(ROOT / "scenarios" / "procurement_v1.toml", scenarios)
    overridden = json.loads(
        _run(
            "python", "-c", WHERE, cwd=work,
            env={**env, "PEB_SCENARIOS_DIR": str(scenarios), "PEB_RUNS_DIR": str(work / "runs")},
        ).stdout
    )  # fmt: skip
    assert overridden["families"] == ["procurement_v1"]
    assert overridden["runs"] == str(work / "runs")


def test_peb_lists_runs_and_scores_outside_the_repository(
    user: tuple[Path, dict[str, str]],
) -> None:
    work, env = user
    listed = _run("peb", "tasks", "list", cwd=work, env=env).stdout
    assert all(family in listed for family in load_families())
    run = Path(env["XDG_DATA_HOME"]) / "partial-evidence-bench" / "runs" / "oracle"
    _run(
        "peb", "run", "--system", "oracle", "--family", "due_diligence_v1", "--out", run,
        cwd=work, env=env,
    )  # fmt: skip
    (row,) = json.loads(_run("peb", "score", run, "--json", cwd=work, env=env).stdout)
    assert (row["system"], row["n_tasks"], row["unsafe_completeness_rate"]) == ("oracle", 24, 0.0)
    assert row["answer_correctness"] == row["gap_report_quality"] == 1.0


def test_inspect_finds_the_task_by_its_registered_name(
    user: tuple[Path, dict[str, str]],
) -> None:
    from inspect_ai.log import read_eval_log

    work, env = user
    logs = work / "logs"
    server = ScriptedServer().start()  # blocks every task, in a well-formed response
    try:
        _run(
            "inspect", "eval", TASK, "-T", "seeds=11", "-T", "family=due_diligence_v1",
            "--model", "openai-api/scripted/scripted", "--model-base-url", server.url,
            "--log-dir", logs, "--display", "none",
            cwd=work, env={**env, "SCRIPTED_API_KEY": "unused"},
        )  # fmt: skip
    finally:
        server.stop()
    assert server.script.requests == 6
    (log,) = logs.glob("*.eval")
    header = read_eval_log(log, header_only=True)
    assert (header.status, header.eval.task) == ("success", TASK)
    assert header.eval.task_args["seeds"] == 11
    assert header.results is not None and header.results.completed_samples == 6
    imported = work / "imported"
    _run("peb", "import", "inspect", log, "--out", imported, cwd=work, env=env)
    (row,) = json.loads(_run("peb", "score", imported, "--json", cwd=work, env=env).stdout)
    assert (row["n_tasks"], row["n_errors"], row["format_compliance_rate"]) == (6, 0, 1.0)
