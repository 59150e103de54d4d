"""Ctrl-C that stops a long run cleanly: the first one asks the run to stop and keep what it
has; a second one aborts at once (Python's usual KeyboardInterrupt)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

#: the exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def graceful_interrupt(say: Callable[[str], Any]) -> Iterator[threading.Event]:
    """An event set by the first Ctrl-C while the block runs (only in the main thread)."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        stop.set()
        say("stopping: finishing nothing new, keeping what is done (Ctrl-C again to abort)")

    signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)
