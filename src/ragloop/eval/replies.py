"""Reading JSON out of a model's reply: fenced or bare, validated, with a reason when not."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, get_origin

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MAX_CANDIDATES = 64


def text_of(message: BaseMessage) -> str:
    """The text of a reply, whether its content is a string or a list of blocks."""
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
