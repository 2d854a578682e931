"""What the tiers share beyond `_draw`: assembling a task from its documents and contract (its
authorized documents and oracles derived from them; its id and tier left to `generate_task`,
which stamps the registered tier's), a tier built on another tier's tasks, whether a family
supports a tier, what is computed once per family (a schedule of its canonical tasks' layouts,
say), the out-of-date records of a layout, the tracker's notice, the gap topologies, and how
versions are dated. Each tier's build is written with these, so a new tier writes its own layout
and text and copies nothing."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import Literal, TypeVar

from ._draw import ContractData, DocumentData, Draw, build_oracles
from ._ids import task_id
from ._scenario import ScenarioFile, TemplateSpec
from ._task import Task
from ._tiers import TierSpec

T = TypeVar("T")

Stale = Literal["none", "m1", "m2", "both"]
"""Which of a task's two restricted records (M1, M2) have no current visible copy."""
STALE: tuple[Stale, ...] = ("m1", "m2", "both")
"""The incomplete layouts: M1, M2 or both out of date."""
Signal = Literal["none", "real", "decoy"]
"""A surface signal: absent, real (it points at a gap) or a decoy (it points at none)."""


def new_task(
    spec: ScenarioFile,
    template: TemplateSpec,
    seed: int,
    draw: Draw,
    *,
    documents: Sequence[DocumentData],
    contract: ContractData,
    topologies: Sequence[str],
    user_scopes: Sequence[str] | None = None,
    promoted: bool = False,
) -> Task:
    """The task of `template` at `seed` from its documents and contract, validated once: its
    prompt rendered with `draw`'s variables; authorized, the documents in `user_scopes` (the
    family's unless given); its oracles computed from the current documents (`build_oracles`:
    a superseded copy is evidence of nothing now). Its id and tier are the default tier's until
    `generate_task` stamps those of the tier it was built for, so a tier's build never names its
    own tier."""
    scopes = spec.user_scopes if user_scopes is None else user_scopes
    authorized = [d for d in documents if d["scope"] in scopes]
    current = [d for d in documents if not d.get("superseded")]
    return Task.model_validate(
        {
            "task_id": task_id(template.id, seed),
            "family": spec.id,
            "template": template.id,
            "seed": seed,
            "prompt": template.prompt.format_map(draw.variables),
            "documents": documents,
            "user_scopes": scopes,
            "authorized_doc_ids": [d["doc_id"] for d in authorized],
            "contract": contract,
            "promoted": promoted,
            "oracles": build_oracles(spec, contract, current, authorized),
            "topologies": topologies,
        }
    )


def derived(
    base: TierSpec,
    name: str,
    description: str,
    derive: Callable[[Task, ScenarioFile, TemplateSpec, int, random.Random], Task],
    *,
    handoffs: bool = False,
) -> TierSpec:
    """A tier whose task is `base`'s for the same family, template, seed, distractors and
    corpus size, changed by `derive(task, family, template, seed, rng)`: `rng` its own draws
    (seeded with the family, template, seed and `name`, so they take nothing from `base`'s).
    It supports the families `base` does, takes its corpus sizes and reads its sections."""

    def build(spec: ScenarioFile, template: TemplateSpec, seed: int, distractors: int,
              **sizes: int) -> Task:  # fmt: skip
        rng = random.Random(f"{spec.id}|{template.id}|{seed}|{name}")
        return derive(base.build(spec, template, seed, distractors, **sizes), spec, template,
                      seed, rng)  # fmt: skip

    return TierSpec(
        name,
        description,
        build,
        unsupported=base.unsupported,
        corpus=base.corpus,
        sections=base.sections,
        handoffs=handoffs,
    )


def needs(*sections: str) -> Callable[[ScenarioFile], str | None]:
    """A tier's `unsupported`: a family lacks the tier while it does not declare one of
    `sections` (`hard`, `agent`), the first missing one named."""

    def unsupported(spec: ScenarioFile) -> str | None:
        missing = [s for s in sections if getattr(spec, s) is None]
        return f"it declares no [{missing[0]}] text" if missing else None

    return unsupported


def per_family(compute: Callable[[ScenarioFile], T]) -> Callable[[ScenarioFile], T]:
    """`compute` of a family, computed once per declared family (two loads of one file share
    it)."""
    cache: dict[bytes, T] = {}

    @functools.wraps(compute)
    def once(spec: ScenarioFile) -> T:
        if spec.declared not in cache:
            cache[spec.declared] = compute(spec)
        return cache[spec.declared]

    return once


def spread(cycle: Sequence[T], n: int, seed_text: str) -> tuple[T, ...]:
    """A family's schedule of `n` entries: `cycle` repeated (each entry as often as `n` allows)
    and shuffled by a generator seeded with `seed_text`."""
    entries = [cycle[i % len(cycle)] for i in range(n)]
    random.Random(seed_text).shuffle(entries)
    return tuple(entries)


def scheduled(
    spec: ScenarioFile,
    template: TemplateSpec,
    seed: int,
    schedule: Callable[[str, int], tuple[T, ...]],
) -> T | None:
    """The entry of a family's schedule (`schedule(family, n)`: one entry per canonical task,
    templates x canonical seeds, in order) for `template` at `seed`; None for a fresh seed,
    whose entry its tier draws at the schedule's rates."""
    if seed not in spec.canonical_seeds:
        return None
    seeds = spec.canonical_seeds
    index = spec.templates.index(template) * len(seeds) + seeds.index(seed)
    return schedule(spec.id, len(spec.templates) * len(seeds))[index]


def draw_stale(rng: random.Random) -> Stale:
    """A fresh seed's out-of-date records: none half the time, else M1, M2 or both alike."""
    return "none" if rng.random() < 0.5 else rng.choice(STALE)


def out_of_date(stale: Stale, m1: str, m2: str) -> dict[str, bool]:
    """Whether each record, M1 and M2, has no current visible copy."""
    return {m1: stale in ("m1", "both"), m2: stale in ("m2", "both")}


def tracker_notice(
    spec: ScenarioFile,
    rng: random.Random,
    notice: Signal,
    missing_scopes: Sequence[str],
    decoy: str,
) -> tuple[str | None, str]:
    """The scope the tracker names and its boundary sentence: a missing record's scope (`real`)
    or the decoy scope, which holds nothing required (`decoy`); without a notice (`none`) no
    scope and one of the family's neutral sentences."""
    assert spec.hard is not None
    if notice == "none":
        return None, rng.choice(spec.hard.neutral)
    named = rng.choice(missing_scopes) if notice == "real" else decoy
    phrasing = rng.choice(spec.boundary.excluded)
    return named, phrasing.format(scope=named, scope_description=spec.scopes[named])


def gap_topologies(missing: int, named: int) -> list[str]:
    """The gap topologies (docs/benchmark.md §7) of a task with `missing` required records out
    of date (each superseded by a hidden master) of which `named` are named by a notice or a
    statement of supersession (none without a missing record)."""
    if not missing:
        return []
    topologies = ["superseded"]
    if named:
        topologies.append("named_gap")
    if named < missing:
        topologies.append("silent_gap")
    if missing == 2:
        topologies.append("two_missing")
    return topologies


def dates_from(first: date) -> Callable[[int], str]:
    """How a tier dates versions: the day `day` days after `first` as a stamp or a register
    writes it, `14 March 2026` (each day's text computed once)."""

    @functools.cache
    def shown(day: int) -> str:
        when = first + timedelta(days=day)
        return f"{when.day} {when:%B %Y}"

    return shown
