"""Where the package's own data is found: the repository it runs from, if any. From a source
checkout (an editable install, or the repository on the path) the scenario files and runs are
the repository's `scenarios/` and `runs/`; an installed package reads the scenarios shipped
inside it and keeps runs under the user's data folder (`peb_core.tasks.scenarios_dir`,
`peb_core.results.runs_root`)."""

from __future__ import annotations

import functools
from pathlib import Path

APP = "partial-evidence-bench"
"""The folder name under the user's data folder (`~/.local/share/partial-evidence-bench`)."""


@functools.cache
def checkout() -> Path | None:
    """The repository the package is imported from (the folder above `peb_core` holding
    `pyproject.toml` and `scenarios/`), or None for an installed package; looked for once per
    process (every load of the families asks)."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / "scenarios").is_dir() else None
