"""Chat memory and traces in a real (throwaway) PostgreSQL: sync and async savers, JSONB state."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import uuid

from ragloop.chat.pgtraces import PgTraceStore
from ragloop.chat.traces import Trace
from ragloop.graph.builder import build_graph
from ragloop.redact import safe_url
from ragloop.serve.graph import record_server_turn
from ragloop.serve.memory import async_postgres_saver, postgres_saver
from ragloop.state import State

REF = "The P-40 pump moves 40 litres per minute."


def test_sync_saver_two_turns_on_a_thread(pg_url, small_pipe):
    with postgres_saver(pg_url) as saver:
        graph = build_graph(small_pipe.deps, checkpointer=saver, output_schema=State)
        cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
        ctx = {"retrieval": "always"}
        first = graph.invoke(
            {"question": "How fast is the P-40 pump?", "reference": REF}, cfg, context=ctx
        )
        second = graph.invoke({"question": "When does valve V-7 close?"}, cfg, context=ctx)
        assert first["judgment"]["mode"] == "development"
        assert second["judgment"]["mode"] == "service"
        stored = graph.get_state(cfg).values
    assert [m.type for m in stored["messages"]] == ["human", "ai"] * 2
    assert stored["messages"][3].content == second["answer"]


def test_async_saver_state_survives_a_new_connection(pg_url, small_pipe):
    thread = uuid.uuid4().hex
    cfg = {"configurable": {"thread_id": thread}}

    async def turn(question: str) -> dict:
        async with async_postgres_saver(pg_url) as saver:  # a new process would do the same
            graph = build_graph(small_pipe.deps, checkpointer=saver)
            return await graph.ainvoke({"question": question}, cfg, context={"retrieval": "never"})

    asyncio.run(turn("How fast is the P-40 pump?"))
    last = asyncio.run(turn("and what about V-7?"))
    assert len(last["messages"]) == 4
    standalone = last["messages"][2].additional_kwargs["standalone"]
    assert standalone == last["question"] != "and what about V-7?"
    assert last["scores"]["context_recall"] is None  # stored in JSONB as null, not NaN


def test_trace_store_round_trip_redacts_and_keeps_unmeasured_as_null(pg_url):
    store = PgTraceStore(pg_url, env={"OPENAI_API_KEY": "sk-secret-value-123456"})
    before = len(store)
    thread = uuid.uuid4().hex
    rid = store.add(
        Trace(
            question="q sk-secret-value-123456",
            answer="a",
            thread=thread,
            scores={"answer_relevancy": 0.5, "context_recall": math.nan},
        )
    )
    assert rid > 0 and len(store) == before + 1
    (got,) = store.turns(thread=thread)
    assert "sk-secret-value-123456" not in got.question
    assert got.scores == {"answer_relevancy": 0.5, "context_recall": None}


def test_graph_records_each_turn_in_the_trace_store(pg_url, small_pipe):
    store = PgTraceStore(pg_url)
    on_turn = functools.partial(record_server_turn, store, "offline")
    deps = dataclasses.replace(small_pipe.deps, on_turn=on_turn)
    thread = uuid.uuid4().hex
    with postgres_saver(pg_url) as saver:
        graph = build_graph(deps, checkpointer=saver)
        cfg = {"configurable": {"thread_id": thread}}
        graph.invoke({"question": "How fast is the P-40 pump?"}, cfg)
        graph.invoke({"question": "and what about V-7?"}, cfg)
    rows = store.turns(thread=thread)
    assert [r.original for r in rows] == ["How fast is the P-40 pump?", "and what about V-7?"]
    assert rows[1].question != rows[1].original and rows[0].answer
    assert all(r.source == "server" and r.model == "offline" and r.latency_ms > 0 for r in rows)


def test_safe_url_hides_the_password():
    assert safe_url("postgresql://u:hunter22@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert safe_url("postgresql://u@h/db") == "postgresql://u@h/db"
