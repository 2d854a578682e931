"""The tier registry. A tier is one way of laying out a task's evidence (docs/benchmark.md §7):
a name, a line saying what it measures, and a function building one task of a family from a
template and a seed. `paper`, `hard` and `agent` ship (`_paper.py`, `_hard.py`, `_agent.py`); a new
tier is a module and one `register_tier` call, from inside the package or out of it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._scenario import ScenarioFile
    from ._task import Task

Tier = str
"""A registered tier's name (`TIERS`)."""

DEFAULT_TIER: Tier = "paper"
"""The paper's tier: the default everywhere a tier is chosen, and the one whose task ids carry
no tier (`<template>__s<seed>`)."""

_NAME = re.compile(r"[a-z][a-z0-9]*")


def _no_problems(spec: ScenarioFile) -> Iterable[str]:
    return ()


@dataclass(frozen=True)
class CorpusSizes:
    """The corpus sizes a tier takes: `default` when none is asked for, from `minimum` to
    `maximum`."""

    default: int
    minimum: int
    maximum: int


@dataclass(frozen=True)
class TierSpec:
    """One tier.

    Args:
        name: lower-case letters and digits; part of every task id but the default tier's.
        description: one line: how the tier lays out evidence and what it measures.
        build: one task of a family: `(family, template, seed, distractors) -> Task`, the same
            bytes for the same arguments in any process; a tier with a `corpus` also takes
            `corpus_size=` (an int within its bounds) as a keyword.
        unsupported: why a family has no task on this tier (it lacks text the tier needs), or
            None when it has.
        problems: what the tier needs of a family file, as `field: problem` lines; checked
            when the file loads, for a family the tier supports.
        corpus: for a tier whose tasks are corpora of a chosen size (a generation parameter,
            `corpus_size`), the sizes it takes; None for a tier that takes none.
        sections: the family-file sections only this tier reads (such as `agent`): left out of
            the scenario hash of runs on other tiers, so adding them to a family changes no
            other tier's runs.
        handoffs: whether its tasks list sub-agents an agent may hand off to (`delegate`).
    """

    name: str
    description: str
    build: Callable[..., Task]
    unsupported: Callable[[ScenarioFile], str | None] = lambda spec: None
    problems: Callable[[ScenarioFile], Iterable[str]] = _no_problems
    corpus: CorpusSizes | None = None
    sections: tuple[str, ...] = ()
    handoffs: bool = False


TIERS: dict[Tier, TierSpec] = {}
"""Every registered tier by name, in registration order (`paper` first)."""


def register_tier(tier: TierSpec) -> TierSpec:
    """Add `tier` to `TIERS` and return it; a ValueError for a malformed name or a name taken
    by another tier."""
    if not _NAME.fullmatch(tier.name):
        raise ValueError(f"tier name {tier.name!r}: expected lower-case letters and digits")
    if TIERS.get(tier.name, tier) is not tier:
        raise ValueError(f"tier {tier.name!r} is already registered")
    TIERS[tier.name] = tier
    return tier


def get_tier(name: str) -> TierSpec:
    """The registered tier `name`, or a ValueError naming the valid ones."""
    try:
        return TIERS[name]
    except KeyError:
        raise ValueError(f"unknown tier {name!r}; valid: {', '.join(TIERS)}") from None
