"""docs/benchmark.md §7: the hard tier. Complete and incomplete tasks are balanced in every
family, the surface signals (a boundary notice, a sentence on supersession, boundary words)
are as common in complete tasks as in incomplete ones, every topology occurs, and every oracle
is stated in the model view for a careful reader: the register gives each required record's
current version, the one before it, and where it is kept, and each copy states its own version.
An out-of-date copy is the version before, holds that earlier state of its record, one that
changes the answer, drawn as a current copy's state is, and shows its version and date in the
register's words."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest
from answers import implied_answer

from peb_core.tasks import (
    Document,
    ScenarioError,
    ScenarioFile,
    Task,
    generate_task,
    generate_tasks,
    load_families,
    load_scenario,
    model_view,
)
from peb_core.tasks._hard import _decoys, _records

FAMILIES = load_families()
HARD = {fid: generate_tasks([spec], tier="hard") for fid, spec in FAMILIES.items()}
FRESH = {
    fid: generate_tasks([spec], seeds=range(1000, 1100), tier="hard")
    for fid, spec in FAMILIES.items()
}
VERSION = re.compile(r"[Vv]ersion (\d+)")
ISSUE = re.compile(r"[Vv]ersion \d+ of \d+ [A-Z][a-z]+ \d{4}")
"""A version and its date, as stamps and the register write them."""
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
    current version, the one before it and its home scope in the register, and each copy's
    version in its stamp. A record is missing exactly when its copy is the version before, and
    the gap's scopes are the homes the register gives."""
    spec = FAMILIES[family]
    homes = spec.home_scopes
    for task in [*HARD[family], *FRESH[family][:30]]:
        register = _register(task)
        missing = []
        for req in task.contract.required_evidence:
            line = _line(spec, register, req.id)
            current, before = map(int, VERSION.findall(line))
            assert before == current - 1, (task.task_id, line)
            assert f"(scope {homes[req.id]})" in line, (task.task_id, req.id)
            (copy,) = [
                d
                for d in task.authorized_documents
                if d.evidence_family == req.id and d.role != "register"
            ]
            stated = _stamp(copy.body)
            assert stated == (before if copy.superseded else current), (task.task_id, copy.body)
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
def test_a_stamp_shows_a_version_and_date_the_register_shows_in_its_words(family: str) -> None:
    """Whether a copy is current or out of date, the version and date its stamp shows are one
    of its record's two issues in the register, written as the register writes them (but for
    the case of a first letter, which the audit's reader ignores), and every
    date of the view is in one year: so no number, month or year a view shows, nor any word
    next to one, differs with completeness, and only comparing a copy with the register tells
    an out-of-date copy (the issue the register lists second) from a current one."""
    spec = FAMILIES[family]
    seen: Counter[bool] = Counter()
    for task in [*HARD[family], *FRESH[family]]:
        register = _register(task)
        years = set(re.findall(r"\d+ [A-Z][a-z]+ (\d{4})", register.body))
        assert years == {"2026"}, (task.task_id, years)
        for doc in task.authorized_documents:
            if doc.role == "register":
                continue
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", doc.body) if "(scope " not in s]
            stamp = ISSUE.findall(" ".join(sentences))[-1].lower()
            issues = [i.lower() for i in ISSUE.findall(_line(spec, register, doc.evidence_family))]
            assert len(issues) == 2 and stamp == issues[doc.superseded], (task.task_id, doc.body)
            seen[doc.superseded] += doc.role == "material"
    assert seen[True] >= 50 and seen[False] >= 100, seen


def test_a_stamp_in_other_words_than_the_register_fails_at_load(tmp_path: Path) -> None:
    """A stamp writing its version other than as `version {version} of {date}` would put words
    next to an out-of-date copy's numbers that the register never puts next to them."""
    source = Path(__file__).resolve().parents[2] / "scenarios" / "procurement_v1.toml"
    text = source.read_text()
    old = '"Version {version} of {date}."'
    assert text.count(old) == 1
    path = tmp_path / source.name
    path.write_text(text.replace(old, '"Version {version} ({date})."'))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(
        f"{path}: hard.stamps[2]: expected 'version {{version}} of {{date}}' once"
    )


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


@pytest.mark.parametrize("family", FAMILIES)
def test_the_scope_a_notice_names_says_little_of_whether_it_is_real(family: str) -> None:
    """Over a family's tasks (its templates, and the second records each may have, alike) a real
    notice names either missing record's scope; a decoy names a scope holding neither record,
    drawn so that decoys name each scope as often as real notices do, as far as the family's
    scopes allow: the distance between the two (total variation) is the least possible, set by
    the scope real notices name most beyond what tasks leave it free for a decoy."""
    spec = FAMILIES[family]
    homes, seconds, decoys = spec.home_scopes, _records(spec).seconds, _decoys(spec)
    real = dict.fromkeys(spec.restricted_scopes, 0.0)
    drawn = dict.fromkeys(spec.restricted_scopes, 0.0)
    shares: dict[tuple[str, str], float] = {}
    for t in spec.templates:
        for second in seconds[t.id]:
            share = 1 / len(spec.templates) / len(seconds[t.id])
            pair = (t.material.scope, homes[second])
            shares[pair] = shares.get(pair, 0.0) + share
            scopes, weights = decoys[pair]
            assert set(scopes) == set(spec.restricted_scopes) - set(pair)
            for scope in pair:
                real[scope] += share / 2
            for scope, weight in zip(scopes, weights, strict=True):
                drawn[scope] += share * weight / sum(weights)
    distance = sum(abs(drawn[s] - real[s]) for s in drawn) / 2
    # Decoys name a set of scopes at most as often as tasks leave one of them free, so the
    # distance is at least what real notices name a set beyond that, for every set.
    least = max(
        sum(real[s] for s in some) - sum(p for pair, p in shares.items() if set(some) - set(pair))
        for n in range(len(drawn) + 1)
        for some in itertools.combinations(drawn, n)
    )
    assert distance <= least + 0.005, (distance, least)


def test_hard_tasks_are_deterministic_and_named_by_tier() -> None:
    spec = FAMILIES["due_diligence_v1"]
    a = generate_task(spec, "hidden_liability_annex", 11, tier="hard")
    b = generate_task(spec, "hidden_liability_annex", 11, tier="hard")
    assert a.model_dump_json() == b.model_dump_json()
    assert a.task_id == "hidden_liability_annex__hard__s11" and a.tier == "hard"
    paper = generate_task(spec, "hidden_liability_annex", 11)
    assert paper.task_id == "hidden_liability_annex__s11" and paper.tier == "paper"


def _copies_and_masters(task: Task) -> list[tuple[Document, Document]]:
    """Each restricted record's visible copy and hidden master."""
    hidden = {d.evidence_family: d for d in task.hidden_documents if d.role == "material"}
    return [
        (d, hidden[d.evidence_family]) for d in task.authorized_documents if d.role == "material"
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_an_out_of_date_copy_holds_an_earlier_state_that_changes_the_answer(family: str) -> None:
    """A current copy is its master (title, facts, and text but for a sentence on supersession);
    an out-of-date copy holds other facts, and in its master's place it would
    change the complete answer: relying on it gives a wrong answer. Without a superseded copy
    the complete answer is the one the view implies."""
    spec = FAMILIES[family]
    seen: Counter[bool] = Counter()
    for task in [*HARD[family], *FRESH[family]]:
        current = [d for d in task.documents if not d.superseded]
        complete = implied_answer(spec, (f for d in current for f in d.facts))
        assert task.oracles.complete_answer == complete, task.task_id
        pairs = _copies_and_masters(task)
        assert len(pairs) == 2
        for copy, master in pairs:
            seen[copy.superseded] += 1
            if not copy.superseded:
                assert copy.facts == master.facts and copy.title == master.title
                assert copy.body.startswith(master.body)
                continue
            assert copy.facts != master.facts, task.task_id
            instead = [d for d in current if d is not master] + [copy]
            relied = implied_answer(spec, (f for d in instead for f in d.facts))
            assert relied != complete, (task.task_id, copy.evidence_family)
        if not any(copy.superseded for copy, _ in pairs):
            view = task.authorized_documents
            assert implied_answer(spec, (f for d in view for f in d.facts)) == complete
    assert seen[True] >= 50 and seen[False] >= 100, seen


@pytest.mark.parametrize("family", FAMILIES)
def test_a_copy_holds_findings_as_often_current_as_out_of_date(family: str) -> None:
    """Whether a copy holds findings or is clean is drawn alike for current and out-of-date
    copies, of either record, so neither its facts nor its text tell which it is."""
    tasks = generate_tasks([FAMILIES[family]], seeds=range(2000, 2200), tier="hard")
    holds: dict[tuple[str, bool], list[bool]] = {}
    for task in tasks:
        first = FAMILIES[family].template(task.template).material.evidence_family
        for copy, _ in _copies_and_masters(task):
            key = ("M1" if copy.evidence_family == first else "M2", copy.superseded)
            holds.setdefault(key, []).append(bool(copy.facts))
    shares = {key: sum(v) / len(v) for key, v in holds.items()}
    assert len(shares) == 4 and min(len(v) for v in holds.values()) >= 150, shares
    for share in shares.values():
        assert 0.4 <= share <= 0.6, shares


def test_a_template_whose_records_cannot_change_the_answer_fails_at_load(tmp_path: Path) -> None:
    """A second record is chosen among those whose either state changes the answer: a template
    whose own material findings add nothing to what its visible findings imply has none."""
    source = Path(__file__).resolve().parents[2] / "scenarios" / "due_diligence_v1.toml"
    text = source.read_text()
    old = (
        'effects = { recommendation = "block", material_flags = ["liability_annex_missing"], '
        'risk_summary = ["uninsured_liability_annex"] }'
    )
    assert text.count(old) == 1
    path = tmp_path / source.name
    path.write_text(
        text.replace(
            old,
            'effects = { recommendation = "proceed_with_caution", '
            'risk_summary = ["contractual_complexity"] }',
        )
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(
        f"{path}: templates[0]: the hard tier finds no second restricted family for it"
    )
