"""``ragloop serve --database-url``: threads live in Postgres, the banner names the port bound."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip(
    "langgraph_api", reason="langgraph-cli[inmem] missing: pip install 'ragloop[server]'"
)

from langgraph_sdk import get_client  # noqa: E402

from tests.serve.conftest import offline_server_env  # noqa: E402

BANNER = re.compile(r"LangGraph Server on http://127\.0\.0\.1:(\d+) \(graph 'ragloop'; threads in")


def _banner(proc: subprocess.Popen[str], timeout_s: float = 240.0) -> tuple[int, str]:
    """The port the banner names, and the banner line (the server is ready by then)."""
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise AssertionError(f"ragloop serve exited with {proc.returncode}")
        if m := BANNER.search(line):
            return int(m[1]), line
    raise AssertionError("no banner")


def test_serve_with_a_database_url_keeps_threads_in_postgres(pg_url, tmp_path):
    import psycopg

    env = {**os.environ, **offline_server_env(tmp_path)}
    cmd = [sys.executable, "-m", "ragloop", "serve", "--port", "0", "--database-url", pg_url]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        port, line = _banner(proc)
        assert "threads in Postgres" in line and "password" not in line

        async def go() -> str:
            client = get_client(url=f"http://127.0.0.1:{port}")  # the port the banner named
            thread = (await client.threads.create())["thread_id"]
            await client.runs.wait(
                thread, "ragloop", input={"question": "How much does an interlibrary loan cost?"}
            )
            return str(thread)

        thread = asyncio.run(go())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,))
        assert rows.fetchone()[0] > 0  # the thread's checkpoints are in Postgres
