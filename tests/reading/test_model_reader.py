"""The optional model reader of prose (`peb read --prose-reader MODEL`, docs/benchmark.md §2.1)
against a real OpenAI-compatible server on 127.0.0.1 (tests/scripted_server.py): a structured
reading is printed beside the deterministic one with where they differ, asked once (the reply
cache), with the reading's JSON schema bounding every array; a server answering garbage, a
reading outside the vocabulary or HTTP 500 is one line and exit 2."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ScriptedServer, Step

from peb_core.frontends.cli import main
from peb_core.reading import agreement, read_prose
from peb_core.tasks import load_families

MESSAGE = (
    "On what I can see it is high, but the forensic analysis is missing; treat the disclosure "
    "as under assessment."
)
READING = {
    "answer": {"severity": "critical"},
    "completeness": "incomplete",
    "gaps": ["scope_forensics"],
    "affected": ["severity"],
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    running = ScriptedServer().start()
    yield running
    running.stop()


def _read(tmp_path: Path, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    reply = tmp_path / "reply.txt"
    reply.write_text(MESSAGE)
    return [
        "read",
        str(reply),
        "--family",
        "security_incident_v1",
        "--prose-reader",
        "openai/scripted",
        "--api-base",
        server.url,
    ]


def test_the_model_reading_is_printed_beside_the_readers_with_the_differences(
    tmp_path: Path,
    server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.script.default = Step(text=json.dumps(READING))
    args = _read(tmp_path, server, monkeypatch)
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] == {"severity": "high", "disclosure": "under_assessment"}
    assert out["model"] == READING
    assert out["disagreements"] == {
        "values": {
            "reader": ["disclosure=under_assessment", "severity=high"],
            "model": ["severity=critical"],
        }
    }
    (body,) = server.script.bodies
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["gaps"]["maxItems"] == 19  # 12 requirements and 7 scopes
    assert schema["properties"]["affected"]["maxItems"] == 3
    assert MESSAGE in json.dumps(body["messages"])
    assert main(args) == 0  # asked again: from the reply cache
    assert len(server.script.bodies) == 1
    assert json.loads(capsys.readouterr().out)["model"] == READING


@pytest.mark.parametrize(
    ("step", "needle"),
    [
        (Step(text="I think it says critical."), "answered with no JSON reading"),
        (
            Step(text=json.dumps({**READING, "answer": {"severity": "apocalyptic"}})),
            "answer.severity: 'apocalyptic' is not in the vocabulary",
        ),
        (Step(text=json.dumps({"verdict": "leak"})), "expected an object with answer"),
        (Step(kind="status", status=500, retry_after=0), "failed: after 5 attempt(s)"),
    ],
)
def test_a_model_that_answers_no_reading_is_one_line_and_exit_2(
    step: Step,
    needle: str,
    tmp_path: Path,
    server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.script.default = step
    assert main(_read(tmp_path, server, monkeypatch)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("peb: error: the prose reader model 'openai/scripted'")
    assert needle in line


def test_agreement_counts_the_messages_two_readers_read_alike_per_surface() -> None:
    spec = load_families()["security_incident_v1"]
    ours = [read_prose(MESSAGE, spec), read_prose("Severity: high.", spec)]
    theirs: list[dict[str, Any]] = [
        READING,
        {"answer": {"severity": "high"}, "completeness": None, "gaps": []},
    ]
    found = agreement(ours, theirs)
    assert (found["values"].same, found["completeness"].same, found["gaps"].same) == (1, 2, 2)
    assert found["values"].rate == 0.5


def test_a_runs_messages_are_read_both_ways_with_their_agreement(
    tmp_path: Path,
    server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`peb read --run RUN --prose-reader MODEL`: every message of a chat run is read by both
    readers. A model that reads nothing in any message agrees with the careful chat baseline's
    words on no completeness claim (each of its messages makes one), and each message differs;
    asked again, every reading comes from the reply cache."""
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    run = tmp_path / "chat"
    made = [
        "run", "--system", "chat_fail_and_report", "--interface", "chat",
        "--family", "security_incident_v1", "--seeds", "11", "--out", str(run),
    ]  # fmt: skip
    assert main(made) == 0
    n_tasks = len((run / "responses.jsonl").read_text().splitlines())
    capsys.readouterr()
    server.script.default = Step(
        text=json.dumps({"answer": {}, "completeness": None, "gaps": [], "affected": []})
    )
    args = ["read", "--run", str(run), "--prose-reader", "openai/scripted"]
    args += ["--api-base", server.url]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["messages"] == n_tasks > 0
    assert out["agreement"]["completeness"] == {"same": 0, "of": n_tasks, "rate": 0.0}
    assert len(out["disagreements"]) == n_tasks
    assert {d["message"] for d in out["disagreements"]} == {1}
    asked = len(server.script.bodies)
    assert asked == n_tasks
    assert main(args) == 0
    assert len(server.script.bodies) == asked
    assert json.loads(capsys.readouterr().out) == out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ([], "--run: give a run with --prose-reader MODEL and no reply file"),
        (["--prose-reader", "openai/scripted", "reply.txt"], "and no reply file"),
    ],
)
def test_read_run_needs_a_model_and_no_file(
    extra: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["read", "--run", str(tmp_path), *extra]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("peb: error: ") and needle in line
