"""Our response cache: SQLite (WAL) keyed by sha256 of everything that shapes a reply."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from .._warn import warn


def cache_dir() -> Path:
    """`$PEB_CACHE_DIR`, else `~/.cache/peb`."""
    return Path(os.environ.get("PEB_CACHE_DIR") or Path.home() / ".cache" / "peb")


def cache_key(request: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a request (model, api_base, messages, params, format)."""
    blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """Raw completion payloads by request key. A fault of the SQLite file (corrupt, read-only,
    a full disk) turns this cache off with one warning (PebWarning): from then on every lookup
    misses and nothing is stored, so a reply is never lost to the cache."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / "responses.sqlite"
        self._db: sqlite3.Connection | None = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self._path, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL never corrupts the file; it only skips an fsync per commit
            # (which blocked the event loop ~1 ms per reply). A power cut may lose the last
            # replies cached.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT)"
            )
            self._db.commit()
        except (sqlite3.Error, OSError) as exc:
            self._fault(exc)

    def get(self, key: str) -> dict[str, Any] | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError, TypeError) as exc:
            self._fault(exc)
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, value) VALUES (?, ?)",
                (key, json.dumps(value)),
            )
            self._db.commit()
        except sqlite3.Error as exc:
            self._fault(exc)

    def _fault(self, exc: Exception) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        warn(f"reply cache {self._path} is unusable ({exc}); going on without it")
