"""Paraphrase overlap: how much text two fresh instances of one template share.

An instance's text is its prompt and every document's title and body (hidden documents
included, no distractors). The contract and the answer schema are left out: they are fixed per
template on purpose. Each text is lower-cased and split into words (runs of letters and digits,
keeping inner apostrophes and hyphens); its shingles are its 8-word windows, taken within one
title, body or prompt, never across two. An instance's shingle set is the union over its texts.

The overlap of a template over seeds s_1..s_n is

    sum over pairs {a, b} of |A & B|  /  sum over pairs {a, b} of (|A| + |B|) / 2

that is, of the 8-word sequences an instance holds, the share the other instance of a pair holds
too, pooled over all n(n-1)/2 pairs. It is 1 when every instance is word-for-word the same and 0
when no two share a sequence. It is computed exactly in one pass: a shingle held by c instances
is shared by c(c-1)/2 pairs. A family's overlap is the mean over its templates.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ._generate import generate_task
from ._scenario import ScenarioFile
from ._task import Task
from ._tiers import DEFAULT_TIER, Tier

SHINGLE = 8
"""Words per shingle."""

FRESH_SEEDS = tuple(range(100_000, 100_100))
"""The default 100 fresh (non-canonical) seeds."""

_WORD = re.compile(r"[a-z0-9]+(?:['\u2019-][a-z0-9]+)*")


def shingles(text: str, size: int = SHINGLE) -> set[tuple[str, ...]]:
    """The `size`-word windows of one text."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def task_shingles(task: Task, size: int = SHINGLE) -> set[tuple[str, ...]]:
    """The shingles of a task's prompt and its documents' titles and bodies."""
    out = shingles(task.prompt, size)
    for doc in task.documents:
        out |= shingles(doc.title, size)
        out |= shingles(doc.body, size)
    return out


def pooled_overlap(sets: Sequence[set[tuple[str, ...]]]) -> float:
    """Pooled pairwise overlap of shingle sets (see the module docstring); 0 for < 2 sets."""
    n = len(sets)
    if n < 2:
        return 0.0
    counts = Counter(s for item in sets for s in item)
    shared = sum(c * (c - 1) // 2 for c in counts.values())
    # Each set takes part in n - 1 pairs, and contributes half its size to each.
    mean_sizes = sum(len(item) for item in sets) * (n - 1) / 2
    return shared / mean_sizes if mean_sizes else 0.0


def template_overlap(
    spec: ScenarioFile,
    template_id: str,
    seeds: Iterable[int] = FRESH_SEEDS,
    tier: Tier = DEFAULT_TIER,
) -> float:
    """The pooled overlap of one template's instances at `seeds` on `tier`."""
    return pooled_overlap(
        [task_shingles(generate_task(spec, template_id, s, tier=tier)) for s in seeds]
    )


def family_overlap(
    spec: ScenarioFile, seeds: Iterable[int] = FRESH_SEEDS, tier: Tier = DEFAULT_TIER
) -> dict[str, float]:
    """Each template's overlap on `tier`, in file order."""
    seeds = tuple(seeds)
    return {t.id: template_overlap(spec, t.id, seeds, tier) for t in spec.templates}
