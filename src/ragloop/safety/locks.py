"""Inter-process locks (``filelock``) beside the folder or file they guard."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from ragloop.errors import RagloopError

#: how long a writer or reader waits for another process before giving up with a clear error
DEFAULT_TIMEOUT_S = 600.0


def lock_path(target: str | Path) -> Path:
    """The lock file of ``target``: ``.<name>.lock`` in the same folder (it survives swaps)."""
    target = Path(target)
    return target.parent / f".{target.name}.lock"


@contextlib.contextmanager
def folder_lock(target: str | Path, timeout: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive lock of ``target`` (a folder or file) while the block runs."""
    path = lock_path(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RagloopError(f"cannot create {path.parent}: {exc}; check the path") from None
    lock = FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise RagloopError(
            f"{target} is busy: another ragloop process held {path} for {timeout:.0f} s; "
            "wait for it to finish and try again"
        ) from None
    try:
        yield
    finally:
        lock.release()
