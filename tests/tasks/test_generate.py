"""docs/benchmark.md §1: what every task holds, the Table 2 composition of each family, and the
Table 3 worked example, as the generator produces them."""

from __future__ import annotations

import pytest
from answers import implied_answer
from published import TABLE2

from peb_core import ScenarioFile, Task, generate_task, generate_tasks, parse_task_id
from peb_core.tasks import ROLES, parse_seed

# The four families added after the paper (its future work), each 6 templates x 4 seeds.
NEW_FAMILIES = ["procurement_v1", "legal_review_v1", "insider_risk_v1", "hr_investigation_v1"]

FRESH_SEEDS = [0, 7, *range(400, 440), 10**9]


def _fold(spec: ScenarioFile, task: Task, docs: list[str]) -> dict[str, object]:
    """The answer the facts of `docs` imply (`answers.implied_answer`)."""
    return implied_answer(spec, [f for d in task.documents if d.doc_id in docs for f in d.facts])


def assert_valid_task(task: Task, spec: ScenarioFile) -> None:
    """Everything docs/benchmark.md §1-2 say a task carries, checked from the task's own data."""
    template = spec.template(task.template)
    assert task.family == spec.id
    assert task.task_id == f"{task.template}__s{task.seed}"
    assert parse_task_id(task.task_id) == (task.template, task.seed, task.tier)
    assert task.prompt and "{" not in task.prompt

    # Six documents, one per role, in a seeded order, plus any distractors, with unique ids and
    # rendered text.
    slots = [d for d in task.documents if d.role != "distractor"]
    assert sorted(d.role for d in slots) == sorted(ROLES)
    assert len({d.doc_id for d in task.documents}) == len(task.documents)
    for doc in task.documents:
        if doc.role == "distractor":
            assert doc.facts == () and doc.scope in spec.user_scopes
            assert spec.distractors is not None
            assert doc.evidence_family == spec.distractors.evidence_family
    for doc in task.documents:
        assert doc.title and doc.body
        assert "{" not in doc.title + doc.body, (task.task_id, doc.role)
        assert doc.scope in spec.scopes
    material = next(d for d in task.documents if d.role == "material")
    assert material.scope == template.material.scope
    assert material.evidence_family == template.material.evidence_family
    assert material.scope not in spec.user_scopes

    # Authorization: the documents whose scope is in user_scopes, in document order.
    expected_scopes = (*spec.user_scopes, material.scope) if task.promoted else spec.user_scopes
    assert task.user_scopes == tuple(expected_scopes)
    assert task.authorized_doc_ids == tuple(
        d.doc_id for d in task.documents if d.scope in task.user_scopes
    )
    authorized = [d for d in task.documents if d.doc_id in task.authorized_doc_ids]
    hidden = [d for d in task.documents if d.doc_id not in task.authorized_doc_ids]
    assert hidden == ([] if task.promoted else [material])

    # Contract: the material's family is required, the tracker's is not; policy per template. Its
    # order is drawn per seed (see test_contract_order_carries_no_information).
    required = [r.id for r in task.contract.required_evidence]
    by_role = {d.role: d for d in slots}
    assert sorted(required) == sorted(
        dict.fromkeys(
            by_role[r].evidence_family for r in ROLES if r == "material" or spec.slot(r).required
        )
    )
    assert len(set(required)) == len(required)
    assert material.evidence_family in required
    tracker = next(d for d in task.documents if d.role == "tracker")
    assert tracker.evidence_family not in required
    assert task.contract.partial_response_permitted == template.partial_response_permitted
    for req in task.contract.required_evidence:
        assert req.informs == tuple(spec.evidence_family(req.id).informs)

    # The tracker states the boundary, naming the excluded scope when the material is hidden.
    if not task.promoted:
        assert f"scope {material.scope}" in tracker.body

    # Completeness: complete iff every required family is covered by an authorized document.
    covered = {d.evidence_family for d in authorized}
    missing = [r for r in task.contract.required_evidence if r.id not in covered]
    oracles = task.oracles
    assert oracles.completeness == ("incomplete" if missing else "complete")
    assert task.promoted == (oracles.completeness == "complete")

    # Oracles are computed from the facts.
    all_ids = [d.doc_id for d in task.documents]
    assert oracles.complete_answer == _fold(spec, task, all_ids)
    assert oracles.authorized_answer == _fold(spec, task, list(task.authorized_doc_ids))

    if oracles.completeness == "complete":
        assert oracles.complete_answer == oracles.authorized_answer
        assert oracles.gap_report is None
    else:
        gap = oracles.gap_report
        assert gap is not None
        partial = task.contract.partial_response_permitted
        assert gap.status == ("partial" if partial else "blocked")
        assert gap.reason == ("partial_answer_permitted" if partial else "policy_requires_block")
        assert gap.missing_requirements == [material.evidence_family]
        assert gap.missing_scopes == [material.scope]
        assert gap.affected_claims == list(spec.evidence_family(material.evidence_family).informs)


