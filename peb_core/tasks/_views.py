"""The views a system may receive. No view can hold a hidden document: each is built by one
function into types that have no field for one.

- `ModelView`: what a model is shown (docs/benchmark.md §6): prompt, contract, answer schema and
  the authorized documents' id, title, scope and body. No facts, no evidence-family tags, no
  oracles, not even the task id (it names the hidden-evidence pattern).
- `SystemView`: the model view plus the facts of the authorized documents and the access layer's
  filter report (which required evidence families it withheld, from which scopes), as a real
  governance layer would know. Building the report reads which families and scopes the hidden
  documents hold; the view keeps only those names. This is what the deterministic baselines read.
- `BoundaryView`: the model view plus the withheld scope ids alone (`boundary_metadata@1`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ._answers import answer_schema
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


class BoundaryView(_View):
    """The model view plus the scopes in which the access layer withheld matching documents."""

    model: ModelView
    withheld_scopes: tuple[str, ...]


def model_view(task: Task, spec: ScenarioFile) -> ModelView:
    """The only way to build what a model is shown."""
    if spec.id != task.family:
        raise ValueError(f"task {task.task_id} is of family {task.family}, not {spec.id}")
    return ModelView(
        family=task.family,
        prompt=task.prompt,
        contract=task.contract,
        answer_schema=answer_schema(spec),
        documents=tuple(
            VisibleDocument(doc_id=d.doc_id, title=d.title, scope=d.scope, body=d.body)
            for d in task.authorized_documents
        ),
    )


def system_view(task: Task, spec: ScenarioFile) -> SystemView:
    """The baselines' view: the model view, visible facts, and the access layer's filter report
    (each required family with no current authorized document, and the scopes where the access
    layer withheld documents of it)."""
    authorized = task.authorized_documents
    covered = {d.evidence_family for d in authorized if not d.superseded}
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
        visible_facts=tuple(VisibleFacts(doc_id=d.doc_id, facts=d.facts) for d in authorized),
        withheld=tuple(withheld),
    )


def boundary_view(task: Task, spec: ScenarioFile) -> BoundaryView:
    """The boundary-metadata protocol's view: the model view and the withheld scope ids only."""
    view = system_view(task, spec)
    scopes = dict.fromkeys(s for w in view.withheld for s in w.scopes)
    return BoundaryView(model=view.model, withheld_scopes=tuple(scopes))


ViewKind = Literal["model", "boundary", "system", "oracle"]
"""Which view a system reads: `model` (ModelView), `boundary` (BoundaryView), `system`
(SystemView), or `oracle` (the Task itself; only the oracle baseline)."""


def view_for(
    kind: ViewKind, task: Task, spec: ScenarioFile
) -> ModelView | BoundaryView | SystemView | Task:
    """The view of `task` a system of this kind receives."""
    if kind == "model":
        return model_view(task, spec)
    if kind == "boundary":
        return boundary_view(task, spec)
    if kind == "system":
        return system_view(task, spec)
    return task
