"""Where served turns are kept: the SQLite trace file, or Postgres with a ``database_url``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragloop.chat.pgtraces import PgTraceStore
from ragloop.chat.traces import TraceStore


def trace_store(settings: Any, explicit: str | Path | None = None) -> TraceStore | PgTraceStore:
    """``explicit``, else Postgres with a ``database_url`` (every replica writes one table),
    else ``<data_dir>/traces.sqlite``."""
    if explicit is None and getattr(settings, "database_url", None):
        return PgTraceStore(settings.database_url)
    return TraceStore(explicit or Path(settings.data_dir) / "traces.sqlite")
