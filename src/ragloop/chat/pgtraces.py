"""The trace store in PostgreSQL: the same ``Trace`` rows as the SQLite store, for N replicas.

Columns match ``ragloop.chat.traces`` (JSON ones are JSONB); rows are redacted before they are
written, like the SQLite store's. Every call takes a short connection: a server records one
row per turn, and the store must not hold a connection per replica between turns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ragloop.chat.traces import Trace, redact
from ragloop.errors import RagloopError
from ragloop.graph.adapt import json_safe
from ragloop.redact import safe_url

__all__ = ["PgTraceStore", "safe_url"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ragloop_turns (
    id BIGSERIAL PRIMARY KEY, ts TIMESTAMPTZ NOT NULL, thread TEXT, source TEXT,
    question TEXT NOT NULL, original TEXT, answer TEXT, contexts JSONB, citations JSONB,
    scores JSONB, steps JSONB, actions JSONB, stop_reason TEXT, iterations INTEGER, model TEXT,
    latency_ms DOUBLE PRECISION, llm_calls INTEGER, tokens INTEGER
);
CREATE INDEX IF NOT EXISTS ragloop_turns_ts ON ragloop_turns (ts);
CREATE INDEX IF NOT EXISTS ragloop_turns_thread ON ragloop_turns (thread);
ALTER TABLE ragloop_turns ADD COLUMN IF NOT EXISTS checkpoint TEXT;
"""
_JSON = ("contexts", "citations", "scores", "steps", "actions")


class PgTraceStore:
    """Append-only turns table ``ragloop_turns``; any number of writer processes at once."""

    def __init__(self, url: str, *, env: Mapping[str, str] | None = None) -> None:
        self.url = url
        self.env = env
        with self._connect() as conn:
            conn.execute(_SCHEMA)

    def _connect(self) -> Any:
        import psycopg  # the [server] extra: needed only when traces go to Postgres

        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise RagloopError(
                f"cannot open the trace store at {safe_url(self.url)}: "
                f"{redact(str(exc).strip(), self.env)}; check RAGLOOP_DATABASE_URL"
            ) from None

    def add(self, trace: Trace) -> int:
        """Write one turn (redacted) and return its row id."""
        from psycopg.types.json import Jsonb

        fields = [k for k in Trace.__dataclass_fields__ if k not in ("id", "ts")]
        data = redact({k: getattr(trace, k) for k in fields}, self.env)
        for col in _JSON:
            data[col] = Jsonb(json_safe(data[col]))
        data["ts"] = datetime.fromisoformat(trace.ts) if trace.ts else datetime.now(UTC)
        cols = ", ".join(data)
        marks = ", ".join(["%s"] * len(data))
        with self._connect() as conn:
            row = conn.execute(
                f"INSERT INTO ragloop_turns ({cols}) VALUES ({marks}) RETURNING id",
                list(data.values()),
            ).fetchone()
        return int(row[0])

    def has_turn(self, thread: str, checkpoint: str, question: str, answer: str) -> bool:
        """Whether the turn saved at ``checkpoint`` of ``thread`` has its trace here."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT 1 FROM ragloop_turns WHERE thread = %s AND checkpoint = %s",
                (thread, checkpoint),
            ).fetchone()
        return row is not None

    def turns(self, since: str | None = None, thread: str | None = None) -> list[Trace]:
        """Stored turns in time order, optionally from ``since`` (ISO) on and of one thread."""
        sql, args = "SELECT * FROM ragloop_turns WHERE true", list[Any]()
        if since:
            sql += " AND ts >= %s"
            args.append(datetime.fromisoformat(since))
        if thread:
            sql += " AND thread = %s"
            args.append(thread)
        from psycopg.rows import dict_row

        with self._connect() as conn:
            conn.row_factory = dict_row  # type: ignore[assignment]
            rows = conn.execute(sql + " ORDER BY ts, id", args).fetchall()
        out = []
        for row in rows:
            data = dict(row)
            data["ts"] = data["ts"].isoformat(timespec="microseconds")
            for col in _JSON:
                if isinstance(data[col], str):
                    data[col] = json.loads(data[col])
                data[col] = data[col] if data[col] is not None else ({} if col == "scores" else [])
            out.append(Trace(**data))
        return out

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM ragloop_turns").fetchone()[0])
