"""Query styles and lengths as RAGAS names them, applied to an offline question."""

from __future__ import annotations

import random
import re

from ragloop.testset.offline import STOP

PERFECT = "PERFECT_GRAMMAR"
WEB = "WEB_SEARCH_LIKE"
MISSPELLED = "MISSPELLED"
STYLES = (PERFECT, WEB, MISSPELLED)
_TOKEN = re.compile(r"[A-Za-z][\w.\-`'()]*")


def query_length(question: str) -> str:
    """RAGAS's query length buckets: short (<= 6 words), medium (<= 15), long."""
    n = len(question.split())
    return "short" if n <= 6 else "medium" if n <= 15 else "long"


def web_search(question: str) -> str:
    """Keywords as typed into a search box: no question form, no stop words, lower case."""
    kept = [t for t in _TOKEN.findall(question.replace("?", "")) if t.lower() not in STOP]
    drop = {"what", "does", "do", "say", "says", "documentation", "described", "who", "which"}
    out = [t if any(c in t for c in "._()`") else t.lower() for t in kept if t.lower() not in drop]
    return " ".join(out) or question


def misspell(question: str, rng: random.Random) -> str:
    """One or two plain words with two neighbouring letters swapped (names left alone)."""
    tokens = question.split(" ")
    plain = [
        i
        for i, t in enumerate(tokens)
        if t.isalpha() and t.islower() and len(t) >= 5 and t not in STOP
    ]
    if not plain:
        return question
    for i in rng.sample(plain, min(2, len(plain))):
        word = tokens[i]
        j = rng.randrange(1, len(word) - 2)
        tokens[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    return " ".join(tokens)


def apply_style(question: str, style: str, rng: random.Random) -> str:
    """The question in ``style`` (PERFECT_GRAMMAR leaves it as it is)."""
    if style == WEB:
        return web_search(question)
    if style == MISSPELLED:
        return misspell(question, rng)
    return question
