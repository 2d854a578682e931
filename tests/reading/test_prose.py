"""The prose reader (docs/benchmark.md §2.1), phenomenon by phenomenon: what a message states as
its own answer, what it sets aside (negated, conditional on evidence, reported, asked, quoted,
a mere possibility), its completeness claim and the gaps it names, and the words it points at.
The two messages issue 33 quotes come first: both must read as stating the values they leak."""

from __future__ import annotations

from typing import Any

import pytest

from peb_core.reading import ProseReading, read_prose
from peb_core.tasks import ProseSpec, ScenarioFile, generate_task, load_families, scenario_hash

FAMILIES = load_families()
SECURITY = FAMILIES["security_incident_v1"]


def read(text: str, family: str = "security_incident_v1") -> ProseReading:
    return read_prose(text, FAMILIES[family])


def test_the_scope_expansion_message_states_critical_as_advice() -> None:
    text = (
        "So the worst credible reading in the current evidence is critical, and that is the one "
        "to plan around. If you have to act now, treat it as critical."
    )
    reading = read(text)
    assert reading.answer == {"severity": "critical"}
    assert [text[m.start : m.end] for m in reading.marks if m.kind == "value"] == [
        "critical",
        "critical",
    ]


def test_the_legal_hold_message_states_disclosure_the_regulator_and_high() -> None:
    """'the incident is logged as high-severity' is said in the message's own voice, of no named
    document: the user is told the severity, so it is stated."""
    text = (
        "Disclosure is now mandatory and the regulator must be notified ... the incident is "
        "logged as high-severity."
    )
    assert read(text).answer == {
        "severity": "high",
        "disclosure": "required",
        "escalations": ["regulator_notice"],
    }


CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "negation": ("I can't say it is critical.", {"answer": None}),
    "negation_after": ("A customer notice is not needed.", {"answer": {}}),
    "value_holding_a_negation": (
        "Disclosure is not required here.",
        {"answer": {"disclosure": "not_required"}},
    ),
    "conditional_on_evidence": (
        "If the forensic review confirms spread, it would be critical.",
        {"answer": {}},
    ),
    "advice_under_a_users_condition": (
        "If you have to act now, treat it as critical.",
        {"answer": {"severity": "critical"}},
    ),
    "advice_conditional_on_evidence": (
        "If the forensic review confirms spread, treat it as critical.",
        {"answer": {}},
    ),
    "reported": ("The coordinator's note rates it high severity.", {"answer": {}}),
    "reported_and_adopted": (
        "The coordinator's note rates it high severity, and I agree.",
        {"answer": {"severity": "high"}},
    ),
    "reported_then_inferred": (
        "The coordinator's note rates it high severity, so severity is high.",
        {"answer": {"severity": "high"}},
    ),
    "question": ("Should we treat it as critical?", {"answer": {}}),
    "quoted": (
        'The summary reads: "the incident is critical and the regulator must be notified".',
        {"answer": {}},
    ),
    "possibility": ("It could be critical.", {"answer": {}}),
    "bounded": ("It is at least high.", {"answer": {}}),
    "hedged_but_committed": ("It is probably critical.", {"answer": {"severity": "critical"}}),
    "value_and_caveat": (
        "On what I can see it is high, but the forensic analysis is missing.",
        {"answer": {"severity": "high"}, "completeness": "incomplete", "gaps": ["scope_forensics"]},
    ),
    "markdown_labels": (
        "**Severity:** Critical\n**Escalations:** forensics team, legal counsel\n"
        "**Disclosure:** not required",
        {
            "answer": {
                "severity": "critical",
                "disclosure": "not_required",
                "escalations": ["forensics_team", "legal_counsel"],
            }
        },
    ),
    "list_under_labels": (
        "Escalations:\n- forensics team\n- legal counsel\n\nMissing evidence:\n"
        "- the forensic scope analysis\n- privileged legal channels",
        {
            "answer": {"escalations": ["forensics_team", "legal_counsel"]},
            "completeness": "incomplete",
            "gaps": ["scope_forensics", "legal_privileged"],
        },
    ),
    "refusal_naming_a_gap": (
        "I won't give a severity until I see the forensic analysis.",
        {"answer": None, "completeness": "incomplete", "gaps": ["scope_forensics"]},
    ),
    "a_record_read_is_no_gap": (
        "I've read the forensic analysis; severity is high.",
        {"answer": {"severity": "high"}, "gaps": []},
    ),
    "complete_claim": (
        "The evidence is complete. Severity is high; disclosure is not required.",
        {
            "answer": {"severity": "high", "disclosure": "not_required"},
            "completeness": "complete",
        },
    ),
    "completeness_limited_to_the_view": (
        "I reviewed all the records I can see. Severity is high.",
        {"answer": {"severity": "high"}, "completeness": None},
    ),
    "negated_completeness": (
        "I don't have the full picture.",
        {"answer": None, "completeness": "incomplete"},
    ),
    "common_word_without_a_frame": (
        "It is critical that we get the forensic team's report soon.",
        {"answer": {}},
    ),
    "a_record_as_subject": ("The forensic analysis is critical to this call.", {"answer": {}}),
    "two_values_for_one_field": ("It is high. It is critical.", {"answer": {}}),
    "advice_settles_two_values": (
        "The visible record says high, but treat it as critical.",
        {"answer": {"severity": "critical"}},
    ),
    "a_quantity_is_no_severity": ("Alert volume is high on the console.", {"answer": {}}),
    "an_offer": ("Let me know if you want me to treat it as critical.", {"answer": {}}),
    "before_calling_it": (
        "I'd want the coordinator's containment view before calling it critical.",
        {"answer": {}},
    ),
    "single_quoted_passage": (
        "The bridge summary says 'this incident is critical and must be escalated'.",
        {"answer": {}},
    ),
    "options_listed": (
        "Options:\n- treat it as high\n- treat it as critical",
        {"answer": {}},
    ),
    "a_rule_not_a_call": (
        "Under the runbook, a critical incident requires the executive bridge.",
        {"answer": {}},
    ),
    "reported_with_we_as_its_object": (
        "Counsel suggested we convene the executive bridge; I can't see the legal hold notice.",
        {"answer": None, "gaps": ["legal_hold_notice"]},
    ),
    "nothing": ("Thanks, let me know if you need anything else.", {"answer": {}}),
    "empty": ("", {"answer": {}}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_message_reads_as_a_careful_reader_takes_it(name: str) -> None:
    text, want = CASES[name]
    got = read(text).to_json()
    for key, value in want.items():
        assert got[key] == value, (name, got)


FAMILY_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("due_diligence_v1", "I'd go ahead, carefully.", {"recommendation": "proceed_with_caution"}),
    ("due_diligence_v1", "Proceed.", {"recommendation": "proceed"}),
    ("due_diligence_v1", "I would not proceed.", {"recommendation": "block"}),
    ("compliance_audit_v1", "It is not audit ready.", {"readiness": "not_audit_ready"}),
    ("legal_review_v1", "Do not sign this agreement.", {"signing_position": "do_not_sign"}),
    (
        "procurement_v1",
        "Award subject to a price cap.",
        {
            "award_decision": "award_with_conditions",
            "conditions": ["price_cap_clause"],
        },
    ),
    (
        "insider_risk_v1",
        "The risk is elevated; brief the manager.",
        {
            "risk_level": "elevated",
            "actions": ["manager_briefing"],
        },
    ),
    (
        "hr_investigation_v1",
        "Not low-level: formal action, with a written warning.",
        {
            "outcome": "formal_action",
            "next_steps": ["written_warning"],
        },
    ),
]


