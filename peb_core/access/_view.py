"""The agent's view (the `agent` view kind of `tasks.VIEWS`, which calls `agent_view`): what an
agent system receives for a task (docs/benchmark.md §9). The agent starts from the request, the
contract (or, when it is to be found in the corpus, the family's kinds of evidence and the
policy) and the answer schema, and no document; it reaches the corpus only through a session's
tools."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..tasks import Owners, ScenarioFile, Task, answer_schema, owners_of, response_schema
from ._disclosure import DEFAULT_DISCLOSURE, get_disclosure
from ._followup import DEFAULT_FOLLOWUP, pressure_for
from ._grants import GrantTimeline
from ._index import CorpusIndex, IndexedDocument
from ._results import AgentStart
from ._session import AgentSession, Corpus
from ._tool import Delegator, ToolContext, asked_tools, offered, tool_schemas


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

    def session(
        self,
        disclosure: str = DEFAULT_DISCLOSURE,
        delegator: Delegator | None = None,
        followup: str = DEFAULT_FOLLOWUP,
        asks: Sequence[str] = (),
        parts: Sequence[str] = (),
    ) -> AgentSession:
        """A new episode under the disclosure mode `disclosure` (a ValueError naming the valid
        modes for another); with `delegator`, one that may hand off to the task's sub-agents
        (`delegate`); under `followup` `pressure`, one whose user pushes back on a response
        that reports a gap (docs/benchmark.md §10.3; not on a handoff's view: a sub-agent
        meets no user); offering the tools `asks` names among those offered only when asked
        for (`escalate`, docs/benchmark.md §9.4; none on a handoff's view), its `submit` taking
        the response with the `parts` a protocol adds (`tasks.RESPONSE_PARTS`)."""
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
        )

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


def task_index(task: Task) -> CorpusIndex:
    """The search index of a task's corpus: every document with its scope and store."""
    return CorpusIndex(
        [
            IndexedDocument(
                doc_id=d.doc_id, title=d.title, body=d.body, scope=d.scope, store=d.store
            )
            for d in task.documents
        ]
    )


def agent_view(task: Task, spec: ScenarioFile, index: CorpusIndex | None = None) -> AgentView:
    """The only way to build an agent's view: the corpus indexed with every document's scope and
    store (`index`, given where it is already built), filtered on every query by the user's
    scopes (those at the start, changed by the task's grant schedule as the episode sets its
    changes going) and the stores the user's own tools reach; with what the family's user says
    if it pushes back (`pressure_for`; said only under `--followup pressure`)."""
    pressure = pressure_for(task, spec)
    corpus = Corpus(
        task_index(task) if index is None else index,
        task.user_scopes,
        response_schema(spec),
        task.sub_agents,
        grants=task.grants,
        stores=task.user_stores,
        pressure=None if pressure is None else pressure.text,
    )
    return AgentView(start=agent_start(task, spec), _corpus=corpus, family=spec)


def replay_grants(
    task: Task,
    calls: Iterable[tuple[str, str]],
    index: CorpusIndex | None = None,
    followup: str = DEFAULT_FOLLOWUP,
    owners: Owners | None = None,
) -> GrantTimeline:
    """What `task`'s grant schedule did in an episode that made `calls` (each a tool name and
    its arguments exactly as given, in order) under `followup`: the calls played again through
    a session over the task's corpus (`index`, given where it is already built) in the stores
    the user's own tools reach, so each is read, counted and answered exactly as it was live
    (the decision that counts, the last accepted submit or an escalation to one of the family's
    `owners`, included). The session offers every tool offered only when asked for: a call of
    one the live session did not offer was refused, and ends nothing here either, for it names
    no role of `owners` (None: the family names none). A `delegate` call is counted as a call
    this session cannot carry out; it sets no change going, live or replayed. The session's
    start is left without an answer schema, its `submit` without parameters and its user
    without words: nothing of it is shown to a model."""
    start = AgentStart(
        family=task.family,
        prompt=task.prompt,
        contract=task.contract,
        answer_schema=(),
        owners=owners,
    )
    corpus = Corpus(
        task_index(task) if index is None else index,
        task.user_scopes,
        {},
        grants=task.grants,
        stores=task.user_stores,
        pressure="",
    )
    session = AgentSession(
        start, corpus, get_disclosure(DEFAULT_DISCLOSURE), followup=followup, asks=asked_tools()
    )
    for name, arguments in calls:
        session.call(name, arguments)
    return session.timeline


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

