"""Turn a follow-up ("and how long does that take?") into a standalone question from the history."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# The offline heuristic (no LLM), applied only when there is a previous turn:
# 1. The *topic* of the previous standalone question is its last run of content words
#    (not stopwords, question words or light verbs such as "cost"/"take") that follows an
#    article or preposition (else its last run), with the article just before it:
#    "How much does an interlibrary loan cost?" -> "an interlibrary loan".
# 2. "what about X" / "how about X" / "and X" / "and for X" (X at most 3 words): the previous
#    question with its topic swapped for X ("How long can I borrow a book?" + "and DVDs?" ->
#    "How long can I borrow DVDs?").
# 3. An anaphoric pronoun ("it", "that", "this", "they", "them", "its", "there", ...) used on its
#    own: the first one is replaced by the topic ("and how long does that take?" -> "how long
#    does the interlibrary loan take?"); "there" becomes "at <topic>"; "that card" becomes
#    "the library card" when "card" is a word of the topic.
# 4. A leading connective ("and", "also", "but", "so", "then"), or at most two content words
#    with no capitalised name and not a "what is/who is" question: the topic is appended
#    ("and can I renew?" -> "Can I renew a book?").
# 5. Otherwise the turn already stands alone and is returned unchanged.

_WORD = re.compile(r"[\w][\w'\-]*", re.UNICODE)
_STOP_TEXT = """
a an the and or but so then also of in on at for to from with by about into over under
after before between during without within i me my we our you your he she him her his
they them their it its this that these those there here is are was were be been being am
do does did done can could will would shall should may might must have has had not no
yes if what when where who whom whose why how which long much many often soon far any
some please tell know want like just still too very really
"""
_LIGHT_VERBS_TEXT = """
cost costs take takes took get gets got need needs make makes work works happen happens
mean means go goes pay pays use uses find say says give gives
"""
_STOP = frozenset(_STOP_TEXT.split())
_LIGHT_VERBS = frozenset(_LIGHT_VERBS_TEXT.split())
_ARTICLES = frozenset({"a", "an", "the", "my", "our", "your", "their", "its", "this", "that"})
_OPENERS = _ARTICLES | {"of", "in", "on", "at", "for", "to", "from", "with", "by", "about"}
_PRONOUNS = frozenset({"it", "that", "this", "these", "those", "they", "them", "its", "their"})
_LOCATIVE = "there"
_CONNECTIVE = re.compile(r"^\s*(?:and|also|but|so|then|ok(?:ay)?|well)\b[\s,]*", re.IGNORECASE)
_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*[?.!]*\s*$", re.IGNORECASE)
_DEFINITION = re.compile(r"^\s*(?:what|who)\s+(?:is|are|was|were)\b", re.IGNORECASE)
_SHORT = re.compile(r"^\s*and\s+(?:for|with|at|in|on)?\s*(?P<x>.+?)\s*[?.!]*\s*$", re.IGNORECASE)


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


def _content(word: str) -> bool:
    w = word.lower()
    return w not in _STOP and w not in _LIGHT_VERBS and not w.isdigit()


def topic_span(question: str) -> tuple[int, int, str] | None:
    """(start, end, text) of the previous question's topic, with its article; None if none."""
    words = list(_WORD.finditer(question))
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        if _content(words[i].group()):
            j = i
            while j + 1 < len(words) and _content(words[j + 1].group()):
                j += 1
            runs.append((i, j))
            i = j + 1
        else:
            i += 1
    if not runs:
        return None
    opened = [r for r in runs if r[0] > 0 and words[r[0] - 1].group().lower() in _OPENERS]
    first, last = (opened or runs)[-1]
    if first > 0 and words[first - 1].group().lower() in _ARTICLES:
        first -= 1
    start, end = words[first].start(), words[last].end()
    return start, end, question[start:end]


def _bare(topic: str) -> str:
    """The topic without its leading article ("an interlibrary loan" -> "interlibrary loan")."""
    head, _, rest = topic.partition(" ")
    return rest if rest and head.lower() in _ARTICLES else topic


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in "?.!" else text + "?"


def heuristic_condense(text: str, previous: str) -> str:
    """Rewrite ``text`` as a standalone question using the previous standalone question."""
    text = text.strip()
    span = topic_span(previous) if previous.strip() else None
    if span is None or not text:
        return text
    start, end, topic = span
    about = _ABOUT.match(text)
    short = _SHORT.match(text)
    if not about and short and all(_content(w) or w in _ARTICLES for w in _words(short["x"])):
        about = short
    if about and len(_WORD.findall(about.group("x"))) <= 3:
        return _finish(previous[:start] + about.group("x") + previous[end:])
    body = _CONNECTIVE.sub("", text, count=1)
    words = list(_WORD.finditer(body))
    for k, m in enumerate(words):
        w = m.group().lower()
        following = words[k + 1].group() if k + 1 < len(words) else ""
        determiner = (
            w in ("that", "this", "these", "those")
            and _content(following)
            and k + 2 < len(words)  # "is that free?" ends there: a pronoun, not a determiner
        )
        if determiner and following.lower() in _words(topic):
            end_det = words[k + 1].end()
            return _finish(body[: m.start()] + f"the {_bare(topic)}" + body[end_det:])
        if w in _PRONOUNS and not determiner:
            swap = f"the {_bare(topic)}" + ("'s" if w in ("its", "their") else "")
            return _finish(body[: m.start()] + swap + body[m.end() :])
        if w == _LOCATIVE and k > 0:
            return _finish(body[: m.start()] + f"at {topic}" + body[m.end() :])
    content = [m.group() for m in words if _content(m.group())]
    named = any(m.group()[0].isupper() and _content(m.group()) for m in words[1:])
    if body != text or (len(content) <= 2 and not named and not _DEFINITION.match(body)):
        if _words(topic) <= {w.lower() for w in content} | _ARTICLES:
            return _finish(body)
        return _finish(body.rstrip(" ?.!") + " " + topic)
    return text


class HeuristicCondenser:
    """Offline condensing by the documented heuristic above (no LLM call)."""

    name = "heuristic"

    async def acondense(self, text: str, history: Sequence[Turn]) -> str:
        """The standalone question for ``text`` given the finished turns before it."""
        if not history:
            return text.strip()
        return heuristic_condense(text, history[-1].question)


CONDENSE_INSTRUCTION = (
    "Rewrite the user's last message as one standalone question that can be understood "
    "without the conversation: resolve pronouns and ellipsis from the earlier turns. If it "
    "already stands alone, return it unchanged. Reply with the question only, no quotes."
)


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
        """The LLM's standalone question; the heuristic's when the reply is empty."""
        if not history:
            return text.strip()
        reply = await self.llm.ainvoke(self.messages(text, history))
        content = reply.content if isinstance(reply.content, str) else str(reply.content)
        first = content.strip().splitlines()[0] if content.strip() else ""
        first = re.sub(r"^\W*(?:standalone question|question)\s*:\s*", "", first, flags=re.I)
        question = first.strip().strip("\"'`").strip()
        return question or heuristic_condense(text, history[-1].question)


def condenser_for(strategies: Any) -> Condenser:
    """The LLM condenser when the pipeline's strategies have an LLM, else the heuristic one."""
    llm = getattr(strategies, "llm", None)
    if getattr(strategies, "name", "") == "llm" and llm is not None:
        return LLMCondenser(llm)
    return HeuristicCondenser()
