"""The chat memory's checkpointer: LangGraph's async SQLite saver with every write redacted.

Conversation state (questions, answers, contexts) and stored node errors (``__error__``,
e.g. a 401 whose message echoes the key) pass one redaction pass before reaching SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ragloop.redact import redact_value


def _secrets() -> list[str]:
    from ragloop.chat.traces import secret_values

    return secret_values()


class RedactingWrites:
    """Mixin for an async LangGraph checkpointer: checkpoint values, metadata and pending
    writes pass one redaction pass before the saver it is mixed into stores them (SQLite
    here, Postgres in ``ragloop.serve.chatmemory``)."""

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
