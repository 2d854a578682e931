"""A task's documents as a frame for display: which the view holds, and the boundary sentence."""

from __future__ import annotations

import polars as pl

from ._scenario import ScenarioFile
from ._task import Task


def boundary_sentence(task: Task, spec: ScenarioFile) -> str | None:
    """The tracker's sentence stating the view's boundary (which scope is excluded from, or
    opened to, the view), as it appears in the tracker's body; None if the task has no tracker."""
    tracker = next((d for d in task.documents if d.role == "tracker"), None)
    if tracker is None:
        return None
    scope = spec.template(task.template).material.scope
    for phrasing in (*spec.boundary.excluded, *spec.boundary.included):
        sentence = phrasing.format(scope=scope, scope_description=spec.scopes[scope])
        if sentence in tracker.body:
            return sentence
    return None


def documents_frame(task: Task, spec: ScenarioFile | None = None) -> pl.DataFrame:
    """A task's documents, one row each, with whether the caller's view holds it.
    `boundary_signal` marks the tracker, the document that states the view's boundary in
    words; with the task's `spec`, `boundary_text` holds that sentence (else null)."""
    sentence = boundary_sentence(task, spec) if spec is not None else None
    return pl.DataFrame(
        [
            {
                "visible": d.doc_id in task.authorized_doc_ids,
                "doc_id": d.doc_id,
                "role": d.role,
                "scope": d.scope,
                "evidence_family": d.evidence_family,
                "title": d.title,
                "body": d.body,
                "boundary_signal": d.role == "tracker",
                "boundary_text": sentence if d.role == "tracker" else None,
            }
            for d in task.documents
        ],
        schema_overrides={"boundary_text": pl.String},
    )
