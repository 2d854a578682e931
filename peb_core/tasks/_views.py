"""The views a system may receive. No view can hold a hidden document: each is built by one
function into types that have no field for one.

- `ModelView`: what a model is shown (docs/benchmark.md §6): prompt, contract, answer schema and
  the authorized documents' id, title, scope and body. No facts, no evidence-family tags, no
  oracles, not even the task id (it names the hidden-evidence pattern).
- `SystemView`: the model view plus the facts of the current authorized documents (a superseded
  copy is evidence of nothing now, docs/benchmark.md §1) and the access layer's filter report
  (which required evidence families it withheld, from which scopes), as a real governance layer
  would know. Building the report reads which families and scopes the hidden documents hold; the
  view keeps only those names. This is what the deterministic baselines read.
- `BoundaryView`: the model view plus the withheld scope ids alone (`boundary_metadata@1`).
- `EscalationView` (`escalation`): the model view plus the family's scope owners and reviewer
  (`structured_gap@2`, docs/benchmark.md §2.2): the same for every task of a family, so it
  tells nothing of what a task withholds.
- `AgentView` (`agent`): the request, contract and answer schema, and tools over the corpus;
  built by the access layer (`peb_core.access.agent_view`).

Views are registered by kind (`VIEWS`), as tiers are: a system names the kind it reads, and a new
kind is a function from a task to a value of a type that cannot hold anything hidden, plus one
`register_view` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from .._registry import Registry
from ._answers import answer_schema
from ._owners import Owners, owners_of
from ._scenario import AnswerField, ScenarioFile
from ._task import Contract, Fact, Task


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class VisibleDocument(_View):
    doc_id: str
    title: str
    scope: str
    body: str


class ModelView(_View):
    family: str
    prompt: str
    contract: Contract
    answer_schema: tuple[AnswerField, ...]
    documents: tuple[VisibleDocument, ...]


class VisibleFacts(_View):
    doc_id: str
    facts: tuple[Fact, ...]


class Withheld(_View):
    """One required evidence family the access layer filtered out, and the scopes it sat in."""

    requirement: str
    scopes: tuple[str, ...]


class SystemView(_View):
    model: ModelView
    visible_facts: tuple[VisibleFacts, ...]
    withheld: tuple[Withheld, ...]
    owners: Owners | None = None
    """The family's scope owners and reviewer (None: it names none), as a governance layer
    knows them."""


class BoundaryView(_View):
    """The model view plus the scopes in which the access layer withheld matching documents."""

    model: ModelView
    withheld_scopes: tuple[str, ...]


class EscalationView(_View):
    """The model view plus the family's owners: who owns each scope, and the reviewer."""

    model: ModelView
    owners: Owners


def model_view(task: Task, spec: ScenarioFile) -> ModelView:
    """The only way to build what a model is shown: the contract as the task shows it (no
    requirement when it is found in the corpus: `Task.shown_contract`)."""
    if spec.id != task.family:
        raise ValueError(f"task {task.task_id} is of family {task.family}, not {spec.id}")
    return ModelView(
        family=task.family,
        prompt=task.prompt,
        contract=task.shown_contract,
        answer_schema=answer_schema(spec),
        documents=tuple(
            VisibleDocument(doc_id=d.doc_id, title=d.title, scope=d.scope, body=d.body)
            for d in task.authorized_documents
        ),
    )


def system_view(task: Task, spec: ScenarioFile) -> SystemView:
    """The baselines' view: the model view, the facts of the current (not superseded) authorized
    documents, and the access layer's filter report (each required family with no current
    authorized document, and the scopes where the access layer withheld documents of it)."""
    current = [d for d in task.authorized_documents if not d.superseded]
    covered = {d.evidence_family for d in current}
    withheld = []
    for req in task.contract.required_evidence:
        if req.id in covered:
            continue
        scopes = dict.fromkeys(
            d.scope for d in task.hidden_documents if d.evidence_family == req.id
        )
        withheld.append(Withheld(requirement=req.id, scopes=tuple(scopes)))
    return SystemView(
        model=model_view(task, spec),
        visible_facts=tuple(VisibleFacts(doc_id=d.doc_id, facts=d.facts) for d in current),
        withheld=tuple(withheld),
        owners=owners_of(spec) if spec.owners is not None else None,
    )


def boundary_view(task: Task, spec: ScenarioFile) -> BoundaryView:
    """The boundary-metadata protocol's view: the model view and the withheld scope ids only."""
    view = system_view(task, spec)
    scopes = dict.fromkeys(s for w in view.withheld for s in w.scopes)
    return BoundaryView(model=view.model, withheld_scopes=tuple(scopes))


def escalation_view(task: Task, spec: ScenarioFile) -> EscalationView:
    """The next-step protocol's view: the model view and the family's owners (`NoOwners`, one
    line, for a family without them)."""
    return EscalationView(model=model_view(task, spec), owners=owners_of(spec))


ViewKind = str
"""A registered view kind (`VIEWS`): `model` (ModelView), `boundary` (BoundaryView), `system`
(SystemView), `oracle` (the Task itself; only the oracle baseline), `agent` (AgentView), or one
registered later."""


@dataclass(frozen=True)
class ViewSpec:
    """A kind of view: its name, a line saying what it holds, and how it is built from a task
    and its family."""

    name: str
    description: str
    build: Callable[[Task, ScenarioFile], Any]


VIEWS: Registry[ViewSpec] = Registry("view kind")
"""Every registered view kind by name, in registration order (the shipped ones first)."""

register_view = VIEWS.register
"""Add a view kind to `VIEWS` and return it; a ValueError for a name taken by another."""


def view_for(kind: ViewKind, task: Task, spec: ScenarioFile) -> Any:
    """The view of `task` a system reading views of `kind` receives; UnknownName (a ValueError)
    naming the registered kinds for another."""
    return VIEWS.lookup(kind).build(task, spec)


def _oracle_view(task: Task, spec: ScenarioFile) -> Task:
    return task


def _agent_view(task: Task, spec: ScenarioFile) -> Any:
    """`peb_core.access.agent_view`. The access layer builds the agent's view over this stage's
    tasks, and so imports this stage; it is imported here only once such a view is asked for,
    so the kind is listed with the others whether or not anything imported the access layer."""
    from ..access import agent_view

    return agent_view(task, spec)


SHIPPED_VIEWS = (
    ViewSpec("model", "what a model is shown (docs/benchmark.md §6)", model_view),
    ViewSpec("boundary", "the model view and the scopes the access layer withheld", boundary_view),
    ViewSpec("system", "the model view, visible facts and the access layer's report", system_view),
    ViewSpec("oracle", "the Task itself: the oracle baseline only", _oracle_view),
    ViewSpec(
        "agent", "the request, contract and answer schema, and tools over the corpus", _agent_view
    ),
    ViewSpec("escalation", "the model view and the family's scope owners", escalation_view),
)
"""The view kinds the package ships, registered in this order: a new shipped kind is its
builder and an entry here."""
for _view in SHIPPED_VIEWS:
    register_view(_view)
