"""Writing one script's section of benchmarks/RESULTS.md, leaving the other sections alone."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, text: str) -> None:
    """Put `text` (which starts with `heading`) into RESULTS.md in place of the section under
    that heading, or at the end if there is none; every other section stays as it is."""
    old = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmarks: results\n"
    if heading in old:
        start = old.index(heading)
        rest = old[start + len(heading) :]
        end = rest.find("\n## ")
        tail = "" if end < 0 else rest[end + 1 :]
        new = old[:start] + text + ("\n" + tail if tail else "")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(new, encoding="utf-8")
