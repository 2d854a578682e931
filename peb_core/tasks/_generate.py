"""Generating tasks: one task of a family for a template, a seed and a registered tier, and every
task of a selection, in a fixed order. The same family, template, seed, tier, distractor count,
corpus size and contract source give the same Task in any process. The generator knows no family
by name, and no tier: each tier builds its own tasks (`_tiers.py`), and the generator stamps each
with its id and tier. The shipped tiers are listed here, in `TIERS`' order (`SHIPPED_TIERS`)."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from functools import wraps
from inspect import signature
from typing import ParamSpec

from .._gc import gc_paused
from ._agent import AGENT
from ._delegation import DELEGATION
from ._grants import GRANTS
from ._hard import HARD
from ._ids import task_id
from ._paper import PAPER
from ._scenario import ScenarioFile
from ._task import CONTRACT_SOURCES, DEFAULT_CONTRACT, ContractSource, Task
from ._tiers import DEFAULT_TIER, TIERS, Tier, TierSpec, get_tier, register_tier

P = ParamSpec("P")

SHIPPED_TIERS: tuple[TierSpec, ...] = (PAPER, HARD, AGENT, DELEGATION, GRANTS)
"""The tiers the package ships, registered in this order (the default first): a new shipped tier
is a module and an entry here."""
for _tier in SHIPPED_TIERS:
    register_tier(_tier)

MAX_DISTRACTORS = 50
"""The most distractors a task takes: each is one more document in every prompt, and 50 already
make a task's six documents nine times as many."""


def _check(
    spec: ScenarioFile,
    seed: int,
    distractors: int,
    tier: Tier,
    corpus_size: int | None,
    contract: ContractSource,
) -> None:
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
    if corpus_size is not None:
        check_corpus_size(tier, corpus_size)
    if contract != DEFAULT_CONTRACT:
        check_contract(spec, tier, contract)


def check_contract(spec: ScenarioFile, tier: Tier, contract: ContractSource) -> None:
    """A ValueError naming what is valid unless `spec`'s tasks on `tier` can be made with their
    contract found in the corpus (`corpus`): a tier with corpora and a family with a
    [procedure]. `given` is every tier's."""
    if contract not in CONTRACT_SOURCES:
        raise ValueError(
            f"unknown contract source {contract!r}; valid: {', '.join(CONTRACT_SOURCES)}"
        )
    if contract == DEFAULT_CONTRACT:
        return
    if get_tier(tier).corpus is None:
        with_corpus = [t.name for t in TIERS.values() if t.corpus is not None]
        raise ValueError(
            f"the {tier} tier has no corpus to find a contract in; tiers with corpora: "
            f"{', '.join(with_corpus)}"
        )
    if spec.procedure is None:
        raise ValueError(
            f"family {spec.id} declares no [procedure]: its contract can only be given"
        )


def check_corpus_size(tier: Tier, corpus_size: int) -> None:
    """A ValueError naming what is valid unless `tier` takes corpora and `corpus_size` is within
    its bounds."""
    corpus = get_tier(tier).corpus
    if corpus is None:
        with_corpus = [t.name for t in TIERS.values() if t.corpus is not None]
        raise ValueError(
            f"the {tier} tier takes no corpus size; tiers with corpora: {', '.join(with_corpus)}"
        )
    if not corpus.minimum <= corpus_size <= corpus.maximum:
        raise ValueError(
            f"corpus size {corpus_size}: the {tier} tier takes an integer from {corpus.minimum} "
            f"to {corpus.maximum}"
        )


def generate_task(
    spec: ScenarioFile,
    template_id: str,
    seed: int,
    distractors: int = 0,
    tier: Tier = DEFAULT_TIER,
    corpus_size: int | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> Task:
    """One task of `spec` for a template, any non-negative integer seed and a registered tier, with
    `distractors` neutral authorized documents added (they carry no facts and a family no
    contract requires, so they never change an oracle). Documents are shuffled per seed, so no
    role sits at a fixed position, and so is the contract's order. `corpus_size`: how many
    documents a task of a tier with corpora holds (None: the tier's default); a ValueError for
    a tier without corpora. `contract`: where a system finds the contract (`check_contract`);
    `corpus` adds the family's procedure to the corpus, `given` leaves the task as it was. The
    task's id and tier are stamped here, from the name the tier is registered under: no tier's
    build names its own."""
    _check(spec, seed, distractors, tier, corpus_size, contract)
    tier_spec = get_tier(tier)
    template = spec.template(template_id)
    if tier_spec.corpus is None:
        task = tier_spec.build(spec, template, seed, distractors)
    else:
        size = tier_spec.corpus.default if corpus_size is None else corpus_size
        found = {} if contract == DEFAULT_CONTRACT else {"contract": contract}
        task = tier_spec.build(spec, template, seed, distractors, corpus_size=size, **found)
    return task.model_copy(update={"task_id": task_id(template_id, seed, tier), "tier": tier})


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
    corpus_size: int | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
    only: Container[tuple[str, str]] | None = None,
) -> Iterator[Task]:
    """Every template of every family at `seeds` (default: each family's canonical seeds), in
    family, template, seed order, each with `distractors` neutral documents (and, on a tier with
    corpora, `corpus_size` documents and the contract where `contract` says); one at a time.
    With `only`, just the tasks whose (family, task id) it holds, no other generated."""
    for spec, template, seed in _slots(families, seeds):
        if only is None or (spec.id, task_id(template, seed, tier)) in only:
            yield generate_task(spec, template, seed, distractors, tier, corpus_size, contract)


def task_keys(
    families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None, tier: Tier = DEFAULT_TIER
) -> Iterator[tuple[str, str]]:
    """The (family, task id) of each task `iter_tasks(families, seeds, tier=tier)` yields, in
    its order, without generating them."""
    return (
        (spec.id, task_id(template, seed, tier)) for spec, template, seed in _slots(families, seeds)
    )


def _listed(tasks: Callable[P, Iterator[Task]], name: str) -> Callable[P, list[Task]]:
    """`tasks` (a function yielding tasks, whose signature it keeps) as the function `name`
    returning them as a list."""

    @wraps(tasks)
    def listed(*args: P.args, **kwargs: P.kwargs) -> list[Task]:
        with gc_paused():
            return list(tasks(*args, **kwargs))

    listed.__name__ = listed.__qualname__ = name
    listed.__doc__ = f"`{tasks.__name__}` as a list."
    listed.__signature__ = signature(tasks).replace(return_annotation="list[Task]")  # type: ignore[attr-defined]
    return listed


generate_tasks = _listed(iter_tasks, "generate_tasks")


def count_tasks(families: Iterable[ScenarioFile], seeds: Sequence[int] | None = None) -> int:
    """How many tasks `iter_tasks(families, seeds)` yields, without generating them."""
    return sum(
        len(spec.templates) * len(seeds if seeds is not None else spec.canonical_seeds)
        for spec in families
    )
