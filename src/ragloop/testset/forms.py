"""Questions in the forms people use, read off a passage's sentences without quoting them.

A sentence that says what something does ("Return the number of CPUs in the system.",
"CREATE INDEX constructs an index on the specified column(s).") gives an intent: a verb a
user would say ("get", "create") and a short object ("the number of CPUs"). The intent is
asked as "How do I get the number of CPUs?", "Which function should I use to ...?"; a
condition ("If the file does not exist, ...") as "What happens when ...?"; a reason
("... because ...") as "Why does X ...?". Only a few of the passage's words are kept, so
the question shares few word 4-grams with it (``checks.quotes`` refuses the rest).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

#: verbs of a description (base form) and the verb a user would ask with
VERBS = {
    **{v: v for v in (
        "create", "remove", "delete", "change", "set", "open", "close", "convert", "write",
        "read", "compute", "encode", "decode", "split", "join", "register", "format", "parse",
        "print", "load", "run", "apply", "search", "find", "define", "list", "copy", "rename",
        "lock", "grant", "revoke", "insert", "update", "build", "check", "generate", "extract",
        "count", "compare", "sort", "move", "execute", "enable", "disable", "store", "save",
        "restore", "reset", "import", "export", "dump", "declare", "fetch", "prepare", "cancel",
        "terminate", "release", "replace", "add", "send", "start", "stop", "limit", "borrow",
        "renew", "reserve", "book", "pay", "return", "join", "collect", "connect",
    )},
    "get": "get", "retrieve": "get", "obtain": "get", "construct": "create",
    "determine": "find out", "test": "check", "display": "show", "show": "show",
    "make": "make", "wait": "wait for", "calculate": "compute", "specify": "choose",
    "control": "control", "configure": "configure", "truncate": "empty", "reindex": "rebuild",
    "allow": "allow", "perform": "run", "establish": "open", "initialize": "set up",
    "deliver": "get", "provide": "get", "offer": "get", "lend": "borrow", "charge": "pay",
}  # fmt: skip
IMPERATIVE_RETURNS = "get"
_STOPPERS = re.compile(
    r",|;|:|\(|\bif\b|\bwhen\b|\bwhich\b|\bthat\b|\bwhere\b|\bunless\b|\bso\b|\bas\b|\bwith\b"
    r"|\bfrom\b|\bby\b|\bfor\b|\bto\b|\bis\b|\bare\b|\band return\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][\w\-.']*")
_CONDITION = re.compile(r"^(?:If|When|Whenever|Once)\s+(?P<cond>[^,]{8,90}),\s*(?P<then>.+)$")
_BECAUSE = re.compile(r"^(?P<a>[^,]{8,120}?)\s+(?:because|since|so that|in order to)\s+\w")


@dataclass(frozen=True)
class Intent:
    """What a sentence says can be done: a user's verb and a short object."""

    verb: str
    obj: str


_FUNCTION_WORDS = {"a", "an", "the", "of", "and", "or", "in", "on", "its", "their", "your"}
#: objects too vague to ask for on their own
VAGUE = frozenset(
    [
        "true",
        "false",
        "none",
        "it",
        "you",
        "them",
        "this",
        "that",
        "argument",
        "arguments",
        "value",
        "values",
        "result",
        "results",
        "support",
        "object",
        "objects",
        "instance",
        "data",
        "information",
        "way",
        "ways",
        "number",
        "something",
    ]
)
_PLACE = {"in", "on", "at", "into", "onto", "over", "under", "within", "across", "between", "up"}


def _object(rest: str, limit: int = 4) -> str:
    """The object words right after the verb, cut at the first clause or place phrase."""
    head = _STOPPERS.split(rest, maxsplit=1)[0]
    words = [w.strip(".'") for w in _WORD.findall(head)]
    if not words or words[0].lower() in {"and", "or", "but", "also", "not", "only"}:
        return ""
    kept: list[str] = []
    for word in words:
        if word.lower() in _PLACE and len(kept) >= 2:
            break
        kept.append(word)
        content = [w for w in kept if w.lower() not in _FUNCTION_WORDS]
        if len(content) >= limit - 1 and len(kept) >= limit:
            break
    while kept and kept[-1].lower() in _FUNCTION_WORDS:
        kept.pop()
    content = [w.lower() for w in kept if w.lower() not in _FUNCTION_WORDS]
    if not content or all(w in VAGUE for w in content) or len(" ".join(content)) < 5:
        return ""  # "True", "the argument", "you": nothing a person would ask for
    return " ".join(kept)


def intent(sentence: str, subject: str = "") -> Intent | None:
    """The intent of a descriptive sentence, or None when it states no action.

    Reads an imperative start ("Return X"), or a third-person verb among the first words
    after the subject ("CREATE INDEX constructs X", "This function creates X").
    """
    text = sentence.strip()
    if subject and text.lower().startswith(subject.lower()):
        text = text[len(subject) :].lstrip(" `()")
    words = text.split()
    if not words:
        return None
    first = words[0].lower()
    if first in VERBS and words[0][0].isupper():
        obj = _object(" ".join(words[1:]))
        return (
            Intent(IMPERATIVE_RETURNS if first == "return" else VERBS[first], obj) if obj else None
        )
    for i, word in enumerate(words[:6]):
        low = word.lower().strip(",")
        base = low[:-1] if low.endswith("s") else ""
        if i and words[i - 1].lower() in {"can", "may", "will", "must"} and low in VERBS:
            base = low  # "Members can renew a loan"
        if base.endswith("e") and base[:-1] + "es" == low and base not in VERBS:
            base = base[:-1]  # "searches" -> "search"
        if base in VERBS and low not in {"is", "was", "has", "does"}:
            obj = _object(" ".join(words[i + 1 :]))
            if obj:
                return Intent(IMPERATIVE_RETURNS if base == "return" else VERBS[base], obj)
            return None
    return None


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
