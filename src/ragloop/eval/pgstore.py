"""The evaluation cache in PostgreSQL: the same ``get``/``put``/``close`` as the SQLite ``Store``
(``ragloop.eval.cache``), so every replica or machine running ``ragloop eval`` and
``ragloop experiment`` shares LLM replies, embeddings and the journal of finished jobs.

Like the SQLite store it keeps values as given (callers write digests, replies and scores, not
credentials) and it is best effort: a failing database costs cache hits, never the run.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from ragloop.errors import ConfigError
from ragloop.eval.cache import Store
from ragloop.redact import safe_url

__all__ = ["PgStore", "open_store"]

log = logging.getLogger("ragloop")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ragloop_eval_cache (ns TEXT NOT NULL, key TEXT NOT NULL, "
    "value BYTEA NOT NULL, created TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (ns, key))"
)
# a later value replaces an earlier one, as INSERT OR REPLACE does in the SQLite store (a run
# with resume off re-journals its jobs); keys are digests of everything a value depends on
_PUT = (
    "INSERT INTO ragloop_eval_cache (ns, key, value) VALUES (%s, %s, %s) "
    "ON CONFLICT (ns, key) DO UPDATE SET value = EXCLUDED.value, created = now()"
)


class PgStore:
    """Key/value rows in ``ragloop_eval_cache``; safe across threads and processes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = safe_url(url)  # for messages, like Store.path
        self._warned = False
        self._lock = threading.Lock()
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ConfigError(
                "a Postgres evaluation cache needs the [server] extra: "
                "pip install 'ragloop[server]', or unset RAGLOOP_DATABASE_URL"
            ) from None
        self._errors: tuple[type[BaseException], ...] = (psycopg.Error, OSError)
        try:
            self._pool: Any = ConnectionPool(
                url, min_size=1, max_size=4, open=True, timeout=10, kwargs={"autocommit": True}
            )
            with self._pool.connection() as conn:
                conn.execute(_SCHEMA)
        except Exception as exc:  # psycopg.OperationalError, pool timeouts
            pool = getattr(self, "_pool", None)
            if pool is not None:
                pool.close()
            raise ConfigError(
                f"cannot open the evaluation cache at {self.path} ({type(exc).__name__}): "
                "check RAGLOOP_DATABASE_URL, or turn the cache off (--no-cache)"
            ) from None

    def _failed(self, exc: BaseException) -> None:
        if not self._warned:
            self._warned = True
            log.warning("ragloop: cache %s unusable (%s); going on without it", self.path, exc)

    def get(self, ns: str, key: str) -> bytes | None:
        try:
            with self._pool.connection() as conn:
                row = conn.execute(
                    "SELECT value FROM ragloop_eval_cache WHERE ns = %s AND key = %s", (ns, key)
                ).fetchone()
        except self._errors as exc:
            self._failed(exc)
            return None
        return None if row is None else bytes(row[0])

    def put(self, ns: str, key: str, value: bytes) -> None:
        try:
            with self._pool.connection() as conn:
                conn.execute(_PUT, (ns, key, value))
        except self._errors as exc:
            self._failed(exc)

    def close(self) -> None:
        with self._lock:
            self._pool.close()


def open_store(folder: str | Path, database_url: str | None = None) -> Any:
    """The evaluation cache: Postgres at ``database_url`` when one is given (shared by every
    machine), else the SQLite ``Store`` in ``folder`` (the default)."""
    if database_url:
        return PgStore(database_url)

    return Store(folder)
