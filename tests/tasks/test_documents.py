"""A task's documents for display: which the view holds, what the tracker's boundary sentence is
worth (signal, decoy or none, against the oracle), and on the hard tier the register read back
as a table that agrees with every copy's `superseded` flag, and stale copies' facts."""

from __future__ import annotations

import polars as pl
import pytest

from peb_core.tasks import (
    ContractSource,
    Fact,
    Task,
    boundary,
    document_cards,
    documents_frame,
    generate_task,
    generate_tasks,
    load_families,
    register_frame,
    stale_facts,
)

FAMILIES = load_families()
SEEDS = [11, 23, 401, *range(40)]
PAPER = generate_tasks(FAMILIES.values(), [11, 23, 401])
HARD = generate_tasks(FAMILIES.values(), SEEDS, tier="hard")


def test_the_paper_tier_tracker_names_the_material_scope_and_is_a_signal() -> None:
    for task in PAPER:
        spec = FAMILIES[task.family]
        docs = documents_frame(task, spec)
        tracker = docs.filter(pl.col("boundary").is_not_null())
        assert tracker.height == 1 and tracker["role"].item() == "tracker"
        found = boundary(task, spec)
        assert found is not None and found.sentence in tracker["body"].item()
        assert tracker["boundary_text"].item() == found.sentence
        assert found.scope == spec.template(task.template).material.scope
        assert found.kind == "signal"
        gap = task.oracles.gap_report
        # Excluded: the scope the view misses; opened: a complete task.
        assert (found.scope in gap.missing_scopes) if gap else task.promoted
    assert documents_frame(PAPER[0])["boundary_text"].null_count() == 6


def test_a_copy_s_sentence_on_supersession_is_labelled_by_what_it_is_worth() -> None:
    """Issue 29.15: the decoy supersession sentence was not labelled. `decoy` exactly on the
    current copy of a task whose layout has one (topology `decoy_supersession`), `real` only on
    out-of-date copies (every one of them where the gap is named that way), and the card marks
    the sentence with its label."""
    kinds = set()
    for task in HARD:
        docs = documents_frame(task, FAMILIES[task.family])
        said = docs.filter(pl.col("supersession").is_not_null())
        kinds |= set(said["supersession"])
        decoys = said.filter(pl.col("supersession") == "decoy")
        assert decoys.height == ("decoy_supersession" in task.topologies), task.task_id
        assert not decoys["superseded"].any() and decoys["visible"].all()
        real = said.filter(pl.col("supersession") == "real")
        assert real["superseded"].all() and real["visible"].all()
        if real.height:  # a stated supersession: every out-of-date copy says so
            assert real.height == docs.filter(pl.col("superseded") & pl.col("visible")).height
        for row in said.iter_rows(named=True):
            assert row["supersession_text"] in row["body"]
        cards = "".join(document_cards(docs, visible=True))
        assert cards.count("[supersession decoy: ") == decoys.height
        assert cards.count("[supersession signal: ") == real.height
    assert kinds == {"real", "decoy"}
    assert documents_frame(PAPER[0], FAMILIES[PAPER[0].family])["supersession"].null_count() == 6


def test_the_hard_tier_tracker_is_labelled_by_what_it_is_worth() -> None:
    """`decoy` exactly on decoy notices, `signal` only where the named scope is one the view
    misses, `none` for a sentence naming no scope: never a decoy shown as a signal."""
    kinds = set()
    for task in HARD:
        found = boundary(task, FAMILIES[task.family])
        assert found is not None
        kinds.add(found.kind)
        missing = task.oracles.gap_report.missing_scopes if task.oracles.gap_report else []
        assert (found.kind == "decoy") == ("decoy_notice" in task.topologies), task.task_id
        assert (found.kind == "signal") == (found.scope is not None and found.scope in missing)
        assert (found.kind == "none") == (found.scope is None)
    assert kinds == {"signal", "decoy", "none"}


def test_a_card_labels_the_boundary_sentence_and_marks_superseded_copies() -> None:
    task = next(t for t in HARD if "decoy_notice" in t.topologies and "superseded" in t.topologies)
    docs = documents_frame(task, FAMILIES[task.family])
    cards = "\n".join(document_cards(docs, visible=True))
    assert "[boundary decoy:" in cards and "[boundary signal" not in cards
    assert "(superseded)" in cards
    assert "version " in cards  # each visible document's stamp


def _copy_of(task: Task, doc_id: str | None) -> bool | None:
    found = [d.superseded for d in task.authorized_documents if d.doc_id == doc_id]
    return found[0] if found else None


