"""Two LangGraph Server replicas, one Postgres: a thread's second turn on the other replica."""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path

import pytest

pytest.importorskip(
    "langgraph_api", reason="langgraph-cli[inmem] missing: pip install 'ragloop[server]'"
)

from langgraph_sdk import get_client  # noqa: E402

from ragloop.chat.pgtraces import PgTraceStore  # noqa: E402
from ragloop.serve.dev import start_dev_server, stop_server, wait_ready, write_config  # noqa: E402
from tests.serve.conftest import offline_server_env  # noqa: E402

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_thread_continues_on_another_replica(pg_url, tmp_path):
    env = offline_server_env(tmp_path, RAGLOOP_DATABASE_URL=pg_url)
    config = write_config(tmp_path / "srv", postgres=True)
    ports = [_port(), _port()]
    procs = [start_dev_server(config, p, env, log=tmp_path / f"{p}.log") for p in ports]
    thread = str(uuid.uuid4())

    async def go():
        a, b = (get_client(url=f"http://127.0.0.1:{p}") for p in ports)
        await a.threads.create(thread_id=thread)
        await a.runs.wait(
            thread, "ragloop", input={"question": "How much does an interlibrary loan cost?"}
        )
        await b.threads.create(thread_id=thread, if_exists="do_nothing")
        second = await b.runs.wait(
            thread, "ragloop", input={"question": "and how long does that take?"}
        )
        other = (await b.threads.create())["thread_id"]  # the shared Postgres index, per run
        await b.runs.wait(
            other,
            "ragloop",
            input={"question": "How much does an interlibrary loan cost?"},
            context={"retrievers": ["pg_hybrid", "pg_dense"], "retrieval": "always"},
        )
        pg = (await b.threads.get_state(other))["values"]  # the loop's internals too
        return second, pg

    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_ready(port, proc)
        second, pg = asyncio.run(go())
    finally:
        for proc in procs:
            stop_server(proc)
    assert [m["type"] for m in second["messages"]] == ["human", "ai"] * 2
    assert "interlibrary" in second["question"].lower()  # condensed from replica A's turn
    assert pg["tried"][0][0] == "pg_hybrid" and pg["answer"] and pg["citations"]
    assert all(c["retriever"].startswith("pg_") for c in pg["contexts"])
    rows = PgTraceStore(pg_url).turns(thread=thread)
    assert [r.original for r in rows] == [
        "How much does an interlibrary loan cost?",
        "and how long does that take?",
    ]
