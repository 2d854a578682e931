"""docs/benchmark.md §9.2 (grant schedules): the `grants` tier. Each task is the agent tier's
corpus with one grant change drawn from the seed, set going by the episode (an ending grant by
the first open in its scope, a late one at the start or by a search), and the states before and
after it: the task's own user scopes, authorized documents and oracles are those at the start,
`grant_states` holds those after the change (evidence under a grant that ended is missing in
its scope, evidence from a late grant is authorized); the same family, template, seed and size
give the same bytes in any process."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import peb_core
from peb_core import Task, generate_task, generate_tasks, load_families
from peb_core.tasks import GRANT_LAGS, GRANT_TRIGGERS, TIERS, Oracles

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
PACKAGE_PARENT = str(Path(peb_core.__file__).resolve().parent.parent)

GRANTS_EXPORT_SHA256 = "de2735181ec201c0d71424fe1a7db2d111db022d3270beabd7a6972dd4fca454"
"""sha256 of the grants tier's 168 canonical tasks, one `model_dump_json()` a line, in
generate_tasks order (as tests/tasks/test_determinism.py pins the other tiers'). Versioned:
moved when grants became judged at the submit (event-set changes, both states in the task)."""

EXPORT = (
    "from peb_core import generate_tasks, load_families\n"
    "import sys\n"
    "tasks = generate_tasks(load_families().values(), tier='grants')\n"
    "sys.stdout.buffer.write(''.join(t.model_dump_json() + '\\n' for t in tasks).encode())\n"
)


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return generate_tasks(SPECS, tier="grants")


@pytest.fixture(scope="module")
def agent_tasks() -> list[Task]:
    return generate_tasks(SPECS, tier="agent")


def _export(tasks: list[Task]) -> bytes:
    return "".join(t.model_dump_json() + "\n" for t in tasks).encode()


def _in_subprocess(hash_seed: str, cwd: Path) -> bytes:
    env = {k: v for k, v in os.environ.items() if k != "PEB_SCENARIOS_DIR"}
    env["PYTHONHASHSEED"] = hash_seed
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", EXPORT], capture_output=True, cwd=cwd, env=env, timeout=120,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def test_grants_export_is_pinned_and_byte_identical_across_processes(
    tasks: list[Task], tmp_path: Path
) -> None:
    exported = _export(tasks)
    assert exported.count(b"\n") == 168
    assert hashlib.sha256(exported).hexdigest() == GRANTS_EXPORT_SHA256
    assert _in_subprocess("0", tmp_path) == _in_subprocess("12345", tmp_path) == exported


def test_the_tier_is_registered_after_agent_with_its_corpus_sizes() -> None:
    names = list(TIERS)
    assert names.index("grants") > names.index("agent")
    assert TIERS["grants"].corpus == TIERS["agent"].corpus


def test_a_task_is_the_agent_corpus_with_one_change(
    tasks: list[Task], agent_tasks: list[Task]
) -> None:
    for task, base in zip(tasks, agent_tasks, strict=True):
        assert task.task_id == base.task_id.replace("__agent__", "__grants__")
        assert task.tier == "grants" and task.documents == base.documents
        (change,) = task.grants
        assert change.trigger in GRANT_TRIGGERS[change.ends]
        low, high = GRANT_LAGS[change.trigger]
        assert low <= change.lag <= high
        start, after = task.states
        assert len(task.grant_states) == 1 and after == task.grant_states[0]
        assert (start.user_scopes, start.oracles) == (task.user_scopes, task.oracles)
        if change.ends:
            assert start.user_scopes == (*base.user_scopes, change.scope)
            assert after.user_scopes == base.user_scopes
            assert after.oracles == base.oracles  # the state after an ending grant: the agent's
        else:
            assert start.user_scopes == base.user_scopes and start.oracles == base.oracles
            assert after.user_scopes == (*base.user_scopes, change.scope)
        for state in task.states:
            visible = set(state.user_scopes)
            assert set(state.authorized_doc_ids) == {
                d.doc_id for d in task.documents if d.scope in visible
            }
        # The change is to the home scope of one of the contract's restricted records.
        required = {r.id for r in task.contract.required_evidence}
        homes = FAMILIES[task.family].home_scopes
        assert any(homes[f] == change.scope for f in required if f in homes)
        # Each state as a task of its own, without a schedule.
        assert task.in_state(0).grants == () and task.in_state(1).oracles == after.oracles


def test_oracles_follow_the_schedule(tasks: list[Task]) -> None:
    """An ending grant that held a record's only current copy leaves it missing in its scope
    after the change (covered at the start); a late grant that holds one covers it after the
    change (missing at the start), and its facts are in the authorized answer."""
    counts: Counter[str] = Counter()
    for task in tasks:
        (change,) = task.grants
        families = {
            d.evidence_family
            for d in task.documents
            if d.scope == change.scope and not d.superseded and d.role == "material"
        } & {r.id for r in task.contract.required_evidence}
        start, after = task.states

        def missing(oracles: Oracles) -> set[str]:
            gap = oracles.gap_report
            return set(gap.missing_requirements) if gap else set()

        if "expired_gap" in task.topologies:
            counts["expired_gap"] += 1
            gap = after.oracles.gap_report
            assert gap is not None and families & missing(after.oracles)
            assert change.scope in gap.missing_scopes
            assert not families & missing(start.oracles)
        if "late_cover" in task.topologies:
            counts["late_cover"] += 1
            assert not families & missing(after.oracles)
            assert families & missing(start.oracles)
            master = next(
                d for d in task.documents if d.scope == change.scope and d.evidence_family in
                families and not d.superseded
            )  # fmt: skip
            assert master.doc_id in after.authorized_doc_ids
            assert master.doc_id not in start.authorized_doc_ids
    assert counts["expired_gap"] >= 20 and counts["late_cover"] >= 10, counts


def test_canonical_changes_are_balanced_and_fresh_seeds_draw_them(tasks: list[Task]) -> None:
    for family in FAMILIES:
        changes = Counter(t.grants[0].change for t in tasks if t.family == family)
        assert changes == {"expires": 8, "revoked": 8, "granted": 8}
    triggers = Counter(t.grants[0].trigger for t in tasks if not t.grants[0].ends)
    assert set(triggers) == {"start", "search"}, triggers
    fresh = generate_tasks(SPECS, range(9000, 9030), tier="grants")
    assert set(Counter(t.grants[0].change for t in fresh)) == {"expires", "revoked", "granted"}


def test_a_task_is_the_same_task_at_every_corpus_size() -> None:
    spec = FAMILIES["legal_review_v1"]
    template = spec.templates[0].id
    small = generate_task(spec, template, 11, tier="grants", corpus_size=20)
    large = generate_task(spec, template, 11, tier="grants", corpus_size=300)
    assert small.grants == large.grants and small.oracles == large.oracles
    assert small.contract == large.contract
    assert [s.oracles for s in small.states] == [s.oracles for s in large.states]


def test_json_holds_a_schedule_only_where_there_is_one(tasks: list[Task]) -> None:
    agent = generate_task(SPECS[0], SPECS[0].templates[0].id, 11, tier="agent")
    assert '"grants"' not in agent.model_dump_json()
    assert '"grant_states"' not in agent.model_dump_json()
    task = tasks[0]
    assert '"grants"' in task.model_dump_json() and '"grant_states"' in task.model_dump_json()
    assert Task.model_validate_json(task.model_dump_json()) == task
