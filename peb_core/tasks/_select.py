"""Which tasks a request asks for, checked once for every caller (the CLI's commands, the
workbench's Run button and headless form, the task explorer's table): families by name, a seed
list, tiers each family supports, distractors only where a family declares them, and a cap on
how many tasks one request may make. A problem is one line naming the input the way the caller
does (`--seeds` on a command line, `Seeds` in a form)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._families import load_families
from ._generate import count_tasks
from ._ids import MAX_TASKS, TooManySeeds, parse_seeds
from ._scenario import ScenarioFile
from ._tiers import DEFAULT_TIER, TIERS, Tier, get_tier

FLAGS: Mapping[str, str | None] = {
    "family": "--family",
    "seeds": "--seeds",
    "tier": "--tier",
    "distractors": "--distractors",
    "max_tasks": "--max-tasks",
}
"""How the command line names each input of a selection (the default). A caller whose cap
cannot be raised names `max_tasks` None."""


class SelectionError(ValueError):
    """A selection that cannot be made as asked: one line naming what was wrong and what is
    valid. `field` is the input at fault (a key of `FLAGS`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Selection:
    """Tasks asked for, checked: `n_tasks` counts them over every tier (before any limit)."""

    families: tuple[ScenarioFile, ...]
    seeds: tuple[int, ...] | None
    """None: each family's canonical seeds."""
    tiers: tuple[Tier, ...]
    distractors: int
    n_tasks: int


def select_families(
    names: Sequence[str] | None, *, flags: Mapping[str, str | None] = FLAGS
) -> tuple[ScenarioFile, ...]:
    """The families named (each entry may be comma-separated; None: every family), in the
    order first named."""
    known = load_families()
    wanted = [n.strip() for entry in names or [] for n in entry.split(",") if n.strip()]
    if names is not None and not wanted:
        raise SelectionError(
            "family", f"{flags['family']}: no family named; valid: {', '.join(known)}"
        )
    for name in wanted:
        if name not in known:
            raise SelectionError("family", f"unknown family {name!r}; valid: {', '.join(known)}")
    return tuple(known[n] for n in dict.fromkeys(wanted or known))


def check_distractors(
    n: int, families: Sequence[ScenarioFile], *, flags: Mapping[str, str | None] = FLAGS
) -> int:
    """`n` if every family declares distractors (or `n` is 0)."""
    for spec in families if n else []:
        if spec.distractors is None:
            raise SelectionError(
                "distractors", f"{flags['distractors']}: family {spec.id} declares no [distractors]"
            )
    return n


def select_tasks(
    families: Sequence[str] | None,
    seeds: str | None,
    tiers: Sequence[str] = (DEFAULT_TIER,),
    *,
    distractors: int = 0,
    max_tasks: int = MAX_TASKS,
    limit: int | None = None,
    repeats: int = 1,
    flags: Mapping[str, str | None] = FLAGS,
) -> Selection:
    """The tasks asked for, checked.

    Args:
        families: family names (None: every family); see `select_families`.
        seeds: a seed list such as `11,23` or `400-439` (None: canonical seeds).
        tiers: the tiers asked for; each family must support each.
        distractors: neutral documents per task, only for families that declare them.
        max_tasks: the cap: more replies than this (tasks after `limit`, times `repeats`) is
            refused.
        limit: only the first `limit` tasks will be made (a smoke run).
        repeats: how many times each task will be answered.
        flags: how the caller names each input, for the messages.

    Raises:
        SelectionError: one line naming the input at fault and what is valid.
    """
    specs = select_families(families, flags=flags)
    for tier in tiers:
        if tier not in TIERS:
            raise SelectionError("tier", f"unknown tier {tier!r}; valid: {', '.join(TIERS)}")
        for spec in specs:
            why = get_tier(tier).unsupported(spec)
            if why is not None:
                raise SelectionError(
                    "tier",
                    f"{flags['tier']}: family {spec.id} has no {tier} tier: {why}; "
                    f"choose {flags['tier']} {DEFAULT_TIER} or other families",
                )
    cap = flags["max_tasks"] or "the cap"
    parsed = None
    if seeds is not None:
        try:
            parsed = tuple(parse_seeds(seeds, limit=max(1, max_tasks // repeats)))
        except TooManySeeds as exc:
            raise SelectionError(
                "seeds", f"{flags['seeds']}: {exc}; at most {cap} ({max_tasks:,}) replies at once"
            ) from None
        except ValueError as exc:
            raise SelectionError("seeds", f"{flags['seeds']}: {exc}") from None
    n_tasks = count_tasks(specs, parsed) * len(tiers)
    replies = min(n_tasks, limit or n_tasks) * repeats
    if replies > max_tasks:
        times = f" x {repeats} repeats ({replies:,} replies)" if repeats > 1 else ""
        raise SelectionError(
            "max_tasks",
            f"{n_tasks:,} tasks{times} asked for, more than {cap} ({max_tasks:,}); choose fewer "
            "seeds, families or repeats" + (f", or raise {cap}" if flags["max_tasks"] else ""),
        )
    return Selection(
        families=specs,
        seeds=parsed,
        tiers=tuple(tiers),
        distractors=check_distractors(distractors, specs, flags=flags),
        n_tasks=n_tasks,
    )
