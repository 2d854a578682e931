"""What made a run: the versions in its manifest (a resume under others warns and goes on), the
prompt protocol's digest (another prompt text is a different run) and an embedded model's GGUF
digest (computed once per file)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from cli import peb_process
from scripted_server import ScriptedServer, Step

from peb_core import BASELINES, RunError, ScenarioFile, read_manifest, read_records, run_system
from peb_core._warn import PebWarning
from peb_core.runs import RESPONSES
from peb_core.systems import PROTOCOLS, ModelSystem, get_protocol
from peb_core.systems._local import file_sha256

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "runs" / "baselines" / "fail_and_report"
"""A checked-in run; the test below strips its manifest to one that predates versions and
digests (as the first checked-in runs' manifests did)."""


@pytest.fixture
def server() -> Any:
    s = ScriptedServer().start()
    yield s
    s.stop()


@pytest.fixture
def dd(families: dict[str, ScenarioFile]) -> ScenarioFile:
    return families["due_diligence_v1"]


def _model(server: ScriptedServer, dd: ScenarioFile, tmp_path: Path, **kw: Any) -> ModelSystem:
    return ModelSystem(
        model="openai/scripted",
        families=[dd],
        api_base=server.url,
        cache_folder=tmp_path / "cache",
        **kw,
    )


def _edit_manifest(run: Path, **changes: Any) -> None:
    path = run / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if isinstance(value, dict):
            data[key] = {**data.get(key, {}), **value}
        else:
            data[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_baseline_run_records_the_versions_that_made_it(tmp_path: Path, dd: ScenarioFile) -> None:
    manifest = run_system(BASELINES["fail_and_report"], [dd], tmp_path / "run", seeds=[11])
    assert manifest.package_version == version("partial-evidence-bench")
    assert manifest.versions["python"] == platform.python_version()
    for name in ("litellm", "pydantic", "polars"):
        assert manifest.versions[name] == version(name)
    assert manifest.digests == {} and manifest.earlier_versions == []
    assert read_manifest(tmp_path / "run") == manifest


def test_a_model_run_records_its_protocol_digest(
    server: ScriptedServer, tmp_path: Path, dd: ScenarioFile
) -> None:
    system = _model(server, dd, tmp_path, protocol=get_protocol("plain@1"))
    manifest = run_system(system, [dd], tmp_path / "run", seeds=[11])
    assert manifest.counts.ok == 6
    assert manifest.versions["litellm"] == version("litellm")
    assert manifest.digests == {"protocol_text": PROTOCOLS["plain@1"].digest}
    assert read_manifest(tmp_path / "run").digests == manifest.digests


def test_the_protocol_digest_follows_the_prompt_text() -> None:
    digests = {p.id: p.digest for p in PROTOCOLS.values()}
    assert len(set(digests.values())) == len(digests)
    base = PROTOCOLS["structured_gap@1"]
    assert replace(base).digest == base.digest  # a pure function of the text

    def reworded(view: Any) -> list[dict[str, str]]:
        messages = base.render(view)
        return [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + "."}]

    assert replace(base, render=reworded).digest != base.digest


def test_resuming_under_another_litellm_warns_naming_it_and_resumes(
    tmp_path: Path, dd: ScenarioFile
) -> None:
    run = tmp_path / "run"
    run_system(BASELINES["fail_and_report"], [dd], run, seeds=[11], limit=2)
    old = read_manifest(run)
    _edit_manifest(run, versions={"litellm": "1.82.6"})
    now = version("litellm")
    expected = rf"resuming a run made with other versions: litellm 1\.82\.6 -> {now}$"
    with pytest.warns(PebWarning, match=expected):
        manifest = run_system(BASELINES["fail_and_report"], [dd], run, seeds=[11])
    assert (manifest.counts.n_tasks, manifest.counts.ok) == (6, 6)
    assert manifest.versions["litellm"] == now
    assert manifest.earlier_versions == [
        {"partial-evidence-bench": old.package_version, **old.versions, "litellm": "1.82.6"}
    ]
    records, _ = read_records(run / RESPONSES)
    assert len(records) == 6


def test_another_prompt_text_is_a_different_run(
    server: ScriptedServer, tmp_path: Path, dd: ScenarioFile
) -> None:
    run = tmp_path / "run"
    system = _model(server, dd, tmp_path)
    run_system(system, [dd], run, seeds=[11], limit=2)
    _edit_manifest(run, digests={"protocol_text": "0" * 64})
    expected = (
        f"holds a different run: protocol text 000000000000 -> {system.protocol.digest[:12]} "
        r"\(what the model is told changed: a new protocol text or prompt option\); "
    )
    with pytest.raises(RunError, match=expected):
        run_system(system, [dd], run, seeds=[11])
    assert server.script.requests == 2


def test_a_longer_timeout_resumes_the_run_and_retries_what_timed_out(
    server: ScriptedServer, tmp_path: Path, dd: ScenarioFile
) -> None:
    """The timeout says how long to wait, not what the run is: a run whose tasks timed out is
    resumed with a longer one (and records it), where another temperature is refused."""
    run = tmp_path / "run"
    server.script.steps = [Step(delay=6.0), Step(delay=6.0)]
    first = run_system(
        _model(server, dd, tmp_path, timeout_s=2.0, retries=0, use_cache=False),
        [dd],
        run,
        seeds=[11],
        concurrency=1,
    )
    assert (first.counts.ok, first.counts.error) == (4, 2)
    assert first.config["timeout_s"] == 2.0
    longer = _model(server, dd, tmp_path, timeout_s=30.0, retries=0, use_cache=False)
    manifest = run_system(longer, [dd], run, seeds=[11])
    assert (manifest.counts.ok, manifest.counts.error) == (6, 0)
    assert manifest.config["timeout_s"] == 30.0 and manifest.started_at == first.started_at
    with pytest.raises(RunError, match=r"holds a different run: temperature 0\.0 -> 0\.5; "):
        run_system(_model(server, dd, tmp_path, temperature=0.5), [dd], run, seeds=[11])


def test_an_old_manifest_loads_and_resumes_with_a_warning(
    tmp_path: Path, families: dict[str, ScenarioFile]
) -> None:
    run = tmp_path / "old"
    shutil.copytree(CHECKED_IN, run, ignore=shutil.ignore_patterns("scores.*"))
    data = json.loads((run / "manifest.json").read_text())
    for key in ("versions", "digests", "earlier_versions"):
        data.pop(key, None)
    (run / "manifest.json").write_text(json.dumps(data))
    old = read_manifest(run)
    assert old.versions == {} and old.digests == {} and old.earlier_versions == []
    with pytest.warns(
        PebWarning,
        match="made with other versions: python unrecorded -> .*; litellm unrecorded -> ",
    ):
        manifest = run_system(BASELINES["fail_and_report"], list(families.values()), run)
    assert manifest.counts.ok == manifest.counts.n_tasks == old.counts.n_tasks
    assert manifest.earlier_versions == [{"partial-evidence-bench": old.package_version}]


def test_peb_run_names_each_version_that_changed(tmp_path: Path) -> None:
    run = tmp_path / "run"

    def peb_run() -> subprocess.CompletedProcess[str]:
        return peb_process(
            "run", "--system", "fail_and_report", "--family", "due_diligence_v1",
            "--seeds", "11", "--out", str(run), timeout=120,
        )  # fmt: skip

    def said(done: subprocess.CompletedProcess[str]) -> list[str]:
        """What `peb` said on stderr, apart from its progress line."""
        assert done.returncode == 0, done.stderr
        return [line for line in done.stderr.splitlines() if line.startswith("peb: ")]

    assert said(peb_run()) == []
    _edit_manifest(run, versions={"pydantic": "2.7.0", "python": "3.11.0"})
    (line,) = said(peb_run())
    assert line.startswith(f"peb: warning: {run}: resuming a run made with other versions: ")
    assert f"python 3.11.0 -> {platform.python_version()}" in line
    assert f"pydantic 2.7.0 -> {version('pydantic')}" in line
    assert "litellm" not in line


def test_a_gguf_file_is_hashed_once_per_path_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 4096)
    first = file_sha256(gguf)
    assert first == hashlib.sha256(gguf.read_bytes()).hexdigest()
    stat = gguf.stat()
    # The same size and mtime: taken from the cache, not read again.
    gguf.write_bytes(b"GGUF" + bytes(reversed(range(256))) * 4096)
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_sha256(gguf) == first
    # A new mtime: hashed again.
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = file_sha256(gguf)
    assert second == hashlib.sha256(gguf.read_bytes()).hexdigest() != first


def test_an_embedded_model_run_records_its_gguf_digest_and_refuses_another(
    server: ScriptedServer, tmp_path: Path, dd: ScenarioFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF tiny weights")
    system = ModelSystem(
        model="local/tiny",
        families=[dd],
        endpoint=("openai/tiny", server.url),
        model_file=gguf,
        cache_folder=tmp_path / "cache",
    )
    run = tmp_path / "run"
    manifest = run_system(system, [dd], run, seeds=[11], limit=1)
    digest = hashlib.sha256(b"GGUF tiny weights").hexdigest()
    assert manifest.digests["model_file"] == digest
    gguf.write_bytes(b"GGUF other weights")
    with pytest.raises(RunError, match=rf"model file {digest[:12]} -> "):
        run_system(system, [dd], run, seeds=[11])
