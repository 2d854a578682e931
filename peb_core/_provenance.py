"""Provenance: the versions of this package, of Python and of the packages replies depend on,
recorded in what the benchmark writes (run manifests, the dataset card)."""

from __future__ import annotations

import platform
from contextlib import suppress
from importlib.metadata import PackageNotFoundError, version

PACKAGE = "partial-evidence-bench"
VERSIONED = ("litellm", "llama-cpp-python", "pydantic", "polars")
"""The packages whose installed versions a manifest records."""


def package_version() -> str:
    """The installed version of partial-evidence-bench (`0+unknown` if it is not installed)."""
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return "0+unknown"


def installed_versions() -> dict[str, str]:
    """Python's version and each installed `VERSIONED` package's."""
    found = {"python": platform.python_version()}
    for name in VERSIONED:
        with suppress(PackageNotFoundError):
            found[name] = version(name)
    return found
