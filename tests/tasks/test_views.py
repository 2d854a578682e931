"""docs/benchmark.md §6: the benchmark's own access boundary, proved over many generated tasks.

A model view never holds a hidden document, a fact, an evidence-family tag or an oracle; the
baselines' system view adds only the authorized documents' facts and the filter report.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leaks import ORACLE_KEYS, hidden_leaks, json_keys, json_objects, model_view_leaks
from pydantic import ValidationError

from peb_core import (
    ModelView,
    ScenarioFile,
    SystemView,
    Task,
    VisibleDocument,
    generate_task,
    load_families,
    model_view,
    system_view,
)
from peb_core.tasks import TIERS, Tier, get_tier, owners_of

FAMILIES = load_families()
CASES = [(family, t.id) for family, spec in FAMILIES.items() for t in spec.templates]

# The exact keys of every object in a dumped ModelView, by path ("[]" = any list item).
MODEL_VIEW_KEYS: dict[tuple[str, ...], set[str]] = {
    (): {"family", "prompt", "contract", "answer_schema", "documents"},
    ("contract",): {"required_evidence", "partial_response_permitted"},
    ("contract", "required_evidence", "[]"): {"id", "description", "informs"},
    ("answer_schema", "[]"): {"name", "kind", "values", "description"},
    ("documents", "[]"): {"doc_id", "title", "scope", "body"},
}


def shape_problems(parsed: dict[str, Any]) -> list[str]:
    """Objects whose keys are not exactly the allowed set for their path."""
    problems = []
    for path, obj in json_objects(parsed):
        allowed = MODEL_VIEW_KEYS.get(path)
        if allowed is None:
            problems.append(f"unexpected object at {'.'.join(path)}")
        elif set(obj) != allowed:
            problems.append(f"{'.'.join(path) or '<root>'}: keys {sorted(obj)}")
    return problems


@st.composite
def generated_tasks(draw: st.DrawFn) -> tuple[Task, ScenarioFile]:
    family, template = draw(st.sampled_from(CASES))
    spec = FAMILIES[family]
    seed = draw(st.one_of(st.sampled_from(spec.canonical_seeds), st.integers(0, 10**6)))
    distractors = draw(st.sampled_from([0, 0, 1, 3]))
    tier = draw(st.sampled_from(list(TIERS)))
    return generate_task(spec, template, seed, distractors, tier), spec


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(generated_tasks())
def test_model_view_holds_nothing_a_model_must_not_see(case: tuple[Task, ScenarioFile]) -> None:
    task, spec = case
    view = model_view(task, spec)
    dumped = view.model_dump_json()
    parsed = json.loads(dumped)
    assert model_view_leaks(dumped, task, spec) == []
    assert shape_problems(parsed) == []
    # The view's documents are exactly the authorized documents, in order.
    assert [d["doc_id"] for d in parsed["documents"]] == list(task.authorized_doc_ids)
    for shown, doc in zip(view.documents, task.authorized_documents, strict=True):
        assert (shown.title, shown.scope, shown.body) == (doc.title, doc.scope, doc.body)
    material = next(d for d in task.documents if d.role == "material")
    if get_tier(task.tier).corpus is not None:
        # A corpus: every document kept outside the user's scopes (at the start of a grant
        # schedule) stays hidden, the restricted masters among them (but the one whose scope
        # the schedule changes: an ending grant holds it at the start).
        outside = [d for d in task.documents if d.scope not in task.user_scopes]
        assert task.hidden_documents == tuple(outside)
        restricted = FAMILIES[task.family].restricted_families
        required = {r.id for r in task.contract.required_evidence}
        changed = {f for f, s in FAMILIES[task.family].home_scopes.items()
                   for g in task.grants if g.scope == s}  # fmt: skip
        assert {d.evidence_family for d in outside} >= (required & set(restricted)) - changed
    elif task.tier == "hard":
        # The two restricted masters and the decoy stay hidden, whatever the task's layout.
        assert len(task.hidden_documents) == 3
        assert len(view.documents) == len(task.documents) - 3
    elif task.promoted:
        assert material.doc_id in task.authorized_doc_ids
        assert (
            VisibleDocument(
                doc_id=material.doc_id,
                title=material.title,
                scope=material.scope,
                body=material.body,
            )
            in view.documents
        )
    else:
        assert len(view.documents) == len(task.documents) - 1
        assert material.doc_id not in dumped


def test_the_leak_checks_can_fail(canonical_tasks: list[Task]) -> None:
    """The checks above flag each kind of leak when handed the whole Task."""
    task = next(t for t in canonical_tasks if not t.promoted)
    spec = FAMILIES[task.family]
    dumped = task.model_dump_json()
    problems = model_view_leaks(dumped, task, spec)
    for kind in ("hidden material body", "hidden material title", "hidden material doc_id"):
        assert any(p.startswith(kind) for p in problems), kind
    assert "fact key 'facts'" in problems
    assert "evidence_family key" in problems
    assert {"oracle key 'oracles'", "oracle key 'task_id'", "oracle key 'template'"} <= set(
        problems
    )
    assert shape_problems(json.loads(dumped))
    # An evidence-family id written into a visible body is caught too.
    view = json.loads(model_view(task, spec).model_dump_json())
    view["documents"][0]["body"] += f" See {spec.evidence_families[-1].id}."
    assert model_view_leaks(json.dumps(view), task, spec) == [
        f"evidence family {spec.evidence_families[-1].id!r} in a document"
    ]


def test_promoted_canonical_tasks_show_the_material_document(
    canonical_tasks: list[Task],
) -> None:
    promoted = [t for t in canonical_tasks if t.promoted]
    assert promoted
    for task in promoted:
        view = model_view(task, FAMILIES[task.family])
        material = next(d for d in task.documents if d.role == "material")
        shown = {d.doc_id: d for d in view.documents}
        assert shown[material.doc_id].body == material.body
        assert shown[material.doc_id].title == material.title
        assert len(view.documents) == 6


def test_model_view_refuses_a_task_of_another_family(canonical_tasks: list[Task]) -> None:
    task = next(t for t in canonical_tasks if t.family == "due_diligence_v1")
    with pytest.raises(ValueError, match="due_diligence_v1"):
        model_view(task, FAMILIES["security_incident_v1"])


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize(("family", "template"), CASES)
def test_system_view_holds_no_hidden_document_and_no_oracle(
    family: str, template: str, tier: Tier
) -> None:
    spec = FAMILIES[family]
    for seed in [*spec.canonical_seeds, *range(400, 420)]:
        task = generate_task(spec, template, seed, tier=tier)
        view = system_view(task, spec)
        dumped = view.model_dump_json()
        parsed = json.loads(dumped)
        assert hidden_leaks(dumped, task) == []
        assert json_keys(parsed) & ORACLE_KEYS == set()
        assert "evidence_family" not in json_keys(parsed)
        # The family's scope owners beside them (issue 34): the same in every task's view.
        assert set(parsed) == {"model", "visible_facts", "withheld", "owners"}
        assert view.owners == owners_of(spec)
        assert view.model == model_view(task, spec)
        # Facts of the current authorized documents only, document by document: a superseded
        # copy is evidence of nothing now (docs/benchmark.md §1).
        assert [(v.doc_id, v.facts) for v in view.visible_facts] == [
            (d.doc_id, d.facts) for d in task.authorized_documents if not d.superseded
        ]
        # The filter report is the oracle gap report's missing requirements and scopes.
        gap = task.oracles.gap_report
        withheld = [w.requirement for w in view.withheld]
        scopes = list(dict.fromkeys(s for w in view.withheld for s in w.scopes))
        if gap is None:
            assert withheld == [] and task.oracles.completeness == "complete"
        else:
            assert withheld == gap.missing_requirements
            assert scopes == gap.missing_scopes


def _valid_document() -> dict[str, str]:
    return {"doc_id": "doc-000001", "title": "A title", "scope": "public", "body": "A body."}


@pytest.mark.parametrize("extra", ["facts", "evidence_family", "role", "oracles"])
def test_visible_document_rejects_extra_fields(extra: str) -> None:
    VisibleDocument.model_validate(_valid_document())
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        VisibleDocument.model_validate({**_valid_document(), extra: []})


@pytest.mark.parametrize("extra", ["facts", "oracles", "task_id", "hidden_documents"])
def test_model_view_rejects_extra_fields(extra: str, canonical_tasks: list[Task]) -> None:
    task = canonical_tasks[0]
    data = json.loads(model_view(task, FAMILIES[task.family]).model_dump_json())
    assert ModelView.model_validate(data) == model_view(task, FAMILIES[task.family])
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        ModelView.model_validate({**data, extra: []})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        ModelView.model_validate_json(json.dumps({**data, extra: []}))


def test_model_view_rejects_facts_smuggled_into_a_document(canonical_tasks: list[Task]) -> None:
    task = canonical_tasks[0]
    data = json.loads(model_view(task, FAMILIES[task.family]).model_dump_json())
    data["documents"][0]["facts"] = [f.model_dump() for f in task.documents[0].facts]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        ModelView.model_validate(data)


def test_system_view_rejects_extra_fields(canonical_tasks: list[Task]) -> None:
    task = canonical_tasks[0]
    data = json.loads(system_view(task, FAMILIES[task.family]).model_dump_json())
    SystemView.model_validate(data)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        SystemView.model_validate({**data, "oracles": {}})
    data["withheld"] = [{"requirement": "x", "scopes": [], "documents": []}]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        SystemView.model_validate(data)
