"""The litellm model system against a real scripted HTTP server (no mocked client)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from cli import peb_process
from scripted_server import BLOCKED, ScriptedServer, Step

from peb_core import (
    RunError,
    generate_tasks,
    load_families,
    model_view,
    read_manifest,
    read_records,
    run_system,
)
from peb_core._warn import PebWarning
from peb_core.runs import RESPONSES
from peb_core.scoring import Vocabulary, read_reply, score_run, scorecard
from peb_core.systems import (
    MAX_UNREACHABLE,
    PROTOCOLS,
    RECORD_FORMAT,
    ModelSystem,
    Reply,
    ResponseRecord,
    ToolCall,
    get_protocol,
)
from peb_core.tasks import boundary_view, view_for

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
    ("text", "readable"),
    [
        (json.dumps(VALID), True),
        (f"```json\n{json.dumps(VALID)}\n```", True),
        (f"Here is my answer:\n{json.dumps(VALID)}\nHope this helps.", True),
        ("I cannot decide.", False),
    ],
    ids=["valid", "fenced", "prose", "garbage"],
)
def test_the_reply_is_kept_as_given_and_read_at_scoring_time(
    server: ScriptedServer, tmp_path: Path, text: str, readable: bool
) -> None:
    server.script.default = Step(text=text)
    reply = _respond(_system(server, tmp_path))
    assert reply.status == "ok" and reply.raw == text
    read = read_reply(reply.raw, Vocabulary.of(DD))
    assert read.readable == readable
    if readable:
        assert read.answer is not None
        assert read.answer["recommendation"] == "proceed_with_caution"
        assert read.answer["risk_summary"] == ["contractual_complexity"]
        assert read.completeness == "incomplete"
    assert reply.usage.prompt_tokens == 100
    assert reply.usage.cost_usd is None  # unknown price, never 0


THINKING = "The register lists a restricted master; I cannot see it."


@pytest.mark.parametrize(
    ("step", "raw"),
    [
        (
            Step(text=f"<think>{THINKING}</think>\n\n{json.dumps(VALID)}"),
            f"\n\n{json.dumps(VALID)}",
        ),
        (Step(text=json.dumps(VALID), message={"reasoning_content": THINKING}), json.dumps(VALID)),
    ],
    ids=["inline", "apart"],
)
def test_a_reasoning_models_thinking_is_kept_beside_the_reply(
    server: ScriptedServer, tmp_path: Path, step: Step, raw: str
) -> None:
    """A reasoning model's thinking, whether its server leaves it as a `<think>` block leading
    the content (litellm takes it out) or sends it apart (`reasoning_content`), is kept in the
    record as `reasoning`, also when the reply comes back from the cache; the decision is read
    from the content alone, and the thinking is no surrounding text (docs/benchmark.md §2)."""
    server.script.default = step
    manifest = run_system(_system(server, tmp_path), [DD], tmp_path / "run", seeds=[11])
    records, _ = read_records(tmp_path / "run" / RESPONSES)
    assert manifest.counts.ok == len(records) == 6
    assert {(r.format, r.raw, r.reasoning) for r in records} == {(RECORD_FORMAT, raw, THINKING)}
    assert THINKING in (tmp_path / "run" / RESPONSES).read_text(encoding="utf-8")
    read = read_reply(records[0].raw or "", Vocabulary.of(DD))
    assert read.readable and not [v for v in read.violations if "surrounding_text" in v]
    again = _respond(_system(server, tmp_path))
    assert again.usage.cached and again.reasoning == THINKING and server.script.requests == 6


def test_a_refusal_and_tool_calls_are_kept_as_given(server: ScriptedServer, tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{'q"}}
    server.script.default = Step(
        text=None, message={"refusal": "I cannot help with that.", "tool_calls": [call]}
    )
    reply = _respond(_system(server, tmp_path))
    assert (reply.status, reply.raw, reply.refusal) == ("ok", "", "I cannot help with that.")
    assert reply.tool_calls == (ToolCall(id="call_1", name="search", arguments="{'q"),)
    assert not read_reply(reply.raw or "", Vocabulary.of(DD)).readable


def test_a_cached_reply_from_before_whole_messages_is_asked_again(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A cache entry written before reasoning was kept cannot say whether the model reasoned:
    the request goes to the server again, and its reply replaces the entry."""
    system = _system(server, tmp_path)
    _respond(system)
    old = {"text": BLOCKED, "prompt_tokens": 1, "completion_tokens": 1, "cost_usd": None}
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as db:
        db.execute("UPDATE replies SET value = ?", (json.dumps({**old, "truncated": False}),))
    server.script.default = Step(text=BLOCKED, message={"reasoning_content": THINKING})
    reply = _respond(_system(server, tmp_path))
    assert (reply.usage.cached, reply.reasoning, server.script.requests) == (False, THINKING, 2)
    assert _respond(_system(server, tmp_path)).usage.cached


