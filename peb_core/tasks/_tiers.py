"""The tier registry. A tier is one way of laying out a task's evidence (docs/benchmark.md §7):
a name, a line saying what it measures, and a function building one task of a family from a
template and a seed. The shipped tiers are listed in `_generate.SHIPPED_TIERS`; a new tier is a
module (its `TierSpec`) and one registry line: an entry of that list, or a `register_tier` call
from outside the package. A tier's build leaves the task's id and tier to `generate_task`, which
stamps them from the name the tier is registered under."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._registry import Registry

if TYPE_CHECKING:
    from ._scenario import ScenarioFile
    from ._task import Task

Tier = str
"""A registered tier's name (`TIERS`)."""

DEFAULT_TIER: Tier = "paper"
"""The paper's tier: the default everywhere a tier is chosen, and the one whose task ids carry
no tier (`<template>__s<seed>`)."""


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
            `corpus_size=` (an int within its bounds) as a keyword. Its task id and tier are
            `generate_task`'s to stamp (`_toolkit.new_task` leaves the default tier's).
        unsupported: why a family has no task on this tier (it lacks text the tier needs), or
            None when it has.
        problems: what the tier needs of a family file, as `field: problem` lines; checked
            when the file loads, for a family the tier supports.
        corpus: for a tier whose tasks are corpora of a chosen size (a generation parameter,
            `corpus_size`), the sizes it takes; None for a tier that takes none.
        sections: the family-file sections this tier reads beyond those every tier reads (the
            hard tier `hard`; the agent tiers `hard` and `agent`): a run's scenario hash leaves
            out every section some tier declares and its own tier does not, so editing a
            section changes no run of a tier that does not read it.
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


TIERS: Registry[TierSpec] = Registry(
    "tier", pattern=r"[a-z][a-z0-9]*", form="lower-case letters and digits"
)
"""Every registered tier by name, in registration order (the shipped ones first, `paper`
first of all)."""

register_tier = TIERS.register
"""Add a tier to `TIERS` and return it; a ValueError for a malformed name or a name taken by
another tier."""

get_tier = TIERS.lookup
"""The registered tier of a name, or UnknownName (a ValueError) naming the valid ones."""
