"""The chat memory's checkpointer: LangGraph's async SQLite saver with every write redacted.

Conversation state (questions, answers, contexts) and stored node errors (``__error__``,
e.g. a 401 whose message echoes the key) pass one redaction pass before reaching SQLite.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ragloop.redact import redact_value, secret_values


def _secrets() -> list[str]:
    return secret_values()


def checkpoint_serde() -> JsonPlusSerializer:
    """LangGraph's serializer in strict mode: reading a checkpoint back builds only safe types.

    The permissive default rebuilds any ``module.name(arg)`` a checkpoint names, so a
    crafted chat memory could call ``os.system``; strict mode allows LangGraph's list of
    safe types (messages, dates, ...), enough for ragloop's JSON state. Never pickles.
    """
    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)


class RedactingWrites:
    """Mixin for an async LangGraph checkpointer: checkpoint values, metadata and pending
    writes pass one redaction pass before the saver it is mixed into stores them (SQLite
    here, Postgres in ``ragloop.chat.pgmemory``); what it reads back builds safe types only."""

    def __init__(self, *args: Any, serde: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, serde=serde or checkpoint_serde(), **kwargs)  # type: ignore[call-arg]

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        secrets = _secrets()
        clean: Any = dict(checkpoint)
        clean["channel_values"] = redact_value(checkpoint.get("channel_values", {}), secrets)
        saver: Any = super()
        return await saver.aput(config, clean, redact_value(metadata, secrets), new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        secrets = _secrets()
        clean = [(channel, redact_value(value, secrets)) for channel, value in writes]
        saver: Any = super()
        await saver.aput_writes(config, clean, task_id, task_path)


class RedactingSaver(RedactingWrites, AsyncSqliteSaver):
    """``AsyncSqliteSaver`` that redacts checkpoint values and pending writes before saving."""


#: how long opening the chat memory waits out a lock held by another process's set-up
OPEN_PATIENCE_S = 60.0


def _locked(exc: BaseException) -> bool:
    """A SQLite "database is locked" (or busy) error: worth waiting out."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


async def open_sqlite_saver(path: Path) -> tuple[Any, RedactingSaver]:
    """A connection to the chat memory at ``path`` and its set-up saver.

    Setting up (WAL mode, tables) can find the file locked by another process's set-up or
    recovery beyond the busy timeout: that is waited out (tenacity, up to OPEN_PATIENCE_S);
    any other error is raised at once.
    """
    import aiosqlite
    from tenacity import (
        AsyncRetrying,
        retry_if_exception,
        stop_after_delay,
        wait_random_exponential,
    )

    async for attempt in AsyncRetrying(
        retry=retry_if_exception(_locked),
        stop=stop_after_delay(OPEN_PATIENCE_S),
        wait=wait_random_exponential(multiplier=0.05, max=2),
        reraise=True,
    ):
        with attempt:
            conn = await aiosqlite.connect(str(path), timeout=30)
            try:
                saver = RedactingSaver(conn)
                await saver.setup()
            except BaseException:
                await conn.close()
                raise
    return conn, saver
