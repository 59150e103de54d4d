"""A streamed reply under the retry policy: retried only until its first token is out.

Once a token has reached the caller (a chat UI shows it), a retry would show the reply
twice, so a fault after that point is surfaced as an error instead. Chunks that carry no
text (the role, an empty first delta) are held back until the first token, so a retried
attempt leaves nothing behind. Each chunk's text is redacted of the known secrets, and the
chunks lose the server's message id: LangChain then gives every chunk, and the message they
add up to, the run's own id, which is unique per call (a server may reuse one id for every
reply, and the answer's message in the graph state takes this id).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from langchain_core.outputs import ChatGenerationChunk

from ragloop.llm.retry import Failure, RetryPolicy, classify
from ragloop.redact import redact_text

#: ``response_metadata`` key of the last chunk: requests the reply took (retries included)
REQUESTS_KEY = "ragloop_requests"

Fail = Callable[[Failure, int, int, int], Exception]


def _clean(chunk: ChatGenerationChunk, secrets: list[str]) -> ChatGenerationChunk:
    message = chunk.message
    update: dict[str, Any] = {"id": None}
    if isinstance(message.content, str) and message.content:
        update["content"] = redact_text(message.content, secrets)
    return ChatGenerationChunk(
        message=message.model_copy(update=update), generation_info=chunk.generation_info
    )


def _last(chunk: ChatGenerationChunk, requests: int) -> ChatGenerationChunk:
    message = chunk.message
    metadata = {**message.response_metadata, REQUESTS_KEY: requests}
    return ChatGenerationChunk(
        message=message.model_copy(update={"response_metadata": metadata}),
        generation_info=chunk.generation_info,
    )


class _Attempt:
    """One attempt: chunks held back before its first token, and what the caller was given.

    The stream runs one chunk behind (``pending``) so that the last chunk can carry the
    request count.
    """

    def __init__(self) -> None:
        self.held: list[ChatGenerationChunk] = []
        self.started = False
        self.pending: ChatGenerationChunk | None = None
        self.shown = 0  # characters of text the caller was given

    def take(self, chunk: ChatGenerationChunk) -> list[ChatGenerationChunk]:
        """The chunks to give the caller now that ``chunk`` arrived."""
        if not self.started and not chunk.text:
            self.held.append(chunk)
            return []
        self.started = True
        ready, self.held = [*self.held, chunk], []
        return self._behind(ready)

    def finish(self, requests: int) -> list[ChatGenerationChunk]:
        """The chunks left at the end of the stream, the last marked with ``requests``."""
        out = self._behind(self.held)
        if self.pending is not None:
            out.append(_last(self.pending, requests))
        return out

    def _behind(self, ready: list[ChatGenerationChunk]) -> list[ChatGenerationChunk]:
        out = []
        for chunk in ready:
            if self.pending is not None:
                out.append(self.pending)
                self.shown += len(self.pending.text)
            self.pending = chunk
        return out


async def astream_with_retries(
    start: Callable[[], AsyncIterator[ChatGenerationChunk]],
    policy: RetryPolicy,
    secrets: list[str],
    fail: Fail,
    requests_of: Callable[[BaseException], int],
) -> AsyncIterator[ChatGenerationChunk]:
    """Chunks of ``start()``'s stream, restarted on a retryable fault before the first token.

    ``fail(failure, attempts, requests, shown)`` builds the error raised at the end (``shown``:
    characters already streamed); ``requests_of(exc)`` says whether a failed attempt reached
    the server (1) or not (0).
    """
    sent = 0
    for attempt in range(policy.max_retries + 1):
        state, chunks = _Attempt(), start()
        try:
            async for chunk in chunks:
                for out in state.take(_clean(chunk, secrets)):
                    yield out
            sent += 1
            for out in state.finish(sent):
                yield out
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            sent += requests_of(exc)
            failure = classify(exc, secrets)
            if state.shown:  # the caller has tokens of this reply: it is never sent again
                raise fail(failure, attempt + 1, sent, state.shown) from None
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        if not policy.retries(failure) or attempt == policy.max_retries:
            raise fail(failure, attempt + 1, sent, 0)
        await policy.sleep(policy.delay(attempt, failure))


def stream_with_retries(
    start: Callable[[], Iterator[ChatGenerationChunk]],
    policy: RetryPolicy,
    secrets: list[str],
    fail: Fail,
    requests_of: Callable[[BaseException], int],
) -> Iterator[ChatGenerationChunk]:
    """The synchronous twin of ``astream_with_retries``."""
    sent = 0
    for attempt in range(policy.max_retries + 1):
        state, chunks = _Attempt(), start()
        try:
            for chunk in chunks:
                yield from state.take(_clean(chunk, secrets))
            sent += 1
            yield from state.finish(sent)
            return
        except Exception as exc:  # noqa: BLE001 - classified below
            sent += requests_of(exc)
            failure = classify(exc, secrets)
            if state.shown:
                raise fail(failure, attempt + 1, sent, state.shown) from None
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        if not policy.retries(failure) or attempt == policy.max_retries:
            raise fail(failure, attempt + 1, sent, 0)
        time.sleep(policy.delay(attempt, failure))
