"""Questions in the forms people use, read off a passage's sentences without quoting them.

A sentence that says what something does ("Return the number of CPUs in the system.",
"CREATE INDEX constructs an index on the specified column(s).") gives an intent: a verb a
user would say ("get", "create") and a short object ("the number of CPUs"), read by
``intents``. The intent is
asked as "How do I get the number of CPUs?", "Which function should I use to ...?"; a
condition ("If the file does not exist, ...") as "What happens when ...?"; a reason
("... because ...") as "Why does X ...?". Only a few of the passage's words are kept, so
the question shares few word 4-grams with it (``checks.quotes`` refuses the rest).
"""

from __future__ import annotations

import random
import re

# the intent of a sentence is read in ``intents``; these names stay importable from here
from ragloop.testset.intents import Intent, intent

__all__ = [
    "Intent",
    "how_to",
    "intent",
    "is_topic",
    "named_question",
    "subject_kind",
    "what_happens",
    "why",
]

_CONDITION = re.compile(r"^(?:If|When|Whenever|Once)\s+(?P<cond>[^,]{8,90}),\s*(?P<then>.+)$")
_BECAUSE = re.compile(r"^(?P<a>[^,]{8,120}?)\s+(?:because|since|so that|in order to)\s+\w")


def subject_kind(name: str) -> str:
    """What a named thing is, for "Which ... should I use": command, function, setting."""
    if re.fullmatch(r"[A-Z][A-Z_]*(?: [A-Z_]+){0,4}", name) and len(name) > 2:
        return "command"
    if "(" in name or "." in name:
        return "function"
    if "_" in name or "-" in name and name.islower():
        return "setting"
    return "option"


def how_to(it: Intent, rng: random.Random, kind: str = "") -> str:
    """A question for an intent that does not name the thing that does it."""
    forms = [
        "How do I {v} {o}?",
        "How can I {v} {o}?",
        "What's the easiest way to {v} {o}?",
        "Is it possible to {v} {o}, and how?",
    ]
    if kind:
        forms += ["Which {k} should I use to {v} {o}?", "Which {k} do I need to {v} {o}?"]
    return rng.choice(forms).format(v=it.verb, o=it.obj, k=kind)


def named_question(name: str, it: Intent | None, rng: random.Random, api: bool) -> str:
    """A question that names its subject, in a form people use."""
    if (
        is_topic(name) or name.isalpha() and name.istitle()
    ) and not api:  # a section title ("Late Fees"): a topic, in lower case
        name = name.lower()
        verb = "do" if name.endswith("s") and not name.endswith("ss") else "does"
        forms = [f"How {verb} {{x}} work?", "What should I know about {x}?", "Can you explain {x}?"]
    elif api:
        forms = ["What does {x} do?", "When should I use {x}?", "What is {x} for?"]
    else:
        forms = ["What is {x}?", "How does {x} work?", "What is {x} used for?"]
    if it is not None:
        forms += ["How do I use {x} to {v} {o}?"]
    return rng.choice(forms).format(x=name, v=it.verb if it else "", o=it.obj if it else "")


def is_topic(name: str) -> bool:
    """A section title in title case ("Loan Periods and Renewals"), not a name or identifier."""
    words = name.split()
    small = {"and", "or", "of", "the", "a", "an", "in", "on", "for", "to", "with"}
    return len(words) > 1 and all(
        w in small or (w[0].isupper() and w[1:].islower() and w.isalpha()) for w in words
    )


def what_happens(sentence: str, name: str = "") -> str | None:
    """ "What happens when <condition>?" from an "If ..., ..." sentence (None if none)."""
    match = _CONDITION.match(sentence.strip())
    if not match:
        return None
    cond = match.group("cond").strip()
    if cond.split()[0].lower() in {"it", "this", "that", "they", "these", "those", "so"}:
        return None  # "If it is used": the condition means nothing without its sentence
    cond = re.sub(r"^(?:you|one)\s+", "I ", cond)
    where = f" with {name}" if name else ""
    return f"What happens{where} when {cond[0].lower() + cond[1:]}?"


def why(sentence: str, name: str) -> str | None:
    """ "Why does X <verb> ...?" from "X <verb>s ... because ..." (None if none)."""
    match = _BECAUSE.match(sentence.strip())
    if not match or not name:
        return None
    it = intent(match.group("a"), name)
    if it is None or it.verb in {"get", "find out"}:
        return None
    return f"Why does {name} {it.verb} {it.obj}?"
