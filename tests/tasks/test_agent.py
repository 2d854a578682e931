"""docs/benchmark.md §9: the agent tier. Each task is a corpus of exactly `corpus_size`
documents, generated facts first; complete and incomplete tasks are balanced; the contract's
records are the same at every size; out-of-date versions hold an earlier state and both states
of a restricted record are visible whether or not its current copy is; titles of restricted
records repeat no word of the contract; notes point at records (multi-hop), hidden ones too;
the oracles fold current documents only."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from peb_core.tasks import (
    AGENT_CORPUS,
    RECORD_REF,
    ScenarioError,
    ScenarioFile,
    Task,
    fold_answer,
    generate_task,
    generate_tasks,
    get_tier,
    live_effects,
    load_families,
    load_scenario,
    scenarios_dir,
)

FAMILIES = load_families()
AGENT = {fid: generate_tasks([spec], tier="agent") for fid, spec in FAMILIES.items()}
FRESH = {
    fid: generate_tasks([spec], seeds=range(1000, 1040), tier="agent")
    for fid, spec in FAMILIES.items()
}
WORD = re.compile(r"[a-z]{4,}")


def _records(task: Task, family: str) -> list[tuple[int, bool, tuple[str, ...]]]:
    """A restricted record's documents as (version, visible, fact ids)."""
    visible = set(task.authorized_doc_ids)
    out = []
    for d in task.documents:
        if d.evidence_family == family and d.role == "material":
            version = re.search(r"[Vv]ersion (\d+)", d.body)
            assert version is not None
            out.append((int(version.group(1)), d.doc_id in visible, tuple(f.id for f in d.facts)))
    return out


def _restricted(task: Task) -> list[str]:
    spec = FAMILIES[task.family]
    return [r.id for r in task.contract.required_evidence if r.id in spec.restricted_families]


@pytest.mark.parametrize("family", FAMILIES)
def test_complete_and_incomplete_are_balanced(family: str) -> None:
    tasks = AGENT[family]
    assert len(tasks) == 24
    assert Counter(t.oracles.completeness for t in tasks) == {"complete": 12, "incomplete": 12}
    fresh = Counter(t.oracles.completeness for t in FRESH[family])
    assert 0.3 <= fresh["complete"] / len(FRESH[family]) <= 0.7, fresh


@pytest.mark.parametrize("family", FAMILIES)
def test_every_topology_occurs(family: str) -> None:
    seen = Counter(topology for t in AGENT[family] + FRESH[family] for topology in t.topologies)
    for topology in (
        "superseded",
        "named_gap",
        "silent_gap",
        "two_missing",
        "decoy_notice",
        "multi_hop",
        "hidden_hop",
    ):
        assert seen[topology] >= 2, (topology, seen)


