"""docs/benchmark.md §9.3: a contract the agent must find. Under `contract="corpus"` a task of a
tier with corpora is the task its contract is given with, plus the organisation's procedure: one
visible record (its own reference and version, listed at the end of the register) that says in
the family's words what the request requires, and nothing of what is missing. `given` leaves
every task as it was (the tiers' digests are pinned in test_determinism.py)."""

from __future__ import annotations

import json
import re

import pytest

from peb_core import ScenarioFile, Task, generate_task, generate_tasks, load_families
from peb_core.access import agent_view
from peb_core.tasks import RECORD_REF, check_contract, record_ref
from peb_core.tasks._checks import consistency_problems

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
CORPUS_TIERS = ("agent", "delegation", "grants")


def _pairs(tier: str) -> list[tuple[Task, Task]]:
    given = generate_tasks(SPECS, tier=tier)
    found = generate_tasks(SPECS, tier=tier, contract="corpus")
    return list(zip(given, found, strict=True))


def _procedure(task: Task) -> tuple[int, str]:
    [(i, doc)] = [(i, d) for i, d in enumerate(task.documents) if d.role == "procedure"]
    return i, doc.doc_id


@pytest.mark.parametrize("tier", CORPUS_TIERS)
def test_the_procedure_is_all_that_changes(tier: str) -> None:
    """Every canonical task: the same id, contract, oracles, topologies and documents, but for
    the procedure (visible, no facts, kept where the register is) and one line more at the end
    of the register."""
    for given, found in _pairs(tier):
        assert found.contract_source == "corpus" and given.contract_source == "given"
        assert "contract_source" not in json.loads(given.model_dump_json())
        same = ("task_id", "contract", "oracles", "topologies", "user_scopes", "grants")
        assert all(getattr(given, k) == getattr(found, k) for k in same), given.task_id
        i, doc_id = _procedure(found)
        for was, now in zip(given.grant_states, found.grant_states, strict=True):
            assert (was.oracles, was.user_scopes) == (now.oracles, now.user_scopes)
            assert set(now.authorized_doc_ids) == {*was.authorized_doc_ids, doc_id}
        procedure = found.documents[i]
        rest = found.documents[:i] + found.documents[i + 1 :]
        register = next(d for d in given.documents if d.role == "register")
        for before, after in zip(given.documents, rest, strict=True):
            if before.role == "register":
                added = after.body.removeprefix(before.body + "\n")
                assert added != after.body and "\n" not in added
                assert record_ref(added) == record_ref(procedure.body)
            else:
                assert before == after
        assert doc_id in found.authorized_doc_ids and not procedure.facts
        assert procedure.scope == register.scope
        assert procedure.evidence_family == register.evidence_family
        assert procedure.store == (None if tier != "delegation" else "workspace")
        assert set(found.authorized_doc_ids) == {*given.authorized_doc_ids, doc_id}


def test_the_procedure_lists_what_the_request_requires_and_nothing_else() -> None:
    """Each requirement on a line of its own, by the family's description, and no other kind of
    evidence; the register lists the procedure at the version its stamp says; its text names no
    restricted scope (nor says where one is: `(scope ...)`) and no record but its own, so it
    cannot point at what is missing."""
    for task in generate_tasks(SPECS, [*range(11, 60, 12), 9001], tier="agent", contract="corpus"):
        spec = FAMILIES[task.family]
        _, doc_id = _procedure(task)
        body = next(d.body for d in task.documents if d.doc_id == doc_id)
        required = {r.description for r in task.contract.required_evidence}
        lines = body.splitlines()
        named = [e.description for e in spec.evidence_families if e.description in body]
        assert sorted(named) == sorted(required), task.task_id
        assert all(sum(d in line for line in lines[1:]) == 1 for d in required)
        assert not any(d in lines[0] for d in required)  # the stamp and the intro
        ref = record_ref(body)
        assert ref is not None and RECORD_REF.findall(body) == [ref]
        register = next(d.body for d in task.documents if d.role == "register")
        [line] = [ln for ln in register.splitlines() if ln.startswith(f"[{ref}]")]
        assert spec.procedure is not None and spec.procedure.description in line
        version = re.search(r"version (\d+)", body, re.IGNORECASE)
        assert version is not None and f"ersion {version.group(1)} of" in line
        words = set(re.findall(r"\w+", body))
        assert not words & set(spec.restricted_scopes) and "(scope " not in body, task.task_id


def test_searching_the_request_finds_the_procedure() -> None:
    """At the default corpus size, on every canonical task of every tier with corpora, the
    first page of a search of the request holds the procedure (the request's subject, in the
    family's words, opens it); at any size the register lists it by its reference."""
    for tier in CORPUS_TIERS:
        for task in generate_tasks(SPECS, tier=tier, contract="corpus"):
            session = agent_view(task, FAMILIES[task.family]).session()
            hits = json.loads(session.call("search", json.dumps({"query": task.prompt})).content)
            assert _procedure(task)[1] in [h["doc_id"] for h in hits["hits"]], task.task_id


def test_a_contract_is_found_only_where_there_is_a_corpus_and_a_procedure() -> None:
    spec = FAMILIES["due_diligence_v1"]
    with pytest.raises(ValueError, match="the paper tier has no corpus to find a contract in"):
        generate_task(spec, "hidden_liability_annex", 11, contract="corpus")
    bare = spec.model_copy(update={"procedure": None})
    with pytest.raises(ValueError, match="declares no \\[procedure\\]: its contract can only"):
        check_contract(bare, "agent", "corpus")
    check_contract(bare, "agent", "given")  # every family's contract can be given
    with pytest.raises(ValueError, match="unknown contract source 'lost'; valid: given, corpus"):
        check_contract(spec, "agent", "lost")  # type: ignore[arg-type]


def _edited(spec: ScenarioFile, **procedure: object) -> ScenarioFile:
    assert spec.procedure is not None
    data = spec.model_dump()
    data["procedure"] |= procedure
    return ScenarioFile.model_validate(data)


def test_a_family_file_procedure_is_checked() -> None:
    """An item that names no requirement, and a text holding an evidence description (a reader
    would take it for a requirement), are each one line of the family's problems."""
    spec = FAMILIES["due_diligence_v1"]
    assert spec.procedure is not None
    items = ["- a record", *spec.procedure.items[1:]]
    assert "procedure.items[0]: an item names its requirement by {description}" in list(
        consistency_problems(_edited(spec, items=items))
    )
    description = spec.evidence_families[0].description
    intros = [f"Read {description}", *spec.procedure.intros[1:]]
    assert f"procedure.intros[0]: holds the evidence description {description!r}" in list(
        consistency_problems(_edited(spec, intros=intros))
    )
    titles = ["{nosuch} checklist", *spec.procedure.titles[1:]]
    assert any(
        p.startswith("procedure.titles[0]: unknown placeholder {nosuch}")
        for p in consistency_problems(_edited(spec, titles=titles))
    )
    assert list(consistency_problems(spec)) == []
