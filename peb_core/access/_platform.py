"""What the platform knows of a task, for the interventions that act in its place
(docs/benchmark.md §11, `peb_core.interventions`): the access layer's own records and
decisions, never a document's facts or an oracle.

- `PlatformView` (`platform_view(task)`): every document the platform holds (hidden ones
  included) with its scope, its store and its kind of evidence (how the platform's records
  classify it); the user's scopes at the start and the grant schedule the access layer applies;
  the stores the user's own tools reach; the contract as the task shows it (its requirements
  only where given: under `--contract corpus` the platform is not told what a request
  requires); and, on a tier of corpora, the search index sessions answer from. Its types have no
  field for a fact, a body's findings or an oracle.
- `PlatformView.replay(calls, ...)`: an episode's calls played again through a session over the
  index (the tools are deterministic, so it is the live session: `replay_grants` is this);
  `answered(...)` what the access layer did while a response was given: the scopes in force
  then, and the documents it withheld from the episode (a search's page, an open refused).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from ..tasks import Contract, GrantChange, Owners, Task, get_tier
from ._disclosure import DEFAULT_DISCLOSURE, get_disclosure
from ._followup import DEFAULT_FOLLOWUP, DEFAULT_PUSHES, MAX_PUSHES
from ._grants import GrantTimeline
from ._index import CorpusIndex, IndexedDocument
from ._interface import DEFAULT_INTERFACE
from ._results import AgentStart
from ._session import AgentSession, Corpus, SubmitCheck
from ._tool import asked_tools, opened_id, surfaced_ids


class PlatformDocument(BaseModel):
    """A document as the platform's records hold it: its id, the scope it is kept in, its store
    and its kind of evidence (an evidence family: how the platform classifies the record). No
    text, no fact."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    scope: str
    store: str | None = None
    kind: str


@dataclass(frozen=True)
class Answered:
    """What the access layer did in an episode by the time its response was given: the scopes
    in force then (`scopes`), and each document it withheld from the episode (from a search's
    page of results, or an open it refused), by id, in the order first withheld."""

    scopes: tuple[str, ...]
    withheld: tuple[str, ...]


@dataclass(frozen=True)
class PlatformView:
    """What the platform knows of one task (see the module docstring); built only by
    `platform_view`."""

    family: str
    documents: tuple[PlatformDocument, ...]
    user_scopes: tuple[str, ...]
    grants: tuple[GrantChange, ...]
    user_stores: tuple[str, ...]
    contract: Contract
    """The contract as the task shows it: no requirement where the contract is to be found in
    the corpus (`contract_given` False)."""
    contract_given: bool
    index: CorpusIndex | None
    """The search index of a task reached through tools (a tier of corpora); None on a
    one-shot tier, whose documents reach a system in one bundle."""

    def hidden(self, scopes: Iterable[str]) -> tuple[PlatformDocument, ...]:
        """The documents a user holding `scopes` may not see."""
        held = set(scopes)
        return tuple(d for d in self.documents if d.scope not in held)

    def scopes_after(self, changes: int) -> tuple[str, ...]:
        """The user's scopes once the first `changes` changes of the grant schedule hold."""
        scopes = self.user_scopes
        for change in self.grants[:changes]:
            if change.ends:
                scopes = tuple(s for s in scopes if s != change.scope)
            elif change.scope not in scopes:
                scopes = (*scopes, change.scope)
        return scopes

    def replay(
        self,
        calls: Iterable[tuple[str, str]],
        followup: str = DEFAULT_FOLLOWUP,
        pushes: int = DEFAULT_PUSHES,
        checks: Sequence[SubmitCheck] = (),
        owners: Owners | None = None,
    ) -> AgentSession:
        """A session that has answered `calls` (each a tool name and its arguments exactly as
        given, in order) under `followup` with at most `pushes` pushes and the platform's
        `checks`, over the index in the stores the user's own tools reach: each call read,
        counted and answered exactly as it was live. It offers every tool offered only when
        asked for (`escalate`), which accepts only a role of the family's `owners` (None: it
        names none, and an escalation is refused as it was live where not offered). Its start
        has no answer schema, its `submit` no parameters and its user no words: nothing of it is
        shown to a model. A ValueError on a one-shot tier (no index)."""
        if self.index is None:
            raise ValueError("a one-shot task is not reached through tools: nothing to replay")
        start = AgentStart(
            family=self.family, prompt="", contract=self.contract, answer_schema=(), owners=owners
        )
        corpus = Corpus(
            self.index,
            self.user_scopes,
            {},
            grants=self.grants,
            stores=self.user_stores,
            pressures=("",) * MAX_PUSHES,
        )
        session = AgentSession(
            start,
            corpus,
            get_disclosure(DEFAULT_DISCLOSURE),
            followup=followup,
            asks=asked_tools(),
            pushes=pushes,
            checks=checks,
        )
        for name, arguments in calls:
            session.call(name, arguments)
        return session

    def answered(
        self,
        calls: Sequence[tuple[str, str]],
        timeline: GrantTimeline | None = None,
        interface: str = DEFAULT_INTERFACE,
    ) -> Answered:
        """What the access layer did in an episode that made `calls` (none: a one-shot reply,
        answered from the bundle of authorized documents) by its response: the scopes in
        force at the response (by `timeline`, the episode's replay: at its submit, or in a chat
        after its last call) and the documents withheld from it (every hidden document of a
        one-shot task: the bundle left them out)."""
        if self.index is None or timeline is None:
            hidden = self.hidden(self.user_scopes)
            return Answered(self.user_scopes, tuple(d.doc_id for d in hidden))
        at = timeline.calls if interface == "chat" or timeline.submit is None else timeline.submit
        withheld: dict[str, None] = {}
        reachable = self.index.reach(self.user_stores)
        for number, (name, arguments) in enumerate(calls[:at], start=1):
            scopes = self.scopes_after(timeline.state_at(number))
            found = surfaced_ids(name, arguments, self.index, scopes, self.user_stores)[1]
            withheld.update(dict.fromkeys(found))
            position = self.index.positions.get(opened_id(name, arguments) or "")
            if position is not None and reachable[position]:  # an open refused by scope
                doc = self.index.documents[position]
                if doc.scope not in scopes:
                    withheld[doc.doc_id] = None
        return Answered(self.scopes_after(timeline.state_at(at)), tuple(withheld))


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


def platform_view(task: Task, index: CorpusIndex | None = None) -> PlatformView:
    """What the platform knows of `task` (`PlatformView`): read from its documents' ids, scopes,
    stores and evidence families, its scopes, grant schedule and stores, and the contract as it
    shows it; never a fact or an oracle. On a tier of corpora, with the search index (`index`,
    given where it is already built)."""
    corpus = get_tier(task.tier).corpus is not None
    if corpus and index is None:
        index = task_index(task)
    return PlatformView(
        family=task.family,
        documents=tuple(
            PlatformDocument(doc_id=d.doc_id, scope=d.scope, store=d.store, kind=d.evidence_family)
            for d in task.documents
        ),
        user_scopes=task.user_scopes,
        grants=task.grants,
        user_stores=task.user_stores,
        contract=task.shown_contract,
        contract_given=task.contract_source == "given",
        index=index if corpus else None,
    )
