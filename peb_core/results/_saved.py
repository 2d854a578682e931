"""Saved per-task scores: a run's scores written beside it (or in the cache) with the key they were
computed for and the sha256 of the parquet file, and read back only when both match."""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from .._json import read_json
from ..runs import RunError, open_run_file

SCORES, SCORE_NOTES = "scores.parquet", "scores.json"
"""A run's per-task scores, saved beside its responses by the first `load_run`, with the key
they were computed for, the sha256 of the parquet file and the warnings met."""


MAX_NOTES_BYTES = 1 << 20
"""More than any notes file holds (a key, digests and the warnings, at most a dozen or so of
which name a line each): longer notes are not ours, and fail to parse."""

_CODE_DIGEST: list[str] = []


def code_digest() -> str:
    """sha256 of the package's source, every subpackage included: a disk-cached frame is only
    reused by the same code."""
    if not _CODE_DIGEST:
        digest = hashlib.sha256()
        package = Path(__file__).resolve().parent.parent
        for path in sorted(package.rglob("*.py")):
            name = path.relative_to(package).as_posix()
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
        _CODE_DIGEST.append(digest.hexdigest())
    return _CODE_DIGEST[0]


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Untrusted(Exception):
    """Saved frames that are there but cannot be trusted; the message says which and why."""


def write_frames(
    notes: Path, key: str, frames: dict[Path, pl.DataFrame], extra: dict[str, Any]
) -> None:
    """Each frame to its parquet file, then `notes`: `key`, the sha256 of each file's bytes and
    `extra`. Every file is written atomically, the notes last."""
    digests = {}
    for path, frame in frames.items():
        buffer = io.BytesIO()
        frame.write_parquet(buffer)
        data = buffer.getvalue()
        _write_atomically(path, data)
        digests[path.name] = hashlib.sha256(data).hexdigest()
    _write_atomically(notes, json.dumps({**extra, "key": key, "sha256": digests}).encode())


def read_frames(
    notes: Path, key: str, paths: Sequence[Path]
) -> tuple[dict[str, Any], list[pl.DataFrame]] | None:
    """The notes and frames `_write_frames` saved for `key`; None when none are saved for it (no
    notes, or notes of another key). Raises Untrusted when the notes cannot be read, a file is
    not a regular one (`runs.open_run_file`) or its bytes are not those the notes name (damaged,
    or copied from elsewhere; hashed in pieces before they are read whole): the parquet reader
    is never given bytes it was not meant to read, since damaged ones can crash it."""
    try:
        with open_run_file(notes) as handle:
            saved = read_json(handle.read(MAX_NOTES_BYTES))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # RunError too: not a regular file
        raise Untrusted(f"{notes}: unreadable ({exc})") from None
    if not isinstance(saved, dict) or saved.get("key") != key:
        return None
    digests = saved.get("sha256")
    frames = []
    for path in paths:
        try:
            with open_run_file(path) as handle:
                digest = hashlib.sha256()
                for piece in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(piece)
                if not isinstance(digests, dict) or digests.get(path.name) != digest.hexdigest():
                    raise Untrusted(f"{path}: not the file {notes.name} was saved with")
                handle.seek(0)
                data = handle.read()
        except RunError as exc:
            raise Untrusted(f"{path}: unreadable ({exc})") from None
        except OSError as exc:
            raise Untrusted(f"{path}: unreadable ({exc.strerror or exc})") from None
        try:
            frames.append(pl.read_parquet(io.BytesIO(data)))
        except pl.exceptions.PolarsError as exc:
            raise Untrusted(f"{path}: unreadable ({exc})") from None
    return saved, frames


def save_scores(
    places: Sequence[tuple[Path, Path]], key: str, scores: pl.DataFrame, warnings: list[str]
) -> None:
    for parquet, notes in places:
        try:
            parquet.parent.mkdir(parents=True, exist_ok=True)
            write_frames(notes, key, {parquet: scores}, {"warnings": warnings})
            return
        except OSError:
            continue  # a read-only run folder: try the cache; if neither, we rescore next time
