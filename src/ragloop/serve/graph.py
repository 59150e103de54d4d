"""The graph for LangGraph Server and Studio (``langgraph.json`` names ``make_graph``).

``make_graph`` builds the pipeline from ``Settings`` (``RAGLOOP_*`` variables, e.g.
``RAGLOOP_CORPUS_DIR``, ``RAGLOOP_DATABASE_URL``) on first use and then hands out the same
compiled graph: importing this module builds nothing. The server supplies the checkpointer
(a thread is a chat); every finished turn is recorded in the trace store, Postgres when
``RAGLOOP_DATABASE_URL`` is set, else ``<data_dir>/traces.sqlite``, as CLI turns are.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime

_LOCK = threading.Lock()
_GRAPH: Any = None


def build_server_graph(settings: Any = None) -> Any:
    """A fresh compiled graph for a server: the pipeline's deps plus a trace store."""
    from ragloop.chat.stores import trace_store
    from ragloop.config import context_schema_for, load_settings
    from ragloop.graph.builder import build_graph
    from ragloop.pipeline import build_pipeline

    settings = settings or load_settings()
    pipe = build_pipeline(settings)
    on_turn = functools.partial(record_server_turn, trace_store(settings), str(pipe.model))
    retrievers = pipe.deps.retrievers
    if settings.database_url:
        retrievers = with_postgres_index(settings.database_url, retrievers, settings.k)
    # a run whose client sends no context (or only some fields) gets the server's settings
    deps = dataclasses.replace(
        pipe.deps, on_turn=on_turn, retrievers=retrievers, context=pipe.context
    )
    return build_graph(deps, context_schema=context_schema_for(pipe.context))


def record_server_turn(store: Any, model: str, state: dict[str, Any], thread: str) -> None:
    """Write a turn the server finished to ``store`` (anything with ``add(Trace)``)."""
    from ragloop.chat.traces import trace_from_result
    from ragloop.graph.result import RunResult
    from ragloop.state import is_user, message_text

    started = state.get("turn_started")
    latency = (time.time() - started) * 1000 if isinstance(started, float) else 0.0
    result = RunResult.from_state(state, latency_ms=latency)
    user = next((m for m in reversed(state.get("messages") or []) if is_user(m)), None)
    original = (message_text(user) if user is not None else "") or result.question
    store.add(trace_from_result(result, thread, model, original, source="server"))


class _Retrievers(Mapping[str, Any]):
    """The Postgres index's retrievers in front of the file index's (all selectable per run)."""

    def __init__(self, first: Mapping[str, Any], rest: Mapping[str, Any]) -> None:
        self.first, self.rest = first, rest

    def __getitem__(self, name: str) -> Any:
        return self.first[name] if name in self.first else self.rest[name]

    def __contains__(self, name: object) -> bool:
        return name in self.first or name in self.rest

    def __iter__(self) -> Iterator[str]:
        yield from self.first
        yield from (n for n in self.rest if n not in self.first)

    def __len__(self) -> int:
        return len(list(iter(self)))


def with_postgres_index(url: str, retrievers: Any, k: int) -> Mapping[str, Any]:
    """Add ``pg_dense``/``pg_sparse``/``pg_hybrid`` over the shared Postgres index.

    The first replica to start seeds it from the file index when it has none yet;
    ``ragloop index PATH`` with ``RAGLOOP_DATABASE_URL`` set rebuilds it.
    """
    from ragloop.serve.pgindex import PgIndexStore, pg_retrievers, write_index

    index = retrievers.index
    store = PgIndexStore(url)
    if store.version() == 0:
        store = write_index(url, index)
    return _Retrievers(pg_retrievers(store, index.faiss.embedding_function, k=k), retrievers)


def check_context_keys(context: Any) -> None:
    """Refuse a run context with a key the graph's ``Context`` does not have, naming it.

    LangGraph Server drops such keys silently, so ``{"index_dir": "/etc"}`` would look
    accepted; server settings (index, corpus, database) are fixed where the server starts.
    """
    from ragloop.config import Context
    from ragloop.errors import ConfigError

    if not isinstance(context, Mapping):
        return
    known = [f.name for f in dataclasses.fields(Context)]
    unknown = sorted(str(k) for k in context if k not in known)
    if unknown:
        names = ", ".join(f"'{k}'" for k in unknown)
        raise ConfigError(
            f"unknown context key {names}: a run's context takes {', '.join(known)}; "
            "the index, corpus and database are the server's settings (RAGLOOP_* where it starts)"
        )


def make_graph(runtime: ServerRuntime = None) -> Any:  # type: ignore[assignment]
    """The server's graph, built once per process on first use (thread-safe).

    LangGraph Server hands the factory the run's ``runtime``; a run's context is checked
    here, before the run starts (``check_context_keys``).
    """
    global _GRAPH
    check_context_keys(getattr(runtime, "context", None))
    with _LOCK:
        if _GRAPH is None:
            _GRAPH = build_server_graph()
        return _GRAPH
