"""Disclosure modes (docs/benchmark.md §9): what the access layer tells an agent about what it
withheld. A registry, as tiers and views are: `silent`, `counted` and `named` ship
(`SHIPPED_DISCLOSURES`); a new mode is a `Disclosure` and one registry line: an entry there, or a
`register_disclosure` call from outside the package.

- `silent`: results outside the user's scopes never appear, and opening a hidden document reads
  exactly as opening one that does not exist (the paper's silent filtering);
- `counted`: each search result says how many matching records the access policy withheld, and
  opening a hidden document is denied;
- `named`: it also names the scopes that withheld them, and a denial names the document's scope
  (the paper's "explicit boundary metadata"); a change of the user's grants mid-episode is
  announced in the next tool result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._registry import Registry

NOT_FOUND = "not found: no document has that id"
"""What opening an unknown id says, and under `silent` a hidden one."""


@dataclass(frozen=True)
class Disclosure:
    """A disclosure mode.

    Args:
        name: lower-case letters; recorded in a run's config.
        description: one line: what an agent is told.
        notice: from the scopes of the documents a search withheld (one per document), the
            result's `withheld` count and `withheld_scopes` (None: not told).
        denial: what opening a hidden document kept in a scope says.
        told: what the search tool's description tells an agent of the notices ("" for none).
        announces_grants: whether a change of the user's grants mid-episode (a task's grant
            schedule) is announced in the next tool result (`GrantNotice`); else it is silent:
            searches simply stop, or start, returning the scope's documents.
    """

    name: str
    description: str
    notice: Callable[[Sequence[str]], tuple[int | None, tuple[str, ...] | None]]
    denial: Callable[[str], str]
    told: str = ""
    announces_grants: bool = False


DISCLOSURES: Registry[Disclosure] = Registry(
    "disclosure", pattern=r"[a-z]+", form="lower-case letters"
)
"""Every registered disclosure mode by name, in registration order (`silent` first)."""

DEFAULT_DISCLOSURE = "silent"
"""The mode a run uses unless told otherwise: the paper's silent filtering."""

register_disclosure = DISCLOSURES.register
"""Add a mode to `DISCLOSURES` and return it; a ValueError for a malformed name or one taken by
another."""

get_disclosure = DISCLOSURES.lookup
"""The registered mode of a name, or UnknownName (a ValueError) naming the valid ones."""

SHIPPED_DISCLOSURES = (
    Disclosure(
        "silent",
        "hidden records never appear; opening one reads as not found",
        lambda scopes: (None, None),
        lambda scope: NOT_FOUND,
    ),
    Disclosure(
        "counted",
        "each search says how many matching records were withheld; opening one is denied",
        lambda scopes: (len(scopes), None),
        lambda scope: "access denied: the document is outside your access",
        "`withheld` counts the matching documents that access policy kept from these results.",
    ),
    Disclosure(
        "named",
        "each search says how many matching records were withheld and from which scopes; a "
        "denial names the scope",
        lambda scopes: (len(scopes), tuple(sorted(set(scopes)))),
        lambda scope: f"access denied: the document is kept in scope {scope}, outside your access",
        "`withheld` counts the matching documents that access policy kept from these results, "
        "and `withheld_scopes` names the scopes they are kept in.",
        announces_grants=True,
    ),
)
"""The modes the package ships, registered in this order (the default first)."""
for _mode in SHIPPED_DISCLOSURES:
    register_disclosure(_mode)
