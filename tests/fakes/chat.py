"""A scripted chat model that records its calls, for counting LLM calls in tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Reply = str | dict | list | Callable[[list[BaseMessage]], Any]


class ScriptedChatModel(BaseChatModel):
    """Answers from a script, in order (cycling through the last item when it runs out).

    A script item is a string, a dict/list (sent as JSON), or a callable receiving the
    messages and returning one of those. Every call is recorded in ``calls``.
    """

    script: list[Any] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    tokens_per_call: int = 10

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next(self, messages: list[BaseMessage]) -> str:
        index = min(len(self.calls), len(self.script) - 1)
        self.calls.append(list(messages))
        if not self.script:
            raise RuntimeError("ScriptedChatModel has an empty script")
        item = self.script[index]
        if callable(item):
            item = item(list(messages))
        return item if isinstance(item, str) else json.dumps(item)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Sequence[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = self._next(messages)
        msg = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": self.tokens_per_call,
                "output_tokens": self.tokens_per_call,
                "total_tokens": 2 * self.tokens_per_call,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])
