"""Task ids and seed lists: `<template>__s<seed>` (the default tier) or
`<template>__<tier>__s<seed>`, and seed lists as `--seeds` takes them (`11,23`, `400-439`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from ._tiers import DEFAULT_TIER, TIERS, Tier

MAX_TASKS = 100_000
"""The most tasks (and so seeds) one command asks for unless told otherwise: a bound on memory
and time."""
MAX_SEED = 2**63 - 1
"""The largest seed: seeds are stored as signed 64-bit integers (polars `Int64`)."""

_SEED_PART = re.compile(r"(?P<low>-?[0-9]+)(?:-(?P<high>-?[0-9]+))?")


class TaskRef(NamedTuple):
    template: str
    seed: int
    tier: Tier


def task_id(template_id: str, seed: int, tier: Tier = DEFAULT_TIER) -> str:
    """`<template>__s<seed>` on the default tier, `<template>__<tier>__s<seed>` on another."""
    return f"{template_id}__s{seed}" if tier == DEFAULT_TIER else f"{template_id}__{tier}__s{seed}"


def parse_task_id(value: str) -> TaskRef:
    """Split a task id into template, seed and tier (any registered tier); a ValueError naming
    the expected form."""
    tiers = "|".join(sorted((re.escape(t) for t in TIERS if t != DEFAULT_TIER), key=len)[::-1])
    match = re.match(
        rf"^(?P<template>[a-z][a-z0-9_]*?)(?:__(?P<tier>{tiers}))?__s(?P<seed>[0-9]+)$", value
    )
    if not match or int(match["seed"]) > MAX_SEED:
        others = (f"<template>__{t}__s<seed>" for t in TIERS if t != DEFAULT_TIER)
        forms = ["<template>__s<seed>", *others]
        raise ValueError(f"task id {value!r} is not of the form {' or '.join(forms)}")
    return TaskRef(match["template"], int(match["seed"]), match["tier"] or DEFAULT_TIER)


class TooManySeeds(ValueError):
    """A seed list longer than the limit its caller set."""


def parse_seed(text: str) -> int:
    """One seed from text (spaces around it allowed); a ValueError naming what is valid, an
    integer from 0 to MAX_SEED, for anything else."""
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) > MAX_SEED:
        raise ValueError(
            f"{text.strip()!r} is not a seed: seeds are integers >= 0 (at most 2^63-1), e.g. 11"
        )
    return int(text)


def seed_ranges(text: str) -> list[tuple[int, int]]:
    """The (low, high) of each part of a seed list (`11,23`, `400-439`), in order, without
    building the list; a ValueError names the part that is neither an integer nor a range, or
    is out of range, or an empty range."""
    ranges = []
    for part in (p.strip() for p in text.split(",")):
        match = _SEED_PART.fullmatch(part)
        if not match:
            raise ValueError(
                f"{part!r} is not an integer or a range; expected e.g. 11,23 or 400-439"
            )
        low, high = int(match["low"]), int(match["high"] or match["low"])
        if min(low, high) < 0 or max(low, high) > MAX_SEED:
            raise ValueError(f"{part!r}: seeds are integers >= 0 (at most 2^63-1)")
        if high < low:
            raise ValueError(f"range {part!r} is empty; expected LOW-HIGH with LOW <= HIGH")
        ranges.append((low, high))
    return ranges


def parse_seeds(text: str, limit: int = MAX_TASKS) -> list[int]:
    """`11,23` and ranges `400-439` into a list of distinct integers from 0 to MAX_SEED, in the
    order given; a ValueError names the part that is neither, or is out of range
    (`seed_ranges`). More than `limit` seeds raise TooManySeeds before the list is built.
    `format_seeds` is its inverse."""
    seeds: dict[int, None] = {}
    for low, high in seed_ranges(text):
        part = f"{low}" if low == high else f"{low}-{high}"
        if high - low < limit:  # else the range alone is too long to build
            seeds.update(dict.fromkeys(range(low, high + 1)))
        if high - low >= limit or len(seeds) > limit:
            raise TooManySeeds(f"{part!r} brings the seeds to more than {limit:,}")
    return list(seeds)


def format_seeds(seeds: Sequence[int] | None, width: int | None = 40) -> str:
    """`11,23,400-439`: consecutive seeds as ranges (as `parse_seeds` reads them), cut at about
    `width` characters unless `width` is None; `canonical` for None."""
    if seeds is None:
        return "canonical"
    parts: list[str] = []
    start = end = None
    for seed in [*seeds, None]:
        if start is not None and end is not None and seed == end + 1:
            end = seed
            continue
        if start is not None:
            parts.append(str(start) if start == end else f"{start}-{end}")
        start = end = seed
    text = ",".join(parts)
    if width is None or len(text) <= width:
        return text
    return text[:width].rsplit(",", 1)[0] + ",..."
