"""An extension installed as an outside package reaches every front-end (issue 36): a toy
distribution, found on the path by its `.dist-info` (as `pip install` leaves it), declares an
entry point in the `partial_evidence_bench` group naming its module, which registers a prompt
option (`system_prompt_suffix`), a tool (`note`), a trace metric with its column (`toy_errors`)
and a prompt protocol (`toyproto@1`). Each front-end loads the installed extensions before it
reads a name, so in fresh processes that never import the toy themselves: `peb run` takes the
option and the protocol and its agent is offered the tool, `peb score` computes the metric, the
workbench's form offers the option and the protocol, the inspect task takes them as `-T`
options and reports the metric, and `peb mcp serve` takes the option and serves the tool. An
extension that fails to load is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation, TextContent
from scripted_server import BLOCKED, ScriptedServer, Step, replies_so_far, tool_step

from peb_core._extensions import GROUP

ROOT = Path(__file__).resolve().parents[1]
FAMILY = "due_diligence_v1"
SUFFIX = "Toy extension, name every document id you relied on."  # inspect reads -T as YAML
TOY_SYSTEM = "You are the toy protocol's analyst."

TOY_MODULE = f'''
"""A toy extension of partial-evidence-bench, registered by its entry point."""
import json
from typing import Annotated

import polars as pl
from pydantic import Field

from peb_core.access import Tool, ToolArguments, ToolOutcome, register_tool
from peb_core.runs import Option, register_option
from peb_core.scoring import Metric, TraceColumn, register_metric
from peb_core.systems import PromptProtocol, get_protocol, register_protocol


def _suffixed(messages, value):
    return [
        {{**m, "content": m["content"] + "\\n\\n" + value}} if m["role"] == "system" else m
        for m in messages
    ]


register_option(
    "system_prompt_suffix",
    Annotated[
        str | None,
        Option("text", "System prompt suffix", "words after the system message",
               applies="models", prompt=_suffixed),
    ],
)


class NoteArguments(ToolArguments):
    text: str = Field(min_length=1, max_length=80, description="what to note")


register_tool(
    Tool(
        "note",
        lambda context: "Note a thought; it is said back.",
        NoteArguments,
        lambda context, args: ToolOutcome(content=json.dumps({{"noted": args.text}})),
        prompt="note a thought with note(text)",
    )
)

register_metric(
    Metric(
        "toy_errors", "toy_err", "Toy errors", "Toy tool errors",
        "agent episodes: tool calls answered with an error, per episode",
        "mean", within=pl.col("episode"), score="toy_failed", bounded=False, group="trace",
        columns=(TraceColumn("toy_failed", pl.Float64(), pl.col("_failures")),),
    )
)


def _toy(messages):
    return [{{"role": "system", "content": {TOY_SYSTEM!r}}}, *messages[1:]]


_base = get_protocol("structured_gap@1")
register_protocol(
    PromptProtocol(
        "toyproto", 1, "model",
        lambda view: _toy(_base.render(view)),
        lambda start: _toy(_base.agent(start)),
    )
)
'''


def _install(root: Path, entry: str) -> Path:
    """A distribution as `pip install` leaves it: its module and its `.dist-info` (metadata
    and `entry_points.txt`) in `root`, which goes on a process's path."""
    root.mkdir()
    (root / "toy_peb_extension.py").write_text(TOY_MODULE, encoding="utf-8")
    info = root / "toy_peb_extension-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-peb-extension\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entry}\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _install(tmp_path_factory.mktemp("site") / "site", "toy = toy_peb_extension")


