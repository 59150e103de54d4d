"""Folders ragloop creates carry a marker; only marked folders are ever replaced or cleared.

An index folder is replaced by swapping in a freshly built sibling; an output folder gets its
files replaced one by one. Either is refused when the folder holds anything ragloop did not
write (no marker), so ``--out docs`` or ``--out ..`` can never wipe a user's files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from ragloop.errors import RagloopError
from ragloop.safety.atomic import atomic_write_text, fsync_dir
from ragloop.safety.locks import folder_lock

MARKER = ".ragloop-folder.json"
#: entries of folders written before markers existed, accepted as ragloop's own
LEGACY = {
    "index": {"manifest.json", "faiss", "bm25"},
    "output": {
        "results.csv", "rows.jsonl", "report.md", "report.html", "best.env", "best.toml",
        "summary.json",
    },
}  # fmt: skip
#: a build folder left by a killed process is removed after this long
STALE_BUILD_S = 3600.0


class FolderNotOwned(RagloopError):
    """A folder ragloop would replace or write into holds files it did not create."""


def _kind_of(folder: Path) -> str | None:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(data.get("kind")) if isinstance(data, dict) else None


def is_owned(folder: str | Path, kind: str) -> bool:
    """True when ``folder`` is a ragloop folder of ``kind`` (marker, or only ragloop's files)."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return False
    names = {p.name for p in folder.iterdir()}
    if kind == "index" and "manifest.json" not in names:
        return False
    if _kind_of(folder) == kind:
        return True
    return bool(names) and names <= LEGACY.get(kind, set())


def mark_folder(folder: str | Path, kind: str) -> None:
    """Write the marker saying ragloop created ``folder`` for ``kind``."""
    info = {"kind": kind, "created_by": "ragloop", "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    atomic_write_text(Path(folder) / MARKER, json.dumps(info) + "\n")


def _refuse(folder: Path, kind: str, flag: str) -> FolderNotOwned:
    what = "a file" if folder.is_file() else "a folder holding files ragloop did not write"
    return FolderNotOwned(
        f"{folder} is {what}, not a ragloop {kind} folder: nothing was changed. "
        f"Pass a new or empty folder with {flag}"
    )


def claim_output_folder(folder: str | Path, kind: str = "output", flag: str = "--out") -> Path:
    """Create ``folder`` (or accept an empty or marked one) for ragloop's outputs; else refuse."""
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise _refuse(folder, kind, flag)
    with folder_lock(folder):  # two runs claiming one new folder: the second sees the marker
        if folder.is_dir() and any(folder.iterdir()) and not is_owned(folder, kind):
            raise _refuse(folder, kind, flag)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RagloopError(f"cannot create {folder}: {exc}; pass a writable {flag}") from None
        if _kind_of(folder) != kind:
            mark_folder(folder, kind)
    return folder


def check_replaceable(folder: str | Path, kind: str, flag: str = "--out") -> None:
    """Raise unless ``folder`` is absent, empty or a ragloop folder of ``kind``."""
    folder = Path(folder)
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
        return
    if not is_owned(folder, kind):
        raise _refuse(folder, kind, flag)


def new_build_folder(target: str | Path) -> Path:
    """A unique, empty sibling of ``target`` to build into (so writers never share a folder)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}.build-{os.getpid()}-"  # the pid tells a killed build apart
    build = Path(tempfile.mkdtemp(dir=target.parent, prefix=prefix))
    mark_folder(build, "build")  # so a sweep after a kill knows the folder as ragloop's
    return build


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _ours(folder: Path) -> bool:
    """A leftover ragloop may remove: a real folder, marked, empty or holding only its files."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    # a process killed while writing the marker leaves only the marker's temp file
    names = {p.name for p in folder.iterdir() if not _is_marker_temp(p.name)}
    return _kind_of(folder) is not None or names <= set().union(*LEGACY.values())


def _remove(folder: Path) -> None:
    """Remove a ragloop folder, the files that say it is ragloop's last: the rest, then its
    marker, then an index's manifest. A process killed halfway (``shutil.rmtree`` alone could
    take the marker and the manifest first) so leaves a folder the next sweep still knows as
    its own, never one it must leave forever."""
    last = (MARKER, "manifest.json")
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            if child.name in last:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        for name in last:
            (folder / name).unlink(missing_ok=True)
        folder.rmdir()


def _empty(folder: Path) -> bool:
    return not any(folder.iterdir())


def _is_marker_temp(name: str) -> bool:
    """The temp file ``atomic_write_text`` makes while it writes the marker."""
    return name.startswith(f".{MARKER}.") and name.endswith(".tmp")


def _sweep(target: Path, kind: str) -> None:
    """Remove leftovers of killed swaps and builds beside ``target`` (call under its lock).

    Only folders that carry ragloop's names *and* are ragloop's go: a moved-aside target
    only when it is a ragloop folder of ``kind`` (its marker, or for an index made before
    markers existed its manifest with only index files) or empty; a build only when marked,
    empty or holding only ragloop's files, and its process is gone. A user's folder that
    happens to be called ``.index.old-x`` is left alone.
    """
    now = time.time()
    for old in target.parent.glob(f".{target.name}.old-*"):
        if not old.is_symlink() and old.is_dir() and (is_owned(old, kind) or _empty(old)):
            _remove(old)
    for build in target.parent.glob(f".{target.name}.build-*"):
        if not _ours(build):
            continue
        pid = build.name.rsplit(".build-", 1)[1].split("-", 1)[0]
        with contextlib.suppress(OSError, ValueError):
            dead = pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid))
            if dead or now - build.stat().st_mtime > STALE_BUILD_S:
                _remove(build)


def replace_folder(built: str | Path, target: str | Path, kind: str, flag: str = "--out") -> None:
    """Swap the finished ``built`` folder in as ``target`` (hold ``folder_lock(target)``).

    ``target`` must be absent, empty or a ragloop folder of ``kind``; the old one is moved
    aside, the new one renamed in, then the old one removed, so readers under the same lock
    always find a whole folder.
    """
    built, target = Path(built), Path(target)
    check_replaceable(target, kind, flag)
    mark_folder(built, kind)
    fsync_dir(built)
    _sweep(target, kind)
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(target, old)
    os.replace(built, target)
    fsync_dir(target.parent)
    if old is not None:  # the previous target, checked above to be absent, empty or ragloop's
        _remove(old)
