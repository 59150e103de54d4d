"""LLM calls of ``ask``/``chat`` with the runner's retry policy and one clear last error.

429, 5xx, refused connections, truncated bodies and hangs are retried as the evaluation
runner retries them (``eval/retry.py``); what is left is an ``LLMError`` naming the server
and what to do, with every secret redacted, instead of a several-hundred-line traceback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from ragloop.errors import LLMError
from ragloop.llm.retry import Failure, RetryPolicy, classify
from ragloop.llm.streaming import astream_with_retries, stream_with_retries
from ragloop.redact import redact_text, redact_value, secret_values, secrets_of

#: the tag of a call whose tokens nobody is shown (LangGraph's ``TAG_NOSTREAM``, spelt out:
#: the evaluation layer imports this module and loads no graph library)
NOSTREAM_TAG = "nostream"

_HINTS = {
    "connection": "is it running and reachable? check OPENAI_BASE_URL",
    "timeout": "it did not answer in time: check it is not overloaded, or raise the timeout",
    "rate_limited": "it is rate limiting: wait a minute and ask again",
    "server_error": "the server itself is failing: try again later or use another server",
    "bad_response": "its reply is not an OpenAI chat completion: check OPENAI_BASE_URL ends "
    "in /v1 of an OpenAI-compatible server",
    "client_error": "it rejected the request: check the model name (--llm openai:<model>)",
    "oversized": "lower --max-tokens, or use a server that honours max_tokens",
    "truncated": "raise --max-tokens (RAGLOOP_LLM_MAX_TOKENS)",
}


def server_of(model: Any) -> str:
    """Where a chat model sends its requests (base URL), for error messages."""
    for attr in ("openai_api_base", "base_url"):
        value = getattr(model, attr, None)
        if value:
            return str(value)
    return "api.openai.com" if "openai" in type(model).__name__.lower() else type(model).__name__


def _secrets(model: Any) -> list[str]:
    return [*secrets_of(model), *secret_values()]


def fault_message(
    model: Any, failure: Failure, attempts: int, secrets: list[str] | None = None
) -> str:
    """One line: which server failed, how, after how many attempts, and what to do.

    ``secrets``: the values to redact (default: the model's and the environment's).
    """
    hint = _HINTS.get(failure.kind, "see the reason above")
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    text = f"the LLM server {server_of(model)} failed{tries}: {failure.reason}; {hint}"
    return redact_text(text, _secrets(model) if secrets is None else secrets)


class RetryingChatModel(BaseChatModel):
    """Wraps a chat model: retryable faults are retried, the last one becomes an ``LLMError``.

    ``temperature`` is a field so a judge can bind it; it is applied to the wrapped model.
    A streamed reply (LangGraph's ``stream_mode="messages"``, ``.stream()``) is retried only
    until its first token is out (``llm/streaming.py``); a call tagged ``nostream`` (a graph
    step whose tokens nobody is shown) is asked for whole, as without streaming.
    """

    inner: BaseChatModel
    temperature: float | None = None
    max_retries: int = 3
    #: False (the local profile): a request that timed out is not sent again
    retry_timeouts: bool = True
    base_delay: float = 0.5
    _targets: dict[float | None, BaseChatModel] = PrivateAttr(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return f"ragloop-retrying-{self.inner._llm_type}"

    @property
    def model_name(self) -> str | None:
        return getattr(self.inner, "model_name", None) or getattr(self.inner, "model", None)

    @property
    def openai_api_base(self) -> str | None:
        return getattr(self.inner, "openai_api_base", None)

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {**dict(self.inner._identifying_params), "temperature": self.temperature}

    def target(self) -> BaseChatModel:
        """The wrapped model with this wrapper's temperature applied."""
        inner = self.inner
        if "temperature" in getattr(type(inner), "model_fields", {}) and (
            getattr(inner, "temperature", None) != self.temperature
        ):
            if self.temperature not in self._targets:
                self._targets[self.temperature] = inner.model_copy(
                    update={"temperature": self.temperature}
                )
            inner = self._targets[self.temperature]
        return inner

    def _policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=self.max_retries,
            base_delay=self.base_delay,
            max_delay=8.0,
            retry_timeouts=self.retry_timeouts,
        )

    def _done(self, result: ChatResult, sent: int) -> ChatResult:
        """The reply with any secret it echoes redacted, and how many requests it took."""
        from langchain_core.messages import message_to_dict, messages_from_dict

        secrets = _secrets(self.inner)
        result.generations = [
            ChatGeneration(
                message=messages_from_dict([redact_value(message_to_dict(g.message), secrets)])[0],
                generation_info=g.generation_info,
            )
            for g in result.generations
        ]
        result.llm_output = {**(result.llm_output or {}), "ragloop_requests": sent}
        return result

    def _fail(self, failure: Failure, attempts: int, sent: int, shown: int = 0) -> LLMError:
        text = fault_message(self.inner, failure, attempts)
        if shown:
            text += f" (the reply broke off after {shown} streamed characters; not resent)"
        error = LLMError(text)
        error.requests = sent  # type: ignore[attr-defined]
        error.streamed = shown  # type: ignore[attr-defined]
        error.kind = failure.kind  # type: ignore[attr-defined]
        error.status_code = failure.status  # type: ignore[attr-defined]
        return error

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        policy, target, secrets = self._policy(), self.target(), _secrets(self.inner)
        sent = 0
        for attempt in range(policy.max_retries + 1):
            try:
                result = target._generate(messages, stop=stop, **kwargs)
                return self._done(result, sent + 1)
            except Exception as exc:  # noqa: BLE001 - classified below
                sent += 0 if never_sent(exc) else 1
                failure = classify(exc, secrets)
            if not policy.retries(failure) or attempt == policy.max_retries:
                raise self._fail(failure, attempt + 1, sent) from None
            time.sleep(policy.delay(attempt, failure))
        raise AssertionError("unreachable")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        policy, target, secrets = self._policy(), self.target(), _secrets(self.inner)
        sent = 0
        for attempt in range(policy.max_retries + 1):
            try:
                result = await target._agenerate(messages, stop=stop, **kwargs)
                return self._done(result, sent + 1)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                sent += 0 if never_sent(exc) else 1
                failure = classify(exc, secrets)
            if not policy.retries(failure) or attempt == policy.max_retries:
                raise self._fail(failure, attempt + 1, sent) from None
            await policy.sleep(policy.delay(attempt, failure))
        raise AssertionError("unreachable")

    def _whole(self, run_manager: Any) -> bool:
        """True when this call is asked for whole although a caller could watch its tokens:
        a graph step tagged nostream is kept out of the messages stream anyway (its usage,
        reply cap and request count are then recorded as without streaming), and a wrapped
        model that cannot stream gives one reply."""
        if run_manager is not None and NOSTREAM_TAG in (run_manager.tags or []):
            return True
        inner = type(self.inner)
        return inner._stream == BaseChatModel._stream and inner._astream == BaseChatModel._astream

    def _should_stream(self, *, async_api: bool, run_manager: Any = None, **kwargs: Any) -> bool:
        if self._whole(run_manager):
            return False
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)

    def _should_use_protocol_streaming(
        self, *, async_api: bool, run_manager: Any = None, **kwargs: Any
    ) -> bool:
        if self._whole(run_manager):
            return False
        return super()._should_use_protocol_streaming(
            async_api=async_api, run_manager=run_manager, **kwargs
        )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        target = self.target()
        return stream_with_retries(
            lambda: target._stream(messages, stop=stop, **kwargs),
            self._policy(),
            _secrets(self.inner),
            self._fail,
            lambda exc: 0 if never_sent(exc) else 1,
        )

    def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        target = self.target()
        return astream_with_retries(
            lambda: target._astream(messages, stop=stop, **kwargs),
            self._policy(),
            _secrets(self.inner),
            self._fail,
            lambda exc: 0 if never_sent(exc) else 1,
        )


def never_sent(exc: BaseException) -> bool:
    """True when a request failed before reaching the server (connection refused, DNS)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = {cls.__name__ for cls in type(current).__mro__}
        if names & {"ConnectionRefusedError", "ConnectError", "ClientConnectorError"}:
            return True
        current = current.__cause__ or current.__context__
    return False


def with_llm_retries(
    model: BaseChatModel | None,
    max_retries: int = 3,
    *,
    retry_timeouts: bool = True,
    base_delay: float = 0.5,
) -> Any:
    """``model`` wrapped in ``RetryingChatModel`` (None, the offline mode, stays None)."""
    if model is None or isinstance(model, RetryingChatModel):
        return model
    return RetryingChatModel(
        inner=model,
        temperature=getattr(model, "temperature", None),
        max_retries=max_retries,
        retry_timeouts=retry_timeouts,
        base_delay=base_delay,
    )
