"""Run folders to scores: the one place the CLI, the reports and the notebooks get their numbers
from. A run is scored from its raw replies, kept in this process until its files change, and its
per-task scores are saved beside it (`_saved.py`)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .._gc import gc_paused
from .._registry import Live
from ..access import DEFAULT_FOLLOWUP, DEFAULT_INTERFACE, DEFAULT_PUSHES
from ..interventions import DEFAULT_INTERVENTION
from ..runs import (
    MANIFEST,
    MCP_PREFIX,
    RESPONSES,
    RunError,
    RunManifest,
    is_locked,
    iter_records,
    iter_run_records,
    iter_run_tasks,
    open_run_file,
    read_manifest,
    run_state,
    task_set,
)
from ..scoring import (
    Replies,
    RunReading,
    compare_scores,
    read_replies,
    record_messages,
    score_runs,
    scorecard,
    scorecard_keys,
    verdict,
)
from ..systems import ResponseRecord, cache_dir, sections_read
from ..tasks import ScenarioFile, load_families, scenario_hash
from ._discover import discover_runs, run_labels
from ._labels import declared, run_descriptions
from ._saved import SCORE_NOTES, SCORES, Untrusted, code_digest, read_frames, save_scores

SCORECARD_KEYS: Sequence[str] = Live(
    lambda: tuple(k for k in scorecard_keys() if k != "intervention")
)
"""The columns of `peb score --json`, in order: every metric of the registry (as it is when
read), each rate and mean followed by the bounds of its 95% interval (Wilson for rates, seeded
percentile bootstrap for means; null with an empty denominator); and `intervention` after
`interface` where a run scored has one (`scorecard_columns`)."""


def _concat(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Runs' scores as one frame: the `intervention` column, which only a run that had one
    carries (`_run_columns`), `none` for the others where some run has it (`with_intervention`)."""
    scores = pl.concat(frames, how="diagonal_relaxed")
    return with_intervention(scores) if "intervention" in scores.columns else scores


def scorecard_columns(card: pl.DataFrame) -> list[str]:
    """SCORECARD_KEYS, with `intervention` after `interface` where `card` has it (a run scored
    had an intervention, docs/benchmark.md §11)."""
    keys = list(SCORECARD_KEYS)
    if "intervention" in card.columns:
        keys.insert(keys.index("interface") + 1, "intervention")
    return keys


INTERVAL_KEYS: Sequence[str] = Live(
    lambda: tuple(k for k in SCORECARD_KEYS if k.endswith(("_ci_low", "_ci_high")))
)
"""The interval columns of SCORECARD_KEYS."""


@dataclass(frozen=True)
class LoadedRun:
    """One run folder read and scored: its manifest, its per-task scores (with the `protocol`
    column) and the warnings met reading it."""

    path: Path
    manifest: RunManifest
    scores: pl.DataFrame
    warnings: tuple[str, ...]


_Stamp = tuple[str, tuple[int, int, int] | None, tuple[int, int, int] | None, bool]
_RUNS: dict[Path, tuple[_Stamp, LoadedRun]] = {}
"""The one in-process memo: each run folder loaded, until its files or the scenarios change."""
_LOCK = threading.Lock()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def _task_params(manifest: RunManifest, current: str) -> str:
    """What a run's tasks are a function of: the scenarios it ran and every manifest field that
    is a generation parameter (families, seeds, distractors, tier, corpus size, limit; not
    repeats, which answer the same tasks again); runs with the same
    parameters share one generation of their tasks."""
    params = manifest.model_dump(
        mode="json",
        exclude={
            "system",
            "config",
            "package_version",
            "versions",
            "earlier_versions",
            "digests",
            "scenario_hash",
            "started_at",
            "finished_at",
            "counts",
            "repeats",
        },
    )
    return json.dumps([current, params], sort_keys=True)


def _run_stamp(run_dir: Path) -> _Stamp:
    return (
        scenario_hash(),
        _stamp(run_dir / MANIFEST),
        _stamp(run_dir / RESPONSES),
        is_locked(run_dir),
    )


def run_records(run_dir: Path) -> list[ResponseRecord]:
    """A run folder's valid records of its own system (corrupt, repeated and other systems'
    lines skipped)."""
    run_dir = Path(run_dir)
    return list(iter_records(run_dir / RESPONSES, read_manifest(run_dir).system, []))


def run_messages(run_dir: Path) -> list[tuple[ResponseRecord, str]]:
    """Each message with text a run's system wrote that scoring reads as prose, with its record
    (`scoring.record_messages`): every assistant message of an agent's episode, a one-shot
    reply under `--interface chat`; none for a run whose messages were not seen (an MCP
    client's)."""
    manifest = read_manifest(run_dir)
    if manifest.system.startswith(MCP_PREFIX):
        return []
    interface = run_interface(manifest)
    return [
        (record, text)
        for record in run_records(run_dir)
        for text in record_messages(record, interface)
    ]


def system_label(manifest: RunManifest) -> str:
    """A run's system as every table of runs names it: a model system by its model string (its
    config's `model`), `agent:` before it for an agent; a baseline by its name. The protocol,
    disclosure mode, contract source, follow-up mode and step budget are columns of their own."""
    model = manifest.config.get("model")
    if model is None:
        return manifest.system
    return f"agent:{model}" if is_agent_run(manifest) else str(model)


def run_interface(manifest: RunManifest) -> str:
    """How a run's system answered (`--interface`): its config's, `submit` for runs without
    one."""
    return str(manifest.config.get("interface", DEFAULT_INTERFACE))


def run_intervention(manifest: RunManifest) -> str:
    """The intervention around a run's system (`--intervention`, docs/benchmark.md §11): its
    config's, `none` for runs without one."""
    return str(manifest.config.get("intervention", DEFAULT_INTERVENTION))


def with_intervention(frame: pl.DataFrame) -> pl.DataFrame:
    """Scores or a scorecard with the `intervention` row key: the scores of a run folder carry
    it only where the run had an intervention (so the scores of every other run are what they
    were, bit for bit); a frame without it is all `none`, and one that mixes runs says `none`
    for those without."""
    if "intervention" not in frame.columns:
        return frame.with_columns(intervention=pl.lit(DEFAULT_INTERVENTION))
    return frame.with_columns(pl.col("intervention").fill_null(DEFAULT_INTERVENTION))


def messages_seen(manifest: RunManifest) -> bool:
    """Whether a run's front-end saw its agent's messages: every one's but an MCP client's
    (the server sees only its tool calls)."""
    return not manifest.system.startswith(MCP_PREFIX)


def followup_key(manifest: RunManifest) -> str:
    """A run's follow-up as its scorecard row names it: `-` for a one-shot run, else its mode,
    with `@N` when the user pushes back up to N times (`pressure@3`)."""
    if not is_agent_run(manifest):
        return "-"
    followup = str(manifest.config.get("followup", DEFAULT_FOLLOWUP))
    pushes = manifest.config.get("pushes", DEFAULT_PUSHES)
    return followup if pushes == DEFAULT_PUSHES else f"{followup}@{pushes}"


def is_agent_run(manifest: RunManifest) -> bool:
    """Whether a run is an agent's: each reply an episode (the kind its manifest records)."""
    return manifest.kind == "episodes"


def _replies(p: _Pending) -> tuple[Replies, list[str]]:
    """A run folder's records that count read as a stream into the rows scoring needs
    (`scoring.read_replies`), and the warnings met."""
    manifest = p.manifest
    warnings = []
    if manifest.scenario_hash != p.current:
        warnings.append(f"{p.run_dir}: was run on other scenario files; scored on the current ones")
    keys = set(task_set(p.run_dir, manifest, p.families))
    records = iter_run_records(p.run_dir, manifest, keys, warnings)
    return read_replies(records, p.families, run_reading(p.run_dir.name, manifest)), warnings


def run_reading(run: str, manifest: RunManifest) -> RunReading:
    """How a run's replies are read (`scoring.RunReading`), as its manifest says: its system,
    repeats, protocol, interface, whether its messages were seen, and for an agent's run its
    traces scored and its replies judged against grant schedules by replaying them. `run`: its
    name, as the scores name it."""
    agent = is_agent_run(manifest)
    return RunReading(
        run,
        manifest.system,
        episodes=agent,
        replays=agent,
        repeats=manifest.repeats,
        protocol=run_protocol(manifest),
        interface=run_interface(manifest),
        seen=messages_seen(manifest),
    )


def run_protocol(manifest: RunManifest) -> str | None:
    """The prompt protocol a run recorded (None: none, as for most baselines)."""
    protocol = manifest.config.get("protocol")
    return protocol if isinstance(protocol, str) else None


