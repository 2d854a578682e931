"""Scope owners and the next step a gap calls for (docs/benchmark.md §2.2): every shipped family
names the owner of each scope and a reviewer, checked when it loads; the oracle's next step is
derived from the task's oracle gap report and the owners by one rule, never stored in a task;
a family without owners loads and is refused, in one line, where a next step needs them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from peb_core.tasks import (
    NEXT_ACTIONS,
    NoOwners,
    ScenarioError,
    ScenarioFile,
    generate_task,
    handed_to,
    iter_tasks,
    load_families,
    load_scenario,
    next_step,
    owners_of,
    response_schema,
    scenario_hash,
)
from peb_core.tasks._checks import consistency_problems

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = load_families()
DD = FAMILIES["due_diligence_v1"]


def test_every_shipped_family_names_an_owner_of_each_scope() -> None:
    for spec in FAMILIES.values():
        owners = owners_of(spec)
        assert set(owners.scopes) == set(spec.scopes), spec.id
        assert owners.reviewer not in owners.scopes.values(), spec.id
        assert owners.roles[-1] == owners.reviewer
        for role in owners.roles:  # a person, never a place where evidence is kept
            folded = re.sub(r"[\s'-]+", "_", role)
            assert not any(scope in folded for scope in spec.scopes), (spec.id, role)
        assert list(consistency_problems(spec)) == []


def _expected(scopes: list[str], blocked: bool, spec: ScenarioFile) -> tuple[str, str]:
    """The rule, written again: one owner -> escalate (block) or request access (partial);
    several or none -> human review by the reviewer."""
    assert spec.owners is not None
    named = {spec.owners.scopes[s] for s in scopes}
    if len(named) != 1:
        return "human_review", spec.owners.reviewer
    return ("escalate" if blocked else "request_access"), named.pop()


@pytest.mark.parametrize("tier", ["paper", "hard", "agent", "grants", "delegation"])
def test_the_oracle_next_step_follows_the_rule_in_every_state(tier: str) -> None:
    seen = set()
    for task in iter_tasks(list(FAMILIES.values()), tier=tier):
        spec = FAMILIES[task.family]
        for n in range(len(task.grant_states) + 1):
            judged = task.in_state(n)
            step = next_step(judged, spec)
            gap = judged.oracles.gap_report
            if gap is None:
                assert step is None
                continue
            assert step is not None
            want = _expected(gap.missing_scopes, gap.status == "blocked", spec)
            assert (step.action, step.to) == want, (task.task_id, n)
            seen.add(step.action)
    # every action occurs where a gap can span two owners (the paper tier has one missing scope)
    assert seen == (set(NEXT_ACTIONS) if tier != "paper" else {"escalate", "request_access"})


def test_a_handoff_to_the_reviewer_is_a_human_review() -> None:
    owners = owners_of(DD)
    assert handed_to("Investment-Committee", owners) == handed_to(owners.reviewer, owners)
    review = handed_to(owners.reviewer, owners)
    assert review is not None and review.action == "human_review"
    escalation = handed_to("lead counsel", owners)
    assert escalation is not None and (escalation.action, escalation.to) == (
        "escalate",
        "lead counsel",
    )
    assert handed_to("the ceo", owners) is None


def _without_owners(tmp_path: Path) -> Path:
    """A copy of the scenarios whose due-diligence file has no [owners] section."""
    folder = tmp_path / "scenarios"
    shutil.copytree(ROOT / "scenarios", folder)
    path = folder / "due_diligence_v1.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index("# Who owns each scope")
    end = text.index("[answer.recommendation]")
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    return folder


def test_a_family_without_owners_loads_and_is_refused_where_a_next_step_needs_them(
    tmp_path: Path,
) -> None:
    spec = load_families(_without_owners(tmp_path))["due_diligence_v1"]
    assert spec.owners is None
    task = generate_task(spec, spec.templates[0].id, 11)
    assert task == generate_task(DD, DD.templates[0].id, 11)  # the task is the same
    for call in (
        lambda: owners_of(spec),
        lambda: next_step(task, spec),
        lambda: response_schema(spec, ("next_step",)),
    ):
        with pytest.raises(NoOwners) as caught:
            call()
        assert str(caught.value).count("\n") == 0
        assert str(caught.value).startswith("due_diligence_v1 names no scope owners")
    assert "confidence" in response_schema(spec, ("confidence",))["properties"]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda t: t.replace('board_confidential = "board secretary"\n', ""),
            "owners.scopes: 'board_confidential' has no owner",
        ),
        (
            lambda t: t.replace("[owners.scopes]\n", '[owners.scopes]\nnowhere = "clerk"\n'),
            "owners.scopes: 'nowhere' is not a declared scope",
        ),
        (
            lambda t: t.replace('reviewer = "investment committee"', 'reviewer = "lead counsel"'),
            "owners.reviewer: 'lead counsel' owns a scope",
        ),
        (
            lambda t: t.replace('"market research lead"', '"public affairs desk"'),
            "owners.scopes.public: 'public affairs desk' names the scope 'public'",
        ),
        (
            lambda t: t.replace('"lead counsel"', '"Lead Counsel"'),
            "owners.scopes.counsel_privileged: String should match pattern",
        ),
    ],
)
def test_a_malformed_owners_section_fails_at_load_in_one_line(
    tmp_path: Path, edit: object, problem: str
) -> None:
    path = tmp_path / "due_diligence_v1.toml"
    text = (ROOT / "scenarios" / "due_diligence_v1.toml").read_text(encoding="utf-8")
    assert callable(edit)
    path.write_text(edit(text), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert problem in message and "\n" not in message, message


def test_owners_are_in_the_scenario_hash_of_the_runs_that_read_them_only(
    tmp_path: Path,
) -> None:
    """A run's hash leaves `[owners]` out unless it reads them (`reads`): adding the section
    to every family moved no checked-in run."""
    bare = load_families(_without_owners(tmp_path))["due_diligence_v1"]
    for tier in ("paper", "agent"):
        assert scenario_hash([bare], tier) == scenario_hash([DD], tier)
        assert scenario_hash([bare], tier, ["owners"]) != scenario_hash([DD], tier, ["owners"])


def test_the_next_steps_of_the_canonical_tasks_are_the_spec_s() -> None:
    """docs/benchmark.md §2.2 gives, per tier, how many canonical tasks call for each next
    step: these counts, computed."""
    spec = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    said = " ".join(spec.split())
    for tier in ("paper", "hard", "agent", "delegation"):
        counts = {action: 0 for action in NEXT_ACTIONS}
        for task in iter_tasks(list(FAMILIES.values()), tier=tier):
            step = next_step(task, FAMILIES[task.family])
            if step is not None:
                counts[step.action] += 1
        listed = ", ".join(f"{a} {n}" for a, n in counts.items() if n)
        assert f"{tier} tier, {listed};" in said or f"{tier} tier, {listed}." in said, listed
