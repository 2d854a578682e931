"""Where runs are and what to call them: the runs root, every run folder below a folder, the
runs a report covers, and a distinct label for each run folder."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from .._places import APP, checkout
from ..runs import MANIFEST, SWEEP, RunError, run_status, sweep_runs


def runs_root() -> Path:
    """Where run folders live: `$PEB_RUNS_DIR`; else the repository's `runs/` (the checked-in
    runs) when the package runs from its source checkout; else `runs` in the user's data folder
    (`$XDG_DATA_HOME/partial-evidence-bench/runs`, by default under `~/.local/share`), never
    inside an installed package. The CLI's and every notebook's default."""
    override = os.environ.get("PEB_RUNS_DIR")
    if override:
        return Path(override)
    root = checkout()
    return root / "runs" if root else platformdirs.user_data_path(APP) / "runs"


SCRATCH = "scratch"
"""The folder under a runs root that runs started from the workbench go to: kept out of a
report unless picked by name."""


def discover_runs(root: Path, *, scratch: bool = True) -> list[Path]:
    """Every run folder below `root` (a folder holding a manifest), sorted; without those under
    `root/scratch` if `scratch` is False."""
    found = sorted(p.parent for p in root.rglob(MANIFEST))
    if scratch:
        return found
    return [d for d in found if SCRATCH not in d.relative_to(root).parts[:1]]


def expand_runs(paths: Sequence[Path], problems: list[str] | None = None) -> list[Path]:
    """Each of `paths` as the run folders it stands for: a run folder itself; a sweep's folder,
    the runs it lists (`runs.SWEEP`), in its order (a line in `problems` for each it lists
    twice or that was not made: `runs.sweep_runs`); any other folder, every run folder below
    it. A RunError for a path that is none of these, or a sweep none of whose runs was made."""
    found: list[Path] = []
    for path in paths:
        try:
            if (path / MANIFEST).is_file():
                found.append(path)
            elif (path / SWEEP).is_file():
                listed = sweep_runs(path, problems)
                if not listed:
                    raise RunError(
                        f"{path}: no run its {SWEEP} lists was made (none holds {MANIFEST}); "
                        "the same peb sweep makes them"
                    )
                found += listed
            elif path.is_dir() and (below := discover_runs(path)):
                found += below
            else:
                raise RunError(f"{path}: not a run folder (no {MANIFEST}) nor a folder of runs")
        except OSError as exc:  # a folder this user may not read
            raise RunError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return found


def select_runs(
    picks: Sequence[str | Path] | Path | None = None, *, include_unclean: bool = False
) -> tuple[list[Path], list[str]]:
    """The run folders a report covers, and one line per run left out.

    Args:
        picks: None for every run under `runs_root()` but its scratch area; a folder for every
            run below it but its scratch area; or a list of run folders, folders of runs, and
            globs (`runs/smollm2-*`), each taken as given (a scratch run is taken if named).
        include_unclean: keep runs that are not finished with a reply for every task (errors,
            missing tasks, still running, stopped early); by default they are left out, since
            their numbers are not a system's, as is a run whose folder cannot be read (its
            line says why).
    """
    left_out: list[str] = []
    if picks is None or isinstance(picks, Path):
        root = runs_root() if picks is None else picks
        found = discover_runs(root, scratch=False) if root.is_dir() else []
    else:
        found = []
        for pick in map(str, picks):
            matches = sorted(map(Path, glob.glob(pick))) if glob.has_magic(pick) else [Path(pick)]
            if not matches:
                raise RunError(f"{pick}: matches no run folder")
            found += expand_runs(matches, left_out)
    dirs = list(dict.fromkeys(d.resolve() for d in found))
    if include_unclean:
        return dirs, left_out
    kept = []
    for d in dirs:
        try:
            status = run_status(d)
        except RunError as exc:  # one run that cannot be read hides no other
            left_out.append(f"{d}: left out, cannot be read: {exc}")
            continue
        if status.clean:
            kept.append(d)
        else:
            left_out.append(f"{d}: left out ({status.summary()}); include it on purpose to show it")
    return kept, left_out


def run_labels(dirs: Sequence[Path]) -> dict[Path, str]:
    """A distinct, readable label for each distinct run folder among `dirs` (a folder given
    twice, by any path, counts once; the first path given is the key): its name, or as many of
    its last path parts as tell it apart from the others (`a/run`, `b/run`)."""
    first: dict[Path, Path] = {}
    for d in dirs:
        first.setdefault(Path(d).resolve(), Path(d))
    parts = {resolved: resolved.parts for resolved in first}
    depth = dict.fromkeys(first, 1)

    def label(resolved: Path) -> str:
        return Path(*parts[resolved][-depth[resolved] :]).as_posix()

    while True:
        by_label: dict[str, list[Path]] = {}
        for resolved in first:
            by_label.setdefault(label(resolved), []).append(resolved)
        clashes = [r for group in by_label.values() if len(group) > 1 for r in group]
        if not clashes:
            return {first[r]: label(r) for r in first}
        for resolved in clashes:
            depth[resolved] += 1