def _run_columns(scores: pl.DataFrame, run_dir: Path, manifest: RunManifest) -> pl.DataFrame:
    """A run folder's per-task scores with what its manifest says of the run (its protocol,
    tier, disclosure mode, step budget and state); a running run's tasks not done yet are
    pending, not missing: left out until done."""
    state = run_state(run_dir, manifest)
    if state == "running":
        scores = scores.filter(pl.col("status") != "missing")
    config = manifest.config
    contract = declared(manifest, manifest.system)["contract"] or "-"
    intervention = run_intervention(manifest)
    if intervention != DEFAULT_INTERVENTION:  # a column only where a run has one: see below
        scores = scores.with_columns(intervention=pl.lit(intervention))
    return scores.with_columns(
        protocol=pl.lit(str(config.get("protocol", "-"))),
        tier=pl.lit(manifest.tier),
        interface=pl.lit(run_interface(manifest)),
        disclosure=pl.lit(str(config.get("disclosure", "-"))),
        contract=pl.lit(contract),
        followup=pl.lit(followup_key(manifest)),
        max_steps=pl.lit(config.get("max_steps"), dtype=pl.Int64),
        run_state=pl.lit(state),
    )


def _hash_file(digest: Any, path: Path) -> None:
    """Feed a run file's bytes to `digest` (`-` when missing), read in pieces; a RunError
    naming it if it cannot be read or is not a regular file."""
    try:
        handle = open_run_file(path)
    except (FileNotFoundError, NotADirectoryError):
        digest.update(b"-")
        return
    with handle:
        try:
            for piece in iter(lambda: handle.read(1 << 20), b""):
                digest.update(piece)
        except OSError as exc:
            raise RunError(f"{path}: cannot read ({exc.strerror or exc})") from None


@dataclass
class _Pending:
    """A run folder whose saved scores are missing or untrusted: what scoring it needs."""

    run_dir: Path
    manifest: RunManifest
    families: dict[str, ScenarioFile]
    current: str
    key: str
    places: list[tuple[Path, Path]]
    stamp: _Stamp
    rejected: list[str]


def load_runs(dirs: Sequence[Path]) -> list[LoadedRun]:
    """Run folders read and scored, in order (see `load_run`). The runs that must be scored
    share one generation of their tasks per set of generation parameters. A RunError (one line
    naming the file) for a folder that cannot be read or scored."""
    loaded, _ = _load_runs(dirs, skip_unreadable=False)
    return [loaded[i] for i in range(len(dirs))]


def _load_runs(
    dirs: Sequence[Path], *, skip_unreadable: bool
) -> tuple[dict[int, LoadedRun], dict[int, str]]:
    """`load_runs` by position in `dirs`; with `skip_unreadable`, a folder that cannot be read
    or scored (a RunError: a manifest that fails validation, a family no longer among the
    scenarios, a file that cannot be read) is left out, with why, by its position."""
    loaded: dict[int, LoadedRun] = {}
    pending: dict[int, _Pending] = {}
    left_out: dict[int, str] = {}

    def unreadable(i: int, exc: RunError) -> None:
        if not skip_unreadable:
            raise exc
        left_out[i] = str(exc)

    for i, run_dir in enumerate(map(Path, dirs)):
        try:
            found = _find(run_dir)
        except RunError as exc:
            unreadable(i, exc)
            continue
        if isinstance(found, LoadedRun):
            loaded[i] = found
        else:
            pending[i] = found
    groups: dict[str, list[int]] = {}
    for i, p in pending.items():
        groups.setdefault(_task_params(p.manifest, p.current), []).append(i)
    with gc_paused():  # the tasks and records built to score are freed as they are let go
        for members in groups.values():
            read: dict[int, tuple[Replies, list[str]]] = {}
            for i in members:
                try:
                    read[i] = _replies(pending[i])
                except RunError as exc:
                    unreadable(i, exc)
            if not read:
                continue
            first = pending[next(iter(read))]
            try:  # one generation of the tasks for every run that shares them
                tasks = iter_run_tasks(first.run_dir, first.manifest, first.families)
                scored = score_runs(tasks, [r for r, _ in read.values()], first.families)
            except RunError as exc:
                for i in read:
                    unreadable(i, exc)
                continue
            for (i, (_, warnings)), scores in zip(read.items(), scored, strict=True):
                p = pending[i]
                scores = _run_columns(scores, p.run_dir, p.manifest)
                if p.manifest.state != "running":  # a running run's scores change by the second
                    save_scores(p.places, p.key, scores, warnings)
                loaded[i] = _remember(
                    p.run_dir, p.stamp, p.manifest, scores, [*p.rejected, *warnings]
                )
    return loaded, left_out


