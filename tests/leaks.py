"""What a model must never be shown (docs/benchmark.md §6), looked for in any dumped JSON: the
checks of the model view's property test, shared with the dataset release's test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from peb_core import Document, ScenarioFile, Task

FACT_KEYS = {"facts", "effects", "variables", "retracts"}
ORACLE_KEYS = {
    "oracles",
    "complete_answer",
    "authorized_answer",
    "gap_report",
    "completeness",
    "promoted",
    "template",
    "task_id",
}


def json_objects(
    value: Any, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every JSON object inside `value`, with its path."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from json_objects(item, (*path, key))
    elif isinstance(value, list):
        for item in value:
            yield from json_objects(item, (*path, "[]"))


def json_keys(value: Any) -> set[str]:
    """Every key of every JSON object inside `value`."""
    return {key for _, obj in json_objects(value) for key in obj}


def _strings(value: Any) -> Iterator[str]:
    """Every string (key or value) inside a parsed JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _contains(dumped: str, parsed: Any, needle: str) -> bool:
    return needle in dumped or any(needle in s for s in _strings(parsed))


def hidden_values(task: Task) -> Iterator[tuple[Document, str, str]]:
    """(hidden document, field, value) for each hidden document's id, title and body a model must
    not see. A title or body that a visible document's text holds tells nothing of the hidden one:
    on the hard and agent tiers the view holds copies of hidden masters (the same record), and an
    agent corpus repeats routine titles (of the matter's notes and of other matters' records),
    so such text is not among them. An id always is."""
    shown = [text for v in task.authorized_documents for text in (v.title, v.body)]
    for doc in task.hidden_documents:
        for what in ("body", "title", "doc_id"):
            value = getattr(doc, what)
            if what == "doc_id" or not any(value in text for text in shown):
                yield doc, what, value


def hidden_leaks(dumped: str, task: Task) -> list[str]:
    """Hidden documents' bodies, titles and ids (`hidden_values`) found anywhere in a dumped
    view."""
    parsed = json.loads(dumped)
    return [
        f"hidden {doc.role} {what} {value!r}"
        for doc, what, value in hidden_values(task)
        if _contains(dumped, parsed, value)
    ]


def model_view_leaks(dumped: str, task: Task, spec: ScenarioFile) -> list[str]:
    """Everything docs/benchmark.md §6 says a model is never shown, found in a dumped view."""
    parsed = json.loads(dumped)
    problems = hidden_leaks(dumped, task)
    keys = json_keys(parsed)
    fact_ids = {f.id for d in task.documents for f in d.facts}
    fact_ids |= {f.id for f in spec.template(task.template).findings}
    problems += [f"fact key {k!r}" for k in sorted(keys & (FACT_KEYS | fact_ids))]
    problems += [f"oracle key {k!r}" for k in sorted(keys & ORACLE_KEYS)]
    if "evidence_family" in keys:
        problems.append("evidence_family key")
    family_ids = [e.id for e in spec.evidence_families]
    documents = parsed.get("documents", []) if isinstance(parsed, dict) else []
    for doc in documents:
        text = " ".join(str(doc.get(k, "")) for k in ("title", "body"))
        problems += [f"evidence family {e!r} in a document" for e in family_ids if e in text]
    return problems