def test_seven_families_of_24_tasks(
    families: dict[str, ScenarioFile], canonical_tasks: list[Task]
) -> None:
    assert set(families) == set(TABLE2) | set(NEW_FAMILIES)
    assert len(canonical_tasks) == 24 * len(families)
    assert len({(t.family, t.task_id) for t in canonical_tasks}) == len(canonical_tasks)
    for family, spec in families.items():
        tasks = [t for t in canonical_tasks if t.family == family]
        assert len(tasks) == 24
        assert len(spec.templates) == 6
        assert len(spec.canonical_seeds) == 4 and 11 in spec.canonical_seeds
        assert {(t.template, t.seed) for t in tasks} == {
            (tp.id, s) for tp in spec.templates for s in spec.canonical_seeds
        }


@pytest.mark.parametrize("family", sorted(TABLE2))
def test_table2_composition(family: str, canonical_tasks: list[Task]) -> None:
    tasks = [t for t in canonical_tasks if t.family == family]
    partial = [t for t in tasks if t.contract.partial_response_permitted]
    block = [t for t in tasks if not t.contract.partial_response_permitted]
    complete = [t for t in tasks if t.oracles.completeness == "complete"]
    incomplete = [t for t in tasks if t.oracles.completeness == "incomplete"]
    measured = (
        len(complete),
        len(incomplete),
        len({t.template for t in partial}),
        len(partial),
        len({t.template for t in block}),
        len(block),
        sum(t.oracles.completeness == "complete" for t in partial),
        sum(t.oracles.completeness == "complete" for t in block),
    )
    assert measured == TABLE2[family]


def test_every_canonical_task_is_valid(
    families: dict[str, ScenarioFile], canonical_tasks: list[Task]
) -> None:
    for task in canonical_tasks:
        assert_valid_task(task, families[task.family])


def test_promoted_tasks_are_complete_with_equal_answers(canonical_tasks: list[Task]) -> None:
    promoted = [t for t in canonical_tasks if t.promoted]
    paper = [t for t in promoted if t.family in TABLE2]
    assert len(paper) == sum(row[0] for row in TABLE2.values())
    for task in promoted:
        assert task.oracles.completeness == "complete"
        assert task.oracles.complete_answer == task.oracles.authorized_answer
        assert len(task.authorized_doc_ids) == 6


def test_worked_example_table3(tasks_by_id: dict[str, Task]) -> None:
    task = tasks_by_id["hidden_liability_annex__s11"]
    assert task.family == "due_diligence_v1"
    assert task.prompt == (
        "Review the liability posture around Westbridge MedTech exposure and state whether the "
        "transaction should proceed."
    )
    assert not task.promoted
    assert task.contract.partial_response_permitted is False
    docs = {d.role: d for d in task.documents}

    # Hidden evidence: the internal liability annex memo in scope target_internal.
    (hidden,) = task.hidden_documents
    assert hidden is docs["material"]
    assert hidden.scope == "target_internal"
    assert hidden.evidence_family == "liability_annex"
    assert hidden.title == "Internal liability annex memo"
    assert [f.id for f in hidden.facts] == ["uninsured_liability_annex"]
    assert "materially changes the diligence posture" in hidden.body

    # Authorized visible evidence, as the paper summarises it.
    assert "supportable" in docs["advisor_note"].body
    assert "contractual complexity" in docs["advisor_note"].body
    assert "posture appears stable" in docs["primary_evidence"].body
    assert "no material issue" in docs["context_note"].body
    assert "restricted internal compartments are excluded" in docs["tracker"].body
    assert "target_internal" in docs["tracker"].body

    oracles = task.oracles
    assert oracles.completeness == "incomplete"
    assert oracles.complete_answer == {
        "recommendation": "block",
        "material_flags": ["liability_annex_missing"],
        "risk_summary": ["contractual_complexity", "uninsured_liability_annex"],
    }
    assert oracles.authorized_answer == {
        "recommendation": "proceed_with_caution",
        "material_flags": [],
        "risk_summary": ["contractual_complexity"],
    }
    gap = oracles.gap_report
    assert gap is not None
    assert gap.model_dump() == {
        "status": "blocked",
        "missing_requirements": ["liability_annex"],
        "missing_scopes": ["target_internal"],
        "affected_claims": ["recommendation", "risk_summary", "material_flags"],
        "reason": "policy_requires_block",
    }


