"""Chat memory in PostgreSQL through ``langgraph-checkpoint-postgres`` (sync and async savers).

The savers store the graph state as JSONB; the graph's state is JSON-safe (no NaN, see
``ragloop.graph.adapt``), so every node's update is stored as it is.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ragloop.chat.memory import checkpoint_serde
from ragloop.errors import RagloopError
from ragloop.redact import safe_url

__all__ = ["async_postgres_saver", "postgres_saver"]


def _missing() -> RagloopError:
    return RagloopError(
        "Postgres chat memory needs the [server] extra: pip install 'ragloop[server]'"
    )


@contextlib.contextmanager
def postgres_saver(url: str) -> Iterator[Any]:
    """A set-up ``PostgresSaver`` on ``url`` (for ``graph.invoke``), closed on exit."""
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        raise _missing() from None
    try:
        cm = PostgresSaver.from_conn_string(url)
        saver = cm.__enter__()
        saver.serde = checkpoint_serde()  # what is read back builds safe types only
    except Exception as exc:  # psycopg.OperationalError and friends
        raise RagloopError(f"cannot open chat memory at {safe_url(url)}: {exc}") from None
    try:
        saver.setup()
        yield saver
    finally:
        cm.__exit__(None, None, None)


@contextlib.asynccontextmanager
async def async_postgres_saver(url: str) -> AsyncIterator[Any]:
    """A set-up ``AsyncPostgresSaver`` on ``url`` (for ``graph.ainvoke``), closed on exit."""
    try:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError:
        raise _missing() from None
    try:
        cm = AsyncPostgresSaver.from_conn_string(url)
        saver = await cm.__aenter__()
        saver.serde = checkpoint_serde()  # what is read back builds safe types only
    except Exception as exc:
        raise RagloopError(f"cannot open chat memory at {safe_url(url)}: {exc}") from None
    try:
        await saver.setup()
        yield saver
    finally:
        await cm.__aexit__(None, None, None)


@contextlib.asynccontextmanager
async def server_checkpointer() -> AsyncIterator[Any]:
    """LangGraph Server's checkpointer (``langgraph.json`` "checkpointer"): Postgres at
    ``RAGLOOP_DATABASE_URL``, so every replica reads and writes the same threads."""
    import os

    url = os.environ.get("RAGLOOP_DATABASE_URL", "")
    if not url:
        raise RagloopError("the server's Postgres checkpointer needs RAGLOOP_DATABASE_URL")
    async with async_postgres_saver(url) as saver:
        yield saver
