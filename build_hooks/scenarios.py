"""The build step that ships the scenario files inside the package: setuptools' `build_py`, which
also copies the repository's `scenarios/*.toml` (their one source) into the built package as
`peb_core/scenarios/`, where an installed package reads them (`peb_core.tasks.scenarios_dir`).
Named in pyproject.toml (`[tool.setuptools.cmdclass]`); an editable install reads the
repository's folder and gets no copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.command.build_py import build_py  # type: ignore[import-untyped]

SOURCE = Path("scenarios")
"""The scenario files, relative to the source tree (a build runs from its root)."""
TARGET = Path("peb_core", "scenarios")
"""Where they go in the built package."""


class BuildPy(build_py):  # type: ignore[misc]
    """`build_py`, then the scenario files into `<build_lib>/peb_core/scenarios/`, exactly
    those of the source tree (what an earlier build left there is removed first)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        sources = sorted(SOURCE.glob("*.toml"))
        if not sources:
            raise FileNotFoundError(f"{SOURCE.resolve()}: no scenario files (*.toml) to ship")
        target = Path(self.build_lib) / TARGET
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for source in sources:
            self.copy_file(str(source), str(target / source.name))