def load_run(run_dir: Path) -> LoadedRun:
    """A run folder read and scored. Kept in this process until its manifest, its responses or
    the scenario files change (keyed by their modification times, sizes and inodes), so a notebook
    re-rendering a selection does not reparse and rescore every run. Also saved on disk, keyed by
    the sha256 of the code, the scenarios it ran, the folder and its two files' bytes: beside the
    responses (SCORES), or under `$PEB_CACHE_DIR/run-scores` when the folder is read-only; so a
    restarted notebook rescores only runs that changed, or all after a change of code. Saved
    scores are read only when their key is this run's and the parquet file's sha256 is the one
    saved with it; saved scores that fail that check (damaged, or copied from another run) are
    rescored and rewritten, with a warning."""
    return load_runs([run_dir])[0]


def _find(run_dir: Path) -> LoadedRun | _Pending:
    """A run folder from the memo or its saved scores, or what scoring it needs."""
    stamp, folder = _run_stamp(run_dir), run_dir.resolve()
    with _LOCK:
        hit = _RUNS.get(folder)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    manifest = read_manifest(run_dir)
    families = load_families()
    used = [families[f] for f in manifest.families if f in families]
    current = scenario_hash(used, manifest.tier, sections_read(manifest.config.get("protocol")))
    digest = hashlib.sha256(f"{code_digest()}\0{current}\0".encode() + os.fsencode(folder))
    for name in (MANIFEST, RESPONSES):
        digest.update(b"\0")
        _hash_file(digest, run_dir / name)
    key = digest.hexdigest()
    cached = cache_dir() / "run-scores" / key[:32]
    places = [
        (run_dir / SCORES, run_dir / SCORE_NOTES),
        (cached.with_suffix(".parquet"), cached.with_suffix(".json")),
    ]
    rejected = []
    for parquet, notes in places:
        try:
            found = read_frames(notes, key, [parquet])
        except Untrusted as exc:
            rejected.append(f"saved scores {exc}; rescored")
            break
        if found is not None:
            warnings = [str(w) for w in found[0].get("warnings", [])]
            return _remember(run_dir, stamp, manifest, found[1][0], warnings)
    return _Pending(run_dir, manifest, families, current, key, places, stamp, rejected)


def _remember(
    run_dir: Path, stamp: _Stamp, manifest: RunManifest, scores: pl.DataFrame, warnings: list[str]
) -> LoadedRun:
    loaded = LoadedRun(path=run_dir, manifest=manifest, scores=scores, warnings=tuple(warnings))
    with _LOCK:
        _RUNS[run_dir.resolve()] = (stamp, loaded)
    return loaded


@dataclass(frozen=True)
class ReadableScores:
    """The per-task scores of the run folders that could be read and scored (`scores`, as
    `score_run_dirs` gives them; None when none could), the warnings met on the way, and each
    folder left out (`left_out`: the folder as given, and why it could not be read)."""

    scores: pl.DataFrame | None
    warnings: list[str]
    left_out: dict[Path, str]


def score_readable(dirs: Sequence[Path]) -> ReadableScores:
    """`score_run_dirs` over a view of many runs, where one that cannot be read must not hide
    the rest (a manifest edited by hand, a family no longer among the scenarios, a file that
    cannot be read): every folder that can be read and scored is, and each one that cannot is
    left out with why."""
    return _scored(dirs, skip_unreadable=True)


def _scored(dirs: Sequence[Path], *, skip_unreadable: bool) -> ReadableScores:
    labels = run_labels(dirs)
    loaded, left_out = _load_runs(list(labels), skip_unreadable=skip_unreadable)
    runs = {label: loaded[i] for i, label in enumerate(labels.values()) if i in loaded}
    said = run_descriptions([(n, r.manifest, system_label(r.manifest)) for n, r in runs.items()])
    frames = [
        r.scores.with_columns(run=pl.lit(label), run_label=pl.lit(said[label]))
        for label, r in runs.items()
    ]
    return ReadableScores(
        scores=_concat(frames) if frames else None,
        warnings=[w for r in runs.values() for w in r.warnings],
        left_out={d: left_out[i] for i, d in enumerate(labels) if i in left_out},
    )


