"""Start ``langgraph dev`` (LangGraph Server, in-memory runtime) offline on 127.0.0.1.

The server itself makes no outside connection with these settings: no CLI analytics, no
version check, no LangSmith tracing, no browser, no reloader. Used by ``ragloop serve``,
``make serve``, the server tests and ``bench/server_load.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragloop.errors import ConfigError, RagloopError
from ragloop.safety.atomic import atomic_write_text

__all__ = [
    "OFFLINE_ENV",
    "claim_port",
    "dev_command",
    "server_env",
    "start_dev_server",
    "stop_server",
    "wait_ready",
    "write_config",
]

#: what keeps ``langgraph dev`` off the network
OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_API_KEY": "",
}


def write_config(folder: Path, *, postgres: bool = False) -> Path:
    """A ``langgraph.json`` naming the installed ragloop graph factory, written atomically.

    ``postgres``: threads live in the Postgres checkpointer at ``RAGLOOP_DATABASE_URL``
    (``ragloop.serve.memory.server_checkpointer``) instead of the server's memory.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "langgraph.json"
    spec: dict[str, Any] = {
        "dependencies": ["."],
        "graphs": {"ragloop": "ragloop.serve.graph:make_graph"},
    }
    if postgres:
        from ragloop.serve import memory  # the server loads a checkpointer by file path

        spec["checkpointer"] = {"path": f"{Path(memory.__file__).resolve()}:server_checkpointer"}
    atomic_write_text(path, json.dumps(spec, indent=2) + "\n")
    return path


def dev_command(
    config: Path, host: str = "127.0.0.1", port: int = 2024, jobs: int | None = None
) -> list[str]:
    """The ``langgraph dev`` command line for ``config`` (an error says what to install)."""
    exe = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which(
        "langgraph"
    )
    if exe is None:
        raise RagloopError("langgraph dev is missing: pip install 'ragloop[server]'")
    return [
        exe, "dev", "--host", host, "--port", str(port), "--config", str(config),
        "--no-browser", "--no-reload", "--allow-blocking",
        *(["--n-jobs-per-worker", str(jobs)] if jobs else []),
    ]  # fmt: skip


def claim_port(host: str, port: int) -> int:
    """``port`` if it is free on ``host`` (0: any free port), else a clear error.

    ``langgraph dev`` moves to another port when its own is taken, so the banner would name
    a port the server is not on; checking first keeps the banner true.
    """
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise ConfigError(
                f"port {port} on {host} is in use ({exc.strerror}): stop what holds it, or pass "
                "--port N (--port 0 picks a free one)"
            ) from None
        return int(sock.getsockname()[1])


def server_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the server: ours plus the offline switches plus ``extra``."""
    return {**os.environ, **OFFLINE_ENV, **(extra or {})}


def start_dev_server(
    config: Path,
    port: int,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    jobs: int | None = None,
) -> subprocess.Popen[Any]:
    """``langgraph dev`` as a child process (its own process group) logging to ``log``."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - owned by the child
    return subprocess.Popen(
        dev_command(config, port=port, jobs=jobs),
        env=server_env(env),
        cwd=str(config.parent),
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_ready(
    port: int, proc: subprocess.Popen[Any], timeout_s: float = 120.0, host: str = "127.0.0.1"
) -> None:
    """Wait until the server answers ``/ok`` on ``host``:``port`` (or died, or timed out)."""
    import httpx

    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RagloopError(f"langgraph dev exited with code {proc.returncode}")
        try:
            if httpx.get(f"http://{netloc}/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RagloopError(f"langgraph dev did not answer on port {port} within {timeout_s:.0f} s")


def stop_server(proc: subprocess.Popen[Any]) -> None:
    """Stop a server started by ``start_dev_server`` (its process group): TERM, then KILL."""
    import signal

    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
