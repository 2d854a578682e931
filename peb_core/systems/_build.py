"""From a name to a runnable System: a baseline, an embedded `local/<name>` model (served on
demand) or any litellm model string. The CLI and the workbench both build systems here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..access import DEFAULT_DISCLOSURE, get_disclosure
from ..tasks import ScenarioFile
from ._agent_baselines import AgentBaseline
from ._baselines import BASELINES, System
from ._defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from ._local import LocalModelError, get_local, gguf_path, serve_local


class SystemSpecError(ValueError):
    """A system that cannot be built from what was given; one line."""


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
) -> System:
    """The system called `name`.

    Args:
        name: a baseline (`silent_filter`, ...), `local/<name>` for an embedded model, or any
            litellm model string (`openai/gpt-4o`, `openai/<name>` with `api_base`, ...).
        families: the families it will answer (model systems build one response schema each).
        protocol: the prompt protocol of a model system.
        temperature, max_tokens, timeout_s: sampling and the per-request timeout.
        api_base: an OpenAI-compatible server for `openai/<name>` models.
        local_port: where an embedded model is served if it is not running yet (default: the
            model's own port).
        disclosure: what the access layer tells an agent system of what it withheld (a
            disclosure mode, `access.DISCLOSURES`); recorded in its config. Another than the
            default is refused for a system that reads no agent view.
    """
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
    if not name.strip() or any(c.isspace() for c in name):
        raise SystemSpecError(
            f"system {name!r} is neither a baseline ({', '.join(BASELINES)}) "
            "nor a model string such as openai/gpt-4o or local/smollm2"
        )
    from ._model import ModelSystem, model_problem
    from ._prompts import get_protocol

    try:
        prompt = get_protocol(protocol)
    except KeyError as exc:
        raise SystemSpecError(str(exc.args[0])) from None
    if disclosure != DEFAULT_DISCLOSURE:
        raise SystemSpecError(
            f"--disclosure {disclosure}: {name} is a one-shot model system and reads no agent "
            "view (disclosure applies to agent systems)"
        )
    for what, value in (("timeout", timeout_s), ("max_tokens", max_tokens)):
        if value <= 0:
            raise SystemSpecError(f"{what} must be positive, got {value}")
    common: dict[str, Any] = {
        "families": families,
        "protocol": prompt,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout_s": timeout_s,
    }
    if not name.startswith("local/"):
        problem = model_problem(name)
        if problem:
            raise SystemSpecError(problem)
        return ModelSystem(model=name, api_base=api_base, **common)
    try:
        local = get_local(name)
        _, port = serve_local(local, local_port)
        weights = gguf_path(local)
    except LocalModelError as exc:
        raise SystemSpecError(str(exc)) from None
    return ModelSystem(
        model=f"local/{local.name}",
        endpoint=(f"openai/{local.name}", f"http://127.0.0.1:{port}/v1"),
        model_file=weights,
        format_style="json_object",
        **common,
    )
