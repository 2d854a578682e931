"""requirements.lock (what `./dev setup` installs, made by `./dev lock`) agrees with pyproject.toml:
every requirement of the package and of each extra is pinned, within its range, with hashes."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = (ROOT / "requirements.lock").read_text(encoding="utf-8")
PIN = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?: ; .+?)? \\\n"  # name==version ; marker \
    r"(?:    --hash=\S+(?: \\)?\n)+",  # one or more hashes
    re.M,
)
"""A pinned package, its version (a marker may restrict the pin to some Pythons) and its hashes."""


def _pins() -> dict[str, list[Version]]:
    """Each package's pinned versions (several when markers split them by Python), by name."""
    pins: dict[str, list[Version]] = {}
    for name, pinned in PIN.findall(LOCK):
        pins.setdefault(canonicalize_name(name), []).append(Version(pinned))
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return [Requirement(r) for r in [*project["dependencies"], *extras]]


def test_every_pin_has_hashes() -> None:
    entries = re.findall(r"^[A-Za-z0-9][^\s]*==", LOCK, re.M)
    assert len(PIN.findall(LOCK)) == len(entries) > 50
    assert "\n#    ./dev lock\n" in LOCK  # how to make it again, at its top


def test_every_requirement_is_pinned_within_its_range() -> None:
    pins = _pins()
    for requirement in _requirements():
        found = pins.get(canonicalize_name(requirement.name))
        assert found, f"{requirement.name} is not in requirements.lock: run ./dev lock"
        for pinned in found:
            assert requirement.specifier.contains(pinned, prereleases=True), (
                f"requirements.lock pins {requirement.name}=={pinned}, outside {requirement}"
            )


def test_the_withdrawn_litellm_releases_are_excluded() -> None:
    (litellm,) = [r for r in _requirements() if r.name == "litellm"]
    assert not any(litellm.specifier.contains(v) for v in ("1.82.7", "1.82.8"))
    assert litellm.specifier.contains("1.82.6") and litellm.specifier.contains("1.110.2")
