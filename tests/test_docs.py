"""The docs cite only what exists. Across README.md, docs/*.md and benchmarks/RESULTS.md (their
whole text), the docstrings and comments of every tracked Python file, and pyproject.toml's
comments: every Markdown link must reach a file (and a heading, where it names one), every
repository path cited (`peb_core/...`, `tests/...`, `benchmarks/...`, `docs/...`,
`notebooks/...`, `scenarios/...`, `runs/...`, or a module of the package by its path inside it,
such as `tasks/_toolkit.py`) must exist (a pattern such as `scenarios/<id>.toml` must match a
file), and every section of docs/benchmark.md cited by number (`§9.2`, `section 3`,
`sections 2 to 6`) must have a heading of that number, with the title given beside it where one
is (`§10.2, "Any agent over MCP"`) and a text naming the topic given beside it (`§3, trace
metrics`); a section cited by its title alone (`docs/benchmark.md, "Any agent over MCP"`) must
have a heading of that title; and a test named in backquotes (`test_...`) must be defined under
tests/. A path a document's own command writes (`--out P`) is not a citation, nor what is
under it."""

from __future__ import annotations

import ast
import glob
import io
import re
import subprocess
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = "docs/benchmark.md"

TOP = ("peb_core", "tests", "benchmarks", "docs", "notebooks", "scenarios", "runs")
"""Folders of the repository a path may be cited from."""
PACKAGE = tuple(sorted(p.parent.name for p in (ROOT / "peb_core").glob("*/__init__.py")))
"""Subpackages of peb_core a path may be cited from, inside the package (`tasks/_toolkit.py`):
such a path is a module or folder (it ends in `.py` or `/`)."""
MADE = {"peb_core/scenarios": "the wheel's copy of scenarios/*.toml, made by the build"}
"""Paths cited that are made, not checked in, and why."""

_PATH = re.compile(
    r"(?<![\w./<>*-])"
    r"(?P<path>(?:" + "|".join(TOP) + r")/[\w.*<>/-]*"
    r"|(?:" + "|".join(PACKAGE) + r")/[\w<>*/-]*(?:\.py\b|/))"
)
_WRITES = re.compile(r"(?:--out|--log-dir|-w)[ =](?P<path>[^\s`'\"]+)")
_SECTION = re.compile(
    r"(?:§ ?|\bsections? )(?P<first>\d+(?:\.\d+)?)"
    r"(?P<more>(?:(?:, | and | or | to |-)\d+(?:\.\d+)?)*)"
    r'(?:, "(?P<title>[^"]+)"|, (?P<topic>[a-z]+(?: [a-z]+){0,2})(?=[):]))?'
)
_TEST = re.compile(r"`(?P<name>test_\w+)`")
_TITLED = re.compile(r'benchmark\.md, "(?P<title>[^"]+)"')
_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?: \"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6} +(?P<title>.+?) *$", re.M)
_NUMBERED = re.compile(r"^#{2,3} +(?P<number>\d+(?:\.\d+)?)\.? +(?P<title>.+?) *$", re.M)


@dataclass(frozen=True)
class Text:
    """Text that cites: where it is (`file:line`) and what it says."""

    where: str
    text: str


def _slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it."""
    heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return heading.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a Markdown file's headings."""
    return {_slug(m["title"]) for m in _HEADING.finditer(_without_fences(markdown))}


def _without_fences(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)


@dataclass(frozen=True)
class Section:
    """A numbered section of docs/benchmark.md: its heading's title, and its text up to the
    next numbered heading."""

    title: str
    text: str


def sections(spec: str) -> dict[str, Section]:
    """docs/benchmark.md's numbered sections by number."""
    found = list(_NUMBERED.finditer(spec))
    ends = [m.start() for m in found[1:]] + [len(spec)]
    return {
        m["number"]: Section(m["title"], spec[m.start() : end])
        for m, end in zip(found, ends, strict=True)
    }


