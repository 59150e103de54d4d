"""Atomic file writes: a unique temp file in the target's folder, fsync, then rename over it.

A reader sees the old file or the new one, never a half-written one, and a crash (kill -9)
at any point leaves at most a stray ``.<name>.*.tmp`` beside the target.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def fsync_dir(folder: str | Path) -> None:
    """Flush a folder's entries (a rename) to disk; a no-op where the OS cannot."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sweep_dead(target: Path) -> None:
    """Remove temp files of ``target`` left by writers that were killed (their pid is gone)."""
    for tmp in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        pid = tmp.name[len(target.name) + 2 :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                tmp.unlink()
        except OSError:
            continue


@contextlib.contextmanager
def atomic_writer(
    path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None
) -> Iterator[IO[Any]]:
    """Open a temp file beside ``path``; on a clean exit it is fsynced and renamed onto ``path``.

    On an exception the temp file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _sweep_dead(target)
    prefix = f".{target.name}.{os.getpid()}."  # the pid tells a killed writer's temp apart
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    binary = "b" in mode
    try:
        with os.fdopen(
            fd,
            "wb" if binary else "w",
            encoding=None if binary else encoding,
            newline=None if binary else newline,
        ) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # keep the mode a plain open() would give
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; returns the path."""
    with atomic_writer(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)
    return Path(path)
