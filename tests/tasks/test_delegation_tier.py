"""docs/benchmark.md §9.1: the delegation tier. A delegation task is the agent task of the same
family, template and seed (corpus, contract and oracles) with its sub-agents drawn after them:
the records clerk holds every user scope and a contract record master's home scope, the analyst
two of the three user scopes and a restricted one; on every incomplete task the missing
record's scope is outside every sub-agent's intersection with the user's scopes. The tier is
byte-identical across processes, and adding it changed no other tier's bytes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import peb_core
from peb_core import generate_task, generate_tasks, load_families
from peb_core.tasks import TIERS, scenario_hash

FAMILIES = load_families()
SPECS = list(FAMILIES.values())
PACKAGE_PARENT = str(Path(peb_core.__file__).resolve().parent.parent)


def test_a_delegation_task_is_its_agent_task_with_sub_agents() -> None:
    agent = generate_tasks(SPECS, tier="agent")
    delegation = generate_tasks(SPECS, tier="delegation")
    assert len(delegation) == len(agent) == 168
    for a, d in zip(agent, delegation, strict=True):
        assert d.task_id == a.task_id.replace("__agent__", "__delegation__")
        assert d.tier == "delegation" and not a.sub_agents
        assert (d.documents, d.contract, d.oracles) == (a.documents, a.contract, a.oracles)
        spec = FAMILIES[d.family]
        user = set(d.user_scopes)
        agents = {s.name: s for s in d.sub_agents}
        assert set(agents) == {"records_clerk", "analyst"}
        clerk, analyst = set(agents["records_clerk"].scopes), set(agents["analyst"].scopes)
        homes = {spec.home_scopes[r.id] for r in d.contract.required_evidence
                 if r.id in spec.restricted_families}  # fmt: skip
        assert user < clerk and len(clerk - user) == 1 and clerk - user <= homes
        assert len(analyst & user) == 2 and len(analyst - user) == 1
        assert analyst - user <= set(spec.restricted_scopes)
        incomplete = d.oracles.completeness == "incomplete"
        assert ("delegated_gap" in d.topologies) == incomplete
        assert d.topologies[: len(a.topologies)] == a.topologies
        if incomplete:
            assert d.oracles.gap_report is not None
            for scope in d.oracles.gap_report.missing_scopes:
                assert all(scope not in user & set(s.scopes) for s in d.sub_agents)


def test_the_delegation_tier_takes_corpus_sizes_and_shares_the_agent_sections() -> None:
    spec = FAMILIES["procurement_v1"]
    small = generate_task(spec, spec.templates[0].id, 7001, tier="delegation", corpus_size=20)
    big = generate_task(spec, spec.templates[0].id, 7001, tier="delegation", corpus_size=200)
    assert (small.contract, small.oracles, small.sub_agents) == (
        big.contract,
        big.oracles,
        big.sub_agents,
    )
    assert TIERS["delegation"].sections == TIERS["agent"].sections == ("hard", "agent")
    # A run on either reads the [agent] section; one on another tier leaves it out.
    assert scenario_hash(tier="delegation") == scenario_hash(tier="agent")
    assert scenario_hash(tier="delegation") != scenario_hash(tier="hard")


EXPORT = (
    "import sys\n"
    "from peb_core import generate_tasks, load_families\n"
    "tasks = generate_tasks(load_families().values(), tier='delegation')\n"
    "sys.stdout.buffer.write(''.join(t.model_dump_json() + '\\n' for t in tasks).encode())\n"
)


def test_the_delegation_export_is_byte_identical_across_processes(tmp_path: Path) -> None:
    outputs = []
    for hash_seed in ("0", "12345"):
        env = {k: v for k, v in os.environ.items() if k != "PEB_SCENARIOS_DIR"}
        env["PYTHONHASHSEED"] = hash_seed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
        result = subprocess.run([sys.executable, "-c", EXPORT], capture_output=True, cwd=tmp_path,
                                env=env, timeout=120, check=False)  # fmt: skip
        assert result.returncode == 0, result.stderr.decode()
        outputs.append(result.stdout)
    tasks = generate_tasks(SPECS, tier="delegation")
    assert outputs[0] == outputs[1] == "".join(t.model_dump_json() + "\n" for t in tasks).encode()
    assert b'"sub_agents"' in outputs[0]
