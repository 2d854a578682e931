"""Our response cache: SQLite (WAL) keyed by sha256 of everything that shapes a reply."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """`$PEB_CACHE_DIR`, else `~/.cache/peb`."""
    return Path(os.environ.get("PEB_CACHE_DIR") or Path.home() / ".cache" / "peb")


def cache_key(request: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a request (model, api_base, messages, params, format)."""
    blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """Raw completion payloads by request key."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(folder / "responses.sqlite", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL never corrupts the file; it only skips an fsync per commit (which
        # blocked the event loop ~1 ms per reply). A power cut may lose the last replies cached.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT)")
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO replies (key, value) VALUES (?, ?)", (key, json.dumps(value))
        )
        self._db.commit()
