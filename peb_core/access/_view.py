"""The agent's view (the `agent` view kind of `tasks.VIEWS`, which calls `agent_view`): what an
agent system receives for a task (docs/benchmark.md §9). The agent starts from the request, the
contract and the answer schema, and no document; it reaches the corpus only through a session's
tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..tasks import ScenarioFile, Task, answer_schema, response_schema
from ._disclosure import DEFAULT_DISCLOSURE, get_disclosure
from ._index import CorpusIndex, IndexedDocument
from ._results import AgentStart
from ._session import AgentSession, Corpus, Delegator, ToolContext, tool_schemas


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


def agent_view(task: Task, spec: ScenarioFile) -> AgentView:
    """The only way to build an agent's view: the corpus indexed with every document's scope,
    filtered by the user's scopes on every query (those at the start, changed by the task's
    grant schedule as its steps come)."""
    documents = [
        IndexedDocument(doc_id=d.doc_id, title=d.title, body=d.body, scope=d.scope)
        for d in task.documents
    ]
    corpus = Corpus(
        CorpusIndex(documents),
        task.scopes_at(0),
        response_schema(spec),
        task.sub_agents,
        grants=task.grants,
    )
    return AgentView(start=agent_start(task, spec), _corpus=corpus)


def family_tools(spec: ScenarioFile, disclosure: str = DEFAULT_DISCLOSURE) -> list[dict[str, Any]]:
    """Every registered tool's function schema for a family's tasks under a disclosure mode
    (`submit` takes the family's response schema): what `AgentSession.tools` offers on any of
    them."""
    return tool_schemas(ToolContext(response_schema(spec), get_disclosure(disclosure)))

