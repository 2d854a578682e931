"""Loading families: the scenarios folder, parsing and checking one file, every family of a
folder (re-read when a file changes), and the hash that ties a run to what its families declare."""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Iterable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from pydantic import ValidationError

from .._places import checkout
from ._checks import consistency_problems
from ._scenario import ScenarioFile
from ._tiers import TIERS, Tier


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message is one line naming file and field."""


def scenarios_dir() -> Traversable:
    """The folder of families: `$PEB_SCENARIOS_DIR`; else the repository's `scenarios/` when
    the package runs from its source checkout; else the copy a built package ships inside it
    (`peb_core/scenarios`, read with importlib.resources)."""
    override = os.environ.get("PEB_SCENARIOS_DIR")
    if override:
        return Path(override)
    root = checkout()
    return root / "scenarios" if root else resources.files("peb_core") / "scenarios"


def load_scenario(path: Path) -> ScenarioFile:
    """Parse and validate one family file, or raise ScenarioError with one line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: not a readable TOML file ({exc})") from None
    return _parse(path, data)


def _parse(path: Traversable, data: bytes) -> ScenarioFile:
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: not a readable TOML file ({exc})") from None
    try:
        spec = ScenarioFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _loc(err["loc"]) or "<file>"
        got = f" (got {err['input']!r})" if not isinstance(err["input"], dict | list) else ""
        raise ScenarioError(f"{path}: {where}: {err['msg']}{got}") from None
    problems = list(consistency_problems(spec))
    if problems:
        raise ScenarioError(f"{path}: {problems[0]}")
    stem = path.name.removesuffix(".toml")
    if spec.id != stem:
        raise ScenarioError(f"{path}: id: expected the file name {stem!r}, got {spec.id!r}")
    return spec


def _loc(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_PARSED: dict[tuple[str, tuple[tuple[str, bytes], ...]], dict[str, ScenarioFile]] = {}
"""The last `_PARSED_MAX` parses, keyed by folder and its files as read (name and bytes): the
same bytes read again find their parse without a digest."""
_PARSED_MAX = 8


def load_families(folder: Traversable | None = None) -> dict[str, ScenarioFile]:
    """All families in `folder` (default `scenarios_dir()`), keyed by id, in file-name order.

    The files are read on every call and parsed again whenever their bytes change (a parse is
    kept per folder content), so an edit to a scenario file takes effect in a running process,
    and what is loaded is always what `scenario_hash` describes."""
    where = folder or scenarios_dir()
    paths = sorted(
        (p for p in where.iterdir() if p.name.endswith(".toml")) if where.is_dir() else (),
        key=lambda p: p.name,
    )
    if not paths:
        raise ScenarioError(f"{where}: no scenario files (*.toml) found")
    files: list[tuple[Traversable, bytes]] = []
    for path in paths:
        try:
            files.append((path, path.read_bytes()))
        except OSError as exc:
            raise ScenarioError(f"{path}: not a readable TOML file ({exc})") from None
    key = (str(where), tuple((path.name, data) for path, data in files))
    hit = _PARSED.get(key)
    if hit is None:
        hit = {spec.id: spec for spec in (_parse(path, data) for path, data in files)}
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = hit
    return dict(hit)


def families_with_template(
    families: Iterable[ScenarioFile], template_id: str
) -> list[ScenarioFile]:
    """The families that define a template id (normally one)."""
    return [f for f in families if any(t.id == template_id for t in f.templates)]


RUN_SECTIONS = frozenset({"owners"})
"""Family-file sections that only some runs read, whatever their tier: `[owners]`, read by a
protocol that asks for a next step (`structured_gap@2`) and by the `escalate` tool. A run's
scenario hash leaves them out unless it reads them (`scenario_hash`'s `reads`), so adding or
editing owners changes no run that does not use them."""


def scenario_hash(
    families: Iterable[ScenarioFile] | None = None,
    tier: Tier | None = None,
    reads: Iterable[str] = (),
) -> str:
    """sha256 of what the given families declare (default: every family in the scenarios
    folder), in id order: it ties a run to the scenarios it used, and changes with anything
    that can change a task or its scoring, whatever the file's comments or layout. For a run on
    `tier`, the sections that tier does not read (those other tiers declare in
    `TierSpec.sections` and it does not) are left out, so editing a tier's text changes no run
    of a tier that does not read it (a paper run's hash leaves `[hard]` and `[agent]` out); so
    are the `RUN_SECTIONS` a run does not read (`reads`: those it does). Without a tier, every
    section counts but `[prose]`, which is always left out: it changes no task, only how a
    message in prose is read, and like the rules for reading a reply (docs/benchmark.md §2) it
    applies to every run scored after it changes."""
    specs = load_families().values() if families is None else families
    left_out = frozenset(
        section
        for other in TIERS.values()
        if tier is not None and other.name != tier
        for section in other.sections
    ) - frozenset(TIERS[tier].sections if tier is not None and tier in TIERS else ())
    left_out |= {"prose"}
    if tier is not None:
        left_out |= RUN_SECTIONS - frozenset(reads)
    digest = hashlib.sha256()
    for spec in sorted(specs, key=lambda s: s.id):
        digest.update(spec.id.encode() + b"\0" + spec.declared_without(left_out) + b"\0")
    return digest.hexdigest()
