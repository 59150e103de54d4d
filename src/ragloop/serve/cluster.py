"""A throwaway local PostgreSQL cluster (tests, benches, ``ragloop serve --local-db``).

``initdb`` in a temporary folder, ``pg_ctl`` listening on 127.0.0.1 at a free port with trust
authentication, removed again on ``stop``. ``initdb`` refuses to run as root, so as root the
cluster belongs to the unprivileged ``nobody`` account (through ``runuser``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ragloop.errors import RagloopError
from ragloop.safety.owned import is_owned, mark_folder

__all__ = ["LocalCluster", "find_pg_bin", "local_cluster"]

#: the marker kind of a cluster's temporary folder (``safety.owned``)
CLUSTER_KIND = "pg-cluster"


def find_pg_bin() -> Path | None:
    """The folder of ``initdb``/``pg_ctl``: on PATH, else Debian's newest /usr/lib/postgresql."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(versions[0]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalCluster:
    """One temporary cluster; ``url`` is its libpq URL once ``start`` returned."""

    def __init__(self, user: str = "ragloop") -> None:
        found = find_pg_bin()
        if found is None:
            raise RagloopError(
                "PostgreSQL server binaries not found: install them (Debian: apt-get install "
                "postgresql) or set RAGLOOP_DATABASE_URL to a running server"
            )
        self.bin: Path = found
        self.user = user
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="ragloop-pg-"))
        mark_folder(self.root, CLUSTER_KIND)  # ``stop`` removes only a folder marked so
        self.data = self.root / "data"
        self.url = f"postgresql://{user}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "nobody", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RagloopError(f"{args[0]} failed: {(done.stderr or done.stdout).strip()[-400:]}")

    def start(self) -> LocalCluster:
        """initdb + pg_ctl start (fsync off: a throwaway cluster trades durability for speed)."""
        if os.geteuid() == 0:
            os.chmod(self.root, 0o777)
        self._run("initdb", "-D", str(self.data), "-U", self.user, "-A", "trust", "-E", "UTF8")
        opts = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c fsync=off "
            f"-c unix_socket_directories={self.root} -c max_connections=200"
        )
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", log, "-w", "start")
        return self

    def stop(self) -> None:
        """Stop the server and remove its folder: only the one this class created and marked,
        never a folder ``root`` was pointed at afterwards."""
        if self.data.exists():
            with contextlib.suppress(RagloopError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        if is_owned(self.root, CLUSTER_KIND):
            shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    """A started cluster, stopped and removed on exit."""
    cluster = LocalCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()