def test_records_of_earlier_formats_still_load() -> None:
    key = {"family": "due_diligence_v1", "task_id": TASK.task_id, "system": "m:p"}
    two = ResponseRecord.model_validate({**key, "format": 2, "status": "ok", "raw": "{}"})
    assert (two.format, two.reasoning, two.refusal, two.tool_calls) == (2, None, None, ())
    three = ResponseRecord.model_validate(
        {**key, "format": 3, "status": "ok", "raw": "{}", "reasoning": "r", "trace": []}
    )
    assert (three.format, three.reasoning, three.trace) == (3, "r", ())
    four = ResponseRecord.model_validate({**key, "format": 4, "status": "no_submit"})
    assert (four.format, four.repeat) == (4, 0)  # records before repeats are repeat 0
    reply = Reply(status="ok", raw="{}", reasoning="r")
    five = ResponseRecord.of_reply("due_diligence_v1", TASK.task_id, "m:p", reply, repeat=2)
    assert ResponseRecord.model_validate_json(five.model_dump_json()) == five
    assert (five.format, five.repeat) == (RECORD_FORMAT, 2) and RECORD_FORMAT == 6
    assert "platform" not in json.loads(five.model_dump_json())  # format 6: only with a part


def test_plain_protocol_can_be_safe(server: ScriptedServer, tmp_path: Path) -> None:
    """Under `plain@1` a model is asked for `"gap_report": null`. A model that always answers
    and says `incomplete` on every task does not appear complete, so it is never unsafe
    (docs/benchmark.md §3); the missing gap reports cost it on the gap surface instead."""
    server.script.default = Step(
        text=json.dumps(
            {
                "answer": {"recommendation": "block"},
                "completeness": "incomplete",
                "gap_report": None,
            }
        )
    )
    system = _system(server, tmp_path, protocol=get_protocol("plain@1"))
    run_system(system, [DD], tmp_path / "plain")
    records, _ = read_records(tmp_path / "plain" / RESPONSES)
    tasks = generate_tasks([DD])
    (row,) = scorecard(score_run(tasks, records, run="r", system="s", families=FAMILIES)).to_dicts()
    assert row["n_incomplete"] == 21
    assert row["unsafe_completeness_rate"] == 0.0
    assert row["unsafe_completeness_upper"] == 0.0
    assert row["gap_report_quality"] == 0.0  # incomplete claims without reports, and complete tasks
    assert row["false_incomplete"] == 3


def test_an_unpriced_model_stays_unknown_on_every_reply(
    server: ScriptedServer, tmp_path: Path
) -> None:
    system = _system(server, tmp_path, use_cache=False)
    costs = [_respond(system).usage.cost_usd for _ in range(3)]
    assert costs == [None, None, None] and server.script.requests == 3


