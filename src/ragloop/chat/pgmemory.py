"""Chat memory on Postgres: a redacting async Postgres checkpointer and a per-thread lock
that holds across machines (a session-level advisory lock), for ``ChatSession``.

The SQLite chat redacts every checkpoint write (``ragloop.chat.memory``) and serialises the turns
of one thread with a file lock; a file lock only works on one machine, so with Postgres the lock
is ``pg_try_advisory_lock(namespace, hashtext(thread))`` on a connection of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from ragloop.chat.memory import RedactingWrites
from ragloop.errors import RagloopError
from ragloop.redact import safe_url

__all__ = ["open_pg_chat_saver", "pg_thread_lock"]

#: the first key of the two-key advisory lock: keeps chat threads apart from other locks
LOCK_NAMESPACE = 0x7261_676C  # "ragl"


def _saver_class() -> Any:
    try:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError:
        raise RagloopError(
            "chat memory in Postgres needs the [server] extra: pip install 'ragloop[server]'"
        ) from None

    class RedactingPgSaver(RedactingWrites, AsyncPostgresSaver):  # type: ignore[misc]
        """``AsyncPostgresSaver`` that redacts checkpoint values and writes before saving."""

    return RedactingPgSaver


async def open_pg_chat_saver(url: str, stack: contextlib.AsyncExitStack) -> Any:
    """A set-up redacting ``AsyncPostgresSaver`` on ``url``, closed when ``stack`` closes."""
    cls = _saver_class()
    try:
        saver = await stack.enter_async_context(cls.from_conn_string(url))
        await saver.setup()
    except Exception as exc:  # psycopg.OperationalError and friends
        raise RagloopError(
            f"cannot open chat memory at {safe_url(url)} ({type(exc).__name__}): "
            "check RAGLOOP_DATABASE_URL"
        ) from None
    return saver


@contextlib.asynccontextmanager
async def pg_thread_lock(url: str, thread_id: str) -> AsyncIterator[None]:
    """Hold the advisory lock of ``thread_id`` for the block, from any machine on ``url``.

    Polls ``pg_try_advisory_lock`` so a cancelled turn (Ctrl-C) stops waiting at once; the lock
    is session-level, so it also goes away if this process dies mid-turn.
    """
    import psycopg  # the [server] extra: imported when Postgres is used, not with the chat

    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise RagloopError(
            f"cannot lock the chat thread at {safe_url(url)} ({type(exc).__name__}): "
            "check RAGLOOP_DATABASE_URL"
        ) from None
    args = (LOCK_NAMESPACE, thread_id)
    try:
        while True:
            cur = await conn.execute("SELECT pg_try_advisory_lock(%s::int4, hashtext(%s))", args)
            row = await cur.fetchone()
            if row and row[0]:
                break
            await asyncio.sleep(0.05)
        try:
            yield
        finally:
            with contextlib.suppress(psycopg.Error):
                await conn.execute("SELECT pg_advisory_unlock(%s::int4, hashtext(%s))", args)
    finally:
        await conn.close()