def _contract_records(task: Task) -> set[tuple[str, str, str]]:
    required = {r.id for r in task.contract.required_evidence}
    return {
        (d.doc_id, d.title, d.body)
        for d in task.documents
        if d.evidence_family in required or d.role == "register"
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_a_corpus_holds_exactly_its_size_and_the_same_records_at_every_size(family: str) -> None:
    spec = FAMILIES[family]
    template = spec.templates[0].id
    default = generate_task(spec, template, 1234, tier="agent")
    assert len(default.documents) == AGENT_CORPUS.default
    for size in (AGENT_CORPUS.minimum, 97, AGENT_CORPUS.maximum):
        task = generate_task(spec, template, 1234, tier="agent", corpus_size=size)
        assert len(task.documents) == size
        assert len({d.doc_id for d in task.documents}) == size
        assert (task.prompt, task.contract, task.oracles) == (
            default.prompt,
            default.contract,
            default.oracles,
        )
        assert _contract_records(task) == _contract_records(default)
    with_distractors = generate_task(spec, template, 1234, 2, tier="agent")
    assert len(with_distractors.documents) == AGENT_CORPUS.default + 2
    assert with_distractors.oracles == default.oracles


@pytest.mark.parametrize("family", FAMILIES)
def test_out_of_date_versions_hold_an_earlier_state_and_both_states_always_show(
    family: str,
) -> None:
    """The latest visible out-of-date version holds facts that differ from its master's (relying
    on it gives another answer), and the visible versions of a restricted record show both of its
    states whether or not its current copy is visible: no text tells a missing record from a
    current one, only versions set against the register."""
    for task in AGENT[family] + FRESH[family]:
        gap = task.oracles.gap_report
        missing = set(gap.missing_requirements) if gap else set()
        for record in _restricted(task):
            docs = _records(task, record)
            master = next(d for d in docs if not d[1])
            shown = sorted((d for d in docs if d[1]), reverse=True)
            assert 2 <= len(shown) <= 3
            assert (shown[0][0] == master[0]) == (record not in missing)
            stale = [d for d in shown if d[0] < master[0]]
            assert stale[0][2] != master[2], (task.task_id, record)
            assert len({d[2] for d in shown}) == 2, (task.task_id, record)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_oracles_fold_current_documents_only(family: str) -> None:
    spec = FAMILIES[family]
    schema = spec.answer_fields
    for task in AGENT[family]:
        current = [d for d in task.documents if not d.superseded]
        authorized = [d for d in current if d.doc_id in task.authorized_doc_ids]
        facts = [f for d in current for f in d.facts]
        assert task.oracles.complete_answer == fold_answer(schema, live_effects(facts))
        visible_facts = [f for d in authorized for f in d.facts]
        assert task.oracles.authorized_answer == fold_answer(schema, live_effects(visible_facts))
        if task.oracles.completeness == "complete":
            assert task.oracles.authorized_answer == task.oracles.complete_answer
    # An out-of-date version's facts would change some task's answer.
    changed = 0
    for task in AGENT[family]:
        stale = [f for d in task.documents if d.superseded for f in d.facts]
        if stale:
            now = [f for d in task.authorized_documents if not d.superseded for f in d.facts]
            with_stale = fold_answer(schema, live_effects([*now, *stale]))
            changed += with_stale != task.oracles.authorized_answer
    assert changed >= 6


@pytest.mark.parametrize("family", FAMILIES)
def test_restricted_records_are_titled_without_the_contracts_words(family: str) -> None:
    spec = FAMILIES[family]
    descriptions = " ".join(e.description for e in spec.evidence_families).lower()
    words = {w.rstrip("s") for w in WORD.findall(descriptions)}
    for task in AGENT[family]:
        for d in task.documents:
            if d.evidence_family in spec.restricted_families:
                title = RECORD_REF.sub(" ", d.title)
                for pool in spec.pools.values():  # names from the pools are not the contract's
                    for value in pool:
                        title = title.replace(value, " ")
                assert not {w.rstrip("s") for w in WORD.findall(title.lower())} & words, d.title


@pytest.mark.parametrize("family", FAMILIES)
def test_the_register_lists_every_record_and_notes_point_at_records(family: str) -> None:
    spec = FAMILIES[family]
    for task in AGENT[family]:
        register = next(d for d in task.documents if d.role == "register")
        assert register.doc_id in task.authorized_doc_ids
        lines = register.body.splitlines()[1:]
        assert len(lines) == len(spec.evidence_families)
        tracker = str(spec.slots_by_role["tracker"].scope)
        for e, line in zip(spec.evidence_families, lines, strict=True):
            assert e.description in line and RECORD_REF.match(line[1:])
            assert f"(scope {spec.home_scopes.get(e.id, tracker)})" in line
        refs = {line[1:8] for line in lines}
        for note in (d for d in task.documents if d.role == "pointer"):
            assert note.doc_id in task.authorized_doc_ids
            own, *named = RECORD_REF.findall(note.body)
            assert len(named) == 1 and set(named) <= refs and own not in refs


def test_hidden_hops_point_at_records_without_a_current_copy() -> None:
    for tasks in AGENT.values():
        for task in tasks:
            if "hidden_hop" not in task.topologies:
                continue
            gap = task.oracles.gap_report
            assert gap is not None
            register = next(d for d in task.documents if d.role == "register").body
            missing_refs = {
                ln[1:8]
                for ln in register.splitlines()
                for r in task.contract.required_evidence
                if r.id in gap.missing_requirements and r.description in ln
            }
            notes = [d for d in task.documents if d.role == "pointer"]
            assert any(set(RECORD_REF.findall(n.body)) & missing_refs for n in notes)


def test_agent_tasks_are_deterministic_and_named_by_tier() -> None:
    spec = FAMILIES["due_diligence_v1"]
    a = generate_task(spec, "hidden_liability_annex", 11, tier="agent")
    assert a == generate_task(spec, "hidden_liability_annex", 11, tier="agent")
    assert a.task_id == "hidden_liability_annex__agent__s11" and a.tier == "agent"


@pytest.mark.parametrize(
    ("tier", "size", "error"),
    [
        ("paper", 60, "the paper tier takes no corpus size; tiers with corpora: agent"),
        ("hard", 60, "the hard tier takes no corpus size"),
        ("agent", AGENT_CORPUS.minimum - 1, "the agent tier takes an integer from 20 to 500"),
        ("agent", AGENT_CORPUS.maximum + 1, "the agent tier takes an integer from 20 to 500"),
    ],
)
def test_a_corpus_size_is_refused_where_it_does_not_apply(tier: str, size: int, error: str) -> None:
    spec = FAMILIES["due_diligence_v1"]
    with pytest.raises(ValueError, match=re.escape(error)):
        generate_task(spec, "hidden_liability_annex", 11, tier=tier, corpus_size=size)


def _family_file(tmp_path: Path, edit: str, with_text: str) -> Path:
    text = (scenarios_dir() / "due_diligence_v1.toml").read_text(encoding="utf-8")
    assert edit in text
    path = tmp_path / "due_diligence_v1.toml"
    path.write_text(text.replace(edit, with_text), encoding="utf-8")
    return path


def test_a_family_without_agent_text_has_no_agent_tier(tmp_path: Path) -> None:
    path = _family_file(tmp_path, "[agent]\n", "[unused]\n")
    with pytest.raises(ScenarioError):  # an unknown table is refused as a whole
        load_scenario(path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("\n# The agent tier")] + "\n", encoding="utf-8")
    spec: ScenarioFile = load_scenario(path)
    assert get_tier("agent").unsupported(spec) == "it declares no [agent] text"
    with pytest.raises(ValueError, match="has no agent tier: it declares no"):
        generate_task(spec, "hidden_liability_annex", 11, tier="agent")


@pytest.mark.parametrize(
    ("edit", "with_text", "problem"),
    [
        ('"Document {ref}",', '"Liability document {ref}",', "'liability' repeats a word"),
        ('"Document {ref}",', '"Document",', "a record title names the record by {ref}"),
        (
            "view on Project {codename}, see record {ref}.",
            "view on Project {codename}, see the record.",
            "a pointer names the record it points at by {ref}",
        ),
    ],
)
def test_the_agent_tier_checks_its_text(
    tmp_path: Path, edit: str, with_text: str, problem: str
) -> None:
    path = _family_file(tmp_path, edit, with_text)
    with pytest.raises(ScenarioError, match=re.escape(problem)):
        load_scenario(path)
