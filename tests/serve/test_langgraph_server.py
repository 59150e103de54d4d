"""The graph on LangGraph Server (``langgraph dev``), driven through its own client.

One offline server for the module (started once, stopped at the end): threads, runs.wait,
streamed updates, two turns on one thread, per-run context validated like settings, traces
recorded. One more server answers with an LLM (the fake OpenAI server on 127.0.0.1) for the
answer streamed token by token as agent-chat-ui receives it.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph_sdk", reason="langgraph-sdk missing: pip install 'ragloop[server]'")
pytest.importorskip(
    "langgraph_api", reason="langgraph-cli[inmem] missing: pip install 'ragloop[server]'"
)

from langgraph_sdk import get_client  # noqa: E402

from ragloop.chat.traces import TraceStore  # noqa: E402
from ragloop.nodes.condense import CONDENSE_INSTRUCTION  # noqa: E402
from ragloop.serve.dev import start_dev_server, stop_server, wait_ready, write_config  # noqa: E402
from tests.fakes.fixtures import FAKE_KEY  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.serve.conftest import offline_server_env  # noqa: E402
from tests.test_graph_llm import respond  # noqa: E402

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
Q1 = "How much does an interlibrary loan cost?"


def _dev_server(tmp: Path, **extra: str) -> Any:
    if (
        shutil.which("langgraph") is None
        and not (Path(sys.executable).parent / "langgraph").exists()
    ):
        pytest.skip("langgraph CLI missing: pip install 'ragloop[server]'")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = offline_server_env(tmp, **extra)
    proc = start_dev_server(write_config(tmp / "srv"), port, env, log=tmp / "server.log")
    try:
        wait_ready(port, proc)
        yield {"url": f"http://127.0.0.1:{port}", "data": tmp / "data", "log": tmp / "server.log"}
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from _dev_server(tmp_path_factory.mktemp("server"))


def _llm_reply(body: dict) -> Any:
    """The fake model: the graph's prompts as ``respond`` answers them; a follow-up condensed."""
    if body["messages"][0]["content"].startswith(CONDENSE_INSTRUCTION[:60]):
        return "How long does an interlibrary loan take?"
    return respond(body)


@pytest.fixture(scope="module")
def llm_server(tmp_path_factory):
    with FakeOpenAIServer(_llm_reply) as fake:
        llm = {"RAGLOOP_LLM": "openai:fake-model", **fake.env(FAKE_KEY)}
        yield from _dev_server(tmp_path_factory.mktemp("llm-server"), **llm)


def _run(coro):
    return asyncio.run(coro)


def test_thread_two_turns_streamed_and_traced(server):
    async def go():
        client = get_client(url=server["url"])
        thread = (await client.threads.create())["thread_id"]
        first = await client.runs.wait(thread, "ragloop", input={"question": Q1})
        nodes = []
        async for part in client.runs.stream(
            thread,
            "ragloop",
            input={"question": "and how long does that take?"},
            stream_mode="updates",
        ):
            if part.event == "updates":
                nodes.extend(part.data)
        state = (await client.threads.get_state(thread))["values"]
        return thread, first, nodes, state

    thread, first, nodes, state = _run(go())
    # answer quality is the loop's business (its own tests); here: a cited answer came back
    assert first["answer"] and first["citations"]
    assert nodes[0] == "condense" and nodes[-1] == "remember" and "judge" in nodes
    messages = state["messages"]
    assert [m["type"] for m in messages] == ["human", "ai"] * 2
    standalone = messages[2]["additional_kwargs"]["standalone"]
    assert standalone == state["question"] != "and how long does that take?"
    rows = TraceStore(server["data"] / "traces.sqlite").turns(thread=thread)
    assert [r.original for r in rows] == [Q1, "and how long does that take?"]
    assert all(r.source == "server" for r in rows)


def test_per_run_context_and_defaults(server):
    async def go():
        client = get_client(url=server["url"])
        out = {}
        for name, ctx in {
            "default": None,
            "capped": {"retrievers": ["sparse", "dense"], "k": 2, "max_iterations": 0,
                       "retrieval": "always", "judge_mode": "second_response"},
        }.items():  # fmt: skip
            thread = (await client.threads.create())["thread_id"]
            kwargs = {"context": ctx} if ctx else {}
            await client.runs.wait(thread, "ragloop", input={"question": Q1}, **kwargs)
            out[name] = (await client.threads.get_state(thread))["values"]  # internals too
        return out

    out = _run(go())
    assert out["default"]["answer"] and out["default"]["iteration"] <= 3
    capped = out["capped"]
    assert capped["tried"][0][0] == "sparse"  # the order the context chose
    assert len(capped["candidates"]) <= 2 and capped["iteration"] == 0
    assert capped["stop_reason"] in ("sufficient", "max_iterations")