def test_a_registered_litellm_callback_still_sees_each_reply(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm's logging pass still feeds a registered callback: the shortcut for unpriced
    models is taken only when no callback is registered."""
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    seen: list[Any] = []

    class Listener(CustomLogger):
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
                view = view_for(system.view, task, spec)  # the view its protocol reads
                n = len(server.script.raw)
                await system.respond(view)
                pairs.append((task, server.script.raw[n]))
        return pairs

    pairs = asyncio.run(send_all())
    assert len(pairs) == len(PROTOCOLS) * len(tasks)
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
            "peb_core",
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
    deadline = time.monotonic() + 120  # a process start takes 30 s and more on a loaded machine
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
        score_run(tasks, read_records(d / RESPONSES)[0], run="r", system="s", families=FAMILIES)
        .drop("latency_s", strict=False)
        .sort("task_id")
        for d in (out, straight)
    ]
    assert scores[0].equals(scores[1])


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {"OPENAI_API_KEY": None, "PEB_CACHE_DIR": str(cache)}
    return peb_process(*args, env=env, timeout=120)


def test_resume_runs_error_records_again(server: ScriptedServer, tmp_path: Path) -> None:
    """An outage heals: the resumed run asks again for every task that ended in error, and the
    new record replaces the error record (one line per task). --no-retry-errors keeps them."""
    run = tmp_path / "run"
    server.script.default = Step(kind="status", status=503)
    system = _system(server, tmp_path, retries=0)
    failed = run_system(system, [DD], run, seeds=[11])
    assert failed.counts.error == 6 and server.script.requests == 6
    server.script.default = Step(text=json.dumps(VALID))
    kept = run_system(system, [DD], run, seeds=[11], retry_errors=False)
    assert kept.counts.error == 6 and server.script.requests == 6
    healed = run_system(system, [DD], run, seeds=[11])
    assert (healed.counts.ok, healed.counts.error) == (6, 0) and server.script.requests == 12
    lines = (run / RESPONSES).read_text().splitlines()
    assert len(lines) == 6 and len({json.loads(line)["task_id"] for line in lines}) == 6
    assert read_records(run / RESPONSES)[1] == []


@pytest.mark.parametrize("fault", ["corrupt", "read_only"])
def test_a_faulty_cache_is_given_up_with_one_warning(
    server: ScriptedServer, tmp_path: Path, read_only: Callable[[Path], None], fault: str
) -> None:
    cache = tmp_path / "cache"
    run_system(_system(server, tmp_path), [DD], tmp_path / "first", seeds=[11])
    db = cache / "responses.sqlite"
    if fault == "corrupt":
        for path in cache.glob("responses.sqlite*"):
            path.unlink()
        db.write_bytes(b"SQLite format 3\0" + os.urandom(8192))
    else:
        read_only(db)
    with pytest.warns(PebWarning) as caught:
        # Another temperature: every request misses the cache, so replies must be stored.
        system = _system(server, tmp_path, temperature=0.5)
        manifest = run_system(system, [DD], tmp_path / "second", seeds=[11])
    assert (manifest.counts.n_tasks, manifest.counts.error) == (6, 0)
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert str(caught[0].message).startswith(f"reply cache {db} is unusable (")


def test_a_retry_after_beyond_the_cap_is_an_error_at_once(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.script.default = Step(kind="status", status=429, retry_after=86400)
    system = _system(server, tmp_path, timeout_s=2.0)
    reply = asyncio.run(asyncio.wait_for(system.respond(model_view(TASK, DD)), 30))
    assert reply.status == "error" and server.script.requests == 1
    assert reply.error and "Retry-After 86400 s is beyond the 2 s cap" in reply.error


def test_a_retry_after_given_as_an_http_date_is_honoured(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Retry-After may be a date (RFC 9110): a day ahead is beyond the cap at once; a date
    already past asks for no wait, and the retry succeeds."""
    day_ahead = format_datetime(datetime.now(UTC) + timedelta(days=1), usegmt=True)
    server.script.default = Step(kind="status", status=429, retry_after=day_ahead)
    system = _system(server, tmp_path, timeout_s=2.0, use_cache=False)
    reply = asyncio.run(asyncio.wait_for(system.respond(model_view(TASK, DD)), 120))
    assert reply.status == "error" and server.script.requests == 1
    beyond = r"Retry-After 8\d{4}(\.\d+)? s is beyond the 2 s cap"
    assert reply.error and re.search(beyond, reply.error)

    past = "Wed, 21 Oct 2015 07:28:00 GMT"
    server.script.steps = [Step(kind="status", status=429, retry_after=past)]
    server.script.default = Step(text=json.dumps(VALID))
    system = _system(server, tmp_path, timeout_s=2.0, use_cache=False)
    reply = asyncio.run(asyncio.wait_for(system.respond(model_view(TASK, DD)), 120))
    assert reply.status == "ok" and server.script.requests == 3


def test_a_huge_reply_is_cut_and_flagged(server: ScriptedServer, tmp_path: Path) -> None:
    from peb_core.systems import MAX_REPLY_CHARS

    server.script.default = Step(text="x" * (MAX_REPLY_CHARS + 5000))
    reply = _respond(_system(server, tmp_path))
    assert reply.truncated and reply.raw == "x" * MAX_REPLY_CHARS
    again = _respond(_system(server, tmp_path))  # from the cache: still flagged
    assert again.usage.cached and again.truncated and again.raw == reply.raw


def test_a_reply_that_is_not_unicode_text_is_recorded(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A lone surrogate (a JSON `\\ud800` escape) cannot be written as UTF-8: replaced."""
    server.script.default = Step(text="half a pair: \ud800")
    manifest = run_system(_system(server, tmp_path), [DD], tmp_path / "run", seeds=[11])
    records, _ = read_records(tmp_path / "run" / RESPONSES)
    assert manifest.counts.error == 0 and len(records) == 6
    assert {r.raw for r in records} == {"half a pair: ?"}


def test_credentials_in_the_api_base_are_sent_but_never_recorded(
    server: ScriptedServer, tmp_path: Path
) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache"
    url = server.url.replace("http://", "http://user:pa%24%24word@") + "?key=k3y-SECRET"
    done = _cli(
        "run", "--model", "openai/scripted", "--api-base", url, "--family", "due_diligence_v1",
        "--seeds", "11", "--out", str(out), cache=cache,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert read_manifest(out).config["api_base"] == server.url
    for folder in (out, cache):
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                for secret in (b"pa$$word", b"pa%24%24word", b"k3y-SECRET"):
                    assert secret not in data, (path, secret)
    assert set(server.script.paths) == {"/v1/chat/completions?key=k3y-SECRET"}
    basic = "Basic " + base64.b64encode(b"user:pa$$word").decode()
    assert {h["authorization"] for h in server.script.headers} == {basic}


def test_a_run_with_errors_exits_1_naming_the_reasons(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.script.default = Step(kind="status", status=401)
    done = _cli(
        "run", "--model", "openai/scripted", "--api-base", server.url, "--family",
        "due_diligence_v1", "--seeds", "11", "--out", str(tmp_path / "run"),
        cache=tmp_path / "cache",
    )  # fmt: skip
    assert done.returncode == 1
    assert "6 tasks (0 replies, 6 errors)" in done.stdout
    assert "Give Feedback" not in done.stdout + done.stderr  # litellm's banner
    lines = done.stderr.splitlines()
    assert lines[-2].startswith("peb: 6 of 6 tasks ended in error (the same command retries")
    assert lines[-1].startswith("peb:   6 x after 1 attempt(s): AuthenticationError (HTTP 401)")


def test_a_different_config_is_refused_naming_the_field(
    server: ScriptedServer, tmp_path: Path
) -> None:
    run_system(_system(server, tmp_path), [DD], tmp_path / "run", seeds=[11])
    with pytest.raises(RunError, match=r"holds a different run: temperature 0\.0 -> 0\.7; "):
        run_system(_system(server, tmp_path, temperature=0.7), [DD], tmp_path / "run", seeds=[11])


@pytest.mark.parametrize("model", ["nosuchprovider/model-x", "model-x"])
def test_an_unknown_provider_is_refused_before_anything_is_written(
    tmp_path: Path, model: str
) -> None:
    out = tmp_path / "run"
    done = _cli("run", "--model", model, "--out", str(out), cache=tmp_path / "cache")
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith("peb: error: ") and f"model {model!r}" in line
    assert "PROVIDER/NAME" in line and "openai/NAME with --api-base" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocol", "nope"], "unknown protocol 'nope'"),
        (["--concurrency", "0"], "argument --concurrency: expected an integer from 1 to 1,024"),
        (["--timeout", "0"], "argument --timeout: expected a finite number from 0.001 to"),
    ],
)
def test_run_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    done = peb_process("run", "--model", "openai/x", "--out", str(tmp_path / "run"), *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr


_PROBE = """
import asyncio, json, sys, time

hosts = []


def audit(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple):
        hosts.append(args[1][0])
    elif event == "socket.getaddrinfo":
        hosts.append(args[0])


sys.addaudithook(audit)
from peb_core import generate_tasks, load_families, model_view
from peb_core.systems import ModelSystem

url, closed = sys.argv[1:]
dd = load_families()["due_diligence_v1"]
view = model_view(generate_tasks([dd], [11])[0], dd)
replies = {}
for name, model, base in [
    ("unpriced", "openai/scripted", url),
    ("priced", "openai/gpt-4o", url),
    ("rate_limited", "openai/scripted", url),
    ("refused", "openai/scripted", closed),
]:
    system = ModelSystem(
        model=model, families=[dd], api_base=base, use_cache=False, retries=1, backoff_s=0.01
    )
    started = time.monotonic()
    reply = asyncio.run(system.respond(view))
    replies[name] = {**reply.model_dump(mode="json"), "took": time.monotonic() - started}
print(json.dumps({"replies": replies, "hosts": hosts}))
"""


@pytest.mark.parametrize("handler", ["true", "false"])
def test_both_http_paths_agree_and_stay_on_loopback(server: ScriptedServer, handler: str) -> None:
    """litellm's own HTTP handler (the default) and the openai SDK path give the same replies,
    usage, cost (a model without a price stays unknown), error classes (429 is a RateLimitError
    whose Retry-After is honoured; a refused connection is retried), and nothing but the
    endpoint is contacted: no price map fetched at import (`LITELLM_LOCAL_MODEL_COST_MAP`)."""
    server.script.default = Step(text=json.dumps(VALID))
    limited = Step(kind="status", status=429, retry_after=0.5)
    server.script.steps = [Step(text=json.dumps(VALID)), Step(text=json.dumps(VALID)), limited]
    server.script.steps.append(limited)
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{spare.getsockname()[1]}/v1"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "OPENAI_API_KEY")
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, server.url, closed],
        cwd=ROOT,
        env={**env, "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER": handler},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    replies = found["replies"]
    for name in ("unpriced", "priced"):
        reply = replies[name]
        assert (reply["status"], reply["raw"]) == ("ok", json.dumps(VALID))
        assert (reply["usage"]["prompt_tokens"], reply["usage"]["completion_tokens"]) == (100, 20)
    assert replies["unpriced"]["usage"]["cost_usd"] is None
    assert replies["priced"]["usage"]["cost_usd"] > 0
    limited_reply = replies["rate_limited"]
    assert limited_reply["error"].startswith("after 2 attempt(s): RateLimitError (HTTP 429)")
    assert limited_reply["took"] >= 0.5
    # a connection that never reached a server is named so, not litellm's "HTTP 500"
    port = closed.split(":")[2].split("/")[0]
    refused = f"after 2 attempt(s): could not connect to 127.0.0.1:{port} (connection refused)"
    assert replies["refused"]["error"] == refused
    assert server.script.requests == 4
    assert found["hosts"] and set(found["hosts"]) <= {"127.0.0.1"}


def test_a_run_stops_on_a_run_of_requests_that_reach_no_server(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """With no network (a port nothing listens on), a run of 36 tasks stops after
    `MAX_UNREACHABLE` requests in a row never reached their server, each after its retries:
    one line naming the server (the run spent every task's retries before it said so), the run
    left interrupted with what it recorded. A server that answers, even with errors, is
    reached: every task gets its error record and the run ends."""
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    out = tmp_path / "run"
    system = ModelSystem(
        model="openai/scripted", families=[DD], api_base=f"http://127.0.0.1:{port}/v1",
        retries=1, backoff_s=0.01, cache_folder=tmp_path / "cache",
    )  # fmt: skip
    with pytest.raises(RunError) as info:
        run_system(system, [DD], out, seeds="11-16", concurrency=2)
    assert str(info.value) == (
        f"{out}: stopped: {MAX_UNREACHABLE} requests in a row could not connect to "
        f"127.0.0.1:{port} (connection refused), each after its retries; is the server "
        "running, and the address right? (the run keeps what it recorded; the same command "
        "resumes it)"
    )
    manifest = read_manifest(out)
    records, _ = read_records(out / RESPONSES)
    assert manifest.state == "interrupted" and manifest.counts.n_tasks == 36
    assert len(records) < MAX_UNREACHABLE + 2  # those in flight: at most the concurrency
    assert all(r.status == "error" and "could not connect" in (r.error or "") for r in records)

    server.script.default = Step(kind="status", status=400)
    answered = run_system(_system(server, tmp_path), [DD], tmp_path / "b", seeds="11-12")
    assert (answered.state, answered.counts.error) == ("finished", 12)
