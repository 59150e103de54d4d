"""``ragloop serve``: the graph on LangGraph Server (``langgraph dev``), offline, on 127.0.0.1.

With ``--database-url`` (or ``RAGLOOP_DATABASE_URL``) threads live in Postgres
(``langgraph-checkpoint-postgres``), as traces and the shared index do; otherwise in the
server's memory. The banner is printed once the server answers, with the port it is on.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import typer

from ragloop.cli import app, console, friendly
from ragloop.cli.flags import setting_flags


@app.command()
@friendly
@setting_flags("corpus_dir", "database_url")
def serve(
    port: int = typer.Option(2024, "--port", help="port (0: any free port)", min=0, max=65535),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    *,
    flags: dict[str, Any],
) -> None:
    """Serve the graph with LangGraph Server: threads are chats, runs are turns, all traced."""
    from ragloop.config import load_settings
    from ragloop.redact import safe_url
    from ragloop.serve.dev import claim_port, dev_command, server_env, wait_ready, write_config

    settings = load_settings(**flags)  # checked first
    corpus = flags.get("corpus_dir")
    url = settings.database_url
    config = write_config(Path(settings.data_dir).resolve() / "server", postgres=bool(url))
    extra = {"RAGLOOP_DATA_DIR": str(Path(settings.data_dir).resolve())}
    if corpus is not None:
        extra["RAGLOOP_CORPUS_DIR"] = str(corpus.resolve())
    if url:
        extra["RAGLOOP_DATABASE_URL"] = url
    extra["RAGLOOP_INDEX_DIR"] = str(Path(settings.index_dir).resolve())
    port = claim_port(host, port)  # langgraph dev would move to another port silently
    where = (
        f"Postgres {safe_url(url)}" if url else "memory (lost on exit; --database-url keeps them)"
    )
    traces = safe_url(url) if url else "traces.sqlite"
    console.print(f"starting LangGraph Server on {host}:{port} …", markup=False, highlight=False)
    proc = subprocess.Popen(
        dev_command(config, host=host, port=port), env=server_env(extra), cwd=str(config.parent)
    )

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # a TERM to ragloop stops the server it started too

    signal.signal(signal.SIGTERM, _stop)
    try:
        try:
            wait_ready(port, proc, timeout_s=300, host=host)
        except Exception:
            _end(proc)
            raise
        console.print(
            f"LangGraph Server on http://{host}:{port} (graph 'ragloop'; threads in {where}; "
            f"traces in {traces})",
            markup=False,
            highlight=False,
        )
        code = proc.wait()
    except KeyboardInterrupt:
        _end(proc)
        code = 0
    raise typer.Exit(code)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server this command started: TERM, then KILL after 20 s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
