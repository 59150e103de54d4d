"""The one helper every LLM metric calls the model through: JSON out, one repair, counted."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any, get_origin

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MAX_CANDIDATES = 64
#: OpenAI reasoning models reject any temperature but the default (gpt-5-chat accepts one)
_FIXED_TEMPERATURE = re.compile(r"^(o\d|gpt-5(?!-chat))")


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@functools.lru_cache(maxsize=256)
def _schema_text(output_model: type[BaseModel]) -> str:
    """The JSON schema of an output model as text (built once per model: it is costly)."""
    return json.dumps(output_model.model_json_schema(), ensure_ascii=False)


@dataclass
class Prompt:
    """A judge prompt as data: an instruction, few-shot (input, output) pairs and a name."""

    name: str
    instruction: str
    examples: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)

    def render(self, inputs: dict[str, Any], output_model: type[BaseModel]) -> list[BaseMessage]:
        """Messages asking for one JSON object matching ``output_model``'s schema."""
        schema = _schema_text(output_model)
        system = (
            f"{self.instruction.strip()}\n\n"
            "Reply with one JSON object that conforms to this JSON schema, and nothing else:\n"
            f"{schema}"
        )
        parts = []
        for example_in, example_out in self.examples:
            parts.append(
                f"Example input:\n{_dump(example_in)}\nExample output:\n{_dump(example_out)}"
            )
        parts.append(f"Input:\n{_dump(inputs)}\nOutput:")
        return [SystemMessage(content=system), HumanMessage(content="\n\n".join(parts))]

    def with_instruction(self, instruction: str) -> Prompt:
        """A copy with another instruction (e.g. rubrics appended)."""
        return replace(self, instruction=instruction)


@dataclass
class JudgeResult:
    """What one ``ask`` produced: the validated output or the parse error, and its cost."""

    output: Any = None
    error: str | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    replies: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.output is not None


def _text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    chunks = []
    for block in content:
        if isinstance(block, str):
            chunks.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            chunks.append(str(block.get("text", "")))
    return "".join(chunks)


def json_candidates(text: str) -> list[Any]:
    """JSON values found in a reply: fenced blocks first, then any object/array in the prose."""
    text = _THINK.sub("", text)
    found: list[Any] = []
    for block in _FENCE.findall(text):
        with contextlib.suppress(json.JSONDecodeError):
            found.append(json.loads(block))
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch in "{["][:_MAX_CANDIDATES]
    end = -1
    for i in starts:
        if i < end:  # inside a value already decoded
            continue
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            continue
        found.append(value)
    return found


def _single_list_field(model: type[BaseModel]) -> str | None:
    fields = model.model_fields
    if len(fields) == 1:
        name, info = next(iter(fields.items()))
        if get_origin(info.annotation) is list:
            return name
    return None


def _describe(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors()[:4]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        problems.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - 4
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def parse_reply(
    text: str, output_model: type[BaseModel], check: Any = None
) -> tuple[Any, str | None]:
    """Validate the first JSON value in ``text`` that fits; else (None, the reason)."""
    candidates = json_candidates(text)
    if not candidates:
        snippet = text.strip()[:80].replace("\n", " ")
        return None, f"no JSON object found in the reply ({snippet!r})"
    wrap = _single_list_field(output_model)
    first_error: str | None = None
    for value in candidates:
        if isinstance(value, list) and wrap:
            value = {wrap: value}
        try:
            output = output_model.model_validate(value)
            if check is not None:
                check(output)
        except ValidationError as exc:
            first_error = first_error or f"reply does not match the schema: {_describe(exc)}"
            continue
        except ValueError as exc:
            first_error = first_error or f"reply is inconsistent with the input: {exc}"
            continue
        return output, None
    return None, first_error


class Judge:
    """Asks a chat model for JSON validated by a pydantic model; one repair, then an error.

    Temperature is bound to 0 by default where the model has a ``temperature`` field.
    Network errors and timeouts propagate (the runner retries); only parse failures are
    handled here. ``calls``/``input_tokens``/``output_tokens`` add up every request.
    """

    def __init__(
        self, llm: BaseChatModel, *, temperature: float = 0.0, timeout: float | None = None
    ):
        self.llm = self._bind_temperature(llm, temperature)
        self.temperature = temperature
        self.timeout = timeout
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

    async def _call(self, messages: list[BaseMessage], result: JudgeResult) -> str:
        request = self.llm.ainvoke(messages)
        reply = await (asyncio.wait_for(request, self.timeout) if self.timeout else request)
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
        text = _text_of(reply)
        result.replies.append(text)
        return text

    async def ask(
        self,
        prompt: Prompt,
        inputs: dict[str, Any],
        output_model: type[BaseModel],
        *,
        check: Any = None,
    ) -> JudgeResult:
        """Ask once; on a parse/validation failure ask exactly once more to repair it.

        ``check(output)`` may raise ``ValueError`` for a reply that parses but does not fit
        the input (e.g. a verdict list of the wrong length); that also triggers the repair.
        """
        result = JudgeResult()
        messages = prompt.render(inputs, output_model)
        text = await self._call(messages, result)
        output, error = parse_reply(text, output_model, check)
        if output is None:
            repair = HumanMessage(
                content=(
                    f"Your reply could not be used: {error}.\n"
                    "Reply again with only the corrected JSON object, conforming to the schema."
                )
            )
            text = await self._call([*messages, AIMessage(content=text), repair], result)
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