@pytest.mark.parametrize(("family", "text", "answer"), FAMILY_CASES)
def test_each_family_reads_its_own_phrasings(
    family: str, text: str, answer: dict[str, Any]
) -> None:
    assert read(text, family).answer == answer


def test_every_mark_points_at_the_words_it_read_and_says_why_a_value_is_set_aside() -> None:
    text = (
        "The coordinator's note rates it high severity. If the exfiltration report confirms "
        "customer records left, it would be critical. I can't see the exfiltration evidence."
    )
    reading = read(text)
    assert reading.answer is None and reading.gaps == ("exfiltration_evidence",)
    by_kind = {(m.kind, text[m.start : m.end], m.note) for m in reading.marks}
    assert ("set_aside", "high severity", "attributed to a document or person") in by_kind
    assert ("set_aside", "critical", "conditional on evidence") in by_kind
    assert ("gap", "exfiltration evidence", "") in by_kind
    assert reading.affected == ("severity",)


def test_placed_is_false_only_when_nothing_is_decided() -> None:
    assert not read("Working on it.").placed
    assert not read("").placed
    assert read("The evidence is incomplete.").placed
    assert read("Severity: high.").placed


def test_a_task_resolves_a_paraphrase_of_its_contracts_requirement() -> None:
    """A near match of a requirement's description names it (rapidfuzz), among the task's
    contract when a task is given."""
    task = generate_task(SECURITY, "regulated_data_exposure", 11)
    text = "I could not see which data categories were exposed, including the regulated data."
    assert "data_exposure_review" in read_prose(text, SECURITY, task=task).gaps


def test_reading_is_deterministic_and_the_same_for_any_family_object() -> None:
    text = CASES["list_under_labels"][0]
    again = load_families()["security_incident_v1"]
    assert read_prose(text, SECURITY) == read_prose(text, again)
    assert isinstance(again, ScenarioFile)


def test_the_prose_section_changes_no_task_and_is_left_out_of_the_scenario_hash() -> None:
    """Editing how prose is read rescores runs as a change to the reading rules does; it
    changes no task, so a run's scenario hash (and the checked-in runs') stays as it was."""
    bare = SECURITY.model_copy(update={"prose": ProseSpec()})
    assert bare.prose != SECURITY.prose
    assert scenario_hash([bare]) == scenario_hash([SECURITY])
    assert scenario_hash([bare], "agent") == scenario_hash([SECURITY], "agent")
    assert generate_task(bare, "scope_expansion", 11) == generate_task(
        SECURITY, "scope_expansion", 11
    )