def test_the_register_table_agrees_with_every_copy_and_the_oracle() -> None:
    """On every hard task the register is read back: a copy is `stale` exactly where the task
    marks it superseded; each hidden master is tied to the requirement it covers, `missing`
    exactly where the oracle's gap report names it."""
    for task in HARD:
        register = register_frame(task, FAMILIES[task.family])
        assert register is not None
        assert register.height == len(FAMILIES[task.family].evidence_families)
        required = {r.id for r in task.contract.required_evidence}
        gap = task.oracles.gap_report
        for row in register.iter_rows(named=True):
            superseded = _copy_of(task, row["copy"])
            if superseded is not None:
                assert superseded == (row["copy_state"] == "stale"), (task.task_id, row)
            assert (row["requirement"] is not None) == (row["record"] in required)
            assert row["missing"] == bool(gap and row["record"] in gap.missing_requirements)
            if gap is not None and row["missing"]:
                assert row["master"] is not None and row["master_scope"] in gap.missing_scopes
        assert (register["copy_state"] == "stale").any() == ("superseded" in task.topologies)
    assert all(register_frame(t, FAMILIES[t.family]) is None for t in PAPER)


@pytest.mark.parametrize(
    ("tier", "contract"),
    [("agent", "given"), ("agent", "corpus"), ("grants", "given"), ("delegation", "given")],
)
def test_a_corpus_register_is_read_back_record_by_record(
    tier: str, contract: ContractSource
) -> None:
    """Issue 36: on the agent tiers the register was a 600-word paragraph among dozens of
    documents. It is read back as a table, a row per line (the procedure's too, under
    `--contract corpus`), each record's reference tying it to its documents: the newest copy the
    view holds is `stale` exactly where the task marks it superseded, and a required record is
    `missing` exactly where the oracle's gap report names it, its hidden current version kept in
    a scope the report names."""
    for task in generate_tasks(FAMILIES.values(), [11, 23], tier=tier, contract=contract):
        spec = FAMILIES[task.family]
        register = register_frame(task, spec)
        assert register is not None
        records = register["record"].to_list()
        expected = [e.id for e in spec.evidence_families]
        assert sorted(records) == sorted(
            [*expected, *(["procedure"] if contract == "corpus" else [])]
        )
        assert register["reference"].is_not_null().all()
        required = {r.id for r in task.contract.required_evidence}
        gap = task.oracles.gap_report
        for row in register.iter_rows(named=True):
            superseded = _copy_of(task, row["copy"])
            if superseded is not None:
                assert superseded == (row["copy_state"] == "stale"), (task.task_id, row)
            assert (row["requirement"] is not None) == (row["record"] in required)
            assert row["missing"] == bool(gap and row["record"] in gap.missing_requirements)
            if row["missing"]:
                assert gap is not None and row["master_scope"] in gap.missing_scopes
            for doc_id in (row["copy"], row["master"]):
                if doc_id is not None:
                    body = next(d.body for d in task.documents if d.doc_id == doc_id)
                    assert body.startswith(f"[{row['reference']}]")


def _values(facts: tuple[Fact, ...], field: str) -> str:
    values = dict.fromkeys(v for f in facts for v in f.effects.get(field, []))
    return ", ".join(values) or "(none)"


def test_stale_facts_list_each_superseded_copy_beside_its_master_and_the_oracle() -> None:
    """Every superseded copy the view holds whose record has facts (in the copy, its current
    master, or both) is listed field by field: the copy's values, the master's, the oracle's."""
    for task in HARD:
        stale = stale_facts(task)
        masters = {d.evidence_family: d for d in task.hidden_documents if not d.superseded}
        superseded = {
            d.doc_id: (d, masters[d.evidence_family])
            for d in task.authorized_documents
            if d.superseded and (d.facts or masters[d.evidence_family].facts)
        }
        assert set(stale["copy"]) == set(superseded)
        for row in stale.iter_rows(named=True):
            copy, master = superseded[row["copy"]]
            assert row["stale"] == _values(copy.facts, row["field"])
            assert row["current"] == _values(master.facts, row["field"])
            oracle = task.oracles.complete_answer[row["field"]]
            values = [oracle] if isinstance(oracle, str) else oracle
            assert row["oracle"] == (", ".join(values) or "(none)")


@pytest.mark.parametrize("tier", ["paper", "hard"])
def test_documents_frame_stamps_only_the_hard_tier(tier: str) -> None:
    spec = FAMILIES["due_diligence_v1"]
    task = generate_task(spec, spec.templates[0].id, 11, tier=tier)
    stamps = documents_frame(task, spec)["stamp"]
    assert stamps.null_count() == (stamps.len() if tier == "paper" else 2)  # register, decoy
