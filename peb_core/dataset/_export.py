"""Writing the release into a folder: the configurations, then the card (`README.md`)."""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from .._provenance import package_version
from ..tasks import DEFAULT_CONTRACT, TIERS, ContractSource, ScenarioFile, Tier, scenario_hash
from ._card import dataset_card
from ._configs import Release, write_configs

CARD = "README.md"


def export_dataset(
    out: Path,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None = None,
    distractors: int = 0,
    tiers: Sequence[Tier] | None = None,
    corpus_size: int | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> Release:
    """Every template of `families` at `seeds` (default: each family's canonical seeds) with
    `distractors` on each of `tiers` (default: every registered tier; `corpus_size` documents on
    a tier with corpora, None for its default, and its contract where `contract` says), written
    with its card
    into `out`, which must be a new or empty folder. All is written into a scratch folder beside
    it (`.<name>.<pid>.tmp`) that then takes its place, or, when `out` is an existing empty
    folder (`.`, a user's working folder), whose files are then moved into it; so a failure
    leaves no partial release. Scratch folders left by an export that was killed (their pid is
    gone) are removed first."""
    tiers = tuple(TIERS) if tiers is None else tuple(tiers)
    target = out.resolve()
    _remove_stale_scratch(target)
    scratch = target.parent / f".{target.name}.{os.getpid()}.tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        release = Release(
            configs=write_configs(
                scratch, families, seeds, distractors, tiers, corpus_size, contract
            ),
            families=tuple(families),
            seeds=None if seeds is None else tuple(seeds),
            distractors=distractors,
            tiers=tuple(tiers),
            package_version=package_version(),
            scenario_hash=scenario_hash(families),
            corpus_size=corpus_size,
            contract=contract,
        )
        (scratch / CARD).write_text(dataset_card(release), encoding="utf-8")
        if target.is_dir():  # empty (the caller checks): keep the folder, fill it
            for item in scratch.iterdir():
                os.replace(item, target / item.name)
            scratch.rmdir()
        else:
            os.replace(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return release


def _remove_stale_scratch(target: Path) -> None:
    """Remove the scratch folders of exports to `target` whose process is gone (killed)."""
    for scratch in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        pid = scratch.name[len(target.name) + 2 : -len(".tmp")]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
