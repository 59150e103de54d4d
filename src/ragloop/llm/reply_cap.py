"""A reply cap the client enforces itself, whatever the server does with the one it is sent.

A local server that ignores the reply cap can answer with megabytes, or stream without end.
Two guards stop that on the client: the HTTP transport reads at most ``max_bytes`` of a
response body and for at most ``deadline`` seconds in all (httpx's timeout is per read, so
a server that trickles bytes never trips it), and ``CappedChatOpenAI`` cuts a reply text
longer than its character cap, saying so in the message's metadata and the log (a streamed
reply stops at the cap, hangs up, and its last chunk says so). A body past
the byte cap is discarded (a cut JSON document cannot be read) and the request fails as
``oversized``, which is never retried: the same server would send the same flood again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

try:  # the HTTP library the openai SDK speaks: httpx2 from openai 3 on, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older openai
    import httpx  # type: ignore[no-redef]

log = logging.getLogger(__name__)

#: bytes a reply body may have besides its tokens (JSON envelope, usage, SSE framing)
BODY_OVERHEAD = 64 * 1024
#: bytes allowed per token of the reply cap (streamed chunks repeat their envelope)
BYTES_PER_TOKEN = 256
#: characters of reply text allowed per token of the reply cap (a token is ~4 characters)
CHARS_PER_TOKEN = 8
#: the byte cap when no reply cap is set
UNCAPPED_BYTES = 8 * 1024 * 1024
TRUNCATED_KEY = "ragloop_truncated"


def cut_at_cap(message: Any) -> str | None:
    """Why ``message`` (a reply) is cut short, else None: the client cut it at its cap, or
    the server stopped at the ``max_tokens`` it was sent (finish reason ``length``)."""
    metadata = getattr(message, "response_metadata", None) or {}
    if metadata.get(TRUNCATED_KEY):
        return f"cut by the client at the reply cap ({metadata[TRUNCATED_KEY]} characters read)"
    if metadata.get("finish_reason") == "length":
        return "the server stopped at the reply cap (max_tokens)"
    return None


def body_cap(max_tokens: int | None) -> int:
    """Bytes a reply body may have under a reply cap of ``max_tokens`` tokens."""
    return UNCAPPED_BYTES if max_tokens is None else BODY_OVERHEAD + BYTES_PER_TOKEN * max_tokens


def text_cap(max_tokens: int | None) -> int | None:
    """Characters a reply text may have under a reply cap of ``max_tokens`` tokens."""
    return None if max_tokens is None else CHARS_PER_TOKEN * max_tokens


class ReplyTooLarge(httpx.ReadError):
    """A response body passed the byte cap: the server ignored the reply cap."""

    ragloop_kind = "oversized"


class ReplyDeadline(httpx.ReadTimeout):
    """A response body was still arriving when the request's total time ran out."""


class _Guard:
    def __init__(self, max_bytes: int, deadline: float | None, request: httpx.Request):
        self.max_bytes, self.request = max_bytes, request
        self.until = None if deadline is None else time.monotonic() + deadline
        self.seen = 0

    def check(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        if self.seen > self.max_bytes:
            raise ReplyTooLarge(
                f"reply larger than {self.max_bytes} bytes: the server ignores the reply cap "
                "(max_tokens); the reply was cut off and discarded",
                request=self.request,
            )
        if self.until is not None and time.monotonic() > self.until:
            raise ReplyDeadline("reply still arriving at the timeout", request=self.request)


class _CappedStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    def __init__(self, inner: Any, guard: _Guard):
        self.inner, self.guard = inner, guard

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            self.guard.check(chunk)
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.guard.check(chunk)
            yield chunk

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()


def _capped(response: httpx.Response, guard: _Guard) -> httpx.Response:
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        stream=_CappedStream(response.stream, guard),
        extensions=response.extensions,
        request=guard.request,
    )


