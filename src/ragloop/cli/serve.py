"""``ragloop serve``: the graph on LangGraph Server (``langgraph dev``), offline, on 127.0.0.1."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import typer

from ragloop.cli import app, console, friendly


@app.command()
@friendly
def serve(
    port: int = typer.Option(2024, "--port", help="port on 127.0.0.1"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    corpus: Path = typer.Option(
        None, "--corpus", help="corpus folder (RAGLOOP_CORPUS_DIR; default: the index's)"
    ),
    database_url: str = typer.Option(
        None,
        "--database-url",
        help="Postgres for traces (RAGLOOP_DATABASE_URL)",
        show_default=False,
    ),
) -> None:
    """Serve the graph with LangGraph Server: threads are chats, runs are turns, all traced."""
    from ragloop.config import load_settings
    from ragloop.redact import safe_url
    from ragloop.serve.dev import dev_command, server_env, write_config

    settings = load_settings(corpus_dir=corpus, database_url=database_url)  # checked first
    config = write_config(Path(settings.data_dir).resolve() / "server")
    extra = {"RAGLOOP_DATA_DIR": str(Path(settings.data_dir).resolve())}
    if corpus is not None:
        extra["RAGLOOP_CORPUS_DIR"] = str(corpus.resolve())
    if database_url:
        extra["RAGLOOP_DATABASE_URL"] = database_url
    extra["RAGLOOP_INDEX_DIR"] = str(Path(settings.index_dir).resolve())
    traces = safe_url(settings.database_url) if settings.database_url else "traces.sqlite"
    console.print(
        f"LangGraph Server on http://{host}:{port} (graph 'ragloop', traces in {traces})",
        markup=False,
        highlight=False,
    )
    cmd = dev_command(config, host=host, port=port)
    env = server_env(extra)
    proc = subprocess.Popen(cmd, env=env, cwd=str(config.parent))

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # a TERM to ragloop stops the server it started too

    signal.signal(signal.SIGTERM, _stop)
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        code = 0
    raise typer.Exit(code)
