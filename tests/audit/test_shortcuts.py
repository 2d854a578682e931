"""The shortcut audit on small seed sets: it shows the paper tier's stated boundary, finds a cue
planted in a family file, finds no leak on the hard tier's silent tasks, gives the same figures
for the same seeds, and refuses what it cannot audit. (benchmarks/bench_audit.py runs it at full
size: 3,600 training and 600 held-out tasks a family.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polars as pl
import pytest

from peb_core.audit import (
    INSTALL,
    AuditError,
    AuditUnavailable,
    FamilyAudit,
    audit_family,
    audit_shortcuts,
    view_text,
)
from peb_core.tasks import ScenarioFile, generate_task, load_families, model_view

TRAIN = range(1_000, 1_100)  # 600 tasks a family
TEST = range(2_000, 2_060)  # 360 tasks a family
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture(scope="module")
def paper(families: dict[str, ScenarioFile]) -> tuple[FamilyAudit, ...]:
    return audit_shortcuts(families.values(), ["paper"], TRAIN, TEST).families


@pytest.fixture(scope="module")
def hard(families: dict[str, ScenarioFile]) -> tuple[FamilyAudit, ...]:
    return audit_shortcuts(families.values(), ["hard"], TRAIN, TEST).families


def test_on_the_paper_tier_the_stated_boundary_decides(paper: tuple[FamilyAudit, ...]) -> None:
    """The tracker states the boundary: the explicit-signal reader is right on every task, the
    classifier nearly so, far above the majority rate, and its n-grams say why."""
    assert len(paper) == 7
    for audit in paper:
        tasks = audit.all_tasks
        assert tasks.n == 360
        assert tasks.signals.value == 1.0, audit.family
        assert tasks.learned.value is not None and tasks.learned.value >= 0.95, audit.family
        assert tasks.over_majority.beyond, audit.family
        toward_gap = [g.ngram for g in audit.ngrams if g.completeness == "incomplete"]
        assert any("excluded" in ngram for ngram in toward_gap), (audit.family, toward_gap)
        # every gap is named on this tier: the silent tasks are the complete ones, no leak shows
        assert audit.silent.one_class and audit.leak is None


def test_on_the_hard_tier_silent_tasks_sit_at_the_majority_rate(
    hard: tuple[FamilyAudit, ...],
) -> None:
    """Where no signal is stated the classifier gains at most 0.05 over the majority rate
    (below it is no leak), and the stated signals still tell it something overall. At this size
    (600 training tasks a family) only a gross leak shows, as the planted cue below does; the
    done-when size (3,600 training, 600 held-out tasks) is benchmarks/bench_audit.py's."""
    for audit in hard:
        silent = audit.silent
        assert not silent.one_class and silent.n > 150, audit.family
        gain = silent.over_majority.value
        assert gain is not None and gain <= 0.05, (audit.family, gain)
        assert audit.all_tasks.signals.value is not None
        assert audit.all_tasks.signals.value > audit.all_tasks.majority.value + 0.05  # type: ignore[operator]


def _planted(tmp: Path) -> ScenarioFile:
    """due_diligence_v1 with a tracker that states nothing (the same neutral sentences whether
    the material record's scope is excluded or opened) and a word planted in every title of the
    material record, which the paper tier shows only when the view is complete."""
    folder = tmp / "planted"
    folder.mkdir()
    text = (SCENARIOS / "due_diligence_v1.toml").read_text(encoding="utf-8")
    neutral = (
        '[\n    "The tracker lists workstreams by owner; {scope_description} (scope {scope}) '
        'keep their own log.",\n    "Workstream rows are maintained by their owners; see '
        '{scope_description} (scope {scope}) for theirs.",\n    "Rows are updated weekly; '
        '{scope_description} (scope {scope}) report separately."\n]'
    )
    text = re.sub(r"(?ms)^(excluded|included) = \[.*?^\]", rf"\1 = {neutral}", text)
    text = re.sub(
        r"(?m)^(material = .*titles = \[)(.*)\]",
        lambda m: m[1] + re.sub(r'"([^"]*)"', r'"Zyxwv \1"', m[2]) + "]",
        text,
    )
    assert text.count('"Zyxwv ') == 18  # six templates, three titles each
    (folder / "due_diligence_v1.toml").write_text(text, encoding="utf-8")
    return load_families(folder)["due_diligence_v1"]


