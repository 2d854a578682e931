"""The agent's view (the `agent` view kind of `tasks.VIEWS`, which calls `agent_view`): what an
agent system receives for a task (docs/benchmark.md §9). The agent starts from the request, the
contract (or, when it is to be found in the corpus, the family's kinds of evidence and the
policy) and the answer schema, and no document; it reaches the corpus only through a session's
tools."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..reading import read_prose
from ..tasks import Owners, ScenarioFile, Task, answer_schema, owners_of, response_schema
from ._disclosure import DEFAULT_DISCLOSURE, get_disclosure
from ._followup import DEFAULT_FOLLOWUP, DEFAULT_PUSHES, MAX_PUSHES, pressures_for, says_gap
from ._grants import GrantTimeline
from ._index import CorpusIndex
from ._interface import DEFAULT_INTERFACE
from ._platform import PlatformView, platform_view, task_index
from ._results import AgentStart
from ._session import AgentSession, Corpus, SubmitCheck
from ._tool import Delegator, ToolContext, offered, tool_schemas


@dataclass(frozen=True)
class AgentView:
    """An agent's view of a task: `start`, and sessions over the task's corpus. The corpus is
    reached only through a session's tools."""

    start: AgentStart
    _corpus: Corpus = field(repr=False)
    handoff: bool = False
    """A handoff's view (`delegate`): its sub-agent hands nothing to a human, its requester
    does, so its sessions offer no tool that is offered only when asked for."""
    family: ScenarioFile | None = field(default=None, repr=False)
    """The task's family, for the response schema with the parts a protocol adds (None: a
    handoff's view, whose corpus keeps its requester's schema)."""
    checks: tuple[SubmitCheck, ...] = ()
    """The platform's checks of each accepted submit in its sessions (a run's intervention,
    docs/benchmark.md §11; none by default)."""

    def session(
        self,
        disclosure: str = DEFAULT_DISCLOSURE,
        delegator: Delegator | None = None,
        followup: str = DEFAULT_FOLLOWUP,
        pushes: int = DEFAULT_PUSHES,
        interface: str = DEFAULT_INTERFACE,
        asks: Sequence[str] = (),
        parts: Sequence[str] = (),
    ) -> AgentSession:
        """A new episode under the disclosure mode `disclosure` (a ValueError naming the valid
        modes for another); with `delegator`, one that may hand off to the task's sub-agents
        (`delegate`); under `followup` `pressure`, one whose user pushes back, at most `pushes`
        times, on a response that reports a gap (docs/benchmark.md §10.3; not on a handoff's
        view: a sub-agent meets no user); under `interface` `chat`, one in which the agent
        answers in a message (§10.4); offering the tools `asks` names among those offered only
        when asked for (`escalate`, docs/benchmark.md §9.4; none on a handoff's view), its
        `submit` taking the response with the `parts` a protocol adds (`tasks.RESPONSE_PARTS`).
        Its accepted submits meet the view's `checks` (an escalation is no submit)."""
        corpus = self._corpus
        if parts and self.family is not None:
            corpus = replace(corpus, response_schema=response_schema(self.family, parts))
        return AgentSession(
            self.start,
            corpus,
            get_disclosure(disclosure),
            delegator=delegator,
            followup=followup,
            asks=() if self.handoff else asks,
            pushes=pushes,
            interface=interface,
            checks=self.checks,
        )

    @property
    def index(self) -> CorpusIndex:
        """The search index its sessions answer from (the platform's, never shown)."""
        return self._corpus.index

    @property
    def delegates(self) -> bool:
        """Whether the task lists sub-agents (a session with a delegator may hand off)."""
        return bool(self._corpus.agents)


