"""From a name to a runnable System: a baseline, an embedded `local/<name>` model (served on
demand), any litellm model string, or either as an agent (`agent:<model>`). The CLI and the
workbench both build systems here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._registry import UnknownName
from ..access import DEFAULT_DISCLOSURE, get_disclosure
from ..tasks import ScenarioFile
from ._agent import AGENT_PREFIX, DEFAULT_MAX_STEPS, DEFAULT_TOKEN_BUDGET, AgentSystem
from ._agent_baselines import AgentBaseline
from ._baselines import BASELINES, System
from ._defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from ._local import LocalModel, LocalModelError, get_local, gguf_path, serve_local, with_tools
from ._model import ModelSystem, model_problem
from ._prompts import PROTOCOLS, PromptProtocol, get_protocol


class SystemSpecError(ValueError):
    """A system that cannot be built from what was given; one line. `field` is the run option
    at fault: `system`, or `delegate_system` for the system that runs handoffs."""

    def __init__(self, message: str, field: str = "system") -> None:
        super().__init__(message)
        self.field = field


def is_agent(system: System) -> bool:
    """Whether `system` is an agent: it reads the `agent` view (a session over the task's
    corpus, reached through tools) and its reply is an episode."""
    return system.view == "agent"


def build_system(
    name: str,
    families: Sequence[ScenarioFile],
    *,
    protocol: str = DEFAULT_PROTOCOL,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    api_base: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    local_port: int | None = None,
    disclosure: str = DEFAULT_DISCLOSURE,
    max_steps: int = DEFAULT_MAX_STEPS,
    token_budget: int | None = DEFAULT_TOKEN_BUDGET,
    delegate_system: str | None = None,
    use_cache: bool = True,
    as_sub_agent: bool = False,
) -> System:
    """The system called `name`.

    Args:
        name: a baseline (`silent_filter`, ...), `local/<name>` for an embedded model, any
            litellm model string (`openai/gpt-4o`, `openai/<name>` with `api_base`, ...), or
            `agent:<model>` for either as a tool-calling agent (the `agent` view).
        families: the families it will answer (model systems build one response schema each).
        protocol: the prompt protocol of a model system.
        temperature, max_tokens, timeout_s: sampling and the per-request timeout (an agent's
            max_tokens and timeout are per step).
        api_base: an OpenAI-compatible server for `openai/<name>` models.
        local_port: where an embedded model is served if it is not running yet (default: the
            model's own port; an agent's server has its own, see `with_tools`).
        disclosure: what the access layer tells an agent system of what it withheld (a
            disclosure mode, `access.DISCLOSURES`); recorded in its config. Another than the
            default is refused for a system that reads no agent view.
        max_steps, token_budget: an agent model's budgets per episode (None: no token budget).
        delegate_system: the agent system that runs an agent's handoffs (`delegate`, on
            tasks that list sub-agents), built with the same settings; None: the agent itself.
            Refused for a system that does not hand off.
        use_cache: whether a model system reads and writes our reply cache (`--no-cache`: it
            neither reads nor writes it; not part of the run's identity).
        as_sub_agent: build it to run handoffs (`sub_agent`): an agent system, or a
            SystemSpecError whose field is `delegate_system`.
    """
    settings: dict[str, Any] = {
        "protocol": protocol,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "api_base": api_base,
        "timeout_s": timeout_s,
        "local_port": local_port,
        "disclosure": disclosure,
        "max_steps": max_steps,
        "token_budget": token_budget,
        "use_cache": use_cache,
    }
    if as_sub_agent:
        return _sub_agent(name, families, settings)
    system = _build(name, families, settings)
    if delegate_system is None:
        return system
    handing = _sub_agent(delegate_system, families, settings)
    if isinstance(system, AgentSystem):
        return replace(system, delegate_system=handing)
    if isinstance(system, AgentBaseline) and system.requester is not None:
        return system.handing_to(handing)
    raise SystemSpecError(
        f"{name} does not hand off; a delegate system applies to systems that do "
        f"({AGENT_PREFIX}<model>, "
        + ", ".join(
            n for n, b in BASELINES.items() if isinstance(b, AgentBaseline) and b.requester
        )
        + ")",
        "delegate_system",
    )


def sub_agent(name: str, families: Sequence[ScenarioFile], **settings: Any) -> System:
    """The agent system `name` built to run handoffs (`delegate`) with `settings` (any of
    `build_system`'s); a SystemSpecError (field `delegate_system`) for a system that is not an
    agent."""
    return build_system(name, families, as_sub_agent=True, **settings)


def _sub_agent(name: str, families: Sequence[ScenarioFile], settings: dict[str, Any]) -> System:
    agents = [n for n, b in BASELINES.items() if is_agent(b)]
    if name not in agents and not name.startswith(AGENT_PREFIX):
        raise SystemSpecError(
            f"{name}: a sub-agent must be an agent system: an agent baseline "
            f"({', '.join(agents)}) or {AGENT_PREFIX}<litellm model>",
            "delegate_system",
        )
    try:
        return _build(name, families, settings)
    except SystemSpecError as exc:
        raise SystemSpecError(f"{name}: {exc}", "delegate_system") from None


def _build(name: str, families: Sequence[ScenarioFile], settings: dict[str, Any]) -> System:
    """`build_system` without a delegate system, `settings` its keyword arguments."""
    protocol, disclosure = settings["protocol"], settings["disclosure"]
    temperature, max_tokens = settings["temperature"], settings["max_tokens"]
    api_base, timeout_s = settings["api_base"], settings["timeout_s"]
    local_port, max_steps = settings["local_port"], settings["max_steps"]
    token_budget, use_cache = settings["token_budget"], settings["use_cache"]
    try:
        get_disclosure(disclosure)
    except ValueError as exc:
        raise SystemSpecError(str(exc)) from None
    if name in BASELINES:
        baseline = BASELINES[name]
        if disclosure == DEFAULT_DISCLOSURE:
            return baseline
        if isinstance(baseline, AgentBaseline):
            return baseline.under(disclosure)
        raise SystemSpecError(
            f"--disclosure {disclosure}: {name} reads no agent view (disclosure applies to agent "
            "systems)"
        )
    agent = name.startswith(AGENT_PREFIX)
    model = name.removeprefix(AGENT_PREFIX)
    if not model.strip() or any(c.isspace() for c in model):
        raise SystemSpecError(
            f"system {name!r} is neither a baseline ({', '.join(BASELINES)}) "
            "nor a model string such as openai/gpt-4o, local/smollm2 or agent:openai/gpt-4o"
        )
    try:
        prompt = get_protocol(protocol)
    except UnknownName as exc:
        raise SystemSpecError(str(exc)) from None
    if not agent and disclosure != DEFAULT_DISCLOSURE:
        raise SystemSpecError(
            f"--disclosure {disclosure}: {name} is a one-shot model system and reads no agent "
            f"view (disclosure applies to agent systems: {AGENT_PREFIX}{name})"
        )
    numbers = [("timeout", timeout_s), ("max_tokens", max_tokens), ("max_steps", max_steps)]
    if token_budget is not None:
        numbers.append(("token_budget", token_budget))
    for what, value in numbers:
        if value <= 0:
            raise SystemSpecError(f"{what} must be positive, got {value}")
    if agent and prompt.agent is None:
        valid = ", ".join(p.id for p in _agent_protocols())
        raise SystemSpecError(
            f"protocol {prompt.id} has no agent rendering (for agents the access layer's "
            f"--disclosure says what is withheld); valid for agents: {valid}"
        )
    common: dict[str, Any] = {
        "families": families,
        "protocol": prompt,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout_s": timeout_s,
        "use_cache": use_cache,
    }
    if not model.startswith("local/"):
        problem = model_problem(model)
        if problem:
            raise SystemSpecError(problem)
    if agent:
        budgets: dict[str, Any] = {
            "disclosure": disclosure,
            "max_steps": max_steps,
            "token_budget": token_budget,
        }
        if not model.startswith("local/"):
            return AgentSystem(model=model, api_base=api_base, **common, **budgets)
        local, port, weights = _served(model, local_port, tools=True)
        return AgentSystem(
            model=f"local/{local.name}",
            endpoint=(f"openai/{local.name}", f"http://127.0.0.1:{port}/v1"),
            model_file=weights,
            dialect="llama.cpp",
            **common,
            **budgets,
        )
    if not model.startswith("local/"):
        return ModelSystem(model=model, api_base=api_base, **common)
    local, port, weights = _served(model, local_port, tools=False)
    return ModelSystem(
        model=f"local/{local.name}",
        endpoint=(f"openai/{local.name}", f"http://127.0.0.1:{port}/v1"),
        model_file=weights,
        format_style="json_object",
        **common,
    )


def _served(name: str, port: int | None, *, tools: bool) -> tuple[LocalModel, int, Path]:
    """An embedded model, the port its server answers on (started if need be: for agents, the
    server with llama.cpp's tool-calling chat format) and its weights."""
    try:
        local = get_local(name)
        _, served = serve_local(with_tools(local) if tools else local, port)
        return local, served, gguf_path(local)
    except LocalModelError as exc:
        raise SystemSpecError(str(exc)) from None


def _agent_protocols() -> list[PromptProtocol]:
    return [p for p in PROTOCOLS.values() if p.agent is not None]
