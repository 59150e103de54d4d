"""Run a coroutine from sync code, also inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
_LOOP: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """One long-lived loop in a daemon thread, shared by every sync call.

    A fresh loop per call (``asyncio.run``) breaks async HTTP clients such as ChatOpenAI's,
    whose connection pool stays bound to the loop that first used it ("Event loop is
    closed" on the second call); one loop for the process keeps them usable.
    """
    global _LOOP
    with _LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="ragloop-loop", daemon=True)
            thread.start()
            _LOOP = loop
        return _LOOP


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on ragloop's background loop and return its result.

    Works the same with or without a running loop in the caller (a notebook), so
    ``score()`` never fails with "this event loop is already running". Ctrl-C while
    waiting cancels the coroutine.
    """
    future = asyncio.run_coroutine_threadsafe(coro, _background_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise
