"""Markdown written one way for every stage that writes it: tables (the paper's tables, the
dataset card: GitHub-flavoured, each cell on one line with `|` escaped, so no cell can break
its row), and text that must be shown as text (what a model, a tool or a user wrote: inline,
as inline code, or as a code block), so no such text can restyle a page that shows it."""

from __future__ import annotations

import re
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


_ESCAPABLE = re.compile(r"([\\`*_{}#+\-.!])")
"""What Markdown reads as syntax and takes escaped with a backslash."""
_REFERENCES = {c: f"&#{ord(c)};" for c in "&<>\"'[]()|~$:=^@"}
"""What HTML reads as markup, and the syntax of links and of Markdown's extensions (tables,
strike-through, maths, whose delimiters include escaped brackets, links made of bare
addresses), written as character references."""


def markdown_text(value: object) -> str:
    """`value`'s text as Markdown that shows exactly that text and nothing else, however it
    was written (a model's message, a tool's arguments, a run or system name): every
    character Markdown reads as syntax escaped, every character HTML reads as markup as its
    character reference (so no tag, style, image or link can be made of it), each line break
    a `<br>` (so no line can start a heading, list, quote, table or code block)."""
    escaped = _ESCAPABLE.sub(r"\\\1", str(value))
    escaped = "".join(_REFERENCES.get(c, c) for c in escaped)
    return "<br>".join(line.strip() for line in escaped.splitlines())


def markdown_code(value: object) -> str:
    """`value`'s text as inline code in Markdown, shown exactly (`markdown_text` in a
    `<code>` element: a backtick in it cannot close the span)."""
    return f"<code>{markdown_text(value)}</code>"


def code_block(text: str, language: str = "text") -> str:
    """`text` as a fenced Markdown code block, nothing cut: the fence is longer than any run of
    backticks in it, so no line of it can close the block (a code block's text is shown as
    text)."""
    fence = "`" * max(3, 1 + max(map(len, re.findall("`+", text)), default=0))
    return f"{fence}{language}\n{text}\n{fence}"
