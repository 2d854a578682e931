"""Markdown tables, written one way for every stage that writes them (the paper's tables, the
dataset card): GitHub-flavoured, each cell on one line with `|` escaped, so no cell can break
its row."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def markdown_cell(value: object) -> str:
    """`value` as a table cell: its text on one line, `|` escaped as `\\|`."""
    return " ".join(str(value).replace("|", "\\|").splitlines())


def markdown_table(
    head: Sequence[object], rows: Iterable[Sequence[object]], *, right: Sequence[bool] = ()
) -> list[str]:
    """The lines of a Markdown table: `head`, the rule (`---:` for each column `right` marks,
    right-aligned) and a line per row, every cell through `markdown_cell`."""

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"

    aligned = [*right, *[False] * (len(head) - len(right))]
    if any(aligned):
        rule = "|" + "|".join("---:" if r else "---" for r in aligned) + "|"
    else:
        rule = line(["---"] * len(head))
    return [line(head), rule, *(line(r) for r in rows)]
