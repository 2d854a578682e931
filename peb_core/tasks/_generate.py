"""Generating tasks: one task of a family for a template, a seed and a registered tier, and every
task of a selection, in a fixed order. The same family, template, seed, tier and distractor
count give the same Task in any process. The generator knows no family by name, and no tier:
each tier builds its own tasks (`_tiers.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from .._gc import gc_paused

# isort: off
from . import _paper  # noqa: F401  (the shipped tiers register themselves, the default first)
from . import _hard  # noqa: F401

# isort: on
from ._ids import task_id
from ._scenario import ScenarioFile
from ._task import Task
from ._tiers import DEFAULT_TIER, Tier, get_tier

MAX_DISTRACTORS = 50
"""The most distractors a task takes: each is one more document in every prompt, and 50 already
make a task's six documents nine times as many."""


def _check(spec: ScenarioFile, seed: int, distractors: int, tier: Tier) -> None:
    if seed < 0:
        raise ValueError(f"seed {seed} is negative; seeds are integers >= 0")
    if distractors < 0:
        raise ValueError(f"distractors {distractors} is negative; expected an integer >= 0")
    if distractors > MAX_DISTRACTORS:
        raise ValueError(f"distractors {distractors}: at most {MAX_DISTRACTORS} per task")
    if distractors and spec.distractors is None:
        raise ValueError(f"family {spec.id} declares no distractors")
    why = get_tier(tier).unsupported(spec)
    if why is not None:
        raise ValueError(f"family {spec.id} has no {tier} tier: {why}")


def generate_task(
    spec: ScenarioFile,
    template_id: str,
    seed: int,
    distractors: int = 0,
    tier: Tier = DEFAULT_TIER,
) -> Task:
    """One task of `spec` for a template, any non-negative integer seed and a registered tier, with
    `distractors` neutral authorized documents added (they carry no facts and a family no
    contract requires, so they never change an oracle). Documents are shuffled per seed, so no
    role sits at a fixed position, and so is the contract's order."""
    _check(spec, seed, distractors, tier)
    return get_tier(tier).build(spec, spec.template(template_id), seed, distractors)


def _slots(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None
) -> Iterator[tuple[ScenarioFile, str, int]]:
    for spec in families:
        for template in spec.templates:
            for seed in seeds if seeds is not None else spec.canonical_seeds:
                yield spec, template.id, seed


def iter_tasks(
    families: Iterable[ScenarioFile],
    seeds: Sequence[int] | None = None,
    distractors: int = 0,
    tier: Tier = DEFAULT_TIER,
) -> Iterator[Task]:
    """Every template of every family at `seeds` (default: each family's canonical seeds), in
    family, template, seed order, each with `distractors` neutral documents; one at a time."""
    for spec, template, seed in _slots(families, seeds):
        yield generate_task(spec, template, seed, distractors, tier)


def task_keys(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None, tier: Tier = DEFAULT_TIER
) -> Iterator[tuple[str, str]]:
    """The (family, task id) of each task `iter_tasks(families, seeds, tier=tier)` yields, in
    its order, without generating them."""
    return (
        (spec.id, task_id(template, seed, tier)) for spec, template, seed in _slots(families, seeds)
    )


def generate_tasks(
    families: Iterable[ScenarioFile],
    seeds: Sequence[int] | None = None,
    distractors: int = 0,
    tier: Tier = DEFAULT_TIER,
) -> list[Task]:
    """`iter_tasks` as a list."""
    with gc_paused():
        return list(iter_tasks(families, seeds, distractors, tier))


def count_tasks(families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None) -> int:
    """How many tasks `iter_tasks(families, seeds)` yields, without generating them."""
    return sum(
        len(spec.templates) * len(seeds if seeds is not None else spec.canonical_seeds)
        for spec in families
    )
