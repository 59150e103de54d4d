"""SQLite trace store of served turns (WAL, busy timeout); secrets are redacted before writing."""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragloop.errors import RagloopError
from ragloop.redact import REDACTED, redact, secret_values

__all__ = [
    "REDACTED",
    "Trace",
    "TraceStore",
    "record_turn",
    "redact",
    "secret_values",
    "trace_from_result",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, thread TEXT, source TEXT,
    question TEXT NOT NULL, original TEXT, answer TEXT, contexts TEXT, citations TEXT,
    scores TEXT, steps TEXT, actions TEXT, stop_reason TEXT, iterations INTEGER, model TEXT,
    latency_ms REAL, llm_calls INTEGER, tokens INTEGER
);
CREATE INDEX IF NOT EXISTS turns_ts ON turns (ts);
CREATE INDEX IF NOT EXISTS turns_thread ON turns (thread);
"""
_JSON_COLUMNS = ("contexts", "citations", "scores", "steps", "actions")
_CONTEXT_KEYS = ("id", "text", "source", "title", "origin", "retriever", "grade")


@dataclass
class Trace:
    """One served turn as stored: standalone question, contexts with ids, answer, path, scores."""

    question: str
    answer: str
    thread: str = ""
    original: str = ""
    contexts: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    scores: dict[str, float | None] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = ""
    iterations: int = 0
    model: str = ""
    latency_ms: float = 0.0
    llm_calls: int = 0
    tokens: int = 0
    source: str = "chat"
    #: the chat memory checkpoint of the turn: a turn whose trace a kill lost is found by it
    checkpoint: str = ""
    ts: str = ""
    id: int | None = None


def _json(value: Any) -> str:
    def clean(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        return v

    return json.dumps(clean(value), ensure_ascii=False, default=str)


class TraceStore:
    """Append-only turns table in one SQLite file; safe for several writer processes at once."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None,
    ):
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.env = env  # where secret values to redact are looked up (None: os.environ)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.executescript(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(turns)")}
            if "checkpoint" not in columns:  # a store written before turns were keyed
                with contextlib.suppress(sqlite3.OperationalError):  # another process added it
                    conn.execute("ALTER TABLE turns ADD COLUMN checkpoint TEXT")

    def has_turn(self, thread: str, checkpoint: str, question: str, answer: str) -> bool:
        """Whether the turn saved at ``checkpoint`` of ``thread`` has its trace here.

        A trace written before turns were keyed counts when it is the thread's latest and
        holds the same question and answer.
        """
        with self._connect() as conn:
            if conn.execute(
                "SELECT 1 FROM turns WHERE thread = ? AND checkpoint = ?", (thread, checkpoint)
            ).fetchone():
                return True
            last = conn.execute(
                "SELECT question, answer, checkpoint FROM turns WHERE thread = ? "
                "ORDER BY ts DESC, id DESC LIMIT 1",
                (thread,),
            ).fetchone()
        same = [*last[:2]] == redact([question, answer], self.env) if last else False
        return bool(same) and not last[2]

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise RagloopError(
                f"cannot open trace store {self.path}: {exc}; check the folder is writable"
            ) from None
        with closing(conn):
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn

    def add(self, trace: Trace) -> int:
        """Write one turn (redacted) and return its row id."""
        data = redact(
            {k: getattr(trace, k) for k in Trace.__dataclass_fields__ if k not in ("id", "ts")},
            self.env,
        )
        data["ts"] = trace.ts or datetime.now(UTC).isoformat(timespec="microseconds")
        for col in _JSON_COLUMNS:
            data[col] = _json(data[col])
        cols = ", ".join(data)
        marks = ", ".join("?" for _ in data)
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                sql = f"INSERT INTO turns ({cols}) VALUES ({marks})"
                cur = conn.execute(sql, list(data.values()))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return int(cur.lastrowid or 0)

    def turns(self, since: str | None = None, thread: str | None = None) -> list[Trace]:
        """Stored turns in time order, optionally from ``since`` (ISO) on and of one thread."""
        sql, args = "SELECT * FROM turns WHERE 1=1", list[str]()
        if since:
            sql += " AND ts >= ?"
            args.append(since)
        if thread:
            sql += " AND thread = ?"
            args.append(thread)
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(sql + " ORDER BY ts, id", args).fetchall()
        out = []
        for row in rows:
            data = dict(row)
            for col in _JSON_COLUMNS:
                data[col] = json.loads(data[col]) if data[col] else ([] if col != "scores" else {})
            out.append(Trace(**data))
        return out

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0])


def trace_from_result(
    result: Any, thread: str, model: str, original: str, source: str = "chat"
) -> Trace:
    """A ``Trace`` from a ``RunResult`` (contexts keep their ids; texts kept for evaluation)."""
    return Trace(
        question=result.question,
        answer=result.answer,
        thread=thread or "",
        original=original or result.question,
        contexts=[{k: c[k] for k in _CONTEXT_KEYS if k in c} for c in result.contexts],
        citations=list(result.citations),
        scores=dict(result.scores),
        steps=list(result.steps),
        actions=list(result.actions),
        stop_reason=result.stop_reason,
        iterations=result.iterations,
        model=model,
        latency_ms=float(result.latency_ms),
        llm_calls=int(result.llm_calls),
        tokens=int(result.tokens),
        source=source,
    )


def record_turn(
    store: Any,
    result: Any,
    thread: str | None,
    model: str,
    original: str | None,
    *,
    source: str = "chat",
) -> int:
    """Record one served turn (chat or ``ask``) in ``store``; returns the row id.

    ``store`` is a path (a SQLite trace file) or any store with ``add`` (``TraceStore``,
    the Postgres ``PgTraceStore``).
    """
    if isinstance(store, str | Path):
        store = TraceStore(store)
    return store.add(trace_from_result(result, thread or "", model, original or "", source))