def test_a_cue_planted_in_a_family_file_is_flagged(tmp_path: Path) -> None:
    """With the tracker silent, the stated signals give the majority rate; the classifier finds
    the planted word, beats them beyond noise, and lists the word first for complete views."""
    audit = audit_family(_planted(tmp_path), "paper", TRAIN, TEST)
    tasks = audit.all_tasks
    assert tasks.signals.value == tasks.majority.value
    assert tasks.learned.value is not None and tasks.learned.value >= 0.95
    assert tasks.over_signals.beyond
    complete = [g for g in audit.ngrams if g.completeness == "complete"]
    assert "zyxwv" in [g.ngram for g in complete[:3]], complete
    (cue,) = [g for g in complete if g.ngram == "zyxwv"]
    assert (cue.in_class, cue.in_other) == (1.0, 0.0)


def test_the_same_seeds_give_the_same_figures(families: dict[str, ScenarioFile]) -> None:
    spec = families["security_incident_v1"]
    runs = [audit_shortcuts([spec], ["hard"], range(40), range(50, 70)) for _ in range(2)]
    assert runs[0].summary.equals(runs[1].summary)
    assert runs[0].ngrams.equals(runs[1].ngrams)
    assert runs[0].families == runs[1].families


def test_what_cannot_be_audited_is_refused(families: dict[str, ScenarioFile]) -> None:
    spec = families["due_diligence_v1"]
    with pytest.raises(AuditError, match=r"both training and held-out seeds \(e.g. 5\)"):
        audit_family(spec, "hard", range(10), range(5, 8))
    with pytest.raises(AuditError, match="must each hold a seed"):
        audit_family(spec, "hard", range(10), [])
    # paper-tier tasks at these seeds of this family are all incomplete
    with pytest.raises(AuditError, match="every training task is incomplete"):
        audit_family(spec, "paper", [2, 3], [4])


def test_without_scikit_learn_it_says_how_to_install_it(
    families: dict[str, ScenarioFile], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "sklearn" or m.startswith("sklearn.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(AuditUnavailable, match=re.escape(INSTALL)):
        audit_shortcuts(families.values(), ["paper"], TRAIN, TEST)


def test_the_audit_reads_the_views_of_a_contract_to_be_found(
    families: dict[str, ScenarioFile],
) -> None:
    """`contract="corpus"`: on a tier with corpora the classifier reads the views an agent of
    that run would reach (no requirement listed; the procedure among the documents), and the
    frames say which; a tier without corpora is audited as given."""
    spec = families["insider_risk_v1"]
    audit = audit_shortcuts([spec], ["paper", "agent"], range(40), range(50, 60), contract="corpus")
    assert audit.summary.select("tier", "contract").rows() == [
        ("paper", "given"),
        ("agent", "corpus"),
    ]
    assert set(audit.ngrams.filter(pl.col("tier") == "agent")["contract"]) == {"corpus"}
    found = generate_task(spec, spec.templates[0].id, 50, tier="agent", contract="corpus")
    given = generate_task(spec, spec.templates[0].id, 50, tier="agent")
    procedure = next(d.body for d in found.documents if d.role == "procedure")
    listed = [f"{r.id}: {r.description}" for r in given.contract.required_evidence]
    assert all(line in view_text(model_view(given, spec)) for line in listed)
    text = view_text(model_view(found, spec))
    assert procedure in text and not any(line in text for line in listed)
    with pytest.raises(AuditError, match=r"declares no \[procedure\]"):
        bare = spec.model_copy(update={"procedure": None})
        audit_family(bare, "agent", range(4), range(5, 6), contract="corpus")
