"""The README's and the user guide's commands work from a fresh clone with no venv activated, and
their tables are what their commands print: each `peb score` command shown alone in a bash
block is run on the checked-in runs, and its output must equal the block that follows. Every
`peb`, headless workbench and inspect command the pages (and docs/extending.md) show is read by
the front-end it names: its subcommand, flags and registry values must be ones that front-end
takes today."""

from __future__ import annotations

import glob
import itertools
import re
import shlex
from pathlib import Path

import pytest
from cli import peb_process

from peb_core.frontends.cli import build_parser
from peb_core.frontends.workbench import headless_parser
from peb_core.runs import OptionError, option_value

ROOT = Path(__file__).resolve().parents[1]
SHOWN = re.compile(r"```bash\n(\.venv/bin/peb score [^\n]*)\n```\n\n```\n(.*?)```", re.S)
BASH = re.compile(r"```bash\n(.*?)```", re.S)
PAGES = {
    "README.md": ("the Table 4 reproduction and the surface cues against small models", 2),
    "docs/guide.md": ("the Table 4, hard-tier and embedded-model scorecards", 3),
}
"""Each page, the scorecards it is expected to show, and how many."""
SHOWING = (*PAGES, "docs/extending.md")
"""The pages whose commands are read by their front-ends."""
INSPECT = ".venv/bin/inspect eval partial_evidence_bench/partial_evidence "


def _expand(command: str) -> list[str]:
    words = []
    for word in shlex.split(command)[1:]:
        words.extend(sorted(glob.glob(word, root_dir=ROOT)) if "*" in word else [word])
    return words


def _text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def test_every_command_names_the_venv_or_dev() -> None:
    """`peb` and `python` are not on PATH until the venv is activated: the pages say
    `.venv/bin/` (or `./dev`, which sets the venv up)."""
    for page in PAGES:
        commands = [line for b in BASH.findall(_text(page)) for line in b.splitlines() if line]
        assert len(commands) > 10, page
        bare = [c for c in commands if not c.startswith((".venv/bin/", "./dev "))]
        assert not bare, (page, bare)


@pytest.mark.parametrize("page", PAGES)
def test_every_scorecard_shown_is_what_its_command_prints(page: str) -> None:
    shown = SHOWN.findall(_text(page))
    expected, n = PAGES[page]
    assert len(shown) >= n, f"{page}: expected {expected}"
    for command, table in shown:
        result = peb_process(*_expand(command), timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout == table, f"{page}: the table of `{command}` is stale"


def _commands(prefix: str) -> list[tuple[str, list[str]]]:
    """Each command line of the pages' bash blocks that starts with `prefix`: its page, and its
    words after the prefix, comments left out."""
    found = []
    for page in SHOWING:
        for block in BASH.findall(_text(page)):
            for line in block.splitlines():
                if line.startswith(prefix):
                    found.append((page, shlex.split(line.removeprefix(prefix), comments=True)))
    return found


def test_every_peb_command_shown_is_one_peb_takes() -> None:
    shown = _commands(".venv/bin/peb ")
    assert len(shown) > 40
    parser = build_parser()
    for page, argv in shown:
        try:
            parser.parse_args(argv)
        except (Exception, SystemExit) as exc:
            raise AssertionError(f"{page}: peb {shlex.join(argv)}: {exc}") from None


def test_every_headless_workbench_command_shown_is_one_it_takes() -> None:
    shown = _commands(".venv/bin/python notebooks/workbench.py -- ")
    guide = "docs/guide.md"
    inline = re.findall(r"`\.venv/bin/python notebooks/workbench\.py -- ([^`]*)`", _text(guide))
    shown += [(guide, shlex.split(line)) for line in inline]
    assert shown
    for page, argv in shown:
        try:
            headless_parser().parse_args(argv)
        except (Exception, SystemExit) as exc:
            raise AssertionError(f"{page}: workbench.py -- {shlex.join(argv)}: {exc}") from None


def test_every_inspect_task_option_shown_is_a_run_option_it_takes() -> None:
    """`-T name=value`: a run option the declaration offers to inspect, its value one that
    option takes."""
    from peb_core.frontends.inspect.task import task_signature

    taken = task_signature().parameters
    shown = _commands(INSPECT)
    assert len(shown) > 5
    for page, argv in shown:
        for flag, value in itertools.pairwise(argv):
            if flag != "-T":
                continue
            name, _, raw = value.partition("=")
            assert name in taken, f"{page}: -T {value}: not an option of the task"
            try:
                option_value(name, raw)
            except OptionError as exc:
                raise AssertionError(f"{page}: -T {value}: {exc}") from None
