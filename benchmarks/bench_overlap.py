"""Paraphrase overlap: across 100 fresh seeds of a template, how much 8-word text two instances
share (`peb_core.tasks.template_overlap`: prompt, titles and bodies; contract and schema left
out). Reported per family and tier: the mean over its six templates, and its most repetitive
template.

Run: .venv/bin/python benchmarks/bench_overlap.py [--write]
Goal: every family's paper-tier mean below 20% (the hard tier is reported). `--write` puts the
table into benchmarks/RESULTS.md, in its own section (replaced if present, appended otherwise;
other sections are left alone). Exits 1 if the goal is missed.
"""

from __future__ import annotations

import subprocess
import sys
import time

from _sections import RESULTS, write_section

from peb_core.tasks import FRESH_SEEDS, SHINGLE, TIERS, family_overlap, load_families

GOAL = 0.20
HEADING = "## bench_overlap.py: paraphrase overlap across fresh seeds"


def measure() -> tuple[list[str], bool]:
    lines = [
        "| family | paper tier: mean (goal: < 20%) | most repetitive template | its overlap "
        "| hard tier: mean (reported) | most repetitive template | its overlap |",
        "|---|---|---|---|---|---|---|",
    ]
    ok = True
    for family, spec in load_families().items():
        cells = []
        for tier in TIERS:
            per_template = family_overlap(spec, tier=tier)
            mean = sum(per_template.values()) / len(per_template)
            worst = max(per_template, key=per_template.__getitem__)
            if tier == "paper":
                ok &= mean < GOAL
                cells.append(f"**{mean:.1%} ({'met' if mean < GOAL else 'MISSED'})**")
            else:
                cells.append(f"{mean:.1%}")
            cells += [worst, f"{per_template[worst]:.1%}"]
        lines.append(f"| {family} | {' | '.join(cells)} |")
    return lines, ok


def section(table: list[str], seconds: float) -> str:
    date = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    first, last = FRESH_SEEDS[0], FRESH_SEEDS[-1]
    return "\n".join(
        [
            HEADING,
            "",
            f"Measured {date} ({seconds:.1f} s). For each template, seeds {first}..{last} "
            f"({len(FRESH_SEEDS)} fresh instances); the share of {SHINGLE}-word sequences two "
            "instances share, pooled over all 4,950 pairs (`peb_core/tasks/_overlap.py` defines "
            "it: shared shingles over the pair's mean shingle count; prompt, titles and bodies, "
            "hidden documents included; contract and schema text left out). A family's figure "
            "is the mean over its six templates. The goal is the paper tier's; the hard tier "
            "is reported: its register lists every kind of record by the family's fixed "
            "description, and the second restricted record's copy is titled by it, by design.",
            "",
            *table,
            "",
        ]
    )


def main() -> int:
    start = time.perf_counter()
    table, ok = measure()
    text = section(table, time.perf_counter() - start)
    print(text)
    if "--write" in sys.argv[1:]:
        write_section(HEADING, text)
        print(f"wrote the section to {RESULTS}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
