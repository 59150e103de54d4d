"""Checks a generated question must pass: it does not quote its passage, it is no template.

A question that copies its passage's wording is answered by any lexical retriever and says
nothing about how a system copes with the way people ask; one cut from a template ("Is there
a mobile app for ...") is spotted by anyone. Both are refused before a row is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: the most of a question's word 4-grams that may occur in its reference passages
MAX_QUOTED = 0.3
_TOKEN = re.compile(r"[a-z0-9]+(?:[._'-][a-z0-9]+)*")
#: forms anyone recognises as generated (the old offline generator's), never written
TEMPLATES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bsupport gpu acceleration\b",
        r"^is there a mobile app\b",
        r"\bcustomer reviews\b",
        r"\bwhich awards\b",
        r"\bcarbon footprint\b",
        r"^which topic\b.*\bis described as\b",
        r"\bwhat do the sections on\b",
        r"\beach say\b",
        r'\bsay under "',
        r"^what is changed in version\b",
    )
)
#: headings that label an edit of the text, never a subject to ask about
NOT_SUBJECTS = re.compile(
    r"^(?:changed|new|added|deprecated|removed)\b.*\bversion\b|^version\s+[\d.]+|^note\b"
    r"|^(?:methods|functions|classes|objects|attributes|constants|exceptions|examples?|notes)$",
    re.IGNORECASE,
)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (identifiers such as ``os.makedirs`` kept whole)."""
    return _TOKEN.findall(text.lower())


def ngrams(words: list[str], n: int = 4) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def ngram_overlap(question: str, passages: Iterable[str], n: int = 4) -> float:
    """Share of the question's word n-grams that occur in any of ``passages`` (0 if none)."""
    mine = ngrams(tokens(question), n)
    if not mine:
        return 0.0
    theirs: set[tuple[str, ...]] = set()
    for text in passages:
        theirs |= ngrams(tokens(text), n)
    return len(mine & theirs) / len(mine)


def quotes(question: str, passages: Iterable[str]) -> bool:
    """The question copies more than ``MAX_QUOTED`` of its 4-grams from its passages."""
    return ngram_overlap(question, passages) > MAX_QUOTED


def is_template(question: str) -> bool:
    """One of the template forms that give a generated question away."""
    return any(p.search(question) for p in TEMPLATES)


def is_subject(heading: str) -> bool:
    """Whether a heading can be asked about ("Changed in version 3.8" cannot)."""
    text = heading.strip()
    return bool(text) and not NOT_SUBJECTS.search(text) and len(tokens(text)) <= 8


def absent(terms: list[str], vocab: str) -> bool:
    """No term occurs as a whole word (or phrase) in the corpus text."""
    return not any(re.search(rf"\b{re.escape(t.lower())}\b", vocab) for t in terms)
