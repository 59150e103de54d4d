"""A streamed reply through the retrying client, over real HTTP (server-sent events): in order,
retried only before its first token, stopped at the reply cap, faults named."""

from __future__ import annotations

import asyncio
from functools import reduce
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.tracers._streaming import _StreamingCallbackHandler

from ragloop.errors import LLMError
from ragloop.llm.faults import with_llm_retries
from ragloop.llm.reply_cap import TRUNCATED_KEY, cut_at_cap
from ragloop.llm.streaming import REQUESTS_KEY
from tests.fakes.fixtures import FAKE_KEY, fake_chat_model
from tests.fakes.openai_server import breaks_after, error, reply, stream_pieces

TEXT = "The P-40 pump moves 40 litres per minute [1]."


def _model(server: Any, **kwargs: Any) -> Any:
    return with_llm_retries(fake_chat_model(server, **kwargs), 2, base_delay=0.01)


def _streamed(server: Any) -> list[Any]:
    return [r for r in server.chat_requests() if r.body.get("stream")]


async def _astream(model: Any) -> list[Any]:
    return [chunk async for chunk in model.astream("hi")]


@pytest.mark.parametrize("way", ["sync", "async"])
def test_the_reply_streams_word_by_word_in_order(openai_server, way):
    openai_server.default = reply(TEXT)
    model = _model(openai_server, max_tokens=100)
    chunks = list(model.stream("hi")) if way == "sync" else asyncio.run(_astream(model))
    words = [c.content for c in chunks if c.content]
    assert words == stream_pieces(TEXT) and len(words) > 3
    whole = reduce(lambda a, b: a + b, chunks)
    assert whole.content == TEXT
    assert len({c.id for c in chunks}) == 1  # one message: a chat UI merges the chunks
    assert whole.response_metadata[REQUESTS_KEY] == 1
    assert len(_streamed(openai_server)) == 1


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("fault", ["HTTP 503", "dropped before any token"])
def test_a_fault_before_the_first_token_is_retried(openai_server, way, fault):
    first = error(503) if fault == "HTTP 503" else breaks_after(0, TEXT)
    openai_server.script(first, reply(TEXT))
    model = _model(openai_server, max_tokens=100)
    chunks = list(model.stream("hi")) if way == "sync" else asyncio.run(_astream(model))
    whole = reduce(lambda a, b: a + b, chunks)
    assert whole.content == TEXT  # nothing of the failed attempt is left in the reply
    assert whole.response_metadata[REQUESTS_KEY] == 2
    assert len(_streamed(openai_server)) == 2


@pytest.mark.parametrize("way", ["sync", "async"])
def test_a_fault_after_tokens_went_out_is_an_error_not_a_resend(openai_server, way):
    openai_server.script(breaks_after(4, TEXT), reply(TEXT))
    model = _model(openai_server, max_tokens=100)
    got: list[str] = []

    async def consume() -> None:
        async for chunk in model.astream("hi"):
            got.append(chunk.text)

    def consume_sync() -> None:
        for chunk in model.stream("hi"):
            got.append(chunk.text)

    with pytest.raises(LLMError) as raised:
        consume_sync() if way == "sync" else asyncio.run(consume())
    message = str(raised.value)
    assert "broke off after" in message and "not resent" in message
    assert openai_server.url in message and FAKE_KEY not in message
    assert "".join(got) and TEXT.startswith("".join(got))  # what was shown stays as it was
    assert len(_streamed(openai_server)) == 1


def test_a_stream_past_the_cap_stops_there_and_records_the_cut(openai_server):
    openai_server.default = reply("word " * 200)
    model = _model(openai_server, max_tokens=4)  # 32 characters
    chunks = list(model.stream("hi"))
    whole = reduce(lambda a, b: a + b, chunks)
    assert len(whole.content) == 32 and whole.content == ("word " * 200)[:32]
    assert whole.response_metadata[TRUNCATED_KEY] >= 32
    assert "reply cap" in (cut_at_cap(whole) or "")


class _Watcher(AsyncCallbackHandler, _StreamingCallbackHandler):
    """A streaming callback handler, as LangGraph's messages mode attaches one."""

    def __init__(self) -> None:
        self.tokens: list[str] = []

    async def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)

    def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
        return output

    def tap_output_iter(self, run_id: Any, output: Any) -> Any:
        return output


def test_a_watched_call_streams_and_a_nostream_call_is_asked_whole(openai_server):
    from langgraph.constants import TAG_NOSTREAM

    from ragloop.llm.faults import NOSTREAM_TAG

    assert NOSTREAM_TAG == TAG_NOSTREAM
    openai_server.default = reply(TEXT)
    model = _model(openai_server, max_tokens=100)
    watched, quiet = _Watcher(), _Watcher()

    async def both() -> Any:  # one event loop: the client's connections belong to it
        out = await model.ainvoke("hi", config={"callbacks": [watched]})
        await model.ainvoke("hi", config={"callbacks": [quiet], "tags": [NOSTREAM_TAG]})
        return out

    out = asyncio.run(both())
    assert out.content == TEXT and len([t for t in watched.tokens if t]) > 3
    bodies = [r.body for r in openai_server.chat_requests()]
    assert [bool(b.get("stream")) for b in bodies] == [True, False]