def agent_start(task: Task, spec: ScenarioFile) -> AgentStart:
    """What an agent starts with (the model view without documents): the contract as the task
    shows it (`Task.shown_contract`); when it is found in the corpus, every kind of evidence of
    the family instead of the requirements."""
    if spec.id != task.family:
        raise ValueError(f"task {task.task_id} is of family {task.family}, not {spec.id}")
    found = task.contract_source != "given"
    return AgentStart(
        family=task.family,
        prompt=task.prompt,
        contract=task.shown_contract,
        answer_schema=answer_schema(spec),
        contract_source=task.contract_source,
        evidence_kinds=tuple(spec.requirements.values()) if found else (),
        owners=owners_of(spec) if spec.owners is not None else None,
    )


def agent_view(task: Task, spec: ScenarioFile, index: CorpusIndex | None = None) -> AgentView:
    """The only way to build an agent's view: the corpus indexed with every document's scope and
    store (`index`, given where it is already built), filtered on every query by the user's
    scopes (those at the start, changed by the task's grant schedule as the episode sets its
    changes going) and the stores the user's own tools reach; with what the family's user says
    at each push if it pushes back (`pressures_for`; said only under `--followup pressure`)
    and how a message is read for whether it reports a gap (`--interface chat`: the family's
    prose reader, `says_gap`)."""
    corpus = Corpus(
        task_index(task) if index is None else index,
        task.user_scopes,
        response_schema(spec),
        task.sub_agents,
        grants=task.grants,
        stores=task.user_stores,
        pressures=tuple(p.text for p in pressures_for(task, spec, MAX_PUSHES)),
        reads_gap=lambda text: says_gap(read_prose(text, spec, task=task)),
    )
    return AgentView(start=agent_start(task, spec), _corpus=corpus, family=spec)


def replay_grants(
    task: Task | PlatformView,
    calls: Iterable[tuple[str, str]],
    index: CorpusIndex | None = None,
    followup: str = DEFAULT_FOLLOWUP,
    pushes: int = DEFAULT_PUSHES,
    interface: str = DEFAULT_INTERFACE,
    checks: Sequence[SubmitCheck] = (),
    owners: Owners | None = None,
) -> GrantTimeline:
    """What `task`'s grant schedule (or that of the task a platform view is of) did in an
    episode that made `calls` (each a tool name and its arguments exactly as given, in order)
    under `followup` with at most `pushes` pushes, through `interface`, with the platform's
    `checks` of its submits: the calls played again through a session over the task's corpus
    (`index`, given where it is already built) in the stores the user's own tools reach
    (`PlatformView.replay`), so each is read, counted and answered exactly as it was live (the
    decision that counts, the last accepted submit or an escalation to one of the family's
    `owners`, included; in a chat, the response is the message after the last call). The
    session offers every tool offered only when asked for: a call of one the live session did
    not offer was refused, and ends nothing here either, for it names no role of `owners`
    (None: the family names none). A `delegate` call is counted as a call this session cannot
    carry out; it sets no change going, live or replayed."""
    view = task if isinstance(task, PlatformView) else platform_view(task, index)
    timeline = view.replay(calls, followup, pushes, checks, owners).timeline
    # In a chat the response is a message after the episode's last call (nothing is called
    # once the episode is over): it is answered in the state that call left.
    return replace(timeline, submit=timeline.calls) if interface == "chat" else timeline


def family_tools(
    spec: ScenarioFile,
    disclosure: str = DEFAULT_DISCLOSURE,
    handing: bool = False,
    followup: str = DEFAULT_FOLLOWUP,
    asks: Sequence[str] = (),
    parts: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Every registered tool's function schema for a family's tasks under a disclosure mode
    (`submit` takes the family's response schema, with the `parts` a protocol adds) and a
    follow-up mode, as described for every task (no task's stores or sub-agents): what
    `AgentSession.tools` offers on any of them, with `handing` the tools that hand off too and
    the tools `asks` names among those offered only when asked for."""
    pushes = followup == "pressure" and spec.followup is not None
    owners = owners_of(spec) if spec.owners is not None else None
    context = ToolContext(
        response_schema(spec, parts), get_disclosure(disclosure), pushes=pushes, owners=owners
    )
    return tool_schemas(context, offered(handing, asks))
