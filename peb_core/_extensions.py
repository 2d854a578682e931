"""Extensions from installed packages: a package declares entry points in the group
`partial_evidence_bench` (as pytest's plugins and inspect_ai's extensions do), each naming a
module to import or a function to call with no arguments, whose registry lines (`register_tier`,
`register_tool`, `register_metric`, `register_protocol`, `register_option`, ...) add its
entries. Every front-end loads them once (`load_extensions`) before it reads a name: the `peb`
command (and so `peb mcp serve`), the workbench and the inspect task, so `pip install
my-peb-extension` makes its entries appear in each of them, or in none."""

from __future__ import annotations

from importlib.metadata import entry_points
from types import ModuleType

GROUP = "partial_evidence_bench"
"""The entry point group an extension declares (`[project.entry-points.partial_evidence_bench]`
in its pyproject.toml: `my_extension = "my_extension"`)."""


class ExtensionError(ValueError):
    """An installed extension that failed to load; one line naming it and why."""


_loaded: dict[str, object] | None = None


def load_extensions() -> dict[str, object]:
    """Load every installed extension once (a later call returns what the first loaded), in
    the order of their entry point names: a module is imported, a function called with no
    arguments. What each entry point loaded, by name; an ExtensionError (one line) for one
    that fails, and the next call tries again."""
    global _loaded
    if _loaded is not None:
        return _loaded
    loaded: dict[str, object] = {}
    for point in sorted(entry_points(group=GROUP), key=lambda p: (p.name, p.value)):
        try:
            found = point.load()
            if callable(found) and not isinstance(found, ModuleType | type):
                found()
        except Exception as exc:
            why = next(iter(str(exc).splitlines()), "")
            raise ExtensionError(
                f"extension {point.name} ({point.value}) failed to load: "
                f"{type(exc).__name__}: {why}"[:500]
            ) from exc
        loaded[point.name] = found
    _loaded = loaded
    return loaded