def written(text: str) -> list[str]:
    """The paths a text's commands write (`--out P`, `--log-dir P`, `-w P`)."""
    return [m["path"].rstrip("/") for m in _WRITES.finditer(text)]


def _exists(path: str) -> bool:
    """Whether a cited path names a file or folder here (a pattern: at least one)."""
    if path in MADE or path.rstrip("/") in MADE:
        return True
    pattern = re.sub(r"<[^>]*>", "*", path.rstrip("/"))
    if any(c in pattern for c in "*?["):
        return bool(glob.glob(pattern, root_dir=ROOT))
    return (ROOT / pattern).exists()


def path_problems(text: Text, writes: list[str]) -> Iterator[str]:
    """Each path `text` cites that does not exist (nor is written by one of `writes`)."""
    for match in _PATH.finditer(text.text):
        path = match["path"].rstrip(".,:;")
        if not path.split("/", 1)[1].strip("/"):
            continue  # the folder itself (`runs/`)
        if any(path == w or path.startswith(w + "/") for w in writes):
            continue
        inside = path.split("/", 1)[0] in PACKAGE
        if _exists(path) or (inside and _exists(f"peb_core/{path}")):
            continue
        yield f"{text.where}: cites {path}, which does not exist"


def section_problems(text: Text, numbered: dict[str, Section]) -> Iterator[str]:
    """Each section of docs/benchmark.md `text` cites that has no heading of its number, whose
    heading is not the title given beside it (`§10.2, "Any agent over MCP"`), or whose own text
    (its subsections aside) does not name the topic given beside it (`§3, trace metrics`); and
    each one cited by title alone (`docs/benchmark.md, "Any agent over MCP"`) that no numbered
    heading names."""
    for match in _SECTION.finditer(text.text):
        cited = [match["first"], *re.findall(r"\d+(?:\.\d+)?", match["more"] or "")]
        for number in cited:
            if number not in numbered:
                yield f"{text.where}: cites section {number} of {SPEC}, which has none"
        section = numbered.get(cited[0])
        if section is None:
            continue
        if match["title"] and match["title"].lower() not in section.title.lower():
            yield (
                f'{text.where}: cites section {cited[0]} as "{match["title"]}"; its heading is '
                f'"{section.title}"'
            )
        if match["topic"] and match["topic"].lower() not in section.text.lower():
            yield (
                f"{text.where}: cites section {cited[0]} for {match['topic']}, which its text "
                "does not name"
            )
    for match in _TITLED.finditer(text.text):
        if not any(match["title"].lower() in s.title.lower() for s in numbered.values()):
            yield f'{text.where}: cites "{match["title"]}" of {SPEC}, which no heading names'


def unknown_tests(text: Text, defined: set[str]) -> Iterator[str]:
    """Each test `text` names (`test_...` in backquotes) that no test module defines."""
    for match in _TEST.finditer(text.text):
        if match["name"] not in defined:
            yield f"{text.where}: names {match['name']}, which no test defines"


