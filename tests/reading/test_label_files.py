"""The labelled prose sets of issue 33 (tests/reading/prose/*.jsonl) are well formed: every line
is one JSON object with the label keys in order, its id names its family, and every answer value,
gap and tag comes from that family's file or the tag vocabulary. This checks the files' form
only; what each label says is a careful human reading, not something a test can recompute."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from peb_core import ScenarioFile

PROSE = Path(__file__).parent / "prose"
FILES = sorted(PROSE.glob("*.jsonl"))
KEYS = ["id", "family", "text", "answer", "completeness", "gaps", "tags", "note"]
COMPLETENESS = {"complete", "incomplete", None}
TAGS = {
    "advice",
    "negation",
    "conditional",
    "attribution",
    "adoption",
    "quote",
    "list",
    "markdown",
    "table",
    "synonym",
    "value_and_caveat",
    "partial",
    "refusal",
    "hedge",
    "question",
    "claim_complete",
    "claim_incomplete",
    "gap_list",
    "nothing",
    "pushback_reply",
    "mid_episode",
    "long",
    "plain",
}
PER_FAMILY = {"dev.jsonl": 21, "heldout_a.jsonl": 25}
"""How many messages each family has in the sets whose size the issue fixed."""


def _in_order(items: list[str], order: list[str]) -> bool:
    positions = [order.index(x) for x in items]
    return positions == sorted(positions)


def problems(row: Any, families: dict[str, ScenarioFile]) -> list[str]:
    """What is wrong with one parsed line of a label file (nothing: an empty list)."""
    if not isinstance(row, dict):
        return ["not a JSON object"]
    if list(row) != KEYS:
        return [f"keys {list(row)} are not {KEYS}"]
    family = families.get(row["family"]) if isinstance(row["family"], str) else None
    if family is None:
        return [f"unknown family {row['family']!r}"]
    out: list[str] = []
    if not (isinstance(row["id"], str) and re.fullmatch(rf"{family.id}-[a-z]-\d{{3}}", row["id"])):
        out.append(f"id {row['id']!r} is not <family>-<letter>-<nnn>")
    if not (isinstance(row["text"], str) and row["text"].strip()):
        out.append("text is empty")
    answer = row["answer"]
    if answer is not None and not isinstance(answer, dict):
        out.append("answer is neither null nor an object")
    for name, value in (answer or {}).items():
        spec = family.answer.get(name)
        if spec is None:
            out.append(f"answer field {name!r} is not in the family")
        elif spec.kind == "ordinal":
            if value not in spec.values:
                out.append(f"{name}: {value!r} is not one of {spec.values}")
        elif not (isinstance(value, list) and all(v in spec.values for v in value)):
            out.append(f"{name}: {value!r} is not a list of {spec.values}")
        elif len(set(value)) != len(value) or not _in_order(value, spec.values):
            out.append(f"{name}: {value!r} repeats a value or is not in the family's order")
    if answer is not None and list(answer) != [f for f in family.answer if f in answer]:
        out.append("answer fields are not in the family's order")
    if row["completeness"] not in COMPLETENESS:
        out.append(f"completeness {row['completeness']!r}")
    gaps = row["gaps"]
    requirements, scopes = list(family.requirements), list(family.scopes)
    if not (isinstance(gaps, list) and all(g in requirements or g in scopes for g in gaps)):
        out.append(f"gaps {gaps!r} are not requirement or scope ids of the family")
    elif len(set(gaps)) != len(gaps) or not _in_order(gaps, requirements + scopes):
        out.append(f"gaps {gaps!r} repeat an id or are not requirements then scopes in order")
    elif gaps and row["completeness"] != "incomplete":
        out.append("a message that names a gap says its evidence is incomplete")
    tags = row["tags"]
    if not (isinstance(tags, list) and tags and set(tags) <= TAGS and len(set(tags)) == len(tags)):
        out.append(f"tags {tags!r} are not distinct tags from the vocabulary")
    if not isinstance(row["note"], str):
        out.append("note is not a string")
    return out


def _rows(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_the_sets_are_there() -> None:
    assert {p.name for p in FILES} >= set(PER_FAMILY)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_line_is_a_valid_label(path: Path, families: dict[str, ScenarioFile]) -> None:
    bad = {
        f"{path.name}:{n}": found
        for n, row in enumerate(_rows(path), 1)
        if (found := problems(row, families))
    }
    assert not bad


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_family_is_covered(path: Path, families: dict[str, ScenarioFile]) -> None:
    counts = {f: 0 for f in families}
    for row in _rows(path):
        counts[row["family"]] += 1
    want = PER_FAMILY.get(path.name)
    assert all(n == want for n in counts.values()) if want else all(counts.values()), counts


def test_ids_are_unique_across_the_sets() -> None:
    ids = [row["id"] for path in FILES for row in _rows(path)]
    assert len(ids) == len(set(ids))


def test_the_check_catches_malformed_labels(families: dict[str, ScenarioFile]) -> None:
    good = {
        "id": "security_incident_v1-z-001",
        "family": "security_incident_v1",
        "text": "Severity: critical. I could not open the forensic scope analysis.",
        "answer": {"severity": "critical"},
        "completeness": "incomplete",
        "gaps": ["scope_forensics", "forensics_restricted"],
        "tags": ["value_and_caveat", "claim_incomplete"],
        "note": "",
    }
    assert problems(good, families) == []
    broken: list[dict[str, Any]] = [
        {**good, "answer": {"severity": "sev-1"}},
        {**good, "answer": {"escalations": ["executive_bridge", "forensics_team"]}},
        {**good, "answer": {"recommendation": "block"}},
        {**good, "gaps": ["forensics_restricted", "scope_forensics"]},
        {**good, "gaps": ["privileged_counsel"]},
        {**good, "completeness": "complete"},
        {**good, "tags": ["overclaim"]},
        {**good, "id": "due_diligence_v1-a-001"},
        {k: good[k] for k in reversed(KEYS)},
    ]
    assert all(problems(row, families) for row in broken)
