"""The agent's view (the `agent` view kind of `tasks.VIEWS`, which calls `agent_view`): what an
agent system receives for a task (docs/benchmark.md §9). The agent starts from the request, the
contract and the answer schema, and no document; it reaches the corpus only through a session's
tools."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..tasks import ScenarioFile, Task, answer_schema, response_schema
from ._disclosure import DEFAULT_DISCLOSURE, get_disclosure
from ._grants import GrantTimeline
from ._index import CorpusIndex, IndexedDocument
from ._results import AgentStart
from ._session import AgentSession, Corpus
from ._tool import Delegator, ToolContext, offered, tool_schemas


@dataclass(frozen=True)
class AgentView:
    """An agent's view of a task: `start`, and sessions over the task's corpus. The corpus is
    reached only through a session's tools."""

    start: AgentStart
    _corpus: Corpus = field(repr=False)

    def session(
        self, disclosure: str = DEFAULT_DISCLOSURE, delegator: Delegator | None = None
    ) -> AgentSession:
        """A new episode under the disclosure mode `disclosure` (a ValueError naming the valid
        modes for another); with `delegator`, one that may hand off to the task's sub-agents
        (`delegate`)."""
        return AgentSession(
            self.start, self._corpus, get_disclosure(disclosure), delegator=delegator
        )

    @property
    def delegates(self) -> bool:
        """Whether the task lists sub-agents (a session with a delegator may hand off)."""
        return bool(self._corpus.agents)


def agent_start(task: Task, spec: ScenarioFile) -> AgentStart:
    """What an agent starts with (the model view without documents)."""
    if spec.id != task.family:
        raise ValueError(f"task {task.task_id} is of family {task.family}, not {spec.id}")
    return AgentStart(
        family=task.family,
        prompt=task.prompt,
        contract=task.contract,
        answer_schema=answer_schema(spec),
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
    changes going) and the stores the user's own tools reach."""
    corpus = Corpus(
        task_index(task) if index is None else index,
        task.user_scopes,
        response_schema(spec),
        task.sub_agents,
        grants=task.grants,
        stores=task.user_stores,
    )
    return AgentView(start=agent_start(task, spec), _corpus=corpus)


def replay_grants(
    task: Task, calls: Iterable[tuple[str, str]], index: CorpusIndex | None = None
) -> GrantTimeline:
    """What `task`'s grant schedule did in an episode that made `calls` (each a tool name and
    its arguments exactly as given, in order): the calls played again through a session over
    the task's corpus (`index`, given where it is already built) in the stores the user's own
    tools reach, so each is read, counted and answered exactly as it was live. A `delegate` call
    is counted as a call this session cannot carry out; it sets no change going, live or
    replayed. The session's start is left without an answer schema and its `submit` without
    parameters: nothing of it is shown to a model."""
    start = AgentStart(
        family=task.family, prompt=task.prompt, contract=task.contract, answer_schema=()
    )
    corpus = Corpus(
        task_index(task) if index is None else index,
        task.user_scopes,
        {},
        grants=task.grants,
        stores=task.user_stores,
    )
    session = AgentSession(start, corpus, get_disclosure(DEFAULT_DISCLOSURE))
    for name, arguments in calls:
        session.call(name, arguments)
    return session.timeline


def family_tools(
    spec: ScenarioFile, disclosure: str = DEFAULT_DISCLOSURE, handing: bool = False
) -> list[dict[str, Any]]:
    """Every registered tool's function schema for a family's tasks under a disclosure mode
    (`submit` takes the family's response schema), as described for every task (no task's
    stores or sub-agents): what `AgentSession.tools` offers on any of them, and with `handing`
    the tools that hand off too."""
    context = ToolContext(response_schema(spec), get_disclosure(disclosure))
    return tool_schemas(context, offered(handing))

