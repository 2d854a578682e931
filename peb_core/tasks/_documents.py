"""A task's documents for display: a frame of them (which the view holds, the boundary
sentence), and each as a Markdown card, so every notebook shows a document the same way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._scenario import ScenarioFile
from ._task import Task

if TYPE_CHECKING:  # imported where used: generating and running tasks needs no polars
    import polars as pl


def boundary_sentence(task: Task, spec: ScenarioFile) -> str | None:
    """The tracker's sentence stating the view's boundary (a scope excluded from, or opened to,
    the view; on the hard tier, perhaps a sentence naming no scope), as it appears in the
    tracker's body; None if the task has no tracker or none is found."""
    tracker = next((d for d in task.documents if d.role == "tracker"), None)
    if tracker is None:
        return None
    phrasings = [*spec.boundary.excluded, *spec.boundary.included]
    for scope, description in spec.scopes.items():
        for phrasing in phrasings:
            sentence = phrasing.format(scope=scope, scope_description=description)
            if sentence in tracker.body:
                return sentence
    neutral = spec.hard.neutral if spec.hard is not None else []
    return next((s for s in neutral if s in tracker.body), None)


def documents_frame(task: Task, spec: ScenarioFile | None = None) -> pl.DataFrame:
    """A task's documents, one row each, with whether the caller's view holds it.
    `boundary_signal` marks the tracker, the document that states the view's boundary in
    words; with the task's `spec`, `boundary_text` holds that sentence (else null).
    `superseded`: a later version of the document exists in the task (hard tier)."""
    import polars as pl

    sentence = boundary_sentence(task, spec) if spec is not None else None
    return pl.DataFrame(
        [
            {
                "visible": d.doc_id in task.authorized_doc_ids,
                "doc_id": d.doc_id,
                "role": d.role,
                "scope": d.scope,
                "evidence_family": d.evidence_family,
                "superseded": d.superseded,
                "title": d.title,
                "body": d.body,
                "boundary_signal": d.role == "tracker",
                "boundary_text": sentence if d.role == "tracker" else None,
            }
            for d in task.documents
        ],
        schema_overrides={"boundary_text": pl.String},
    )


@dataclass(frozen=True)
class DocumentCard:
    """One document as Markdown (the boundary sentence marked), and whether it is the document
    stating the view's boundary (for a notebook to set apart)."""

    markdown: str
    boundary_signal: bool


def document_cards(documents: pl.DataFrame, *, visible: bool) -> list[DocumentCard]:
    """The visible (or hidden) rows of a `documents_frame` as cards: title, id, role, scope,
    evidence family and body."""
    cards = []
    for d in documents.filter(documents["visible"] == visible).iter_rows(named=True):
        body = d["body"]
        if d["boundary_text"]:
            body = body.replace(d["boundary_text"], f"<mark>{d['boundary_text']}</mark>")
        stale = " (superseded)" if d["superseded"] else ""
        head = (
            f"**{d['title']}** `{d['doc_id']}`  \n{d['role']}, scope `{d['scope']}`, "
            f"evidence `{d['evidence_family']}`{stale}"
        )
        cards.append(DocumentCard(f"{head}\n\n{body}", bool(d["boundary_signal"])))
    return cards