def defined_tests(files: list[Path]) -> set[str]:
    """The test functions the Python files under tests/ among `files` define."""
    tests = [f for f in files if f.is_relative_to(ROOT / "tests")]
    return {
        node.name
        for f in tests
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def link_problems(text: Text, source: Path) -> Iterator[str]:
    """Each Markdown link in `text` (a file at `source`) to a file that does not exist, or to a
    heading its file does not have."""
    for match in _LINK.finditer(text.text):
        target = match["target"]
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        linked = (source.parent / path).resolve() if path else source
        if not linked.exists():
            yield f"{text.where}: links to {target}, which does not exist"
        elif (
            anchor
            and linked.suffix == ".md"
            and anchor not in anchors(linked.read_text(encoding="utf-8"))
        ):
            yield f"{text.where}: links to {target}, a heading {path or 'it'} does not have"


def _paragraphs(where: str, text: str, first: int = 1) -> Iterator[Text]:
    """`text` as paragraphs (runs of lines without a blank one), each named by its first line,
    so a citation wrapped over two lines is read whole."""
    lines = text.split("\n")
    start = 0
    for i, line in enumerate([*lines, ""]):
        if not line.strip():
            if i > start:
                yield Text(f"{where}:{first + start}", " ".join(s.strip() for s in lines[start:i]))
            start = i + 1


def markdown_texts(path: Path, root: Path = ROOT) -> Iterator[Text]:
    """A Markdown file's paragraphs."""
    yield from _paragraphs(str(path.relative_to(root)), path.read_text(encoding="utf-8"))


def python_texts(path: Path, root: Path = ROOT) -> Iterator[Text]:
    """A Python file's docstrings (a string standing as a statement: a module's, class's,
    function's or attribute's) and comments (a run of comment lines read as one)."""
    source = path.read_text(encoding="utf-8")
    where = str(path.relative_to(root))
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield from _paragraphs(where, node.value.value, node.lineno)
    comments: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments.append((token.start[0], token.string.lstrip("#").strip()))
    yield from _comment_runs(where, comments)


def toml_texts(path: Path, root: Path = ROOT) -> Iterator[Text]:
    """A TOML file's comments (a run of comment lines read as one; a `#` in a string aside)."""
    comments = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        quote = None
        for i, char in enumerate(line):
            if quote is None and char == "#":
                comments.append((number, line[i + 1 :].strip()))
                break
            if char in "\"'" and quote in (None, char):
                quote = None if quote == char else char
    yield from _comment_runs(str(path.relative_to(root)), comments)


def _comment_runs(where: str, comments: list[tuple[int, str]]) -> Iterator[Text]:
    """Comments on consecutive lines as one text, named by its first line."""
    run: list[tuple[int, str]] = []
    for number, comment in [*comments, (-1, "")]:
        if run and number != run[-1][0] + 1:
            yield Text(f"{where}:{run[0][0]}", " ".join(c for _, c in run))
            run = []
        run.append((number, comment))


def markdown_files() -> list[Path]:
    """The pages: README.md, docs/*.md and benchmarks/RESULTS.md."""
    docs = sorted((ROOT / "docs").glob("*.md"))
    return [ROOT / "README.md", *docs, ROOT / "benchmarks" / "RESULTS.md"]


def python_files() -> list[Path]:
    """Every tracked Python file (peb_core, tests, benchmarks, notebooks, docs, the build)."""
    listed = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).exists()]


def problems() -> list[str]:
    """Every problem the check finds in the repository."""
    numbered = sections((ROOT / SPEC).read_text(encoding="utf-8"))
    tests = defined_tests(python_files())
    found: list[str] = []
    for path in markdown_files():
        text = path.read_text(encoding="utf-8")
        writes = written(text)
        for part in markdown_texts(path):
            found += path_problems(part, writes)
            found += section_problems(part, numbered)
            found += unknown_tests(part, tests)
            found += link_problems(part, path)
    commented = [python_texts(p) for p in python_files()]
    commented.append(toml_texts(ROOT / "pyproject.toml"))
    for texts in commented:
        for part in texts:
            found += path_problems(part, [])
            found += section_problems(part, numbered)
            found += unknown_tests(part, tests)
    return list(dict.fromkeys(found))


def test_every_link_cited_path_and_section_exists() -> None:
    found = problems()
    assert not found, "\n".join(found)


SPEC_TEXT = """# The benchmark

## 1. Tasks

A task.

## 3. Scoring

**Trace metrics (agents).** Read from the trace.

### 3.1 Repeats

K runs.
"""


