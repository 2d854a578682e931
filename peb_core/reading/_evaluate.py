"""How well one reading of messages matches another, per surface (docs/benchmark.md §2.1): the
prose reader against labels a careful person wrote (`evaluate`: precision and recall), or against
a model reader (`agreement`). A reading is compared in the shape `peb read` prints,
`{"answer", "completeness", "gaps"}` (a `ProseReading` is turned into it), as items per surface:

- `values`: each `field=value` pair the answer states (each value of a set field one item, a set
  field stated empty the item `field=[]`), and a block as its own item `answer=null`;
- `completeness`: the claim, `completeness=complete` or `completeness=incomplete`;
- `gaps`: each requirement or scope id named as missing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._read import ProseReading

Surface = Literal["values", "completeness", "gaps"]
SURFACES: tuple[Surface, ...] = ("values", "completeness", "gaps")

Reading = ProseReading | Mapping[str, Any]


def _shape(reading: Reading) -> Mapping[str, Any]:
    return reading.to_json() if isinstance(reading, ProseReading) else reading


def reading_items(reading: Reading) -> dict[Surface, frozenset[str]]:
    """A reading's items per surface (see the module docstring)."""
    shape = _shape(reading)
    answer = shape.get("answer")
    values: set[str] = set()
    if answer is None:
        values.add("answer=null")
    elif isinstance(answer, Mapping):
        for name, value in answer.items():
            for v in (value or ["[]"]) if isinstance(value, list) else [value]:
                values.add(f"{name}={v}")
    claim = shape.get("completeness")
    return {
        "values": frozenset(values),
        "completeness": frozenset({f"completeness={claim}"} if claim else ()),
        "gaps": frozenset(str(g) for g in shape.get("gaps") or ()),
    }


label_items = reading_items
"""A label's items: a label has the reading's shape."""


@dataclass(frozen=True)
class Score:
    """Items found (`tp`), found but not in the labels (`fp`), in the labels but not found
    (`fn`), over a set of messages; precision and recall None where undefined (nothing found,
    nothing labelled)."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def evaluate(readings: Sequence[Reading], labels: Sequence[Reading]) -> dict[Surface, Score]:
    """Precision and recall per surface of `readings` against `labels`, message by message
    (items summed over the messages)."""
    if len(readings) != len(labels):
        raise ValueError(f"{len(readings)} readings for {len(labels)} labels")
    counts = {s: [0, 0, 0] for s in SURFACES}
    for reading, label in zip(readings, labels, strict=True):
        got, want = reading_items(reading), label_items(label)
        for s in SURFACES:
            counts[s][0] += len(got[s] & want[s])
            counts[s][1] += len(got[s] - want[s])
            counts[s][2] += len(want[s] - got[s])
    return {s: Score(*c) for s, c in counts.items()}


@dataclass(frozen=True)
class Agreement:
    """On how many messages two readings give the same items of a surface."""

    same: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.same / self.total if self.total else None


def agreement(a: Sequence[Reading], b: Sequence[Reading]) -> dict[Surface, Agreement]:
    """Per surface, on how many messages readings `a` and `b` agree (the same items)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} readings against {len(b)}")
    same = dict.fromkeys(SURFACES, 0)
    for x, y in zip(a, b, strict=True):
        ix, iy = reading_items(x), reading_items(y)
        for s in SURFACES:
            same[s] += ix[s] == iy[s]
    return {s: Agreement(same[s], len(a)) for s in SURFACES}


def differences(a: Reading, b: Reading) -> dict[Surface, tuple[list[str], list[str]]]:
    """Per surface where two readings of one message differ: the items only `a` has, and those
    only `b` has (sorted)."""
    ia, ib = reading_items(a), reading_items(b)
    return {s: (sorted(ia[s] - ib[s]), sorted(ib[s] - ia[s])) for s in SURFACES if ia[s] != ib[s]}