@pytest.mark.parametrize("seed", FRESH_SEEDS)
def test_fresh_seeds_generate_valid_tasks(seed: int, families: dict[str, ScenarioFile]) -> None:
    for spec in families.values():
        for template in spec.templates:
            task = generate_task(spec, template.id, seed)
            assert_valid_task(task, spec)
            assert generate_task(spec, template.id, seed) == task


def test_fresh_seeds_vary_the_text(families: dict[str, ScenarioFile]) -> None:
    spec = families["due_diligence_v1"]
    prompts = {generate_task(spec, "hidden_liability_annex", s).prompt for s in FRESH_SEEDS}
    assert len(prompts) > 1


@pytest.mark.parametrize("seed", [-1, -11, -(10**9)])
def test_negative_seed_raises(seed: int, families: dict[str, ScenarioFile]) -> None:
    for spec in families.values():
        with pytest.raises(ValueError, match="negative"):
            generate_task(spec, spec.templates[0].id, seed)


@pytest.mark.parametrize("text", ["abc", "-5", "", "1.5", "11,23", "400-439", "+3"])
def test_a_bad_seed_is_refused_naming_what_is_valid(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a seed: seeds are integers >= 0"):
        parse_seed(text)


def test_a_seed_is_read_from_text() -> None:
    assert [parse_seed(t) for t in ("0", "11", " 400 ", str(10**9))] == [0, 11, 400, 10**9]


@pytest.mark.parametrize("family", NEW_FAMILIES)
def test_new_family_composition(family: str, families: dict[str, ScenarioFile]) -> None:
    """Issue 5: a mix of complete and incomplete tasks and of partial and block templates, and at
    least two templates whose hidden evidence contradicts the visible narrative: with all the
    evidence, a visible finding is retracted, so the complete answer is not the authorized
    answer plus more but drops something the authorized answer holds."""
    spec = families[family]
    tasks = generate_tasks([spec])
    assert len(spec.templates) == 6 and len(tasks) == 24
    completeness = {t.oracles.completeness for t in tasks}
    assert completeness == {"complete", "incomplete"}
    assert {t.partial_response_permitted for t in spec.templates} == {True, False}
    contradicting = set()
    for task in tasks:
        if task.oracles.completeness == "complete":
            continue
        complete, authorized = task.oracles.complete_answer, task.oracles.authorized_answer
        for name, field in spec.answer.items():
            got, seen = complete[name], authorized[name]
            if field.kind == "set" and set(seen) - set(got):
                contradicting.add(task.template)
            ranks = field.values.index
            if field.kind == "ordinal" and ranks(str(got)) < ranks(str(seen)):
                contradicting.add(task.template)
    assert len(contradicting) >= 2, contradicting
    retracting = {t.id for t in spec.templates if any(f.retracts for f in t.findings)}
    assert contradicting <= retracting


@pytest.mark.parametrize("family", sorted(TABLE2) + NEW_FAMILIES)
def test_document_order_is_shuffled_per_seed(
    family: str, families: dict[str, ScenarioFile]
) -> None:
    spec = families[family]
    positions = {
        [d.role for d in generate_task(spec, spec.templates[0].id, s).documents].index("tracker")
        for s in range(400, 440)
    }
    assert len(positions) > 2 and positions != {5}


def test_distractors_change_no_oracle(families: dict[str, ScenarioFile]) -> None:
    for spec in families.values():
        for template in spec.templates:
            for seed in [11, 401]:
                plain = generate_task(spec, template.id, seed)
                noisy = generate_task(spec, template.id, seed, distractors=3)
                assert_valid_task(noisy, spec)
                extra = [d for d in noisy.documents if d.role == "distractor"]
                assert len(extra) == 3 and len(noisy.documents) == 9
                assert all(d.doc_id in noisy.authorized_doc_ids for d in extra)
                assert noisy.oracles == plain.oracles
                assert noisy.contract == plain.contract
                same = {d.doc_id: d for d in plain.documents}
                assert all(same[d.doc_id] == d for d in noisy.documents if d.role != "distractor")
    with pytest.raises(ValueError, match="negative"):
        generate_task(spec, spec.templates[0].id, 11, distractors=-1)


@pytest.mark.parametrize("tier", ["paper", "hard"])
def test_contract_order_carries_no_information(
    families: dict[str, ScenarioFile], tier: str
) -> None:
    """The missing requirement is not found by position: over every family's canonical tasks,
    the material family sits at every position of the contract, and last in about 1/n."""
    for spec in families.values():
        tasks = generate_tasks([spec], tier=tier)
        positions = [
            [r.id for r in t.contract.required_evidence].index(
                spec.template(t.template).material.evidence_family
            )
            for t in tasks
        ]
        n = len(tasks[0].contract.required_evidence)
        assert len(set(positions)) >= n - 1, (spec.id, positions)
        assert positions.count(n - 1) <= len(tasks) / 3, (spec.id, positions)
