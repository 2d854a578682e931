"""docs/benchmark.md §7: the hard tier. Complete and incomplete tasks are balanced in every
family, the surface signals (a boundary notice, a sentence on supersession, boundary words)
are as common in complete tasks as in incomplete ones, every topology occurs, and every oracle
is stated in the model view for a careful reader: the register gives each required record's
current version and where it is kept, and each copy states its own version."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from peb_core.tasks import (
    Document,
    ScenarioFile,
    Task,
    generate_task,
    generate_tasks,
    load_families,
    model_view,
)

FAMILIES = load_families()
HARD = {fid: generate_tasks([spec], tier="hard") for fid, spec in FAMILIES.items()}
FRESH = {
    fid: generate_tasks([spec], seeds=range(1000, 1100), tier="hard")
    for fid, spec in FAMILIES.items()
}
VERSION = re.compile(r"[Vv]ersion (\d+)")
BOUNDARY = re.compile(r"exclud|withh[eo]ld|supersed|replac|out of date", re.IGNORECASE)


@pytest.mark.parametrize("family", FAMILIES)
def test_complete_and_incomplete_are_balanced(family: str) -> None:
    tasks = HARD[family]
    assert len(tasks) == 24
    assert Counter(t.oracles.completeness for t in tasks) == {"complete": 12, "incomplete": 12}
    fresh = Counter(t.oracles.completeness for t in FRESH[family])
    assert 0.4 <= fresh["complete"] / len(FRESH[family]) <= 0.6, fresh


@pytest.mark.parametrize("family", FAMILIES)
def test_every_topology_occurs_and_signals_do_not_follow_completeness(family: str) -> None:
    tasks = HARD[family]
    seen = Counter(topology for t in tasks for topology in t.topologies)
    for topology in (
        "named_gap",
        "silent_gap",
        "superseded",
        "two_missing",
        "decoy_notice",
        "decoy_supersession",
    ):
        assert seen[topology] >= 2, (topology, seen)

    def share(tasks: list[Task], signal: str) -> float:
        return sum(signal in _signals(t) for t in tasks) / len(tasks)

    complete = [t for t in tasks if t.oracles.completeness == "complete"]
    incomplete = [t for t in tasks if t.oracles.completeness == "incomplete"]
    for signal in ("notice", "supersession", "boundary_words"):
        assert share(complete, signal) == pytest.approx(share(incomplete, signal), abs=0.17), signal


def _signals(task: Task) -> set[str]:
    """The surface signals a model's view of the task shows."""
    view = model_view(task, FAMILIES[task.family])
    out = set()
    for doc in view.documents:
        if BOUNDARY.search(doc.body):
            out.add("boundary_words")
        if re.search(r"supersed|replac", doc.body, re.IGNORECASE):
            out.add("supersession")
        if re.search(r"exclud", doc.body, re.IGNORECASE):
            out.add("notice")
    return out


def _stamp(body: str) -> int:
    """The version a document's stamp states: the last version named outside a sentence on
    supersession (those name a scope; a stamp does not, and follows the document's text)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", body) if "(scope " not in s]
    return int([v for s in sentences for v in VERSION.findall(s)][-1])


def _register(task: Task) -> Document:
    (register,) = [d for d in task.authorized_documents if d.role == "register"]
    return register


def _line(spec: ScenarioFile, register: Document, family: str) -> str:
    """The register's sentence(s) on `family`: from its description to the next description."""
    descriptions = [e.description for e in spec.evidence_families]
    own = spec.evidence_family(family).description
    start = register.body.index(own) + len(own)
    ends = [register.body.find(d, start) for d in descriptions]
    return register.body[start : min([e for e in ends if e != -1] or [len(register.body)])]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_oracle_is_stated_in_the_view(family: str) -> None:
    """What a careful reader checks, family by family, is in the text: each required record's
    current version and home scope in the register, and each copy's version in its stamp. A
    record is missing exactly when its copy is older, and the gap's scopes are the homes the
    register gives."""
    spec = FAMILIES[family]
    homes = spec.home_scopes
    for task in [*HARD[family], *FRESH[family][:30]]:
        register = _register(task)
        missing = []
        for req in task.contract.required_evidence:
            line = _line(spec, register, req.id)
            current = int(VERSION.findall(line)[0])
            assert f"(scope {homes[req.id]})" in line, (task.task_id, req.id)
            (copy,) = [
                d
                for d in task.authorized_documents
                if d.evidence_family == req.id and d.role != "register"
            ]
            stated = _stamp(copy.body)
            assert stated == current - copy.superseded, (task.task_id, req.id, copy.body)
            if copy.superseded:
                missing.append(req.id)
        gap = task.oracles.gap_report
        if not missing:
            assert gap is None
            continue
        assert gap is not None and gap.missing_requirements == [
            r.id for r in task.contract.required_evidence if r.id in missing
        ]
        assert sorted(gap.missing_scopes) == sorted({homes[m] for m in missing})


@pytest.mark.parametrize("family", FAMILIES)
def test_a_decoy_notice_names_a_scope_holding_nothing_required(family: str) -> None:
    spec = FAMILIES[family]
    homes = spec.home_scopes
    for task in HARD[family]:
        required_homes = {homes[r.id] for r in task.contract.required_evidence}
        tracker = next(d for d in task.authorized_documents if d.role == "tracker")
        named = set(re.findall(r"\(scope (\w+)\)", tracker.body))
        if "decoy_notice" in task.topologies:
            assert len(named) == 1 and not named & required_homes, task.task_id
        elif "named_gap" not in task.topologies:
            assert not named, task.task_id


def test_hard_tasks_are_deterministic_and_named_by_tier() -> None:
    spec = FAMILIES["due_diligence_v1"]
    a = generate_task(spec, "hidden_liability_annex", 11, tier="hard")
    b = generate_task(spec, "hidden_liability_annex", 11, tier="hard")
    assert a.model_dump_json() == b.model_dump_json()
    assert a.task_id == "hidden_liability_annex__hard__s11" and a.tier == "hard"
    paper = generate_task(spec, "hidden_liability_annex", 11)
    assert paper.task_id == "hidden_liability_annex__s11" and paper.tier == "paper"
