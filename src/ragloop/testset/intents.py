"""What a descriptive sentence says can be done: a user's verb and a short object.

A sentence that says what something does ("Return the number of CPUs in the system.",
"CREATE INDEX constructs an index on the specified column(s).") gives an intent: a verb a
user would say ("get", "create") and a short object ("the number of CPUs"), cut at the first
clause so that only a few of the passage's words are kept. ``forms`` asks the intent in the
forms people use.
"""

from __future__ import annotations

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
        "class",
        "classes",
        "function",
        "functions",
        "method",
        "methods",
        "module",
        "modules",
        "utilities",
        "utility",
        "helper",
        "foundation",
        "entry",
        "entries",
        "item",
        "items",
        "thing",
        "things",
        "programmers",
        "users",
        "one",
        "attribute",
        "attributes",
        "constant",
        "constants",
        "operation",
        "operations",
        "feature",
        "features",
        "tools",
        "string",
        "strings",
        "list",
        "tuple",
        "tuples",
        "name",
        "names",
    ]
)
#: adjectives that say nothing about what is wanted ("a suitable foundation", "a new one")
HOLLOW = frozenset(
    re.findall(
        r"\w+",
        "suitable convenient simple new given specified appropriate various certain same other "
        "different several following single particular specific corresponding generic arbitrary "
        "additional optional possible actual current",
    )
)
#: words that make an object mean nothing without its sentence ("get True it doesn't")
PRONOUNS = frozenset(["it", "its", "they", "them", "this", "these", "those", "he", "she", "we"])
#: a verb's object never starts with these ("Set during Python startup", "list of items")
PREPOSITIONS = frozenset(
    ["of", "during", "to", "for", "from", "in", "on", "at", "by", "with", "into", "as", "about"]
)
#: what may stand before a description's verb: the subject itself, or "This function" and kin
_KIND_SUBJECT = re.compile(
    r"^(?:this|the|each|an?)\s+(?P<name>[\w.\-]+\s+)?(?:function|method|class|module|command|statement"
    r"|option|setting|parameter|program|tool|call|clause|pragma|builtin|variable|type|operator"
    r"|object|constructor|decorator|keyword|view|table|utility|extension)\s+",
    re.IGNORECASE,
)
#: clause openers and pronouns: a verb after them says what something else does
_NOT_BEFORE_VERB = frozenset(
    re.findall(
        r"\w+",
        "if when whenever unless it they he she we you there although while since because once "
        "after before where which that however otherwise note this these those",
    )
)
_PLACE = {"in", "on", "at", "into", "onto", "over", "under", "within", "across", "between", "up"}


def _object(rest: str, limit: int = 4) -> str:
    """The object words right after the verb, cut at the first clause or place phrase."""
    head = _STOPPERS.split(rest.replace("\u2019", "'"), maxsplit=1)[0]
    words = [w.strip(".'") for w in _WORD.findall(head)]
    if not words or words[0].lower() in _NOT_OBJECTS | PREPOSITIONS or _participle(words[0], ""):
        return ""  # "how a row ...", "whether the ...", "grouped by ...": no object
    if any(w.lower() in PRONOUNS for w in words[:limit]):
        return ""  # "True it doesn't": the object needs its sentence
    kept: list[str] = []
    for j, word in enumerate(words):
        if word.lower() in _PLACE and len(kept) >= 2:
            break
        if kept and _participle(word, words[j + 1] if j + 1 < len(words) else ""):
            break  # a participle starts a clause: "a StackSummary object representing ..."
        kept.append(word)
        content = [w for w in kept if w.lower() not in _FUNCTION_WORDS]
        if len(content) >= limit - 1 and len(kept) >= limit:
            break
    while kept and (
        kept[-1].lower() in _FUNCTION_WORDS
        or kept[-1].endswith("ly")
        or kept[-1].endswith("ing")
        and kept[-1].islower()
        and kept[-1].lower() not in ING_NOUNS
    ):
        kept.pop()  # "a randomly", "a convenient way of providing": a clause cut short
    content = [w.lower() for w in kept if w.lower() not in _FUNCTION_WORDS]
    if not content or all(w in VAGUE | HOLLOW for w in content) or len(" ".join(content)) < 5:
        return ""  # "True", "the argument", "you": nothing a person would ask for
    return " ".join(kept)


_DETERMINERS = frozenset(["a", "an", "the", "all", "any", "each", "every", "some", "no"])
_NOT_OBJECTS = frozenset(
    ["and", "or", "but", "also", "not", "only", "how", "what", "whether", "why", "which", "who"]
)
#: words in -ing that name things (an object may end with them)
ING_NOUNS = frozenset(
    re.findall(
        r"\w+",
        "string thing ring encoding mapping setting warning padding logging heading timing "
        "rounding spacing formatting indexing threading buffering locking caching sorting "
        "hashing quoting escaping parsing offering listing pricing booking",
    )
)
_NOT_PARTICIPLES = frozenset(["speed", "seed", "need", "feed", "embed", "shred", "bed"])


def _participle(word: str, following: str) -> bool:
    """A verb form that opens a clause after a noun ("converted", "using the", "matching a")."""
    low = word.lower()
    if not word.islower() or len(low) < 5:
        return False
    if low.endswith("ed") and low not in _NOT_PARTICIPLES:
        return True
    return low.endswith("ing") and following.lower() in _DETERMINERS | PREPOSITIONS


def intent(sentence: str, subject: str = "") -> Intent | None:
    """The intent of a descriptive sentence, or None when it states no action.

    Reads an imperative start ("Return X"), or a third-person verb among the first words
    after the subject ("CREATE INDEX constructs X", "This function creates X").
    """
    text = sentence.strip()
    if subject and text.lower().startswith(subject.lower()):
        text = text[len(subject) :].lstrip(" `()")
    kind_subject = _KIND_SUBJECT.match(text)
    named = kind_subject and kind_subject["name"]
    if kind_subject and (not named or named.strip().lower() in subject.lower()):
        text = text[kind_subject.end() :]  # "This function returns ...", "The glob module finds"
    words = text.split()
    if not words:
        return None
    first = words[0].lower()
    if first in VERBS and words[0][0].isupper():
        if len(words) > 1 and words[1].lower() in PREPOSITIONS:
            return None  # "Set during Python startup": a participle, not an instruction
        obj = _object(" ".join(words[1:]))
        return (
            Intent(IMPERATIVE_RETURNS if first == "return" else VERBS[first], obj) if obj else None
        )
    for i, word in enumerate(words[:6]):
        if any(w.lower().strip(",:") in _NOT_BEFORE_VERB or w.endswith(":") for w in words[:i]):
            return None  # "If empty() returns True ...", "It provides ...": not the subject's act
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
