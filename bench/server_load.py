"""LangGraph Server under load: R ``langgraph dev`` replicas sharing one throwaway Postgres.

Each of C clients owns a thread and sends T turns, each turn to the next replica in turn
(so every follow-up is answered by a replica that did not serve the turn before: the history
can only come from Postgres). Checked afterwards, from Postgres: every thread has exactly its
T user turns in order and T answers (0 lost, 0 duplicated), and T trace rows. Prints p50/p95
per run, throughput, and the same turns in-process (one graph, Postgres checkpointer, no
HTTP) for what the server adds. Offline, 127.0.0.1 only, demo knowledge base.

    python bench/server_load.py [--replicas 3] [--clients 6] [--turns 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragloop.data import KB_DIR, QA_PATH  # noqa: E402
from ragloop.serve.cluster import local_cluster  # noqa: E402
from ragloop.serve.dev import start_dev_server, stop_server, wait_ready, write_config  # noqa: E402

FOLLOW_UPS = ["and how long does that take?", "and what does it cost?", "and in Belgium?"]


def questions(n: int) -> list[str]:
    """Demo questions answerable from the base, then follow-ups (the condense node's work)."""
    rows = [json.loads(line) for line in QA_PATH.read_text().splitlines() if line.strip()]
    asked = [r["user_input"] for r in rows if r.get("kind") == "answerable"] or [
        r["user_input"] for r in rows
    ]
    return asked[:n]


def turns_for(client: int, turns: int, pool: list[str]) -> list[str]:
    first = pool[client % len(pool)]
    return [first, *(FOLLOW_UPS[(client + t) % len(FOLLOW_UPS)] for t in range(turns - 1))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def client_run(cid: int, urls: list[str], texts: list[str], lat: list[float]) -> str:
    from langgraph_sdk import get_client

    clients = [get_client(url=u) for u in urls]
    thread = str(uuid.uuid4())
    for t, text in enumerate(texts):
        client = clients[(cid + t) % len(clients)]  # the next replica every turn
        await client.threads.create(thread_id=thread, if_exists="do_nothing")
        started = time.perf_counter()
        out = await client.runs.wait(thread, "ragloop", input={"question": text})
        lat.append((time.perf_counter() - started) * 1000)
        if not isinstance(out, dict) or not out.get("answer"):
            raise RuntimeError(f"turn {t} of client {cid} failed: {str(out)[:200]}")
    return thread


async def in_process(url: str, index: Path, data: Path, jobs: list[list[str]]) -> list[float]:
    """The same turns through one in-process graph with the Postgres checkpointer."""
    import dataclasses

    from ragloop.config import load_settings
    from ragloop.graph.builder import build_graph
    from ragloop.pipeline import build_pipeline
    from ragloop.serve.memory import async_postgres_saver

    settings = load_settings(corpus_dir=KB_DIR, index_dir=index, data_dir=data, web="off")
    pipe = build_pipeline(settings, env={})
    lat: list[float] = []
    async with async_postgres_saver(url) as saver:
        graph = build_graph(dataclasses.replace(pipe.deps), checkpointer=saver)
        for texts in jobs:
            cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}
            for text in texts:
                started = time.perf_counter()
                await graph.ainvoke({"question": text}, cfg)
                lat.append((time.perf_counter() - started) * 1000)
    return lat


def check(url: str, threads: dict[str, list[str]]) -> dict[str, int]:
    """Lost/duplicated turns and incomplete histories, read from Postgres (state and traces)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from ragloop.chat.pgtraces import PgTraceStore
    from ragloop.state import as_messages

    store = PgTraceStore(url)
    lost = dup = incomplete = trace_bad = 0
    with PostgresSaver.from_conn_string(url) as saver:
        for thread, sent in threads.items():
            tup = saver.get_tuple({"configurable": {"thread_id": thread}})
            msgs = as_messages(tup.checkpoint["channel_values"].get("messages") if tup else [])
            users = [m.content for m in msgs if m.type == "human"]
            answers = [m for m in msgs if m.type == "ai" and m.content]
            lost += max(0, len(sent) - len(users))
            dup += max(0, len(users) - len(sent))
            roles = [m.type for m in msgs]
            if users != sent or len(answers) != len(sent) or roles != ["human", "ai"] * len(sent):
                incomplete += 1
            if [r.original for r in store.turns(thread=thread)] != sent:
                trace_bad += 1
    return {"lost": lost, "duplicated": dup, "incomplete": incomplete, "trace_mismatch": trace_bad}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=4, help="concurrent runs per replica")
    args = ap.parse_args()
    pool = questions(max(args.clients, 1))
    jobs = [turns_for(c, args.turns, pool) for c in range(args.clients)]
    with tempfile.TemporaryDirectory(prefix="ragloop-load-") as tmp, local_cluster() as pg:
        tmpd = Path(tmp)
        index, data = tmpd / "idx", tmpd / "data"
        # the index is built once up front (the replicas then only open it)
        base = asyncio.run(in_process(pg.url, index, data, jobs[:1]))
        env = {
            "RAGLOOP_CORPUS_DIR": str(KB_DIR),
            "RAGLOOP_INDEX_DIR": str(index),
            "RAGLOOP_DATA_DIR": str(data),
            "RAGLOOP_WEB": "off",
            "RAGLOOP_DATABASE_URL": pg.url,
        }
        config = write_config(tmpd / "srv", postgres=True)
        ports = [free_port() for _ in range(args.replicas)]
        procs = [
            start_dev_server(config, p, env, log=tmpd / f"replica{p}.log", jobs=args.jobs)
            for p in ports
        ]
        try:
            for port, proc in zip(ports, procs, strict=True):
                wait_ready(port, proc, timeout_s=180)
            urls = [f"http://127.0.0.1:{p}" for p in ports]

            # warm-up: one turn per replica builds its graph (opens the index); unclocked
            async def warm() -> None:
                await asyncio.gather(
                    *(client_run(i, [u], pool[:1], []) for i, u in enumerate(urls))
                )

            asyncio.run(warm())

            async def load() -> tuple[list[str], list[float], float]:
                lat: list[float] = []
                started = time.perf_counter()
                threads = await asyncio.gather(
                    *(client_run(c, urls, texts, lat) for c, texts in enumerate(jobs))
                )
                return list(threads), lat, time.perf_counter() - started

            threads, lat, wall = asyncio.run(load())
            # one client alone, the same turns: what the server adds without queueing
            solo: list[float] = []
            solo_thread = asyncio.run(client_run(0, urls, jobs[0], solo))
        finally:
            for proc in procs:
                stop_server(proc)
        result = check(pg.url, {**dict(zip(threads, jobs, strict=True)), solo_thread: jobs[0]})
        local = asyncio.run(in_process(pg.url, index, data, jobs))
        n = len(lat)
        print(
            f"replicas x clients x turns: {args.replicas} x {args.clients} x {args.turns} "
            f"= {n} turns over HTTP ({args.jobs} concurrent runs per replica)"
        )
        print(
            f"lost {result['lost']}  duplicated {result['duplicated']}  incomplete histories "
            f"{result['incomplete']}/{len(threads) + 1}  "
            f"trace mismatches {result['trace_mismatch']}"
        )
        print(
            f"server:     p50 {pct(lat, 0.5):7.0f} ms  p95 {pct(lat, 0.95):7.0f} ms  "
            f"throughput {n / wall:5.2f} turns/s (wall {wall:.1f} s)"
        )
        lw = sum(local) / 1000
        print(
            f"in-process: p50 {pct(local, 0.5):7.0f} ms  p95 {pct(local, 0.95):7.0f} ms  "
            f"throughput {len(local) / lw:5.2f} turns/s (one graph, sequential; warm-up "
            f"{base[0]:.0f} ms)"
        )
        print(
            f"one client alone: p50 {pct(solo, 0.5):7.0f} ms over HTTP vs in-process "
            f"{pct(local[: len(solo)], 0.5):.0f} ms for the same {len(solo)} turns "
            f"(server adds {pct(solo, 0.5) - pct(local[: len(solo)], 0.5):+.0f} ms)"
        )
        print(
            f"server adds (p50): {pct(lat, 0.5) - pct(local, 0.5):+.0f} ms per run "
            f"(HTTP, queue, checkpoint reads/writes across processes, under {n} concurrent)"
        )
        print(
            f"mean run: server {statistics.mean(lat):.0f} ms, "
            f"in-process {statistics.mean(local):.0f} ms"
        )
        bad = (
            result["lost"] + result["duplicated"] + result["incomplete"] + result["trace_mismatch"]
        )
        return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
