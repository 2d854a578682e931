"""The shortcut audit (`peb audit shortcuts`, docs/benchmark.md §8) of the paper and hard tiers
and every family at its default size: a linear classifier over word n-grams of the model views
of 3,600 training tasks a family, scored on 600 held-out tasks a family.

Goals (issue 19): on the paper tier, where the tracker states the boundary, the audit shows the
leak (learned accuracy >= 0.95 in every family); on the hard tier, on the tasks whose only
signals are silent, the learned accuracy is within 0.05 of the majority rate (at most 0.05
above it) in every family.

Run: .venv/bin/python benchmarks/bench_audit.py [--write]
`--write` puts the section into benchmarks/RESULTS.md (other sections are left alone). Progress
goes to stderr. Exits 1 if a goal is missed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

from _sections import RESULTS, write_section

from peb_core.audit import (
    NGRAMS,
    TEST_SEEDS,
    TRAIN_SEEDS,
    C,
    ShortcutAudit,
    audit_shortcuts,
    ngram_table,
    summary_table,
)
from peb_core.tasks import format_seeds, load_families

HEADING = "## bench_audit.py: the shortcut audit of the paper and hard tiers"
PAPER_LEAK = 0.95
SILENT_GAIN = 0.05


def goals(audit: ShortcutAudit) -> list[tuple[str, str, str, bool]]:
    """Per tier and family: the goal as measured, and whether it is met (a figure that could not
    be measured, for want of tasks, misses it)."""
    out = []
    for a in audit.families:
        if a.tier == "paper":
            value, text = a.all_tasks.learned.value, "learned {} >= " + str(PAPER_LEAK)
            ok = value is not None and value >= PAPER_LEAK
        else:
            value, text = a.silent.over_majority.value, "silent gain {} <= +" + str(SILENT_GAIN)
            ok = value is not None and value <= SILENT_GAIN
        shown = "-" if value is None else f"{value:+.3f}" if a.tier != "paper" else f"{value:.3f}"
        out.append((a.tier, a.family, text.format(shown), ok))
    return out


def _markdown(rows: list[dict[str, Any]]) -> list[str]:
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(str(r[k]) for k in head) + " |" for r in rows]


def section(audit: ShortcutAudit, seconds: float, cpu: float) -> str:
    date = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    checked = goals(audit)
    missed = [g for g in checked if not g[3]]
    return "\n".join(
        [
            HEADING,
            "",
            f"Measured {date} ({seconds:.0f} s, {cpu:.0f} s of CPU, one process). Per tier and "
            "family: a logistic "
            f"regression (liblinear, C = {C}) over the word {NGRAMS[0]}- and {NGRAMS[1]}-grams "
            f"of the model views of seeds {format_seeds(TRAIN_SEEDS)} (training) and scored on "
            f"seeds {format_seeds(TEST_SEEDS)} (held out; six templates a seed). `signals` is "
            "the explicit-signal reader (the completeness most training views with the same "
            "stated signals had: boundary notices and sentences on supersession); `silent` the "
            "held-out tasks with no stated gap (no topology `named_gap`); differences are "
            "paired, with a 95% interval (McNemar score test, Tango's interval), and LEAK marks "
            "a silent gain whose interval lies above 0. Goals: paper tier learned >= "
            f"{PAPER_LEAK}; hard tier silent learned - majority <= {SILENT_GAIN}. "
            + (
                "**All met.**"
                if not missed
                else f"**MISSED: {', '.join(f'{t} {f}' for t, f, _, _ in missed)}.**"
            ),
            "",
            *_markdown(
                [
                    {**row, "goal": f"{text}: {'met' if ok else 'MISSED'}"}
                    for row, (_, _, text, ok) in zip(
                        summary_table(audit.summary).to_dicts(), checked, strict=True
                    )
                ]
            ),
            "",
            "The n-grams the classifier weighs most toward each class, ranked by how far each "
            "moves its mean score between the classes (weight x difference in share), with the "
            "share of training views of the class / of the other holding it:",
            "",
            *_markdown(ngram_table(audit.ngrams).to_dicts()),
            "",
        ]
    )


def main() -> int:
    start, cpu = time.perf_counter(), time.process_time()

    def progress(i: int, n: int, tier: str, family: str) -> None:
        print(f"auditing {i}/{n}: {tier} {family}", file=sys.stderr, flush=True)

    audit = audit_shortcuts(load_families().values(), ("paper", "hard"), progress=progress)
    text = section(audit, time.perf_counter() - start, time.process_time() - cpu)
    print(text)
    if "--write" in sys.argv[1:]:
        write_section(HEADING, text)
        print(f"wrote the section to {RESULTS}")
    return 0 if all(ok for *_, ok in goals(audit)) else 1


if __name__ == "__main__":
    sys.exit(main())
