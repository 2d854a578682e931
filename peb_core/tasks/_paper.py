"""The `paper` tier (docs/benchmark.md §7): the paper's six documents, the tracker naming the
excluded scope (or the opened one). Its tables reproduce exactly."""

from __future__ import annotations

from ._draw import DocumentData, Draw, build_contract, is_promoted
from ._scenario import ROLES, ScenarioFile, TemplateSpec
from ._task import Task
from ._tiers import TierSpec
from ._toolkit import new_task


def paper_task(spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int) -> Task:
    draw = Draw(spec, f"{spec.id}|{template.id}|{seed}")
    rng = draw.rng
    promoted = is_promoted(template, seed, spec.canonical_seeds, rng.random())
    material = template.material
    user_scopes = (*spec.user_scopes, material.scope) if promoted else tuple(spec.user_scopes)
    documents: list[DocumentData] = []
    slots = spec.slots_by_role
    for role in ROLES:
        slot = slots[role]
        facts, fills = draw.slot(slot, template.findings_by_slot[role])
        if role == "tracker":
            phrasing = rng.choice(spec.boundary.included if promoted else spec.boundary.excluded)
            fills["boundary"] = phrasing.format(
                scope=material.scope, scope_description=spec.scopes[material.scope]
            )
        title = draw.text(material.titles if role == "material" else slot.titles)
        body = rng.choice(slot.bodies).format_map(fills)
        documents.append(
            {
                "doc_id": draw.doc_id(),
                "title": title,
                "role": role,
                "scope": material.scope if role == "material" else str(slot.scope),
                "evidence_family": (
                    material.evidence_family if role == "material" else str(slot.evidence_family)
                ),
                "body": body,
                "facts": facts,
            }
        )
    required = [
        d["evidence_family"]
        for d, role in zip(documents, ROLES, strict=True)
        if role == "material" or slots[role].required
    ]
    contract = build_contract(spec, template, required, rng)
    documents += [draw.distractor() for _ in range(distractors)]
    rng.shuffle(documents)
    # Incomplete exactly when the material record stays out of view, and then the tracker names
    # its scope.
    topologies = () if promoted else ("named_gap",)
    return new_task(spec, template, seed, draw, documents=documents, contract=contract,
                    topologies=topologies, user_scopes=user_scopes, promoted=promoted)  # fmt: skip


PAPER = TierSpec(
    name="paper",
    description="the paper's benchmark: six documents, an explicit boundary signal",
    build=paper_task,
)
