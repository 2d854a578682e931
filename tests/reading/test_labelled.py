"""The prose reader against messages labelled by careful human reading (docs/benchmark.md §2.1):
on every labelled set present (the JSON-lines files of the `prose` folder beside this file, or
of the folder `$PEB_PROSE_LABELS` names), its precision and recall per surface (asserted values
with a block as its own item, completeness claims, gaps named) are computed, must be the figures
the spec reports for that set, and on the dev sets (the ones the reader was tuned on) precision on
values and on completeness claims must reach 0.9. The held-out sets were written by others, apart
from the reader: their figures are its honest measure."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from peb_core.reading import SURFACES, Score, Surface, evaluate, read_prose
from peb_core.tasks import load_families

ROOT = Path(__file__).resolve().parents[2]
LABELS = Path(os.environ.get("PEB_PROSE_LABELS") or ROOT / "tests" / "reading" / "prose")
SETS = sorted(LABELS.glob("*.jsonl")) if LABELS.is_dir() else []
FLOORS: dict[str, dict[Surface, float]] = {
    "dev": {"values": 0.9, "completeness": 0.9},
    "dev_b": {"values": 0.9, "completeness": 0.9},
}
"""Precision each set must reach per surface (the held-out sets' floors are set from their
first measured figures by the lead)."""


def _labels(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def figures(path: Path) -> dict[Surface, Score]:
    """The reader's scores on one labelled set."""
    families = load_families()
    labels = _labels(path)
    readings = [read_prose(label["text"], families[label["family"]]) for label in labels]
    return evaluate(readings, labels)


def _fraction(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def table_row(name: str, messages: int, scores: dict[Surface, Score]) -> str:
    """A set's row of the spec's table of the reader's figures."""
    cells = [f"`{name}`", str(messages)]
    for surface in SURFACES:
        s = scores[surface]
        cells.append(f"{_fraction(s.precision)} / {_fraction(s.recall)}")
    return "| " + " | ".join(cells) + " |"


@pytest.mark.skipif(not SETS, reason=f"no labelled sets in {LABELS}")
@pytest.mark.parametrize("path", SETS, ids=[p.stem for p in SETS])
def test_the_readers_figures_on_each_labelled_set_are_the_specs(path: Path) -> None:
    scores = figures(path)
    row = table_row(path.stem, len(_labels(path)), scores)
    print(row)
    spec = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    assert row in spec, f"docs/benchmark.md §2.1 should report, for this set:\n{row}"
    for surface, floor in FLOORS.get(path.stem, {}).items():
        precision = scores[surface].precision
        assert precision is not None and precision >= floor, (surface, precision)


def test_the_scores_count_each_surfaces_items() -> None:
    """A block is its own item; a value of a set field is one item each; a label's completeness
    is one item; so a reader that blocks where the label states values loses precision and
    recall both."""
    label = {"answer": {"severity": "high", "escalations": ["forensics_team"]}, "gaps": []}
    label |= {"completeness": "incomplete"}
    blocked = {"answer": None, "completeness": "incomplete", "gaps": ["scope_forensics"]}
    scores = evaluate([blocked], [label])
    assert (scores["values"].tp, scores["values"].fp, scores["values"].fn) == (0, 1, 2)
    assert (scores["completeness"].precision, scores["gaps"].precision) == (1.0, 0.0)
    assert scores["gaps"].recall is None


def test_a_set_field_stated_empty_is_an_item() -> None:
    """`escalations: []` is a value the message states: read where the label has it, a hit; left
    unread, a miss; read where the label has none, a false one."""
    label: dict[str, Any] = {"answer": {"severity": "low", "escalations": []}, "gaps": []}
    unread: dict[str, Any] = {"answer": {"severity": "low"}, "gaps": []}
    values = evaluate([label, unread, label], [label, label, unread])["values"]
    assert (values.tp, values.fp, values.fn) == (4, 1, 1)