@pytest.mark.parametrize(
    "ctx, needle",
    [
        ({"judge_mode": "bogus"}, "judge_mode"),
        ({"k": -1}, "'k'"),
        ({"max_iterations": "three"}, "max_iterations"),
        ({"max_iterations": 500}, "max_iterations"),
        ({"retrievers": ["nope"]}, "nope"),
        ({"index_dir": "/etc"}, "unknown context key 'index_dir'"),
    ],
)
def test_bad_context_is_a_clear_error(server, ctx, needle):
    async def go():
        client = get_client(url=server["url"])
        thread = (await client.threads.create())["thread_id"]
        try:
            result = await client.runs.wait(thread, "ragloop", input={"question": Q1}, context=ctx)
        except Exception as exc:  # the SDK raises the run's error
            return str(exc)
        return str(result)

    message = _run(go())
    assert needle in message and ("context" in message or "retriever" in message)


def test_chat_ui_input_streams_the_answer_and_the_second_turn_uses_the_first(server):
    """What LangGraph Studio and agent-chat-ui send: a user message, streamed as messages."""

    async def go():
        client = get_client(url=server["url"])
        thread = (await client.threads.create())["thread_id"]
        turns = []
        for text, mode in [(Q1, "messages-tuple"), ("and how long does that take?", "messages")]:
            events = []
            async for part in client.runs.stream(
                thread,
                "ragloop",
                input={"messages": [{"role": "user", "content": text}]},
                stream_mode=[mode, "values"],
            ):
                events.append((part.event, part.data))
            turns.append(events)
        return turns, (await client.threads.get_state(thread))["values"]

    (first, second), state = _run(go())
    streamed = [d[0] for e, d in first if e == "messages"]  # messages-tuple: (message, meta)
    final = [d for e, d in first if e == "values"][-1]
    assert [m["content"] for m in streamed if m["type"].startswith("ai")] == [final["answer"]]
    complete = [d for e, d in second if e == "messages/complete"]
    assert complete and complete[-1][-1]["content"] == state["answer"]
    assert "interlibrary loan" in state["question"].lower()  # the follow-up read the first turn
    assert [m["type"] for m in state["messages"]] == ["human", "ai"] * 2
    assert state["messages"][2]["content"] == "and how long does that take?"


def test_with_an_llm_the_sdk_gets_the_answer_token_by_token_and_a_follow_up(llm_server):
    """agent-chat-ui's input and stream modes against a server answering with an LLM: the
    answer arrives in several chunks of one message, whose id the thread's answer keeps."""

    async def go():
        client = get_client(url=llm_server["url"])
        thread = (await client.threads.create())["thread_id"]
        turns = []
        for text in (Q1, "and how long does that take?"):
            events = []
            async for part in client.runs.stream(
                thread,
                "ragloop",
                input={"messages": [{"role": "user", "content": text}]},
                stream_mode=["messages-tuple", "values"],
            ):
                events.append((part.event, part.data))
            turns.append(events)
        return turns, (await client.threads.get_state(thread))["values"]

    turns, state = _run(go())
    answers = [m for m in state["messages"] if m["type"] == "ai"]
    assert [m["type"] for m in state["messages"]] == ["human", "ai"] * 2
    for events, answer in zip(turns, answers, strict=True):
        chunks = [
            message
            for event, (message, meta) in ((e, d) for e, d in events if e == "messages")
            if meta["langgraph_node"] == "answer" and message["content"]
        ]
        assert len(chunks) > 1  # token by token, not one message at the end
        assert "".join(c["content"] for c in chunks) == answer["content"]
        assert {c["id"] for c in chunks} == {answer["id"]}  # agent-chat-ui merges them
    assert "interlibrary loan" in state["question"].lower()  # the follow-up read the first turn


@pytest.mark.parametrize(
    "inputs, needle",
    [
        ({"mesages": [{"role": "user", "content": "hi"}]}, "unknown input key 'mesages'"),
        ({"question": 12345}, "'question' must be text"),
        ({"question": ["a", "list"]}, "'question' must be text, got a list"),
        ({"question": "x" * 9000}, "the limit is 8,000"),
    ],
)
def test_bad_input_is_a_clear_error(server, inputs, needle):
    async def go():
        client = get_client(url=server["url"])
        thread = (await client.threads.create())["thread_id"]
        try:
            result = await client.runs.wait(thread, "ragloop", input=inputs)
        except Exception as exc:  # the SDK raises the run's error
            return str(exc)
        return str(result)

    assert needle in _run(go())


def test_schemas_are_published(server):
    async def go():
        client = get_client(url=server["url"])
        (assistant,) = await client.assistants.search(graph_id="ragloop")
        return await client.assistants.get_schemas(assistant["assistant_id"])

    schemas = _run(go())
    assert set(schemas["input_schema"]["properties"]) == {
        "question", "messages", "reference", "reference_contexts"
    }  # fmt: skip
    output = set(schemas["output_schema"]["properties"])
    assert {"messages", "answer", "citations", "scores", "not_found", "stop_reason"} <= output
    assert "judgment" not in output
    assert "max_iterations" in schemas["context_schema"]["properties"]
