"""Same family + seed = byte-identical task JSON in any process (docs/benchmark.md §1)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import peb_core
from peb_core import Task, generate_tasks, load_families

# The subprocess imports the very peb_core this process tests.
PACKAGE_PARENT = str(Path(peb_core.__file__).resolve().parent.parent)


# sha256 of the canonical export: the 168 canonical tasks (7 families x 24), one
# `task.model_dump_json()` per line, in generate_tasks order. Editing scenarios/*.toml or the
# generator changes it ON PURPOSE: check the change is intended, then pin the new digest here.
CANONICAL_EXPORT_SHA256 = "318de70e0c9217dfefbe145186beaf022df74779716b678c6a1e6db6528d67cb"

HARD_EXPORT_SHA256 = "a5dd25aa4751a97b589341009f865d32e50f786d68be70548994f13a33bc29af"
"""The same for the hard tier's 168 canonical tasks."""

AGENT_EXPORT_SHA256 = "3dbbd15c2a4f196894a494e78278919a1511fc936086a067c07d5cb83a638de6"
"""The same for the agent tier's 168 canonical corpora (60 documents each)."""

DELEGATION_EXPORT_SHA256 = "04e126875957f0aa522414e47900e9dca465e5a7001275b9a286e2ac1f5ca96f"
"""The same for the delegation tier's 168 canonical tasks (the agent tier's corpora kept in
stores, with sub-agents; docs/benchmark.md §9.1)."""

EXPORT = (
    "import sys\n"
    "from peb_core import generate_tasks, load_families\n"
    "tasks = generate_tasks(load_families().values(), tier=sys.argv[1])\n"
    "sys.stdout.buffer.write(''.join(t.model_dump_json() + '\\n' for t in tasks).encode())\n"
)


def _export(tasks: list[Task]) -> bytes:
    return "".join(t.model_dump_json() + "\n" for t in tasks).encode()


def _export_in_subprocess(hash_seed: str, cwd: Path, tier: str = "paper") -> bytes:
    env = {k: v for k, v in os.environ.items() if k != "PEB_SCENARIOS_DIR"}
    env["PYTHONHASHSEED"] = hash_seed
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", EXPORT, tier],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    cwd = tmp_path_factory.mktemp("export")
    out = {seed: _export_in_subprocess(seed, cwd) for seed in ("0", "12345")}
    out |= {f"hard-{seed}": _export_in_subprocess(seed, cwd, "hard") for seed in ("0", "12345")}
    out |= {f"agent-{seed}": _export_in_subprocess(seed, cwd, "agent") for seed in ("0", "12345")}
    out |= {
        f"delegation-{seed}": _export_in_subprocess(seed, cwd, "delegation")
        for seed in ("0", "12345")
    }
    return out


@pytest.mark.parametrize("tier", ["", "hard-", "agent-", "delegation-"])
def test_export_is_byte_identical_across_hash_seeds(exports: dict[str, bytes], tier: str) -> None:
    first, second = exports[f"{tier}0"], exports[f"{tier}12345"]
    assert first.count(b"\n") == 168
    assert first == second


def test_subprocess_export_equals_in_process_export(
    exports: dict[str, bytes], canonical_tasks: list[Task]
) -> None:
    assert exports["0"] == _export(canonical_tasks)


def test_canonical_export_digest_is_pinned(exports: dict[str, bytes]) -> None:
    assert hashlib.sha256(exports["0"]).hexdigest() == CANONICAL_EXPORT_SHA256
    assert hashlib.sha256(exports["hard-0"]).hexdigest() == HARD_EXPORT_SHA256
    assert hashlib.sha256(exports["agent-0"]).hexdigest() == AGENT_EXPORT_SHA256
    assert hashlib.sha256(exports["delegation-0"]).hexdigest() == DELEGATION_EXPORT_SHA256


def test_exported_tasks_round_trip(exports: dict[str, bytes], canonical_tasks: list[Task]) -> None:
    parsed = [Task.model_validate_json(line) for line in exports["0"].splitlines()]
    assert parsed == canonical_tasks


@pytest.mark.parametrize("tier", ["agent", "delegation"])
def test_agent_export_equals_in_process_and_round_trips(
    exports: dict[str, bytes], tier: str
) -> None:
    tasks = generate_tasks(load_families().values(), tier=tier)
    assert exports[f"{tier}-0"] == _export(tasks)
    assert [Task.model_validate_json(line) for line in exports[f"{tier}-0"].splitlines()] == tasks
