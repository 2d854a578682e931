"""`peb audit shortcuts`, run in process (tests/cli.py): a table, JSON with the same figures,
progress on stderr, and one error line for an audit that cannot be made."""

from __future__ import annotations

import json
from pathlib import Path

from cli import peb

from peb_core.tasks import TIERS

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--family", "due_diligence_v1", "--train-seeds", "1000-1039", "--test-seeds", "2000-2019"]


def test_a_table_and_json_with_the_same_figures() -> None:
    table = peb("audit", "shortcuts", *SMALL, "--top", "3")
    assert table.returncode == 0, table.stderr
    n = len(TIERS)
    assert table.stderr.splitlines() == [
        f"peb: auditing {i}/{n}: {tier} due_diligence_v1" for i, tier in enumerate(TIERS, 1)
    ]
    lines = table.stdout.splitlines()
    assert [c.strip() for c in lines[0].split("|")[1:5]] == ["tier", "contract", "family", "train"]
    assert "learned - signals" in lines[0] and "silent learned - majority" in lines[0]

    shown = peb("audit", "shortcuts", *SMALL, "--top", "3", "--json")
    assert shown.returncode == 0, shown.stderr
    out = json.loads(shown.stdout)
    summary = {row["tier"]: row for row in out["summary"]}
    assert list(summary) == list(TIERS)
    paper = summary["paper"]
    assert (paper["n_train"], paper["n_test"], paper["signals"]) == (240, 120, 1.0)
    assert paper["leak"] is None  # every paper-tier gap is named: no silent incomplete task
    assert summary["hard"]["leak"] in (True, False) and summary["agent"]["leak"] in (True, False)
    for row in out["summary"]:
        assert f"| {row['tier']} " in table.stdout and f" {row['learned']:.3f} " in table.stdout
    ranks = [(g["tier"], g["completeness"], g["rank"]) for g in out["ngrams"]]
    assert {r for _, _, r in ranks} <= {1, 2, 3} and len(ranks) == len(set(ranks))


def test_training_views_all_of_one_completeness_end_in_one_error_line() -> None:
    result = peb(
        "audit", "shortcuts", "--family", "due_diligence_v1", "--tier", "paper",
        "--train-seeds", "2,3", "--test-seeds", "4",
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    errors = [line for line in result.stderr.splitlines() if not line.startswith("peb: auditing")]
    assert errors == [
        "peb: error: due_diligence_v1 (paper): every training task is incomplete; "
        "choose more training seeds"
    ]
