"""The access layer's view of a corpus, as data for the task explorer (docs/benchmark.md §9): a
researcher's frames, which show hidden documents beside what each disclosure mode lets a tool
say of them. Never given to a system."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..tasks import ScenarioFile, Task, record_ref
from ._disclosure import DISCLOSURES
from ._view import agent_view

if TYPE_CHECKING:  # imported where used: running an agent needs no polars
    import polars as pl


def corpus_frame(task: Task, spec: ScenarioFile) -> pl.DataFrame:
    """The corpus, one row per document in doc-id order: what it is (`visible`, `role`, `scope`,
    `store`, `evidence_family`, `superseded`, its record `ref`), and for each disclosure mode
    `open_<mode>`: what the user's own `open` of its id shows an agent (`document` for a visible
    one in a store it reaches, else the error)."""
    import polars as pl

    view = agent_view(task, spec)
    sessions = {mode: view.session(mode) for mode in DISCLOSURES}
    visible = set(task.authorized_doc_ids)
    rows = []
    for d in sorted(task.documents, key=lambda d: d.doc_id):
        row: dict[str, object] = {
            "doc_id": d.doc_id,
            "visible": d.doc_id in visible,
            "role": d.role,
            "scope": d.scope,
            "store": d.store,
            "evidence_family": d.evidence_family,
            "superseded": d.superseded,
            "ref": record_ref(d.body),
            "title": d.title,
        }
        for mode, session in sessions.items():
            outcome = session.call("open", json.dumps({"doc_id": d.doc_id}))
            row[f"open_{mode}"] = outcome.error or "document"
        rows.append(row)
    return pl.DataFrame(rows, schema_overrides={"ref": pl.String, "store": pl.String})


def search_frame(task: Task, spec: ScenarioFile, query: str, k: int = 10) -> pl.DataFrame:
    """One search by the user's own tools under each disclosure mode: per mode, the hits an
    agent is shown (`shown`, in rank order) and the documents the scope filter took off the page
    (not shown; what the mode says of them is in `withheld` and `withheld_scopes`, null where it
    says nothing)."""
    import polars as pl

    view = agent_view(task, spec)
    index = view._corpus.index
    rows = []
    for mode in DISCLOSURES:
        session = view.session(mode)
        result = json.loads(session.call("search", json.dumps({"query": query, "k": k})).content)
        ranking = index.rank(query, index.allowed(session.scopes), k, index.reach(session.stores))
        told = {key: result.get(key) for key in ("withheld", "withheld_scopes")}
        shown = [index.positions[hit["doc_id"]] for hit in result.get("hits", [])]
        for rank, position in enumerate([*shown, *ranking.withheld], 1):
            d = index.documents[position]
            rows.append(
                {
                    "mode": mode,
                    "rank": rank if rank <= len(shown) else None,
                    "shown": rank <= len(shown),
                    "doc_id": d.doc_id,
                    "title": d.title,
                    "scope": d.scope,
                    **told,
                }
            )
    return pl.DataFrame(
        rows,
        schema_overrides={
            "rank": pl.Int64,
            "withheld": pl.Int64,
            "withheld_scopes": pl.List(pl.String),
        },
    )