def test_the_check_finds_a_bad_link_path_and_section(tmp_path: Path) -> None:
    """The check can fail: each bad citation below is found, and nothing else."""
    numbered = sections(SPEC_TEXT)
    assert sorted(numbered) == ["1", "3", "3.1"]
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n## Two words\n", encoding="utf-8")
    text = Text(
        "t.md:1",
        "See [the page](page.md), [its heading](page.md#two-words), [a web page](https://x.org), "
        "[a typo](pgae.md), [no such heading](page.md#three-words); peb_core/scoring/_metrics.py, "
        "tasks/_toolkit.py, scenarios/<id>.toml, runs/baselines/*, peb_core/nosuch.py, "
        "tests/systems/test_agent.py, access/_nosuch.py, scenarios/<id>.yaml, runs/mine, "
        "runs/theirs/a; §1, section 3.1, sections 1 to 3 (§3, trace metrics), §2, section 4.2, "
        'sections 3 and 9, §3, "Scoring", §1, "Scoring" (§1, trace metrics); docs/benchmark.md, '
        '"Repeats", docs/benchmark.md, "Sweeps"; `test_a_toy_option_declared_once_reaches_every_'
        "front_end`, `test_a_toy_option_declared_twice`.",
    )
    found = [
        *link_problems(text, tmp_path / "t.md"),
        *path_problems(text, written("peb run --out runs/mine && peb score runs/mine")),
        *section_problems(text, numbered),
        *unknown_tests(text, defined_tests(python_files())),
    ]
    assert found == [
        "t.md:1: links to pgae.md, which does not exist",
        "t.md:1: links to page.md#three-words, a heading page.md does not have",
        "t.md:1: cites peb_core/nosuch.py, which does not exist",
        "t.md:1: cites tests/systems/test_agent.py, which does not exist",
        "t.md:1: cites access/_nosuch.py, which does not exist",
        "t.md:1: cites scenarios/<id>.yaml, which does not exist",
        "t.md:1: cites runs/theirs/a, which does not exist",
        "t.md:1: cites section 2 of docs/benchmark.md, which has none",
        "t.md:1: cites section 4.2 of docs/benchmark.md, which has none",
        "t.md:1: cites section 9 of docs/benchmark.md, which has none",
        't.md:1: cites section 1 as "Scoring"; its heading is "Tasks"',
        "t.md:1: cites section 1 for trace metrics, which its text does not name",
        't.md:1: cites "Sweeps" of docs/benchmark.md, which no heading names',
        "t.md:1: names test_a_toy_option_declared_twice, which no test defines",
    ]


def test_the_check_reads_docstrings_comments_and_wrapped_lines(tmp_path: Path) -> None:
    """Citations in a docstring, an attribute's docstring, a run of comments and a TOML comment
    are read, a path or section wrapped over two lines whole; a string that is code is not."""
    source = tmp_path / "module.py"
    source.write_text(
        '"""A module (docs/benchmark.md\n§9.2) beside peb_core/nosuch_a.py."""\n\n'
        'PATH = "peb_core/nosuch_b.py"  # a comment on peb_core/nosuch_c.py\n'
        '"""The attribute: section\n7.5."""\n\n'
        "# a run of comments that cites\n# tests/nosuch_d.py\n",
        encoding="utf-8",
    )
    config = tmp_path / "config.toml"
    config.write_text('key = "#peb_core/nosuch_e.py"  # see §4\n', encoding="utf-8")
    numbered = sections(SPEC_TEXT)
    texts = [*python_texts(source, tmp_path), *toml_texts(config, tmp_path)]
    found = [p for t in texts for p in [*path_problems(t, []), *section_problems(t, numbered)]]
    assert sorted(found) == sorted(
        [
            "module.py:1: cites peb_core/nosuch_a.py, which does not exist",
            "module.py:1: cites section 9.2 of docs/benchmark.md, which has none",
            "module.py:4: cites peb_core/nosuch_c.py, which does not exist",
            "module.py:5: cites section 7.5 of docs/benchmark.md, which has none",
            "module.py:8: cites tests/nosuch_d.py, which does not exist",
            "config.toml:1: cites section 4 of docs/benchmark.md, which has none",
        ]
    )
