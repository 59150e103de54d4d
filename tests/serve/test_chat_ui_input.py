"""What LangGraph Studio, agent-chat-ui and the SDK send, in process: messages in, messages out,
the answer in ``stream_mode="messages"``, and bad input refused with the field named."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langgraph.checkpoint.memory import InMemorySaver

from ragloop.config import Context
from ragloop.errors import ConfigError
from ragloop.graph.builder import build_graph
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.base import Deps
from ragloop.nodes.llm import LLMStrategies
from ragloop.nodes.offline import OfflineStrategies
from tests.fakes.chat import ScriptedChatModel

ANSWER = "The P-40 pump moves 40 litres per minute [1]."


def _studio(text: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def test_studio_input_two_turns_and_the_answer_as_a_message(small_pipe):
    graph = build_graph(small_pipe.deps, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "ui"}}
    streamed = list(
        graph.stream(_studio("How fast is the P-40 pump?"), cfg, stream_mode="messages")
    )
    first = graph.get_state(cfg).values
    answers = [m for m, meta in streamed if isinstance(m, AIMessage)]
    assert [m.content for m in answers] == [first["answer"]] and "40 litres" in first["answer"]
    assert streamed[-1][1]["langgraph_node"] == "remember"
    # agent-chat-ui sends content as text blocks; the follow-up reads the first turn
    blocks = [{"type": "text", "text": "and what about V-7?"}]
    second = graph.invoke(_studio(blocks), cfg)
    assert "V-7" in second["question"] and second["question"] != "and what about V-7?"
    assert [type(m) for m in second["messages"]] == [HumanMessage, AIMessage] * 2
    assert second["messages"][2].additional_kwargs["standalone"] == second["question"]
    assert second["messages"][-1].content == second["answer"]


@pytest.mark.parametrize(
    "inputs, needle",
    [
        ({"question": 12345}, "'question' must be text, got a number"),
        ({"question": ["How fast", "is the pump?"]}, "'question' must be text, got a list"),
        ({"question": {"text": "hi"}}, "'question' must be text, got an object"),
        ({"question": "x" * 9000}, "'question' is 9,000 characters; the limit is 8,000"),
        (_studio("y" * 9000), "'messages' is 9,000 characters"),
        ({"question": "ok?", "reference": 3}, "'reference' must be text or null"),
        ({"question": "ok?", "reference_contexts": "one"}, "'reference_contexts' must be a list"),
        ({}, "the turn has no question"),
        (_studio("   "), "the turn has no question"),
    ],
)
def test_bad_input_is_refused_naming_the_field(small_pipe, inputs, needle):
    graph = build_graph(small_pipe.deps)
    with pytest.raises(ConfigError) as caught:
        graph.invoke(inputs)
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    "inputs, named, hint",
    [
        ({"mesages": [{"role": "user", "content": "How fast?"}]}, "'mesages'", "'messages'"),
        ({"questoin": "How fast is the P-40 pump?"}, "'questoin'", "'question'"),
        ({"question": "How fast?", "refrence": "40 l/min"}, "'refrence'", "'reference'"),
    ],
)
def test_a_misspelt_input_key_is_named_with_the_accepted_ones(small_pipe, inputs, named, hint):
    graph = build_graph(small_pipe.deps)
    with pytest.raises(ConfigError) as caught:
        graph.invoke(inputs)
    text = str(caught.value)
    assert f"unknown input key {named} (did you mean {hint}?)" in text
    assert "a turn takes messages, question, reference, reference_contexts" in text


def test_the_question_cap_is_a_setting(small_pipe):
    assert small_pipe.deps.max_question_chars == 8000  # Settings -> the graph's deps
    deps = dataclasses.replace(small_pipe.deps, max_question_chars=10)
    with pytest.raises(ConfigError, match="limit is 10 "):
        build_graph(deps).invoke({"question": "How fast is the P-40 pump?"})


class StreamingScripted(ScriptedChatModel):
    """A scripted model that streams its reply word by word, as a real server does."""

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        for word in self._next(messages).split(" "):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word + " "))
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for word in self._next(messages).split(" "):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word + " "))
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


def test_llm_answer_streams_token_by_token_and_nothing_else_does(small_pipe, wordllama):
    """Every call gets the same prose: the JSON steps fall back (and stay out of the stream),
    the answer step streams its tokens."""
    llm = StreamingScripted(script=[ANSWER])
    offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
    deps = Deps(
        strategies=LLMStrategies(llm, wordllama, offline), retrievers=small_pipe.deps.retrievers
    )
    graph = build_graph(deps)

    async def go() -> list[tuple[Any, dict[str, Any]]]:
        ctx = Context(retrievers=("hybrid",), max_iterations=0, retrieval="always")
        return [
            part
            async for part in graph.astream(
                _studio("How fast is the P-40 pump?"), context=ctx, stream_mode="messages"
            )
        ]

    parts = asyncio.run(go())
    assert len(llm.calls) > 1  # the draft and judge asked the model too
    nodes = {meta["langgraph_node"] for _, meta in parts}
    assert nodes <= {"answer", "remember"}, nodes
    tokens = [m.content for m, meta in parts if meta["langgraph_node"] == "answer" and m.content]
    assert len(tokens) == len(ANSWER.split(" ")) and "".join(tokens).strip() == ANSWER


def test_agent_chat_ui_message_shape_keeps_its_id(small_pipe):
    """agent-chat-ui sends {"type": "human", "id": ..., "content": [text blocks]}."""
    graph = build_graph(small_pipe.deps, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "agent-chat-ui"}}
    message = {
        "type": "human",
        "id": "m-1",
        "content": [{"type": "text", "text": "When does valve V-7 close?"}],
    }
    final = graph.invoke({"messages": [message]}, cfg)
    user, answer = final["messages"]
    assert user.id == "m-1" and user.additional_kwargs["standalone"] == "When does valve V-7 close?"
    assert answer.content == final["answer"] and "3 bar" in final["answer"]
