""" "What about X?" against the previous question, so that the result is a question a person
would write: X is put where it fits the previous question's grammar, not pasted over its topic.

- X is a *verb phrase* ("deleting a tag", "renewing it", "upgrading"): the previous question's
  verb and object are replaced, the gerund in its base form ("How do I rename a tag?" +
  "what about deleting a tag?" -> "How do I delete a tag?"); a pronoun object ("it", "one")
  stands for the previous object. A bare gerund that names a feature ("tracing", "caching":
  ``_ACTIVITIES``) is a noun and swaps the object instead ("configure logging" + "tracing").
- X is an *option or flag* ("the --keep-index option"): asked with the previous question
  ("How do I delete old indexes with the --keep-index option?").
- X is a *noun phrase* and the previous question's topic begins at its verb ("How do I delete
  old indexes?"): X replaces the object, never the verb.
- Otherwise ``None``: the caller swaps the topic as before.

``broken`` names the shapes a rewrite must never have ("How do I the ...", "do I rename
deleting ..."); a rewrite that has one is not used.
"""

from __future__ import annotations

import functools
import re

__all__ = ["about", "base_verb", "broken", "verb_frame"]

_FRAME = re.compile(
    r"^(?P<frame>(?:(?:how|what|where|when|why|which)(?:\s+(?:long|much|many|often|far|soon))?"
    r"\s+)?(?:do|does|did|can|could|should|would|will|may|might|must)\s+(?:i|we|you|one))"
    r"\s+(?P<verb>[a-z]+)\b\s*(?P<obj>.*?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_POINTERS = {"it": "noun", "them": "noun", "that": "noun", "this": "noun", "one": "same"}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DETERMINERS = _words(
    "a an the this that these those my your our their its it them one some all every"
)
_OPTION = re.compile(r"(?:^|\s)--?\w|\b(?:option|flag|switch|parameter|argument)s?\b", re.I)
_AUX_SUBJECT = r"\b(?:do|does|did|can|could|should|would|will|may|might|must)\s+(?:i|we|you)\s+"
#: verbs that take a gerund ("start logging"): "do I <verb> <gerund>" is fine after these
_CATENATIVE = _words(
    "start stop keep avoid begin finish try enjoy consider continue quit resume mind recommend "
    "suggest go prevent allow disable enable skip"
)


#: -ing words that name a feature more often than an action on the previous object
_ACTIVITIES = _words(
    "logging tracing caching debugging profiling testing monitoring indexing routing streaming "
    "scheduling billing pricing shipping parking hosting versioning licensing formatting linting "
    "chunking batching networking sharding packaging"
)


@functools.lru_cache(maxsize=4096)
def base_verb(word: str) -> str | None:
    """The base form of an -ing verb form ("deleting" -> "delete"); None for anything else."""
    from lemminflect import getAllLemmas

    w = word.lower()
    if not w.endswith("ing") or len(w) < 5:
        return None
    lemmas = getAllLemmas(w, upos="VERB").get("VERB") or ()
    return next((lemma for lemma in lemmas if lemma != w), None)


@functools.lru_cache(maxsize=4096)
def _is_verb(word: str) -> bool:
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(word.lower(), upos="VERB"))


def verb_frame(previous: str) -> tuple[str, str, str] | None:
    """(frame, verb, object) of "How do I <verb> <object>?" shapes; None for other shapes."""
    m = _FRAME.match(previous.strip())
    if not m or not _is_verb(m["verb"]) or m["verb"].lower() in _DETERMINERS:
        return None
    return m["frame"], m["verb"], m["obj"]


def _noun(obj: str) -> str:
    head, _, rest = obj.partition(" ")
    return f"the {rest}" if rest and head.lower() in {"a", "an"} else obj


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,")
    return text[0].upper() + text[1:].rstrip("?.! ") + "?"


def about(x: str, previous: str, topic: tuple[int, int, str] | None) -> str | None:
    """The standalone question for "what about ``x``?" after ``previous`` (whose topic span is
    ``topic``); None: not a case this module handles (the caller swaps the topic)."""
    x = x.strip().rstrip("?.! ")
    words = x.split()
    if not words:
        return None
    frame = verb_frame(previous)
    obj = frame[2] if frame else (topic[2] if topic else "")
    topic_start = topic[0] if topic else None
    base = base_verb(words[0])
    if base and len(words) == 1 and frame and words[0].lower() in _ACTIVITIES:
        return _finish(f"{frame[0]} {frame[1]} {x}")  # "configure logging" + "tracing"
    if base:
        rest = " ".join(words[1:])
        pointer = _POINTERS.get(rest.lower())
        if pointer and obj:
            rest = obj if pointer == "same" else _noun(obj)
        elif not rest:
            rest = obj
        return _finish(f"{frame[0] if frame else 'How do I'} {base} {rest}")
    if frame and _OPTION.search(x):
        return _finish(f"{previous.strip().rstrip('?.! ')} with {x}")
    if frame and topic_start is not None and obj:
        verb_at = previous.lower().find(frame[1].lower(), len(frame[0]))
        if topic_start <= verb_at:  # the topic took the verb: swap the object only
            return _finish(f"{frame[0]} {frame[1]} {x}")
    return None


def broken(question: str) -> bool:
    """Whether a rewrite has a shape no person writes: an auxiliary and subject followed by a
    determiner or a gerund ("How do I the ...", "Can I deleting ..."), or a verb doubled with
    a gerund that takes an object ("How do I rename deleting a tag?")."""
    q = question.strip()
    m = re.search(_AUX_SUBJECT + r"(?P<next>[\w'-]+)(?:\s+(?P<after>[\w'-]+))?", q, re.I)
    if not m:
        return False
    nxt, after = m["next"].lower(), (m["after"] or "").lower()
    if nxt in _DETERMINERS - {"one"} or base_verb(nxt):
        return True
    if not (after and base_verb(after)) or nxt in _CATENATIVE or not _is_verb(nxt):
        return False  # "configure logging": a gerund as the object is fine
    tail = q[m.end() :].split()
    return bool(tail) and tail[0].lower().strip("?.!,") in _DETERMINERS  # "rename deleting a"
