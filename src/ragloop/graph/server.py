"""The graph for LangGraph Server and Studio (``langgraph.json`` names ``make_graph``).

``make_graph`` builds the pipeline from ``Settings`` (``RAGLOOP_*`` variables, e.g.
``RAGLOOP_CORPUS_DIR``, ``RAGLOOP_DATABASE_URL``) on first use and then hands out the same
compiled graph: importing this module builds nothing. The server supplies the checkpointer
(a thread is a chat); every finished turn is recorded in the trace store, Postgres when
``RAGLOOP_DATABASE_URL`` is set, else ``<data_dir>/traces.sqlite``, as CLI turns are.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

_LOCK = threading.Lock()
_GRAPH: Any = None


def trace_store_for(settings: Any) -> Any:
    """The trace store the settings name: Postgres with a database URL, else SQLite."""
    if settings.database_url:
        from ragloop.serve.traces import PgTraceStore

        return PgTraceStore(settings.database_url)
    from ragloop.chat.traces import TraceStore

    return TraceStore(Path(settings.data_dir) / "traces.sqlite")


def build_server_graph(settings: Any = None) -> Any:
    """A fresh compiled graph for a server: the pipeline's deps plus a trace store."""
    from ragloop.config import load_settings
    from ragloop.graph.builder import build_graph
    from ragloop.pipeline import build_pipeline

    settings = settings or load_settings()
    pipe = build_pipeline(settings)
    extras = {**pipe.deps.extras, "traces": trace_store_for(settings), "model": pipe.model}
    return build_graph(dataclasses.replace(pipe.deps, extras=extras))


def make_graph() -> Any:
    """The server's graph, built once per process on first use (thread-safe)."""
    global _GRAPH
    with _LOCK:
        if _GRAPH is None:
            _GRAPH = build_server_graph()
        return _GRAPH
