"""The `delegation` tier (docs/benchmark.md §9, delegated handoffs): an agent-tier corpus whose
task lists named sub-agents, each with a role and the scopes it holds, to which the agent may hand
part of the contract with the `delegate` tool (`peb_core.access`).

Facts first: the corpus, contract and oracles are the agent tier's for the same family, template
and seed (so a delegation task is answered and scored exactly as its agent task), and the
sub-agents are drawn after them from the seed. A handed-off episode runs under the intersection
of the requester's scopes and the sub-agent's own, so a sub-agent's view never holds more than
the requester's: on every incomplete task a contract record's current copy is missing from the
sub-agent's view and from the requester's alike (`delegated_gap`), and the final answer is safe
only if the gap the sub-agent reports reaches the final gap report. Each task lists:

- `records_clerk`: finds each record the contract requires; it holds every scope the user holds
  and the home scope of a contract record's master, which the intersection takes away (authority
  never escalates: the clerk cannot read that master for the user);
- `analyst`: reads the matter's notes; it holds two of the user's three scopes and a restricted
  scope, so its view is narrower than the requester's.
"""

from __future__ import annotations

import random

from ._agent import AGENT, AGENT_CORPUS, agent_task
from ._ids import task_id
from ._scenario import ScenarioFile, TemplateSpec
from ._task import SubAgent, Task
from ._tiers import TierSpec, register_tier

RECORDS_CLERK = "records_clerk"
ANALYST = "analyst"
ROLES = {
    RECORDS_CLERK: "records clerk: looks up each record the contract requires in the register "
    "and finds its current copy",
    ANALYST: "analyst: reads the matter's overviews and notes",
}
"""Each sub-agent's role, as the `delegate` tool describes it."""


def delegation_task(
    spec: ScenarioFile,
    template: TemplateSpec,
    seed: int,
    distractors: int,
    *,
    corpus_size: int = AGENT_CORPUS.default,
) -> Task:
    base = agent_task(spec, template, seed, distractors, corpus_size=corpus_size)
    rng = random.Random(f"{spec.id}|{template.id}|{seed}|delegation")
    homes = spec.home_scopes
    restricted = set(spec.restricted_families)
    masters = sorted({homes[r.id] for r in base.contract.required_evidence if r.id in restricted})
    user = list(spec.user_scopes)
    kept = sorted(rng.sample(user, len(user) - 1), key=user.index)
    agents = [
        SubAgent(name=RECORDS_CLERK, role=ROLES[RECORDS_CLERK],
                 scopes=(*user, rng.choice(masters))),
        SubAgent(name=ANALYST, role=ROLES[ANALYST],
                 scopes=(*kept, rng.choice(spec.restricted_scopes))),
    ]  # fmt: skip
    rng.shuffle(agents)
    incomplete = base.oracles.completeness == "incomplete"
    return base.model_copy(
        update={
            "task_id": task_id(template.id, seed, "delegation"),
            "tier": "delegation",
            "sub_agents": tuple(agents),
            "topologies": (*base.topologies, *(["delegated_gap"] if incomplete else [])),
        }
    )


DELEGATION = register_tier(
    TierSpec(
        name="delegation",
        description="the agent tier's corpora with named sub-agents to hand part of the "
        "contract to (delegate), under the intersection of their scopes and the user's",
        build=delegation_task,
        unsupported=AGENT.unsupported,
        corpus=AGENT_CORPUS,
        sections=AGENT.sections,
        handoffs=True,
    )
)