def _env(site: Path, tmp: Path) -> dict[str, str]:
    from test_inspect import isolated

    return {**isolated(tmp), "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}


def _run(args: Sequence[str], site: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=_env(site, tmp),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _agent(body: dict[str, Any]) -> Step:
    """A scripted agent: a `note`, then a submit; a request without tools gets a reply."""
    if not body.get("tools"):
        return Step()
    if replies_so_far(body) == 0:
        return tool_step(("note", {"text": "start"}))
    return tool_step(("submit", {"response": json.loads(BLOCKED)}))


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    s.script.route = _agent
    yield s
    s.stop()


def _system(body: dict[str, Any]) -> str:
    (system,) = [m["content"] for m in body["messages"] if m["role"] in ("system", "developer")]
    return str(system)


def _tools(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_an_installed_extension_reaches_peb_run_and_peb_score(
    installed: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    ran = _run(
        ["-m", "peb_core", "run", "--model", "agent:openai/scripted", "--api-base", server.url,
         "--tier", "agent", "--family", FAMILY, "--seeds", "11", "--limit", "1", "--no-cache",
         "--protocol", "toyproto@1", "--system-prompt-suffix", SUFFIX, "--out", str(out)],
        installed, tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    first = server.script.bodies[0]
    assert _system(first) == f"{TOY_SYSTEM}\n\n{SUFFIX}"  # the protocol's, then the option's
    assert "note" in _tools(first)
    assert "note a thought with note(text)" in json.dumps(first["messages"])
    scored = _run(["-m", "peb_core", "score", str(out), "--json"], installed, tmp_path)
    assert scored.returncode == 0, scored.stderr
    (row,) = json.loads(scored.stdout)
    assert row["system"] == "agent:openai/scripted:toyproto@1"
    assert row["toy_errors"] == 0.0  # its note and its submit were both answered
    # Without the extension on the path, none of it is known.
    bare = subprocess.run(
        [sys.executable, "-m", "peb_core", "run", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert bare.returncode == 0 and "--system-prompt-suffix" not in bare.stdout


WORKBENCH = """
import json
from peb_core.frontends.workbench import form_options, headless_parser, run_form
from peb_core.runs import options
print(json.dumps({
    "form": list(form_options()),
    "elements": list(run_form().elements),
    "headless": [a.dest for a in headless_parser()._actions],
    "protocols": list(options()["protocol"].choices()),
}))
"""


def test_an_installed_extension_reaches_the_workbench_form(installed: Path, tmp_path: Path) -> None:
    shown = _run(["-c", WORKBENCH], installed, tmp_path)
    assert shown.returncode == 0, shown.stderr
    form = json.loads(shown.stdout.splitlines()[-1])
    for where in ("form", "elements", "headless"):
        assert "system_prompt_suffix" in form[where], where
    assert "toyproto@1" in form["protocols"]


def test_an_installed_extension_reaches_the_inspect_task(
    installed: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    ran = _run(
        ["-m", "inspect_ai", "eval", "peb_core/frontends/inspect/task.py@partial_evidence",
         "-T", f"family={FAMILY}", "-T", "seeds=11", "-T", "tier=agent",
         "-T", "protocol=toyproto@1", "-T", f"system_prompt_suffix={SUFFIX}",
         "--model", "openai/scripted", "-M", "responses_api=false",
         "--model-base-url", server.url, "--limit", "1", "--max-retries", "0",
         "--display", "none", "--log-dir", str(logs)],
        installed, tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    first = server.script.bodies[0]
    assert _system(first) == f"{TOY_SYSTEM}\n\n{SUFFIX}"
    assert "note" in _tools(first)
    (log,) = logs.glob("*.eval")
    from inspect_ai.log import read_eval_log

    results = read_eval_log(str(log)).results
    assert results is not None
    (score,) = results.scores
    assert score.metrics["toy_errors"].value == 0.0


def _text(content: Sequence[Any]) -> str:
    block = content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_an_installed_extension_reaches_peb_mcp_serve(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    serve = ["mcp", "serve", "--family", FAMILY, "--seeds", "11", "--out", str(out)]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "peb_core", *serve, "--system-prompt-suffix", SUFFIX],
        env=_env(installed, tmp_path),
        cwd=ROOT,
    )

    async def client() -> None:
        me = Implementation(name="toy-client", version="1")
        async with stdio_client(params) as streams, ClientSession(*streams, client_info=me) as c:
            await c.initialize()
            assert "note" in [t.name for t in (await c.list_tools()).tools]
            started = _text((await c.call_tool("start_task", {"task_id": "task-001"})).content)
            assert SUFFIX in started and "note a thought with note(text)" in started
            noted = await c.call_tool("note", {"text": "start"})
            assert not noted.is_error and json.loads(_text(noted.content)) == {"noted": "start"}
            done = await c.call_tool("submit", {"response": json.loads(BLOCKED)})
            assert not done.is_error

    anyio.run(client)
    scored = _run(["-m", "peb_core", "score", str(out), "--json"], installed, tmp_path)
    assert scored.returncode == 0, scored.stderr
    (row,) = json.loads(scored.stdout)
    assert row["toy_errors"] == 0.0


def test_an_extension_that_fails_to_load_is_one_line_and_exit_2(tmp_path: Path) -> None:
    broken = _install(tmp_path / "site", "broken = no_such_module_here")
    ran = _run(["-m", "peb_core", "tasks", "list"], broken, tmp_path)
    assert (ran.returncode, ran.stdout) == (2, ""), ran.stderr
    (line,) = ran.stderr.splitlines()
    assert line.startswith(
        "peb: error: extension broken (no_such_module_here) failed to load: ModuleNotFoundError: "
    ), line