class CappedTransport(httpx.BaseTransport):
    """Sync transport: response bodies read up to ``max_bytes`` and ``deadline`` seconds."""

    def __init__(self, max_bytes: int, deadline: float | None):
        self.inner = httpx.HTTPTransport()
        self.max_bytes, self.deadline = max_bytes, deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        guard = _Guard(self.max_bytes, self.deadline, request)
        return _capped(self.inner.handle_request(request), guard)

    def close(self) -> None:
        self.inner.close()


class AsyncCappedTransport(httpx.AsyncBaseTransport):
    """Async transport: response bodies read up to ``max_bytes`` and ``deadline`` seconds."""

    def __init__(self, max_bytes: int, deadline: float | None):
        self.inner = httpx.AsyncHTTPTransport()
        self.max_bytes, self.deadline = max_bytes, deadline

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        guard = _Guard(self.max_bytes, self.deadline, request)
        return _capped(await self.inner.handle_async_request(request), guard)

    async def aclose(self) -> None:
        await self.inner.aclose()


def capped_clients(max_tokens: int | None, deadline: float | None) -> dict[str, Any]:
    """``http_client``/``http_async_client`` for ``ChatOpenAI`` enforcing the byte cap."""
    import openai

    limit = body_cap(max_tokens)
    return {
        "http_client": openai.DefaultHttpxClient(transport=CappedTransport(limit, deadline)),
        "http_async_client": openai.DefaultAsyncHttpxClient(
            transport=AsyncCappedTransport(limit, deadline)
        ),
    }


class CappedChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that sends ``max_tokens`` where the server needs it and cuts long replies.

    ``send_max_tokens``: the reply cap goes out as ``max_tokens`` (what llama.cpp, Ollama
    and vLLM read) instead of ``max_completion_tokens`` (OpenAI's name, which llama.cpp's
    server ignores). ``reply_chars``: a reply text past it is cut, and the message's
    ``response_metadata["ragloop_truncated"]`` holds the length it had.
    """

    send_max_tokens: bool = False
    reply_chars: int | None = None

    def _get_request_payload(self, input_: Any, *, stop: Any = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if self.send_max_tokens and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    def _cut(self, message: Any) -> None:
        text = message.content
        if self.reply_chars is None or not isinstance(text, str) or len(text) <= self.reply_chars:
            return
        message.content = text[: self.reply_chars]
        message.response_metadata[TRUNCATED_KEY] = len(text)
        log.warning("LLM reply of %d characters cut to %d", len(text), self.reply_chars)

    def _create_chat_result(self, response: Any, generation_info: Any = None) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        for generation in result.generations:
            self._cut(generation.message)
        return result

    def _capped(self, chunk: ChatGenerationChunk, seen: int) -> ChatGenerationChunk | None:
        """``chunk`` cut to what the cap leaves after ``seen`` characters (None: nothing)."""
        left = None if self.reply_chars is None else self.reply_chars - seen
        text = chunk.message.content
        if left is None or not isinstance(text, str) or len(text) <= left:
            return chunk
        if left <= 0:
            return None
        message = chunk.message.model_copy(update={"content": text[:left]})
        return ChatGenerationChunk(message=message, generation_info=chunk.generation_info)

    def _stopped(self, seen: int) -> ChatGenerationChunk:
        """The chunk that ends a stream stopped at the cap, recording the cut."""
        log.warning("LLM reply stream stopped at the cap of %s characters", self.reply_chars)
        metadata = {TRUNCATED_KEY: seen}
        return ChatGenerationChunk(message=AIMessageChunk(content="", response_metadata=metadata))

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        seen, chunks = 0, super()._stream(*args, **kwargs)
        try:
            for chunk in chunks:
                cut = self._capped(chunk, seen)
                seen += len(chunk.text)
                if cut is not None:
                    yield cut
                if self.reply_chars is not None and seen >= self.reply_chars:
                    yield self._stopped(seen)
                    return
        finally:  # closing the stream closes the connection: the server stops generating
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        seen, chunks = 0, super()._astream(*args, **kwargs)
        try:
            async for chunk in chunks:
                cut = self._capped(chunk, seen)
                seen += len(chunk.text)
                if cut is not None:
                    yield cut
                if self.reply_chars is not None and seen >= self.reply_chars:
                    yield self._stopped(seen)
                    return
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
