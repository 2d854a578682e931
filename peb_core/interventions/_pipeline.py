"""An intervention put in a system's pipeline (docs/benchmark.md §11): `intervened(system, name)`
wraps any system, one-shot or agent, as a deployment puts a platform element around it. The
wrapped system is the same system (its name, its view), its config records the intervention,
and each reply passes through the intervention where it acts:

- its prompt edit is the run's prompt option (`intervention_prompt`), made wherever a model is
  prompted (`systems.prompt_for`);
- its checks are given to the agent's sessions (`access.AgentView.checks`);
- its response step (`at_response`) gets what the platform knew when the reply was given, from
  the task the runner is answering (`answering`: the platform's view of it, never the task),
  the episode's calls played again (the scopes in force at its response, what the access layer
  withheld), and adds its part to the reply (`Reply.platform`).

Front-ends that run an outside agent (`peb mcp serve`, the inspect task) call `at_response` and
`platform_part` with the task in hand, as the runner's wrapper does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from ..access import (
    DEFAULT_INTERFACE,
    SUBMIT_CHECKS,
    AgentView,
    CorpusIndex,
    PlatformView,
    platform_view,
)
from ..scoring import episode_calls, grant_timeline
from ..systems import PromptOption, PromptProtocol, Reply, System, prompt_for
from ..tasks import ScenarioFile, Task, ViewKind, load_families
from ._intervention import DEFAULT_INTERVENTION, AtResponse, Intervention, get_intervention

_ANSWERING: ContextVar[Callable[[CorpusIndex | None], PlatformView] | None] = ContextVar(
    "peb_answering", default=None
)


@contextmanager
def answering(task: Task) -> Iterator[None]:
    """Within the block (and the coroutines it awaits), the platform's view of `task` is what
    an intervened system's response step is given (`platform_answering`): the runner answers
    each task inside one. The view is made only if asked for."""

    def view(index: CorpusIndex | None) -> PlatformView:
        return platform_view(task, index)

    token = _ANSWERING.set(view)
    try:
        yield
    finally:
        _ANSWERING.reset(token)


def platform_answering(index: CorpusIndex | None = None) -> PlatformView:
    """The platform's view of the task being answered (`answering`; `index`, its search index
    where already built); a LookupError outside `answering`."""
    view = _ANSWERING.get()
    if view is None:
        raise LookupError("no task is being answered: an intervened system runs inside a run")
    return view(index)


def intervention_prompt(messages: list[dict[str, str]], name: str) -> list[dict[str, str]]:
    """The prompt option of the `intervention` run option (`runs.Option.prompt`): the messages
    as the intervention `name` edits them (`Intervention.prompt`), or as they are for one that
    edits none. Applied wherever a model is prompted (`systems.prompt_for`: our systems, the
    inspect task's samples, an MCP client's start), so the run's protocol digests are of the
    edited text."""
    edit = get_intervention(name).prompt
    return messages if edit is None else edit([dict(m) for m in messages])


def at_response(
    reply: Reply,
    platform: PlatformView,
    family: ScenarioFile,
    *,
    interface: str = DEFAULT_INTERFACE,
    disclosure: str | None = None,
) -> AtResponse:
    """What the platform knew when `reply` was given: for an episode (a reply with a trace on a
    task reached through tools), its calls played again through the platform's session (with
    the checks and the pushes the trace shows: the submit that counts), the scopes in force at
    its response and the documents the access layer withheld from it; for a one-shot reply,
    the user's scopes and every document the bundle left out."""
    timeline = None
    calls = episode_calls(reply.trace)
    if platform.index is not None and reply.trace:
        timeline = grant_timeline(platform, reply.trace, interface=interface)
    answered = platform.answered(calls, timeline, interface)
    return AtResponse(platform, answered, family, interface, disclosure)


def platform_part(intervention: Intervention, reply: Reply, given: AtResponse) -> Reply:
    """`reply` with what `intervention` adds to or puts in place of it (`Reply.platform`); the
    reply as it is where the intervention has no response step, says nothing, or the reply is
    not `ok` (an error or an episode without a submit is never answered for)."""
    if intervention.respond is None or reply.status != "ok":
        return reply
    part = intervention.respond(reply, given)
    return reply if part is None else reply.model_copy(update={"platform": part})


@dataclass(frozen=True)
class Intervened:
    """`system` with `intervention` around it (`intervened`): the same name and view, its config
    recording the intervention, each reply passing through it."""

    system: System
    intervention: Intervention

    @property
    def name(self) -> str:
        return self.system.name

    @property
    def view(self) -> ViewKind:
        return self.system.view

    def config(self) -> dict[str, Any]:
        return {**self.system.config(), **self.intervention.config()}

    def digests(self) -> dict[str, str]:
        return self.system.digests()

    def __getattr__(self, name: str) -> Any:
        """What else is asked of the system (`model`, `max_steps`) is the system's."""
        return getattr(self.system, name)

    async def respond(self, view: Any) -> Reply:
        intervention = self.intervention
        if intervention.checks and isinstance(view, AgentView):
            view = replace(view, checks=tuple(SUBMIT_CHECKS[c] for c in intervention.checks))
        reply = await self.system.respond(view)
        if intervention.respond is None or reply.status != "ok":
            return reply
        index = view.index if isinstance(view, AgentView) else None
        platform = platform_answering(index)
        config = self.system.config()
        given = at_response(
            reply,
            platform,
            load_families()[platform.family],
            interface=str(config.get("interface", DEFAULT_INTERFACE)),
            disclosure=config.get("disclosure") if isinstance(view, AgentView) else None,
        )
        return platform_part(intervention, reply, given)


def intervened(system: System, name: str, *, prompted: bool = True) -> System:
    """`system` with the intervention `name` around it (UnknownName for one not registered):
    the system itself for `none`, else wrapped (`Intervened`). Its prompt edit is the run's
    prompt option (`intervention_prompt`), made where a run's systems are built
    (`runs.plan_run`); a system built without it (`prompted` False: one built by hand, as
    `runs.plan_for` takes it) gets it on its protocol here (`systems.prompt_for`)."""
    intervention = get_intervention(name)
    if intervention.name == DEFAULT_INTERVENTION:
        return system
    protocol = getattr(system, "protocol", None)
    if not prompted and intervention.prompt is not None and isinstance(protocol, PromptProtocol):
        option = PromptOption("intervention", name, intervention_prompt)
        system = replace(system, protocol=prompt_for(protocol, (option,)))  # type: ignore[type-var]
    return Intervened(system, intervention)
