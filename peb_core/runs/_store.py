"""Run folders on disk: `<dir>/manifest.json` (what the run was) and `<dir>/responses.jsonl`
(one record per task, appended as each task finishes)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from .._gc import gc_paused
from ..systems import ResponseRecord
from ..tasks import ScenarioFile, Task, Tier, generate_tasks

MANIFEST = "manifest.json"
RESPONSES = "responses.jsonl"


class RunCounts(BaseModel):
    """How a run went: tasks, replies obtained (`ok`) and errors, tokens and cost (None when
    any reply's price is unknown)."""

    model_config = ConfigDict(extra="forbid")

    n_tasks: int
    ok: int = 0
    error: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _earlier_counts(cls, data: Any) -> Any:
        """Manifests written before replies were read at scoring time counted `invalid` replies
        apart; they were replies, so they count as `ok`."""
        if isinstance(data, dict) and "invalid" in data:
            data = dict(data)
            data["ok"] = data.get("ok", 0) + data.pop("invalid")
        return data


class RunManifest(BaseModel):
    """What a run was: enough to regenerate its tasks and rescore its responses."""

    model_config = ConfigDict(extra="forbid")

    system: str
    config: dict[str, Any] = {}
    families: list[str]
    seeds: list[int] | None
    """None: each family's canonical seeds."""
    distractors: int = 0
    """Neutral authorized documents added to each task (a generation parameter)."""
    tier: Tier = "paper"
    """`paper` or `hard` (a generation parameter)."""
    limit: int | None = None
    """Only the first `limit` tasks (a smoke run); a later run into the folder may extend it."""
    package_version: str
    scenario_hash: str
    started_at: str
    finished_at: str | None = None
    counts: RunCounts


class RunError(ValueError):
    """A run folder that cannot be used as asked; one line."""


def package_version() -> str:
    try:
        return version("partial-evidence-bench")
    except PackageNotFoundError:
        return "0+unknown"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_manifest(run_dir: Path) -> RunManifest:
    path = run_dir / MANIFEST
    try:
        return RunManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise RunError(f"{run_dir}: not a run folder (no {MANIFEST})") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"])) or "<file>"
        raise RunError(f"{path}: {where}: {err['msg']}") from None


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    tmp = run_dir / (MANIFEST + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, run_dir / MANIFEST)


def read_records(path: Path) -> tuple[list[ResponseRecord], list[str]]:
    """The records of a responses file, and one line per corrupt or repeated record skipped."""
    records: list[ResponseRecord] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    if not path.exists():
        return records, problems
    with path.open("rb") as handle, gc_paused():
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = ResponseRecord.model_validate_json(line)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(map(str, err["loc"]))
                detail = f"{where}: {err['msg']}" if where else err["msg"]
                problems.append(f"{path}:{number}: corrupt record skipped ({detail})")
                continue
            key = (record.family, record.task_id)
            if key in seen:
                problems.append(f"{path}:{number}: repeated record for {record.task_id} skipped")
                continue
            seen.add(key)
            records.append(record)
    return records, problems


def run_tasks(
    run_dir: Path, manifest: RunManifest, families: dict[str, ScenarioFile]
) -> list[Task]:
    """Regenerate the tasks a run covers."""
    missing = [f for f in manifest.families if f not in families]
    if missing:
        raise RunError(f"{run_dir}: family {missing[0]!r} is not among the loaded scenarios")
    return generate_tasks(
        [families[f] for f in manifest.families],
        manifest.seeds,
        manifest.distractors,
        manifest.tier,
    )[: manifest.limit]


def count_records(n_tasks: int, records: Sequence[ResponseRecord]) -> RunCounts:
    costs = [r.usage.cost_usd for r in records]
    return RunCounts(
        n_tasks=n_tasks,
        ok=sum(r.status == "ok" for r in records),
        error=sum(r.status == "error" for r in records),
        prompt_tokens=sum(r.usage.prompt_tokens or 0 for r in records),
        completion_tokens=sum(r.usage.completion_tokens or 0 for r in records),
        cost_usd=sum(c for c in costs if c is not None) if None not in costs else None,
    )
