"""The README's commands work from a fresh clone with no venv activated, and its tables are what
its commands print: each `peb score` command shown alone in a bash block is run on the
checked-in runs, and its output must equal the block that follows."""

from __future__ import annotations

import glob
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SHOWN = re.compile(r"```bash\n(\.venv/bin/peb score [^\n]*)\n```\n\n```\n(.*?)```", re.S)
BASH = re.compile(r"```bash\n(.*?)```", re.S)


def _expand(command: str) -> list[str]:
    words = []
    for word in shlex.split(command)[1:]:
        words.extend(sorted(glob.glob(word, root_dir=ROOT)) if "*" in word else [word])
    return words


def test_every_command_names_the_venv_or_dev() -> None:
    """`peb` and `python` are not on PATH until the venv is activated: the README says
    `.venv/bin/` (or `./dev`, which sets the venv up)."""
    commands = [line for block in BASH.findall(README) for line in block.splitlines() if line]
    assert len(commands) > 20
    bare = [c for c in commands if not c.startswith((".venv/bin/", "./dev "))]
    assert not bare, bare


def test_every_scorecard_in_the_readme_is_what_its_command_prints() -> None:
    shown = SHOWN.findall(README)
    assert len(shown) >= 3, "expected the Table 4, hard-tier and model scorecards"
    for command, table in shown:
        result = subprocess.run(
            [sys.executable, "-m", "peb_core", *_expand(command)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == table, f"README table of `{command}` is stale"
