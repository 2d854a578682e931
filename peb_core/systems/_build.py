"""From a name to a runnable System: a baseline, an embedded `local/<name>` model (served on
demand), any litellm model string, or either as an agent (`agent:<model>`). The CLI and the
workbench both build systems here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._registry import UnknownName
from ..access import (
    DEFAULT_DISCLOSURE,
    DEFAULT_FOLLOWUP,
    DEFAULT_INTERFACE,
    DEFAULT_PUSHES,
    check_followup,
    check_interface,
    check_pushes,
    get_disclosure,
)
from ..tasks import ScenarioFile
from ._agent import AGENT_PREFIX, DEFAULT_MAX_STEPS, DEFAULT_TOKEN_BUDGET, AgentSystem
from ._agent_baselines import AgentBaseline
from ._baselines import BASELINES, Baseline, System
from ._defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from ._local import (
    Hold,
    LocalModel,
    LocalModelError,
    get_local,
    gguf_path,
    hold_local,
    serve_local,
    with_tools,
)
from ._model import ModelSystem, model_problem
from ._prompting import PromptOption, prompt_for
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


def is_embedded(name: str) -> bool:
    """Whether the system `name` (as `build_system` takes it, or a system's name) answers
    through an embedded model's llama.cpp server: `local/<name>`, `agent:local/<name>`."""
    return name.removeprefix(AGENT_PREFIX).startswith("local/")


@dataclass(frozen=True)
class Settings:
    """How `build_system` builds a system (a run's settings of the systems it builds; the
    runner's own, such as concurrency, are not among them).

    Args:
        protocol: the prompt protocol of a model system.
        prompt_options: the run's prompt options (`prompt_for`), applied to what a model
            system is told, and recorded in its config.
        temperature, max_tokens, timeout_s: sampling and the per-request timeout (an agent's
            max_tokens and timeout are per step).
        api_base: an OpenAI-compatible server for `openai/<name>` models.
        local_port: where an embedded model is served if it is not running yet (default: the
            model's own port; an agent's server has its own, see `with_tools`).
        disclosure: what the access layer tells an agent system of what it withheld (a
            disclosure mode, `access.DISCLOSURES`); recorded in its config. Another than the
            default is refused for a system that reads no agent view.
        followup: what the user does after an agent's response (`access.FOLLOWUPS`: under
            `pressure` it pushes back once on a reported gap); recorded in its config when not
            `none`, and refused for a system that reads no agent view. A sub-agent meets no
            user, whatever it is given.
        pushes: how many times that user pushes back at most (`--pushes`).
        interface: how the system answers (`access.INTERFACES`): `submit`, or under `chat` in
            a message read as prose (a model's protocol renders its chat version, a baseline
            says its response, an agent has no submit tool). A sub-agent always submits: its
            response goes back to its requester through `delegate`.
        corpus: whether the tier's tasks are corpora; names a chat baseline by its tier
            (`CHAT_BASELINES`: `chat_fail_and_report` is `agent_fail_and_report` on a tier of
            corpora, `fail_and_report` elsewhere).
        max_steps, token_budget: an agent model's budgets per episode (None: no token budget).
        use_cache: whether a model system reads and writes our reply cache (`--no-cache`: it
            neither reads nor writes it; not part of the run's identity).
    """

    protocol: str = DEFAULT_PROTOCOL
    prompt_options: tuple[PromptOption, ...] = ()
    temperature: float = DEFAULT_TEMPERATURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    api_base: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    local_port: int | None = None
    disclosure: str = DEFAULT_DISCLOSURE
    followup: str = DEFAULT_FOLLOWUP
    pushes: int = DEFAULT_PUSHES
    interface: str = DEFAULT_INTERFACE
    corpus: bool = False
    max_steps: int = DEFAULT_MAX_STEPS
    token_budget: int | None = DEFAULT_TOKEN_BUDGET
    use_cache: bool = True


def build_system(
    name: str,
    families: Sequence[ScenarioFile],
    *,
    delegate_system: str | None = None,
    holds: list[Hold] | None = None,
    as_sub_agent: bool = False,
    **settings: Any,
) -> System:
    """The system called `name`.

    Args:
        name: a baseline (`silent_filter`, ...), `local/<name>` for an embedded model, any
            litellm model string (`openai/gpt-4o`, `openai/<name>` with `api_base`, ...), or
            `agent:<model>` for either as a tool-calling agent (the `agent` view).
        families: the families it will answer (model systems build one response schema each).
        delegate_system: the agent system that runs an agent's handoffs (`delegate`, on
            tasks that list sub-agents), built with the same settings; None: the agent itself.
            Refused for a system that does not hand off.
        holds: where the embedded model servers it needs are held for a run (`hold_local`:
            a run plan's, let go of when its run ends; one started for it then stops unless
            another run holds it); None: a server it starts is kept serving, as
            `peb local-model serve` keeps it, until `stop_local`.
        as_sub_agent: build it to run handoffs (`sub_agent`): an agent system, or a
            SystemSpecError whose field is `delegate_system`.
        settings: its `Settings`, by name (the defaults for those not given).
    """
    chosen = Settings(**settings)
    if as_sub_agent:
        return _sub_agent(name, families, chosen, holds)
    system = _build(name, families, chosen, holds)
    if delegate_system is None:
        return system
    handing = _sub_agent(delegate_system, families, chosen, holds)
    if isinstance(system, AgentSystem):
        return replace(system, delegate_system=handing)
    if isinstance(system, AgentBaseline) and system.requester is not None:
        return system.handing_to(handing)
    raise SystemSpecError(
        f"{name} does not hand off; a delegate system applies to systems that do "
        f"({AGENT_PREFIX}<model>, "
        + ", ".join(n for n, b in BASELINES.items() if isinstance(b, AgentBaseline) and b.requester)
        + ")",
        "delegate_system",
    )


def sub_agent(
    name: str, families: Sequence[ScenarioFile], holds: list[Hold] | None = None, **settings: Any
) -> System:
    """The agent system `name` built to run handoffs (`delegate`) with `settings` (`Settings`,
    by name); a SystemSpecError (field `delegate_system`) for a system that is not an agent."""
    return build_system(name, families, as_sub_agent=True, holds=holds, **settings)


def _sub_agent(
    name: str, families: Sequence[ScenarioFile], settings: Settings, holds: list[Hold] | None
) -> System:
    agents = [n for n, b in BASELINES.items() if is_agent(b)]
    if name not in agents and not name.startswith(AGENT_PREFIX):
        raise SystemSpecError(
            f"{name}: a sub-agent must be an agent system: an agent baseline "
            f"({', '.join(agents)}) or {AGENT_PREFIX}<litellm model>",
            "delegate_system",
        )
    try:  # a sub-agent meets no user (its requester does) and submits to its requester
        alone = replace(
            settings, followup=DEFAULT_FOLLOWUP, pushes=DEFAULT_PUSHES, interface=DEFAULT_INTERFACE
        )
        return _build(name, families, alone, holds)
    except SystemSpecError as exc:
        raise SystemSpecError(f"{name}: {exc}", "delegate_system") from None


def _build(
    name: str, families: Sequence[ScenarioFile], settings: Settings, holds: list[Hold] | None
) -> System:
    """`build_system` without a delegate system."""
    disclosure, followup = settings.disclosure, settings.followup
    pushes, interface = settings.pushes, settings.interface
    try:
        get_disclosure(disclosure)
        check_followup(followup)
        check_pushes(pushes)
        check_interface(interface)
    except ValueError as exc:
        raise SystemSpecError(str(exc)) from None
    agent_only = [
        f"--{option} {value}"
        for option, value, default in (
            ("disclosure", disclosure, DEFAULT_DISCLOSURE),
            ("followup", followup, DEFAULT_FOLLOWUP),
            ("pushes", pushes, DEFAULT_PUSHES),
        )
        if value != default
    ]
    if name in CHAT_BASELINES and interface != "chat":
        raise SystemSpecError(f"{name} answers the user in a message: run it with --interface chat")
    baseline = chat_baseline(name, settings.corpus) or BASELINES.get(name)
    if baseline is not None:
        asked = get_protocol(baseline.protocol) if baseline.protocol is not None else None
        spoken = asked and (asked.agent_chat if isinstance(baseline, AgentBaseline) else asked.chat)
        if interface == "chat" and asked is not None and spoken is None:
            raise SystemSpecError(
                f"--interface chat: {name} answers under {asked.id}, which has no chat "
                "rendering; run it with --interface submit"
            )
        if isinstance(baseline, AgentBaseline):
            if not agent_only and interface == DEFAULT_INTERFACE:
                return baseline
            return baseline.under(disclosure, followup, pushes, interface)
        if agent_only:
            raise SystemSpecError(
                f"{agent_only[0]}: {name} reads no agent view ({agent_only[0].split()[0][2:]} "
                "applies to agent systems)"
            )
        return baseline if interface == DEFAULT_INTERFACE else baseline.speaking(interface)
    agent = name.startswith(AGENT_PREFIX)
    model = name.removeprefix(AGENT_PREFIX)
    if not model.strip() or any(c.isspace() for c in model):
        raise SystemSpecError(
            f"system {name!r} is neither a baseline ({', '.join(BASELINES)}) "
            "nor a model string such as openai/gpt-4o, local/smollm2 or agent:openai/gpt-4o"
        )
    try:
        prompt = prompt_for(settings.protocol, settings.prompt_options)
    except UnknownName as exc:
        raise SystemSpecError(str(exc)) from None
    if not agent and agent_only:
        raise SystemSpecError(
            f"{agent_only[0]}: {name} is a one-shot model system and reads no agent view "
            f"({agent_only[0].split()[0][2:]} applies to agent systems: {AGENT_PREFIX}{name})"
        )
    numbers = [
        ("timeout", settings.timeout_s),
        ("max_tokens", settings.max_tokens),
        ("max_steps", settings.max_steps),
    ]
    if settings.token_budget is not None:
        numbers.append(("token_budget", settings.token_budget))
    for what, value in numbers:
        if value <= 0:
            raise SystemSpecError(f"{what} must be positive, got {value}")
    if agent and prompt.agent is None:
        valid = ", ".join(p.id for p in _agent_protocols())
        raise SystemSpecError(
            f"protocol {prompt.id} has no agent rendering (for agents the access layer's "
            f"--disclosure says what is withheld); valid for agents: {valid}"
        )
    if interface == "chat" and (prompt.chat is None or (agent and prompt.agent_chat is None)):
        valid = ", ".join(p.id for p in PROTOCOLS.values() if p.chat is not None)
        raise SystemSpecError(
            f"--interface chat: protocol {prompt.id} has no chat rendering; valid: {valid}"
        )
    common: dict[str, Any] = {
        "families": families,
        "protocol": prompt,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "timeout_s": settings.timeout_s,
        "use_cache": settings.use_cache,
        "interface": interface,
    }
    if not model.startswith("local/"):
        problem = model_problem(model)
        if problem:
            raise SystemSpecError(problem)
    if agent:
        common |= {
            "disclosure": disclosure,
            "max_steps": settings.max_steps,
            "token_budget": settings.token_budget,
            "followup": followup,
            "pushes": pushes,
        }
    kind: type[AgentSystem] | type[ModelSystem] = AgentSystem if agent else ModelSystem
    if not model.startswith("local/"):
        return kind(model=model, api_base=settings.api_base, **common)
    local, port, weights = _served(model, settings.local_port, holds, tools=agent)
    # llama.cpp's server: its tool-calling chat format for agents, JSON mode for one-shot models
    served: dict[str, Any] = {"dialect": "llama.cpp"} if agent else {"format_style": "json_object"}
    return kind(
        model=f"local/{local.name}",
        endpoint=(f"openai/{local.name}", f"http://127.0.0.1:{port}/v1"),
        model_file=weights,
        **served,
        **common,
    )


def _served(
    name: str, port: int | None, holds: list[Hold] | None, *, tools: bool
) -> tuple[LocalModel, int, Path]:
    """An embedded model, the port its server answers on (for agents, the server with
    llama.cpp's tool-calling chat format), held in `holds` (started for runs if need be), or
    without them served and kept; and its weights."""
    try:
        local = get_local(name)
        server = with_tools(local) if tools else local
        if holds is None:
            served = serve_local(server, port)[1]
        else:
            holds.append(hold_local(server, port))
            served = holds[-1].port
        return local, served, gguf_path(local)
    except LocalModelError as exc:
        raise SystemSpecError(str(exc)) from None


def _agent_protocols() -> list[PromptProtocol]:
    return [p for p in PROTOCOLS.values() if p.agent is not None]


CHAT_BASELINES: dict[str, tuple[str, str]] = {
    "chat_fail_and_report": ("fail_and_report", "agent_fail_and_report"),
    "chat_silent": ("silent_filter", "agent_silent"),
}
"""The careful and the silent baseline as they answer in a chat (`--interface chat`), by name:
the one-shot baseline on a tier without corpora, the agent baseline on a tier of corpora."""


def chat_baseline(name: str, corpus: bool) -> Baseline | AgentBaseline | None:
    """The baseline a chat baseline's name stands for on a tier with (`corpus`) or without
    corpora, under its own name and `--interface chat`; None for another name."""
    if name not in CHAT_BASELINES:
        return None
    base = BASELINES[CHAT_BASELINES[name][1 if corpus else 0]]
    if isinstance(base, AgentBaseline):
        return replace(base.under(base.disclosure, interface="chat"), name=name)
    return replace(base.speaking("chat"), name=name)
