"""Issue 5: fresh seeds give fresh text. Every phrasing list offers at least three phrasings (a
load-time rule), and across 100 fresh seeds two instances of a template share under 20% of their
8-word sequences (`tasks.template_overlap`), contract and schema text left out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from peb_core import ScenarioError, ScenarioFile, generate_task, load_scenario
from peb_core.tasks import FRESH_SEEDS, family_overlap, pooled_overlap, shingles

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
GOAL = 0.20


@pytest.fixture(scope="module")
def overlaps(families: dict[str, ScenarioFile]) -> dict[str, dict[str, float]]:
    return {family: family_overlap(spec) for family, spec in families.items()}


def test_overlap_is_under_20_percent_in_every_family(
    overlaps: dict[str, dict[str, float]],
) -> None:
    assert len(FRESH_SEEDS) == 100
    for family, per_template in overlaps.items():
        assert len(per_template) == 6
        mean = sum(per_template.values()) / len(per_template)
        assert mean < GOAL, (family, mean)
        assert max(per_template.values()) < GOAL, (family, per_template)


def test_overlap_measure_on_known_sets() -> None:
    a = shingles("one two three four five six seven eight nine")
    assert len(a) == 2
    assert pooled_overlap([a, a, a]) == 1.0
    assert (
        pooled_overlap([a, shingles("ten eleven twelve thirteen fourteen fifteen sixteen x")]) == 0
    )
    half = shingles("one two three four five six seven eight other")
    assert pooled_overlap([a, half]) == pytest.approx(0.5)
    assert pooled_overlap([a]) == 0.0


def test_fresh_instances_differ_in_text_and_order(families: dict[str, ScenarioFile]) -> None:
    for spec in families.values():
        template = spec.templates[0].id
        tasks = [generate_task(spec, template, s) for s in FRESH_SEEDS[:20]]
        assert len({t.documents[-1].role for t in tasks}) > 1
        for role in ("overview", "primary_evidence", "advisor_note", "tracker"):
            bodies = {next(d.body for d in t.documents if d.role == role) for t in tasks}
            assert len(bodies) >= 10, (spec.id, role)


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "due_diligence_v1.toml"
    text = (SCENARIOS / "due_diligence_v1.toml").read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


def test_fewer_than_three_phrasings_fail_at_load(tmp_path: Path) -> None:
    path = _broken(
        tmp_path,
        '"Digest of the financials uploaded for {counterparty}. {findings}",\n',
        "",
    )
    path.write_text(
        re.sub(r'    "Data-room update on \{counterparty\}: \{findings\}",\n', "", path.read_text())
    )
    with pytest.raises(ScenarioError, match=r"slots\[1\]\.bodies: List should have at least 3"):
        load_scenario(path)


def test_retracts_must_name_a_finding_of_the_template(tmp_path: Path) -> None:
    path = _broken(
        tmp_path,
        'effects = { recommendation = "block", material_flags = ["liability_annex_missing"]',
        'retracts = ["nope"]\neffects = { recommendation = "block", material_flags = '
        '["liability_annex_missing"]',
    )
    with pytest.raises(ScenarioError, match=r"retracts: 'nope' is not another finding"):
        load_scenario(path)


def test_distractors_need_an_unrequired_family(tmp_path: Path) -> None:
    path = _broken(
        tmp_path,
        'evidence_family = "general_correspondence"\ntitles',
        'evidence_family = "financial_performance"\ntitles',
    )
    with pytest.raises(ScenarioError, match="distractors need a family no contract requires"):
        load_scenario(path)


def _copy(tmp_path: Path, family: str, old: str, new: str) -> Path:
    path = tmp_path / f"{family}.toml"
    text = (SCENARIOS / path.name).read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return path


def test_finding_text_must_state_each_effect_at_load(tmp_path: Path) -> None:
    """Every phrasing of a finding states each value it contributes, by one of the value's
    signals: here the phrasing the audit found (malware "detected and quarantined", which reads
    as low severity and no escalation, while its effects are high severity and forensics)."""
    path = _copy(
        tmp_path,
        "security_incident_v1",
        '"Malware on {system} was detected and quarantined by endpoint protection, but the strain '
        'is high severity and the forensics team must examine the host.",',
        '"Malware on {system} was detected and quarantined by endpoint protection.",',
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == (
        f"{path}: templates[4].findings[0].text[1]: states no signal of severity=high; "
        "expected one of: high severity, high-severity"
    )


def test_contributed_value_without_signals_fails_at_load(tmp_path: Path) -> None:
    """A value some finding contributes must declare signals, so the rule above cannot be
    dodged by leaving a value out."""
    path = _copy(
        tmp_path,
        "due_diligence_v1",
        'block = ["block", "should not proceed", "must not proceed", "cannot proceed"]\n',
        "",
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == (
        f"{path}: answer.recommendation.signals: value 'block' is an effect of a finding but has "
        "no signals"
    )


def test_signals_must_name_values_of_their_field(tmp_path: Path) -> None:
    path = _copy(tmp_path, "due_diligence_v1", 'block = ["block"', 'blocked = ["block"')
    with pytest.raises(ScenarioError, match=r"answer\.recommendation\.signals: 'blocked' is not a"):
        load_scenario(path)
