"""The litellm model system against a real scripted HTTP server (no mocked client)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_server import BLOCKED, ScriptedServer, Step

from peb_core import generate_tasks, load_families, model_view, read_records, run_system
from peb_core.runs import RESPONSES
from peb_core.scoring import score_run
from peb_core.systems import PROTOCOLS, ModelSystem, get_protocol
from peb_core.tasks import boundary_view

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]
TASK = generate_tasks([DD], [11])[0]
VALID = {
    "answer": {
        "recommendation": "Proceed With Caution",
        "material_flags": [],
        "risk_summary": ["contractual complexity"],
    },
    "completeness": "Incomplete",
    "gap_report": None,
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


def _system(server: ScriptedServer, tmp_path: Path, **kw: Any) -> ModelSystem:
    settings: dict[str, Any] = {
        "timeout_s": 2.0,
        "retries": 2,
        "backoff_s": 0.01,
        "cache_folder": tmp_path / "cache",
        **kw,
    }
    return ModelSystem(model="openai/scripted", families=[DD], api_base=server.url, **settings)


def _respond(system: ModelSystem) -> Any:
    return asyncio.run(system.respond(model_view(TASK, DD)))


@pytest.mark.parametrize(
    ("text", "status"),
    [
        (json.dumps(VALID), "ok"),
        (f"```json\n{json.dumps(VALID)}\n```", "ok"),
        (f"Here is my answer:\n{json.dumps(VALID)}\nHope this helps.", "ok"),
        ("I cannot decide.", "invalid"),
        ('{"answer": {"recommendation": "maybe"}, "completeness": "complete"}', "invalid"),
    ],
    ids=["valid", "fenced", "prose", "garbage", "out_of_vocabulary"],
)
def test_parses_each_behaviour(
    server: ScriptedServer, tmp_path: Path, text: str, status: str
) -> None:
    server.script.default = Step(text=text)
    reply = _respond(_system(server, tmp_path))
    assert reply.status == status
    if status == "ok":
        assert reply.response.answer["recommendation"] == "proceed_with_caution"
        assert reply.response.answer["risk_summary"] == ["contractual_complexity"]
        assert reply.response.completeness == "incomplete"
    else:
        assert reply.raw == text
    assert reply.usage.prompt_tokens == 100
    assert reply.usage.cost_usd is None  # unknown price, never 0


def test_an_unpriced_model_stays_unknown_on_every_reply(
    server: ScriptedServer, tmp_path: Path
) -> None:
    system = _system(server, tmp_path, use_cache=False)
    costs = [_respond(system).usage.cost_usd for _ in range(3)]
    assert costs == [None, None, None] and server.script.requests == 3


def test_a_registered_litellm_callback_still_sees_each_reply(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The logging pass is skipped only when nobody listens to it."""
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    seen: list[Any] = []

    class Listener(CustomLogger):  # type: ignore[misc]
        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            seen.append(response_obj)

    monkeypatch.setattr(litellm, "callbacks", [Listener()])
    server.script.default = Step(text=json.dumps(VALID))

    async def respond_and_wait() -> str:
        reply = await _system(server, tmp_path).respond(model_view(TASK, DD))
        for _ in range(100):  # litellm logs in a task on the same loop
            if seen:
                break
            await asyncio.sleep(0.05)
        return reply.status

    assert asyncio.run(respond_and_wait()) == "ok"
    assert len(seen) == 1


def test_a_priced_model_records_litellm_cost(server: ScriptedServer, tmp_path: Path) -> None:
    import litellm

    system = ModelSystem(
        model="openai/gpt-4o", families=[DD], api_base=server.url, cache_folder=tmp_path / "c"
    )
    reply = _respond(system)
    price = litellm.model_cost["gpt-4o"]
    expected = 100 * price["input_cost_per_token"] + 20 * price["output_cost_per_token"]
    assert reply.usage.cost_usd == pytest.approx(expected) and expected > 0


