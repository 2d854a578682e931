"""A message as the prose reader walks it: a normalised copy of the same length (so every span
found in it is a span of the message), its words, and its sentences with the label each stands
under ("Severity: high", a bullet under "Missing evidence:"), whether it asks a question and
whether it is quoted."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ..tasks import WORD

_FOLD = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
        "_": " ",
        "*": " ",
        "`": " ",
        "#": " ",
    }
)


def normalise(text: str) -> str:
    """`text` lower-cased, with curly quotes straight, dashes as hyphens and markdown's emphasis
    and underscores as spaces: the same length as `text`, character for character."""
    folded = text.translate(_FOLD)
    return "".join(c if len(low := c.lower()) != 1 else low for c in folded)


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int


def words(norm: str) -> list[Word]:
    return [Word(m.group(), m.start(), m.end()) for m in WORD.finditer(norm)]


@dataclass(frozen=True)
class Sentence:
    """A sentence (or list item) of a message: its span, the span of the label it stands under
    (None when none), whether it is a question, and whether it is quoted (a `>` line)."""

    start: int
    end: int
    label: tuple[int, int] | None
    question: bool
    quoted: bool


_BULLET = re.compile(r"[ \t]*(?:[-+*\u2022]|\d{1,2}[.)]|[a-zA-Z][.)])[ \t]+")
_HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]+\S.*|\*\*[^*\n]+\*\*:?|__[^_\n]+__:?)[ \t]*$")
"""A line that is only a heading or only bold text: a label for the list after it."""
_LABEL = re.compile(r"[ \t>]*([a-z][a-z0-9 '/()&,-]{0,60}?)[ \t]*:(?!//)[ \t]*")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*[ \t]+(?=\S)")
_ABBREVIATION = re.compile(r"\b(?:[a-z]|e\.g|i\.e|etc|vs|approx|dr|mr|mrs|ms|st|inc|ltd|co)\.$")
"""A word that ends a sentence only with its period: one letter ("K. Sato") or an abbreviation,
whole ("terms." ends one)."""
_LABEL_WORDS = 6
"""At most this many words before a colon make a label ("Missing evidence:")."""


def _split(norm: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of `norm[start:end]`, as spans without their surrounding spaces."""
    spans = []
    at = start
    for m in _BOUNDARY.finditer(norm, start, end):
        if _ABBREVIATION.search(norm, max(start, m.start() - 8), m.start()):
            continue
        spans.append((at, m.start()))
        at = m.end()
    spans.append((at, end))
    out = []
    for a, b in spans:
        while a < b and norm[a].isspace():
            a += 1
        while b > a and norm[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


_ROW = re.compile(r"[ \t]*\|.*\|[ \t]*$")
_RULE_CELL = re.compile(r"[ \t]*:?-{2,}:?[ \t]*$")


def _cells(norm: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of a table row `norm[start:end]` ("| a | b |"), as spans without their
    surrounding spaces (an empty cell an empty span)."""
    bars = [i for i in range(start, end) if norm[i] == "|"]
    out = []
    for a, b in itertools.pairwise(bars):
        a += 1
        while a < b and norm[a].isspace():
            a += 1
        while b > a and norm[b - 1].isspace():
            b -= 1
        out.append((a, b))
    return out


def _is_rule(norm: str, cells: list[tuple[int, int]]) -> bool:
    return bool(cells) and all(_RULE_CELL.match(norm[a:b]) for a, b in cells)


_OPTION_HEADERS = frozenset({"option", "options", "scenario", "scenarios", "alternative", "choice"})
"""A table whose first header says its rows are options: each cell stands under it (a
possibility, in the cue file), none is a call."""


def _table(norm: str, rows: list[tuple[int, int]]) -> list[Sentence]:
    """The sentences of a markdown table's rows: each cell of a table of two columns and many
    rows under the row's first cell ("| Severity | Critical |" reads "Severity: Critical"), of
    more columns or of one row under a header under its column's header, of a table of options
    under its first header; the header row itself states nothing."""
    grid = [_cells(norm, a, b) for a, b in rows]
    header: list[tuple[int, int]] = []
    if len(grid) > 1 and _is_rule(norm, grid[1]):
        header, grid = grid[0], grid[2:]
    out = []
    body = [cells for cells in grid if not _is_rule(norm, cells)]
    options = bool(header) and norm[header[0][0] : header[0][1]] in _OPTION_HEADERS
    for cells in body:
        for j, (a, b) in enumerate(cells):
            if a == b:
                continue
            if options:
                label: tuple[int, int] | None = header[0]  # every row is a possibility
            elif len(cells) == 2 and not (header and len(body) == 1):
                if j == 0:
                    continue
                label = cells[0] if cells[0][0] < cells[0][1] else None
            else:
                label = header[j] if j < len(header) and header[j][0] < header[j][1] else None
            for x, y in _split(norm, a, b):
                said = norm[x:y].rstrip("\"') ]")
                out.append(Sentence(x, y, label, said.endswith("?"), False))
    return out


def sentences(text: str, norm: str) -> list[Sentence]:
    """The message's sentences, in order (`norm` is `normalise(text)`). A line `Label: rest`
    puts its rest under the label, and so does a later sentence of the line that opens with its
    own label; a line that is only a label, only a heading or bold, or ends
    with a colon, puts the list items after it under it (until a paragraph or a blank line
    after the items); a markdown table's cells stand under their row's or column's label
    (`_table`)."""
    out: list[Sentence] = []
    pending: tuple[int, int] | None = None
    in_list = False
    offset = 0
    table: list[tuple[int, int]] = []
    for line in [*norm.split("\n"), ""]:
        start, end = offset, offset + len(line)
        offset = end + 1
        if _ROW.match(line):
            table.append((start, end))
            pending, in_list = None, False
            continue
        if table:
            out.extend(_table(norm, table))
            table = []
        if not line.strip():
            if in_list:
                pending, in_list = None, False
            continue
        quoted = line.lstrip().startswith(">")
        bullet = _BULLET.match(text, start, end)
        body = bullet.end() if bullet else start
        if bullet:
            in_list = True
        elif pending is not None:
            pending, in_list = None, False
        label: tuple[int, int] | None = None
        found = _LABEL.match(norm, body, end)
        if found and len(WORD.findall(found.group(1))) <= _LABEL_WORDS:
            label = (found.start(1), found.end(1))
        context = label or (pending if bullet else None)
        parts = _split(norm, body, end)
        for k, (a, b) in enumerate(parts):
            said = norm[a:b].rstrip("\"') ]")
            own = _LABEL.match(norm, a, b) if k else None
            if own and len(WORD.findall(own.group(1))) <= _LABEL_WORDS:
                context = (own.start(1), own.end(1))  # "Severity: high. Disclosure: none."
            out.append(Sentence(a, b, context, said.endswith("?"), quoted))
        if parts and norm[start:end].rstrip().endswith(":"):
            pending = label if found and found.end() >= len(norm[:end].rstrip()) else parts[-1]
        elif parts and not bullet and _HEADING.match(text, start, end):
            pending = (parts[0][0], parts[-1][1])
    return out


_QUOTE = re.compile(r'"([^"\n]+)"')
_QUOTE_WORDS = 4
"""A quotation of at least this many words is a quoted passage (shorter: a term in quotes)."""


_SINGLE_QUOTE = re.compile(r"(?<![a-z0-9])'([^'\n]+?)'(?![a-z0-9])")
"""A passage in single quotes (an apostrophe inside a word, "can't", is no quote mark)."""


def quotes(norm: str) -> list[tuple[int, int]]:
    """The spans of quoted passages: text in double or single quotes of at least
    `_QUOTE_WORDS` words."""
    return [
        (m.start(), m.end())
        for pattern in (_QUOTE, _SINGLE_QUOTE)
        for m in pattern.finditer(norm)
        if len(WORD.findall(m.group(1))) >= _QUOTE_WORDS
    ]
