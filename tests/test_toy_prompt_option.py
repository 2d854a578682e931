"""A run option that changes what a model is told, declared once from outside the package (issue
36): the toy `system_prompt_suffix` adds its words to the system message. Declared with one
`register_option` call, it is a flag of `peb run` and `peb mcp serve`, and its words reach the
model wherever a model is prompted: our loop (a one-shot model and an agent, against the
scripted server), the inspect task (a sample's input, and the requests of inspect's react()
agent) and an MCP client's `start_task`. A run records it, so a resume under other words is
refused, and without it every prompt is the protocol's own."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from cli import ROOT, peb
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation, TextContent
from scripted_server import BLOCKED, ScriptedServer, conversation_route, tool_step

from peb_core.runs import DECLARED, Option, read_manifest, register_option
from peb_core.systems import PROTOCOLS

FAMILY = "due_diligence_v1"
SUFFIX = "Toy instruction: name every document id you relied on."


def suffixed(messages: list[dict[str, str]], value: str) -> list[dict[str, str]]:
    """The toy option's edit: `value` after the system message."""
    return [
        {**m, "content": f"{m['content']}\n\n{value}"} if m["role"] == "system" else m
        for m in messages
    ]


SUFFIX_OPTION = Annotated[
    str | None,
    Option(
        "text",
        "System prompt suffix",
        "words added to the system message a model is given",
        applies="models",
        prompt=suffixed,
    ),
]


def declare() -> None:
    """The toy option, declared from outside the package with one line."""
    register_option("system_prompt_suffix", SUFFIX_OPTION)


@pytest.fixture
def suffix() -> Iterator[str]:
    declare()
    try:
        yield "system_prompt_suffix"
    finally:
        DECLARED.unregister("system_prompt_suffix")


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


def _system_messages(bodies: Sequence[dict[str, Any]]) -> list[str]:
    """The system messages of requests (inspect sends OpenAI's `developer` role)."""
    return [
        m["content"] for b in bodies for m in b["messages"] if m["role"] in ("system", "developer")
    ]


def test_our_loop_tells_a_model_and_an_agent_the_toy_option_s_words(
    suffix: str, server: ScriptedServer, tmp_path: Path
) -> None:
    server.script.route = conversation_route(
        [tool_step(("submit", {"response": json.loads(BLOCKED)}))]
    )
    common = ["--family", FAMILY, "--seeds", "11", "--limit", "1", "--api-base", server.url,
              "--no-cache"]  # fmt: skip
    runs = {
        "model": ["--model", "openai/scripted"],
        "agent": ["--model", "agent:openai/scripted", "--tier", "agent"],
    }
    for kind, argv in runs.items():
        out = tmp_path / kind
        said = peb("run", *argv, *common, "--system-prompt-suffix", SUFFIX, "--out", str(out))
        assert said.returncode == 0, said.stderr
        (system,) = set(_system_messages(server.script.bodies))
        assert system.endswith(f"\n\n{SUFFIX}"), kind
        manifest = read_manifest(out)
        assert manifest.config["prompt_options"] == {"system_prompt_suffix": SUFFIX}
        protocol = PROTOCOLS["structured_gap@1"]
        shipped = protocol.digest if kind == "model" else protocol.agent_digest
        assert manifest.digests["protocol_text"] != shipped
        # Other words are another run: its resume is refused, naming what differs.
        again = peb("run", *argv, *common, "--system-prompt-suffix", "Other words.",
                    "--out", str(out))  # fmt: skip
        assert again.returncode == 2 and "prompt_options" in again.stderr, again.stderr
        # Without the option, the model is told the protocol's own words.
        server.script.bodies.clear()
        plain = peb("run", *argv, *common, "--out", str(tmp_path / f"{kind}-plain"))
        assert plain.returncode == 0, plain.stderr
        assert not any(SUFFIX in s for s in _system_messages(server.script.bodies))
        assert read_manifest(tmp_path / f"{kind}-plain").digests["protocol_text"] == shipped
        assert "prompt_options" not in read_manifest(tmp_path / f"{kind}-plain").config
        server.script.bodies.clear()


def test_the_inspect_task_tells_its_samples_and_react_the_toy_option_s_words(
    suffix: str, server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inspect_ai = pytest.importorskip("inspect_ai", reason="the `inspect` extra is not installed")
    from test_inspect import isolated

    from peb_core.frontends.inspect.task import import_log, partial_evidence

    one_shot = partial_evidence(family=FAMILY, seeds="11", system_prompt_suffix=SUFFIX)
    first = one_shot.dataset[0].input
    assert not isinstance(first, str) and first[0].text.endswith(f"\n\n{SUFFIX}")
    plain = partial_evidence(family=FAMILY, seeds="11").dataset[0].input
    assert not isinstance(plain, str) and SUFFIX not in plain[0].text

    for var, value in isolated(tmp_path).items():
        monkeypatch.setenv(var, value)
    server.script.route = conversation_route(
        [tool_step(("submit", {"response": json.loads(BLOCKED)}))]
    )
    task = partial_evidence(family=FAMILY, seeds="11", tier="agent", system_prompt_suffix=SUFFIX)
    (evaluation,) = inspect_ai.eval(
        task,
        model="openai/scripted",
        model_args={"responses_api": False},
        model_base_url=server.url,
        max_retries=0,
        limit=1,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert evaluation.status == "success", evaluation.error
    (system,) = set(_system_messages(server.script.bodies))
    assert system.endswith(f"\n\n{SUFFIX}")
    # The log records the option, so its import replays the same start and verifies.
    imported = import_log(Path(evaluation.location), tmp_path / "imported")
    assert imported.set_aside == []
    assert imported.manifest.config["prompt_options"] == {"system_prompt_suffix": SUFFIX}


SERVE_WITH_OPTION = """
import sys
from test_toy_prompt_option import declare
declare()
from peb_core.frontends.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""A program that declares the toy option, then runs `peb` (as a user's own entry point would)."""


def _started(out: Path, *given: str) -> str:
    """What an MCP client's `start_task` of the first task returns from `peb mcp serve`."""
    args = ["-c", SERVE_WITH_OPTION, "mcp", "serve", "--family", FAMILY, "--seeds", "11"]
    params = StdioServerParameters(
        command=sys.executable,
        args=[*args, *given, "--out", str(out)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])},
        cwd=ROOT,
    )
    text: list[str] = []

    async def client() -> None:
        me = Implementation(name="toy-client", version="1")
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=me) as c:
            await c.initialize()
            started = await c.call_tool("start_task", {"task_id": "task-001"})
            block = started.content[0]
            assert not started.is_error and isinstance(block, TextContent)
            text.append(block.text)
            done = await c.call_tool("submit", {"response": json.loads(BLOCKED)})
            assert not done.is_error

    anyio.run(client)
    return text[0]


def test_an_mcp_client_s_start_holds_the_toy_option_s_words(tmp_path: Path) -> None:
    started = _started(tmp_path / "run", "--system-prompt-suffix", SUFFIX)
    assert SUFFIX in started
    manifest = read_manifest(tmp_path / "run")
    assert manifest.config["prompt_options"] == {"system_prompt_suffix": SUFFIX}
    assert SUFFIX not in _started(tmp_path / "plain")
