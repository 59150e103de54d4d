"""The one helper every LLM step and metric calls the model through: JSON out, counted.

Native structured output first: the request carries a ``response_format`` the server
constrains its reply with (``json_schema`` for OpenAI, ``json_object`` with the schema for
llama.cpp-style servers), chosen per server (``llm/profile.structured_method``).
The schema is in the prompt as well (vLLM's and Ollama's json_object do not constrain to
it). A server that refuses the field (HTTP 400/404/415/422/501) is asked again without it,
and every later ask of this judge goes that way; the result says which
method answered and why a fallback was taken. A reply that does not validate is repaired
once, by the same method.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from ragloop.eval.prompt import Prompt, load_prompt, schema_of
from ragloop.eval.replies import json_candidates, parse_reply, text_of
from ragloop.llm.profile import is_local_url, structured_method

__all__ = [
    "Judge",
    "JudgeResult",
    "Prompt",
    "json_candidates",
    "load_prompt",
    "parse_reply",
    "response_format",
]

#: OpenAI reasoning models reject any temperature but the default (gpt-5-chat accepts one)
_FIXED_TEMPERATURE = re.compile(r"^(o\d|gpt-5(?!-chat))")
#: statuses that mean "this server does not take that response_format"
REFUSED_STATUS = frozenset({400, 404, 415, 422, 501})


@dataclass
class JudgeResult:
    """What one ``ask`` produced: the validated output or the parse error, and its cost."""

    output: Any = None
    error: str | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    replies: list[str] = field(default_factory=list)
    #: how the reply was asked for: json_schema, json_object or prompt
    method: str = "prompt"
    #: why the prompt path answered although a native method was chosen, else None
    fallback: str | None = None

    @property
    def ok(self) -> bool:
        return self.output is not None


def response_format(method: str, output_model: Any) -> dict[str, Any]:
    """The ``response_format`` request field of a native method for ``output_model``."""
    schema = schema_of(output_model)
    if method == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", output_model.__name__)[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    return {"type": "json_object", "schema": schema}


def _innermost(llm: Any) -> Any:
    seen = 0
    while getattr(llm, "inner", None) is not None and seen < 8:
        llm, seen = llm.inner, seen + 1
    return llm


def native_method(llm: Any, requested: str = "auto") -> tuple[str, str | None]:
    """The structured-output method for ``llm`` and, when it is ``prompt``, why."""
    inner = _innermost(llm)
    speaks_openai = any(c.__name__ == "BaseChatOpenAI" for c in type(inner).__mro__)
    if requested == "prompt":
        return "prompt", None
    if not speaks_openai:
        return "prompt", f"{type(inner).__name__} takes no response_format: schema in the prompt"
    return structured_method(getattr(inner, "openai_api_base", None), requested), None


def is_local_model(llm: Any) -> bool:
    """True for an OpenAI-compatible model served on this machine (the local profile's)."""
    inner = _innermost(llm)
    return is_local_url(getattr(inner, "openai_api_base", None))


def _refused(exc: BaseException) -> str | None:
    """A short reason when ``exc`` says the server does not take the response_format."""
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if status in REFUSED_STATUS:
        return f"HTTP {status}"
    return None


def _cut_at_cap(exc: BaseException) -> bool:
    """True for the SDK's error on a structured reply cut at the reply cap."""
    names = {c.__name__ for c in type(exc).__mro__}
    return "LengthFinishReasonError" in names or getattr(exc, "kind", None) == "truncated"


class Judge:
    """Asks a chat model for JSON validated by a pydantic model; one repair, then an error.

    Temperature is bound to 0 by default where the model has a ``temperature`` field.
    Network errors and timeouts propagate (the runner retries); only parse failures are
    handled here. ``calls``/``input_tokens``/``output_tokens`` add up every request.
    ``structured`` picks the method (auto: by server); ``compact`` drops the few-shot
    examples (None: for a server on this machine, as the local profile does).
    """

    def __init__(
        self,
        llm: BaseChatModel,
        *,
        temperature: float = 0.0,
        timeout: float | None = None,
        structured: str = "auto",
        compact: bool | None = None,
    ):
        self.llm = self._bind_temperature(llm, temperature)
        self.temperature = temperature
        self.timeout = timeout
        self.method, self.refused = native_method(llm, structured)
        self.compact = is_local_model(llm) if compact is None else compact
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self._lock = threading.Lock()

    @staticmethod
    def _bind_temperature(llm: BaseChatModel, temperature: float) -> BaseChatModel:
        """A copy with ``temperature`` set, unless the model has none or is a reasoning model."""
        fields = getattr(type(llm), "model_fields", {})
        model = str(getattr(llm, "model_name", None) or getattr(llm, "model", None) or "")
        if _FIXED_TEMPERATURE.match(model.lower()):  # the API accepts only the default there
            return llm
        if "temperature" in fields and getattr(llm, "temperature", None) != temperature:
            return llm.model_copy(update={"temperature": temperature})
        return llm

    async def _call(self, messages: list[BaseMessage], result: JudgeResult, **kw: Any) -> str:
        try:
            request = self.llm.ainvoke(messages, **kw)
            reply = await (asyncio.wait_for(request, self.timeout) if self.timeout else request)
        except Exception as exc:
            if not _cut_at_cap(exc):
                raise
            with self._lock:
                self.calls += 1
            result.calls += 1
            result.replies.append("")
            return ""  # unusable: the repair turn asks again, the reason says why
        usage = getattr(reply, "usage_metadata", None) or {}
        tokens_in, tokens_out = (
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
        )
        with self._lock:
            self.calls += 1
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
        result.calls += 1
        result.input_tokens += tokens_in
        result.output_tokens += tokens_out
        text = text_of(reply)
        result.replies.append(text)
        return text

    def _render(self, prompt: Prompt, inputs: dict[str, Any], output_model: Any, method: str):
        # the schema stays in the prompt even when the server constrains the reply: vLLM and
        # Ollama take json_object without its schema, and the model must know the fields
        return prompt.render(inputs, output_model, examples=not self.compact, compact=self.compact)

    async def _first(
        self, prompt: Prompt, inputs: dict[str, Any], output_model: Any, result: JudgeResult
    ) -> tuple[list[BaseMessage], dict[str, Any], str]:
        """The first request, natively where the server takes it; (messages, kwargs, reply)."""
        method = result.method = self.method if self.refused is None else "prompt"
        messages = self._render(prompt, inputs, output_model, method)
        if method == "prompt":
            result.fallback = self.refused if self.method != "prompt" else None
            return messages, {}, await self._call(messages, result)
        kw = {"response_format": response_format(method, output_model)}
        try:
            return messages, kw, await self._call(messages, result, **kw)
        except Exception as exc:
            why = _refused(exc)
            if why is None:
                raise
        self.refused = f"the server refused response_format {method} ({why}): schema in the prompt"
        result.method, result.fallback = "prompt", self.refused
        messages = self._render(prompt, inputs, output_model, "prompt")
        return messages, {}, await self._call(messages, result)

    async def ask(
        self,
        prompt: Prompt,
        inputs: dict[str, Any],
        output_model: Any,
        *,
        check: Any = None,
    ) -> JudgeResult:
        """Ask once; on a parse/validation failure ask exactly once more to repair it.

        ``check(output)`` may raise ``ValueError`` for a reply that parses but does not fit
        the input (e.g. an id missing from the grades); that also triggers the repair.
        """
        result = JudgeResult()
        messages, kw, text = await self._first(prompt, inputs, output_model, result)
        output, error = parse_reply(text, output_model, check)
        if not text:
            error = "the reply was empty or cut at the reply cap (raise --max-tokens)"
        if output is None:
            repair = HumanMessage(
                content=(
                    f"Your reply could not be used: {error}.\n"
                    "Reply again with only the corrected JSON object, conforming to the schema."
                )
            )
            text = await self._call([*messages, AIMessage(content=text), repair], result, **kw)
            output, error = parse_reply(text, output_model, check)
        result.output = output
        if output is None:
            result.error = f"judge '{prompt.name}' reply unusable after one repair: {error}"
        return result

    def usage(self) -> dict[str, int]:
        """Calls and tokens so far."""
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }
