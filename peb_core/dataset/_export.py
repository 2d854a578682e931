"""Writing the release into a folder: the configurations, then the card (`README.md`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from .._provenance import package_version
from ..tasks import TIERS, ScenarioFile, Tier, scenario_hash
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
) -> Release:
    """Every template of `families` at `seeds` (default: each family's canonical seeds) with
    `distractors` on each of `tiers` (default: every registered tier; `corpus_size` documents on
    a tier with corpora, None for its default), written with its card
    into `out`, which must be a new or empty folder. All is written into a scratch folder beside
    it that then takes its place, so a failure leaves no partial release."""
    tiers = tuple(TIERS) if tiers is None else tuple(tiers)
    target = out.resolve()
    scratch = target.parent / f".{target.name}.{os.getpid()}.tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        release = Release(
            configs=write_configs(scratch, families, seeds, distractors, tiers, corpus_size),
            families=tuple(families),
            seeds=None if seeds is None else tuple(seeds),
            distractors=distractors,
            tiers=tuple(tiers),
            package_version=package_version(),
            scenario_hash=scenario_hash(families),
            corpus_size=corpus_size,
        )
        (scratch / CARD).write_text(dataset_card(release), encoding="utf-8")
        os.replace(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return release
