"""Disk cache: one SQLite file (WAL, busy timeout) holding LLM replies, embeddings and the
journal of finished (row, metric) jobs, keyed by stable digests.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from ragloop.errors import ConfigError

DEFAULT_CACHE_DIR = Path(".ragloop/cache")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
log = logging.getLogger("ragloop")


def digest(value: Any) -> str:
    """A stable sha256 of a JSON-able value (unknown objects by their address-free repr)."""

    def fallback(obj: Any) -> Any:
        if isinstance(obj, SecretStr):
            return "***"
        if hasattr(obj, "__dataclass_fields__"):
            return {k: getattr(obj, k) for k in obj.__dataclass_fields__}
        return _ADDRESS.sub("", repr(obj))

    text = json.dumps(value, sort_keys=True, default=fallback, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class Store:
    """A small key/value store in one SQLite file: WAL mode, busy timeout, safe across threads.

    Reads and writes are best effort: a failing disk costs cache hits, never the run.
    """

    def __init__(self, folder: str | Path = DEFAULT_CACHE_DIR):
        self.folder = Path(folder)
        self.path = self.folder / "ragloop-cache.sqlite"
        self._lock = threading.Lock()
        self._warned = False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30.0
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS kv (ns TEXT, key TEXT, value BLOB, "
                "created REAL, PRIMARY KEY (ns, key))"
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the cache in {self.folder} ({exc}): pass another cache_dir "
                "(--cache-dir) or turn the cache off (cache=False, --no-cache)"
            ) from None

    def _failed(self, exc: sqlite3.Error) -> None:
        if not self._warned:
            self._warned = True
            log.warning("ragloop: cache %s unusable (%s); going on without it", self.path, exc)

    def get(self, ns: str, key: str) -> bytes | None:
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT value FROM kv WHERE ns=? AND key=?", (ns, key)
                ).fetchone()
        except sqlite3.Error as exc:
            self._failed(exc)
            return None
        return None if row is None else bytes(row[0])

    def put(self, ns: str, key: str, value: bytes) -> None:
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO kv VALUES (?, ?, ?, ?)", (ns, key, value, time.time())
                )
        except sqlite3.Error as exc:
            self._failed(exc)

    def close(self) -> None:
        with self._lock:
            self._db.close()


@dataclass
class Usage:
    """Counters shared by the wrappers of one run."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_hits: int = 0
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
