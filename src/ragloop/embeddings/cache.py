"""Vectors kept on disk by content hash, so re-indexing unchanged chunks embeds nothing.

One SQLite file (stdlib; transactions make every write atomic and concurrent writers
safe), keyed by (model id, sha256 of the embedded text); a vector is stored as float32
bytes. A row whose length does not match the asked dimension is ignored, not trusted.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import numpy as np

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    key BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID
"""
_CHUNK = 500  # below SQLite's bound-parameter limit


def text_key(text: str) -> bytes:
    """The content hash a vector is stored under."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class VectorCache:
    """A persistent map (model id, text) -> vector in ``path`` (a SQLite file)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def get_many(self, model: str, dim: int, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those ``texts`` that have one (right dimension only)."""
        by_key = {text_key(t): t for t in texts}
        keys = list(by_key)
        found: dict[str, np.ndarray] = {}
        db = self._connect()
        try:
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                    [model, *part],
                )
                for key, blob in rows:
                    if len(blob) == 4 * dim:
                        found[by_key[bytes(key)]] = np.frombuffer(blob, dtype=np.float32)
        finally:
            db.close()
        return found

    def put_many(self, model: str, texts: list[str], vectors: np.ndarray) -> None:
        """Store vectors for texts in one transaction (all or nothing)."""
        rows = [
            (model, text_key(t), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        db = self._connect()
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        finally:
            db.close()

    def count(self, model: str | None = None) -> int:
        """How many vectors are stored (for one model, or all)."""
        db = self._connect()
        try:
            if model is None:
                return int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
            sql = "SELECT COUNT(*) FROM vectors WHERE model = ?"
            return int(db.execute(sql, (model,)).fetchone()[0])
        finally:
            db.close()
