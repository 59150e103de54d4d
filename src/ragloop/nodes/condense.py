"""Turn a follow-up ("and how long does that take?") into a standalone question from the history.

Only turns that look like follow-ups are rewritten (``is_follow_up``); the offline rules are
in ``ragloop.nodes.followup``, the LLM condenser makes one call per follow-up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragloop.nodes.followup import heuristic_condense, is_follow_up, topic_span
from ragloop.nodes.rephrase import broken

__all__ = [
    "Condenser",
    "HeuristicCondenser",
    "LLMCondenser",
    "Turn",
    "condenser_for",
    "heuristic_condense",
    "is_follow_up",
    "topic_span",
]


@dataclass(frozen=True)
class Turn:
    """One finished exchange: what the user typed, the standalone question used, the answer."""

    question: str
    answer: str
    original: str = ""


class Condenser(Protocol):
    """Anything that turns a follow-up plus the history into a standalone question."""

    name: str

    async def acondense(self, text: str, history: Sequence[Turn]) -> str: ...


class HeuristicCondenser:
    """Offline condensing by the documented heuristic above (no LLM call)."""

    name = "heuristic"
    calls_llm = False  # see ``nodes.base.may_call_llm``

    async def acondense(self, text: str, history: Sequence[Turn]) -> str:
        """The standalone question for ``text`` given the finished turns before it."""
        if not history or not is_follow_up(text):
            return text.strip()
        return heuristic_condense(text, history[-1].question)


CONDENSE_INSTRUCTION = (
    "Rewrite the user's last message as one standalone question that can be understood "
    "without the conversation: resolve pronouns and ellipsis from the earlier turns, and "
    "write it as the user would have asked it, in plain grammatical English. If it already "
    "stands alone, return it unchanged. Reply with the question only, no quotes.\n"
    "Examples:\n"
    "User: How do I rename a tag? / Last message: what about deleting a tag? -> "
    "How do I delete a tag?\n"
    "User: How do I delete old indexes? / Last message: and what about the --keep-index "
    "option? -> How do I delete old indexes with the --keep-index option?\n"
    "User: How much does an interlibrary loan cost? / Last message: and how long does that "
    "take? -> How long does an interlibrary loan take?"
)

#: a reply longer than this many times the follow-up plus the previous question is not a
#: rewrite of them (a model that answers instead of rewriting)
MAX_GROWTH = 3


class LLMCondenser:
    """Condensing by one LLM call per follow-up (none on the first turn of a thread)."""

    name = "llm"

    def __init__(self, llm: Any, *, turns: int = 4, answer_chars: int = 600):
        self.llm = llm
        self.turns = turns
        self.answer_chars = answer_chars

    def messages(self, text: str, history: Sequence[Turn]) -> list[Any]:
        """The prompt: instruction, the last few turns, then the follow-up."""
        from langchain_core.messages import HumanMessage, SystemMessage

        lines = []
        for turn in history[-self.turns :]:
            lines.append(f"User: {turn.question}")
            lines.append(f"Assistant: {turn.answer[: self.answer_chars]}")
        convo = "\n".join(lines)
        return [
            SystemMessage(content=CONDENSE_INSTRUCTION),
            HumanMessage(content=f"Conversation:\n{convo}\n\nLast message: {text}"),
        ]

    async def acondense(self, text: str, history: Sequence[Turn]) -> str:
        """The LLM's standalone question; the heuristic's when the reply is empty, far longer
        than a rewrite, or of a shape no person writes (``rephrase.broken``).

        A turn that does not look like a follow-up is left as it is, without a call.
        """
        if not history or not is_follow_up(text):
            return text.strip()
        reply = await self.llm.ainvoke(self.messages(text, history))
        content = reply.content if isinstance(reply.content, str) else str(reply.content)
        first = content.strip().splitlines()[0] if content.strip() else ""
        first = re.sub(r"^\W*(?:standalone question|question)\s*:\s*", "", first, flags=re.I)
        question = first.strip().strip("\"'`").strip()
        budget = MAX_GROWTH * (len(text) + len(history[-1].question))
        if not question or len(question) > budget or broken(question):
            return heuristic_condense(text, history[-1].question)  # unusable: the rules'
        return question


def condenser_for(strategies: Any) -> Condenser:
    """The LLM condenser when the pipeline's strategies have an LLM, else the heuristic one."""
    llm = getattr(strategies, "llm", None)
    if getattr(strategies, "name", "") == "llm" and llm is not None:
        return LLMCondenser(llm)
    return HeuristicCondenser()