def score_run_dirs(
    dirs: Sequence[Path], *, skip_unreadable: bool = False
) -> tuple[pl.DataFrame, list[str]]:
    """Per-task scores of each distinct run folder (recomputed from its responses; a folder
    given twice is scored once), and the warnings met on the way: corrupt, repeated or foreign
    records skipped, runs made on other scenario files, saved scores rescored. The `run` column
    is the folder's `run_labels` label, so two folders of the same name stay apart, and the
    `run_label` column what sets the run apart from the others given (`_labels.differing_labels`:
    `agent_cave followup=pressure`); the prompt protocol (from the manifest; `-` for systems
    without one) is a column. Each run is read
    through `load_runs`, so unchanged runs are not rescored. A folder that cannot be read or
    scored is a RunError naming its file, or with `skip_unreadable` (`score_readable`) a
    warning, the folder left out; a RunError still if no folder is left."""
    read = _scored(dirs, skip_unreadable=skip_unreadable)
    left_out = [f"{why}; left out" for why in read.left_out.values()]
    if read.scores is None:
        raise RunError("no run could be read" + (f": {left_out[0]}" if left_out else ""))
    return read.scores, [*left_out, *read.warnings]


def scorecard_of(dirs: Sequence[Path]) -> tuple[pl.DataFrame, list[str]]:
    """The scorecard (`scorecard_columns`) of run folders, and the warnings."""
    scores, warnings = score_run_dirs(dirs)
    card = scorecard(scores)
    return card.select(scorecard_columns(card)), warnings


def run_record(run_dir: Path, family: str, task_id: str, repeat: int = 0) -> ResponseRecord | None:
    """The record a run folder holds for one task (in one of its repeats), or None; the
    records before it are read and let go."""
    run_dir = Path(run_dir)
    records = iter_records(run_dir / RESPONSES, read_manifest(run_dir).system, [])
    return next((r for r in records if r.key == (family, task_id, repeat)), None)


_RESPONSES_TO_TASK = pl.Schema(
    {
        "run": pl.String(),
        "path": pl.String(),
        "system": pl.String(),
        "protocol": pl.String(),
        "contract": pl.String(),
        "status": pl.String(),
        "verdict": pl.String(),
        "answer_score": pl.Float64(),
        "gap_score": pl.Float64(),
        "claimed": pl.String(),
        "schema_violations": pl.String(),
    }
)


def responses_to_task(runs_root: Path, task_id: str, family: str | None = None) -> pl.DataFrame:
    """Every stored run's reply to one task (runs below `runs_root` that cover it; a run that
    cannot be read is passed over), with its verdict and scores: run, path (for `run_record`),
    system, protocol, contract (where an agent's came from, `-` for one-shot runs: a task of
    the agent tiers is answered with its contract given and found), status, verdict,
    answer_score, gap_score, the completeness it claimed and its schema violations."""
    rows = []
    found = discover_runs(runs_root)
    loaded, _ = _load_runs(found, skip_unreadable=True)  # one unreadable run hides no other
    for i, run in loaded.items():
        run_dir = found[i]
        scored = run.scores.filter(pl.col("task_id") == task_id)
        if family is not None:
            scored = scored.filter(pl.col("family") == family)
        if scored.is_empty():
            continue
        scored = scored.with_columns(verdict())
        for row in scored.iter_rows(named=True):
            rows.append(
                {
                    "run": str(run_dir.relative_to(runs_root)),
                    "path": str(run_dir),
                    "system": row["system"],
                    "protocol": row["protocol"],
                    "contract": row["contract"],
                    "status": row["status"],
                    "verdict": row["verdict"],
                    "answer_score": row["answer_score"],
                    "gap_score": row["gap_score"],
                    "claimed": row["claimed"],
                    "schema_violations": "; ".join(row["schema_violations"]),
                }
            )
    return pl.DataFrame(rows, schema=_RESPONSES_TO_TASK)


def compare_runs(dir_a: Path, dir_b: Path) -> pl.DataFrame:
    """`compare_scores` of two run folders, each scored from its responses."""
    (scores_a, _), (scores_b, _) = (score_run_dirs([Path(d)]) for d in (dir_a, dir_b))
    return compare_scores(scores_a, scores_b)