def test_request_carries_schema_and_protocol(server: ScriptedServer, tmp_path: Path) -> None:
    system = _system(server, tmp_path)
    _respond(system)
    body = server.script.bodies[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["title"] == "DueDiligenceV1Response"
    assert system.config()["protocol"] == "structured_gap@1"
    local = _system(server, tmp_path, format_style="json_object", use_cache=False)
    _respond(local)
    assert server.script.bodies[1]["response_format"]["type"] == "json_object"
    assert "schema" in server.script.bodies[1]["response_format"]


@pytest.mark.parametrize(
    "failure",
    [
        Step(kind="status", status=429, retry_after=0.05),
        Step(kind="status", status=500),
        Step(kind="drop"),
        Step(delay=1.5),
    ],
    ids=["429", "500", "dropped", "timeout"],
)
def test_retries_then_succeeds(server: ScriptedServer, tmp_path: Path, failure: Step) -> None:
    server.script.steps = [failure, failure]
    server.script.default = Step(text=json.dumps(VALID))
    reply = _respond(_system(server, tmp_path, timeout_s=0.5))
    assert reply.status == "ok"
    assert len(server.script.bodies) == 3


def test_persistent_failure_is_recorded(server: ScriptedServer, tmp_path: Path) -> None:
    server.script.default = Step(kind="status", status=503)
    manifest = run_system(_system(server, tmp_path, retries=1), [DD], tmp_path / "run", seeds=[11])
    records, _ = read_records(tmp_path / "run" / RESPONSES)
    assert manifest.counts.error == len(records) == 6
    assert all(r.error and "503" in r.error for r in records)
    assert len(server.script.bodies) == 12


def test_second_identical_run_is_served_from_cache(server: ScriptedServer, tmp_path: Path) -> None:
    run_system(_system(server, tmp_path), [DD], tmp_path / "a", seeds=[11])
    sent = len(server.script.bodies)
    assert sent == 6
    run_system(_system(server, tmp_path), [DD], tmp_path / "b", seeds=[11])
    assert len(server.script.bodies) == sent
    records, _ = read_records(tmp_path / "b" / RESPONSES)
    assert all(r.usage.cached for r in records)


def test_api_key_leaves_no_trace(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET")
    server.script.steps = [Step(kind="status", status=401)]
    run_system(_system(server, tmp_path), [DD], tmp_path / "run", seeds=[11])
    for folder in (tmp_path / "run", tmp_path / "cache"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert b"sk-test-SECRET" not in path.read_bytes(), path


def test_no_hidden_document_reaches_the_wire(server: ScriptedServer, tmp_path: Path) -> None:
    tasks = generate_tasks(FAMILIES.values())
    assert len(tasks) == 24 * len(FAMILIES)
    systems = {
        p: ModelSystem(
            model="openai/scripted",
            families=list(FAMILIES.values()),
            protocol=PROTOCOLS[p],
            api_base=server.url,
            use_cache=False,
        )
        for p in PROTOCOLS
    }

    async def send_all() -> list[tuple[Any, bytes]]:
        pairs = []
        for system in systems.values():
            for task in tasks:
                spec = FAMILIES[task.family]
                view = (
                    boundary_view(task, spec)
                    if system.view == "boundary"
                    else model_view(task, spec)
                )
                n = len(server.script.raw)
                await system.respond(view)
                pairs.append((task, server.script.raw[n]))
        return pairs

    pairs = asyncio.run(send_all())
    assert len(pairs) == 3 * len(tasks)
    hidden_seen = 0
    for task, raw in pairs:
        text = " ".join(m["content"] for m in json.loads(raw)["messages"])
        for doc in task.hidden_documents:
            hidden_seen += 1
            assert doc.body not in text, (task.task_id, doc.doc_id)
            assert doc.title not in text, (task.task_id, doc.doc_id)
        for doc in task.authorized_documents:
            assert doc.body in text
    assert hidden_seen > 0


def test_boundary_protocol_names_withheld_scopes() -> None:
    task = next(t for t in generate_tasks([DD], [11]) if t.task_id == "hidden_liability_annex__s11")
    messages = get_protocol("boundary_metadata").render(boundary_view(task, DD))
    assert "target_internal" in messages[0]["content"]


def _peb_run(url: str, out: Path, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "peb_core.cli",
            "run",
            "--model",
            "openai/scripted",
            "--api-base",
            url,
            "--family",
            "due_diligence_v1",
            "--concurrency",
            "1",
            "--out",
            str(out),
            "--timeout",
            "5",
        ],
        cwd=ROOT,
        env={**os.environ, "PEB_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_run_resumes_to_the_same_scores(server: ScriptedServer, tmp_path: Path) -> None:
    answers = [BLOCKED, json.dumps(VALID), "garbage"]
    server.script.default = Step(text=BLOCKED, delay=0.1)
    server.script.steps = [Step(text=answers[i % 3], delay=0.1) for i in range(8)]
    out = tmp_path / "killed"
    proc = _peb_run(server.url, out, tmp_path / "cache")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        path = out / RESPONSES
        if path.exists() and len(path.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial, _ = read_records(out / RESPONSES)
    assert 5 <= len(partial) < 24
    again = _peb_run(server.url, out, tmp_path / "cache")
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    records, problems = read_records(out / RESPONSES)
    assert not problems
    assert sorted(r.task_id for r in records) == sorted({r.task_id for r in records})
    assert len(records) == 24

    by_task = {r.task_id: r for r in records}
    server.script.steps = [
        Step(text=by_task[t.task_id].raw or BLOCKED) for t in generate_tasks([DD])
    ]
    straight = tmp_path / "straight"
    run_system(
        ModelSystem(
            model="openai/scripted",
            families=[DD],
            api_base=server.url,
            cache_folder=tmp_path / "cache2",
        ),
        [DD],
        straight,
        concurrency=1,
    )
    tasks = generate_tasks([DD])
    scores = [
        score_run(tasks, read_records(d / RESPONSES)[0], run="r", system="s")
        .drop("latency_s", strict=False)
        .sort("task_id")
        for d in (out, straight)
    ]
    assert scores[0].equals(scores[1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocol", "nope"], "unknown protocol 'nope'"),
        (["--concurrency", "0"], "argument --concurrency: expected an integer >= 1"),
        (["--timeout", "0"], "argument --timeout: expected a finite number > 0"),
    ],
)
def test_run_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "peb_core.cli", "run", "--model", "openai/x",
         "--out", str(tmp_path / "run"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr
