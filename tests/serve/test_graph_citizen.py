"""The graph as LangGraph expects it: JSON state, sync and async, any context, a thread = a chat."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from ragloop.config import load_settings
from ragloop.graph.builder import build_graph
from ragloop.retrievers.index import build_index
from ragloop.state import State
from tests.serve.conftest import write_tiny_corpus

QUESTIONS = [
    "How fast is the P-40 pump?",
    "When does valve V-7 close?",
    "What is the capital of the moon's third ocean?",
]


@pytest.fixture(scope="module")
def pipe(small_pipe):
    return small_pipe  # the offline pipeline over pumps and valves (tests/serve/conftest.py)


def _strict_json(value):
    # raises on NaN/inf, as Postgres JSONB does; messages are stored as their fields
    return json.dumps(value, allow_nan=False, default=lambda m: m.model_dump())


@pytest.mark.parametrize("retrieval", ["auto", "always", "never"])
def test_every_update_is_strict_json(pipe, retrieval):
    graph = build_graph(pipe.deps, output_schema=State)
    ctx = {"retrieval": retrieval, "max_iterations": 2}
    for question in QUESTIONS:
        for chunk in graph.stream({"question": question}, context=ctx, stream_mode="updates"):
            _strict_json(chunk)
        final = graph.invoke({"question": question}, context=ctx)
        _strict_json(final)
        assert final["answer"]
        if retrieval != "auto":
            assert final["draft_relevancy"] is None  # unmeasured, and the step says why
            assert f"retrieval={retrieval}" in final["steps"][1]["detail"]


def test_invoke_and_ainvoke_with_and_without_context(pipe):
    graph = build_graph(pipe.deps)
    q = {"question": QUESTIONS[0]}
    results = [
        graph.invoke(q),
        graph.invoke(q, context={"k": 2}),
        asyncio.run(graph.ainvoke(q)),
        asyncio.run(graph.ainvoke(q, context=pipe.context)),
    ]
    answers = {r["answer"] for r in results}
    assert len(answers) >= 1 and all("40 litres" in a for a in answers)
    assert all(r["stop_reason"] for r in results)


def test_unmeasured_scores_are_none_in_state_and_nan_in_results(pipe):
    result = pipe.run(QUESTIONS[2], retrieval="never")
    assert result.scores["context_recall"] != result.scores["context_recall"]  # NaN
    assert "no retrieval" in result.score_reasons["context_recall"]
    state = build_graph(pipe.deps).invoke(
        {"question": QUESTIONS[2]}, context={"retrieval": "never"}
    )
    assert state["scores"]["context_recall"] is None


def test_schemas_are_published_and_narrow(pipe):
    graph = build_graph(pipe.deps)
    inputs = graph.get_input_jsonschema()["properties"]
    assert set(inputs) == {"question", "messages", "reference", "reference_contexts"}
    outputs = set(graph.get_output_jsonschema()["properties"])
    assert {"answer", "citations", "scores", "not_found", "stop_reason", "steps"} <= outputs
    assert not outputs & {"judgment", "candidates", "tried", "draft", "turn_started"}
    assert "max_iterations" in graph.get_context_jsonschema()["properties"]
    final = graph.invoke({"question": QUESTIONS[0]})
    assert set(final) <= outputs and final["not_found"] is False


def test_a_thread_is_a_chat_reference_does_not_carry_over(pipe):
    graph = build_graph(pipe.deps, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t1"}}
    first = graph.invoke(
        {"question": QUESTIONS[0], "reference": "The P-40 pump moves 40 litres per minute."},
        cfg,
        context={"retrieval": "always"},
    )
    assert graph.get_state(cfg).values["judgment"]["mode"] == "development"
    second = graph.invoke({"question": QUESTIONS[1]}, cfg, context={"retrieval": "always"})
    assert graph.get_state(cfg).values["judgment"]["mode"] == "service"  # reference gone
    messages = second["messages"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage] * 2
    assert messages[1].content == first["answer"]
    assert messages[2].content == QUESTIONS[1]
    assert messages[2].additional_kwargs["standalone"] == QUESTIONS[1]


def test_follow_up_is_condensed_on_the_thread(pipe):
    graph = build_graph(pipe.deps, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t2"}}
    graph.invoke({"question": "How fast is the P-40 pump?"}, cfg)
    follow = graph.invoke({"messages": [{"role": "user", "content": "and what about V-7?"}]}, cfg)
    assert follow["question"] != "and what about V-7?"
    assert "V-7" in follow["question"]
    assert follow["steps"][0]["node"] == "condense"
    user = follow["messages"][-2]
    assert user.content == "and what about V-7?"  # what the user typed, and what it was read as
    assert user.additional_kwargs["standalone"] == follow["question"]
    assert len(follow["messages"]) == 4  # the client's message was marked, not duplicated


def test_pipeline_result_keeps_the_runs_reference(pipe):
    result = pipe.run(QUESTIONS[0], reference="The P-40 pump moves 40 litres per minute.")
    assert result.reference == "The P-40 pump moves 40 litres per minute."
    assert result.to_sample().reference == result.reference


def test_a_run_without_context_follows_the_servers_settings(tmp_path, monkeypatch, wordllama):
    """The server's RAGLOOP_* settings are the defaults of a run whose client sends none."""
    from ragloop.serve.graph import build_server_graph

    build_index(write_tiny_corpus(tmp_path / "corpus"), wordllama, "wordllama", tmp_path / "idx")
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_EMBEDDINGS", "wordllama")
    settings = load_settings(
        index_dir=tmp_path / "idx", web="off", k=1, max_iterations=0, retrieval="always"
    )
    graph = build_server_graph(settings)

    def retrieved(final):
        return [(s["retriever"], s["k"]) for s in final["steps"] if s["node"] == "retrieve"]

    bare = graph.invoke({"question": QUESTIONS[0]})
    assert retrieved(bare) == [("hybrid", 1)]
    assert not [s for s in bare["steps"] if s["node"] == "correct"]  # max_iterations=0
    # a partial context changes its fields only; the rest stay the server's
    some = graph.invoke({"question": QUESTIONS[0]}, context={"k": 2})
    assert retrieved(some) == [("hybrid", 2)]
    assert not [s for s in some["steps"] if s["node"] == "correct"]
