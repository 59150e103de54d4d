"""The offline follow-up heuristic: is this turn a follow-up, and what does it refer back to?

A turn is rewritten only when it is clearly a follow-up and the thing it points back to is
clear; otherwise it is returned unchanged (a wrong rewrite is worse than none).

1. *Follow-up* means: "what/how about X", "and X", a leading connective ("and", "also",
   "but", "so", "then"), an anaphoric pronoun used on its own ("it", "its", "they", "them",
   "their", "that", "this", "this one", "that one", "there"), or a very short turn ("why?",
   "an example?", "how many times can I renew?"). A turn that names its own subject (a
   capitalised name or a code such as KX-217 before the pronoun), an expletive "it" ("how
   much does it cost to ...") and existential "there" ("is there ...") are not follow-ups.
2. The *topic* of the previous standalone question is its last run of content words after an
   article or preposition, with that article: "How much does an interlibrary loan cost?" ->
   "an interlibrary loan". Time expressions are never a topic ("at midnight", "on Sundays"):
   when nothing else is left, there is no topic.
3. *What about X / and X* (X at most 4 words): X where it fits the previous question's grammar
   (``ragloop.nodes.rephrase``: a gerund replaces the verb, an option is asked "with", a noun
   replaces the object), else the previous question with its topic swapped; never a rewrite
   of a shape no person writes ("How do I the ...").
4. An *entity pronoun* ("is it free?", "that card", "its fee", "this one") becomes the topic,
   "there" becomes "at <topic>".
5. A *demonstrative standing for the previous question* ("show me an example of that",
   "tell me more about this", "how do I do that?") becomes the previous question as a
   clause: "what happens at midnight", "how to clear DK-04", "the Maker Lab"; else the topic.
6. *Ellipsis* (at most two content words, no name): the topic is appended ("and can I
   renew?" -> "Can I renew a book?"), after "of" for a request noun ("an example?").
7. Anything else, or no usable topic: unchanged.
"""

from __future__ import annotations

import re

from ragloop.nodes import rephrase

_WORD = re.compile(r"[\w][\w'.\-]*[\w]|[\w]", re.UNICODE)


def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP = _vocabulary(
    """a an the and or but so then also of in on at for to from with by about into over under
    after before between during without within until since i me my we our you your he she him
    her his they them their it its this that these those there here is are was were be been
    being am do does did done can could will would shall should may might must have has had
    not no yes if what when where who whom whose why how which long much many often soon far
    any some please tell know want like just still too very really show explain give one
    again more"""
)
_LIGHT_VERBS = _vocabulary(
    """cost costs take takes took get gets got need needs make makes work works happen happens
    mean means go goes pay pays use uses find say says give gives"""
)
_TIME = _vocabulary(
    """midnight noon night nights morning mornings evening evenings afternoon today tomorrow
    tonight yesterday weekend weekends weekday weekdays monday mondays tuesday tuesdays
    wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays
    january february march april may june july august september october november december
    day days week weeks month months year years hour hours minute minutes time times
    holiday holidays"""
)
_ARTICLES = frozenset({"a", "an", "the", "my", "our", "your", "their", "its", "this", "that"})
_OPENERS = _ARTICLES | {"of", "in", "on", "at", "for", "to", "from", "with", "by", "about"}
_ENTITY = frozenset({"it", "its", "they", "them", "their"})
_DEMONSTRATIVE = frozenset({"that", "this", "these", "those"})
_REFER_BEFORE = _vocabulary(
    """of about for on with like do does did explain show fix avoid prevent undo use try
    change configure get set mean see"""
)
_REQUESTS = _vocabulary("example examples detail details steps instructions explanation info")
_ASKING = _vocabulary(
    "what when where who whom whose which why how is are was were do does did can could should "
    "will would may might shall"
)
_BE = frozenset({"is", "are", "was", "were", "'s"})
_AUX = frozenset({"is", "are", "was", "were", "do", "does", "did", "can", "could", "should"})
_CONNECTIVE = re.compile(r"^\s*(?:and|also|but|so|then|ok(?:ay)?|well)\b[\s,]*", re.IGNORECASE)
_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*[?.!]*\s*$", re.IGNORECASE)
_DEFINITION = re.compile(r"^\s*(?:what|who)\s+(?:is|are|was|were)\b", re.IGNORECASE)
_SHORT = re.compile(r"^\s*and\s+(?:for|with|at|in|on)?\s*(?P<x>.+?)\s*[?.!]*\s*$", re.IGNORECASE)
_HOW_TO = re.compile(
    r"^(?P<wh>how|what|where|when)\s+(?:do|can|should|could)\s+(?:i|we|you)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_WH_VERB = re.compile(r"^(?:what|who|which)\s+(?P<verb>\w+)\b", re.IGNORECASE)
_WHAT_IS = re.compile(r"^(?:what|who)\s+(?:is|are)\s+(?P<rest>.+)$", re.IGNORECASE)


def _content(word: str) -> bool:
    w = word.lower()
    return w not in _STOP and w not in _LIGHT_VERBS and not w.isdigit()


def _named(word: str, first: bool = False) -> bool:
    """A capitalised name (not the turn's first word) or a code (KX-217, dict.fromkeys)."""
    if not _content(word):
        return False
    return (word[0].isupper() and not first) or bool(re.search(r"\d|[._]|\w-\w", word))


def _names_before(words: list[re.Match[str]], k: int) -> bool:
    """Whether the turn names its own subject before word k."""
    return any(_named(x.group(), first=i == 0) for i, x in enumerate(words[:k]))


def topic_span(question: str) -> tuple[int, int, str] | None:
    """(start, end, text) of a question's topic, with its article; None when there is none."""
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
    runs = [r for r in runs if any(w.group().lower() not in _TIME for w in words[r[0] : r[1] + 1])]
    if not runs:
        return None
    opened = [r for r in runs if r[0] > 0 and words[r[0] - 1].group().lower() in _OPENERS]
    first, last = (opened or runs)[-1]
    if first > 0 and words[first - 1].group().lower() in _ARTICLES:
        first -= 1
    start, end = words[first].start(), words[last].end()
    return start, end, question[start:end]


def _as_noun(topic: str) -> str:
    """The topic as a definite noun phrase: "a library card" -> "the library card"."""
    head, _, rest = topic.partition(" ")
    return f"the {rest}" if rest and head.lower() in _ARTICLES else topic


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] in "?.!":
        return text
    return text + ("?" if text.split()[0].lower() in _ASKING else ".")


def _asks(text: str, lowered: list[str]) -> bool:
    """A question or a request ("why?", "how many times can I renew", "an example")."""
    return text.rstrip().endswith("?") or bool(
        lowered and (lowered[0] in _ASKING or lowered[-1] in _REQUESTS | {"more"})
    )


def as_clause(previous: str) -> str | None:
    """The previous question as a noun clause ("What happens at midnight?" -> "what happens at
    midnight"; "How do I clear DK-04?" -> "how to clear DK-04"); None when unsure."""
    q = previous.strip().rstrip("?.! ")
    if m := _HOW_TO.match(q):
        return f"{m['wh'].lower()} to {m['rest']}"
    if m := _WHAT_IS.match(q):
        return m["rest"]
    if (m := _WH_VERB.match(q)) and m["verb"].lower() not in _AUX | _STOP - _LIGHT_VERBS:
        return q[0].lower() + q[1:]
    return None


def _referent(previous: str, topic: str | None) -> str | None:
    return as_clause(previous) or (_as_noun(topic) if topic else None)


def _is_pronoun(words: list[re.Match[str]], k: int, body: str) -> str | None:
    """'entity', 'clause' or 'place' when word k points back; None when it does not."""
    w = words[k].group().lower()
    before = words[k - 1].group().lower() if k > 0 else ""
    after = words[k + 1].group().lower() if k + 1 < len(words) else ""
    if w == "it" and re.search(r"\bto\s+\w", body[words[k].end() :]):
        return None  # expletive: "how much does it cost to replace a card"
    if w in _ENTITY:
        return "entity"
    if w == "there":
        return None if before in _BE or after in _BE or k == 0 else "place"
    if w in _DEMONSTRATIVE:
        if after == "one":
            return "entity"
        if k == len(words) - 1 and before in _REFER_BEFORE:
            return "clause"
        if k + 1 < len(words) and _content(after) and k + 2 < len(words):
            return "determiner"
        return "entity"
    return None


def heuristic_condense(text: str, previous: str) -> str:
    """``text`` as a standalone question given the previous standalone question, or unchanged."""
    text = text.strip()
    if not text or not previous.strip():
        return text
    span = topic_span(previous)
    topic = span[2] if span else None
    about = _ABOUT.match(text)
    short = _SHORT.match(text)
    if (
        not about
        and short
        and all(_content(w) or w in _ARTICLES for w in _WORD.findall(short["x"]))
    ):
        about = short
    if about and span and len(_WORD.findall(about["x"])) <= 4:
        fitted = rephrase.about(about["x"], previous, span)  # put where it fits the grammar
        swapped = fitted or _finish(previous[: span[0]] + about["x"] + previous[span[1] :])
        return text if rephrase.broken(swapped) else swapped
    body = _CONNECTIVE.sub("", text, count=1)
    words = list(_WORD.finditer(body))
    for k, m in enumerate(words):
        kind = _is_pronoun(words, k, body)
        if kind is None:
            continue
        if _names_before(words, k):
            return text
        if kind == "determiner":
            noun = words[k + 1]
            if topic and noun.group().lower() in {w.lower() for w in _WORD.findall(topic)}:
                return _finish(body[: m.start()] + _as_noun(topic) + body[noun.end() :])
            return text  # "those printers": its own noun, not clearly the topic
        end = words[k + 1].end() if words[k + 1 :] and words[k + 1].group() == "one" else m.end()
        if kind == "clause":
            swap = _referent(previous, topic)
        elif topic is None:
            swap = None
        elif kind == "place":
            swap = f"at {topic}"
        elif (
            m.group().lower() == "it"
            and words[k + 1 :]
            and words[k + 1].group().lower() in _LIGHT_VERBS
            and (how := _HOW_TO.match(previous.strip().rstrip("?.! ")))
        ):  # "how do I clear DK-04?" + "how long does it take?": "it" is the clearing
            return _finish(body.rstrip(" ?.!") + " to " + how["rest"] + "?")
        else:
            swap = _as_noun(topic) + ("'s" if m.group().lower() in ("its", "their") else "")
        return text if swap is None else _finish(body[: m.start()] + swap + body[end:])
    return _ellipsis(text, body, words, previous, topic)


def _ellipsis(
    text: str, body: str, words: list[re.Match[str]], previous: str, topic: str | None
) -> str:
    """Rule 6: a very short turn that leaves its object out; unchanged when unsure."""
    lowered = [m.group().lower() for m in words]
    if lowered == ["why"] and previous.split()[0].lower() in _AUX:
        return _finish("why " + previous[0].lower() + previous[1:])
    content = [m.group() for m in words if _content(m.group())]
    named = any(_named(m.group()) for m in words[1:])
    if named or _DEFINITION.match(body) or (len(content) > 2 and body == text):
        return text
    if not _asks(body, lowered):
        return text  # "thanks", "ok great": not a question
    if len(content) > 2 or not words:
        return text
    if lowered[-1] in _REQUESTS | {"more"}:
        referent = _referent(previous, topic)
        joint = " about " if lowered[-1] == "more" else " of "
        end = "?" if body.rstrip().endswith("?") else ""
        return text if referent is None else _finish(body.rstrip(" ?.!") + joint + referent + end)
    if topic is None:
        return text
    if {w.lower() for w in _WORD.findall(topic)} <= {w.lower() for w in content} | _ARTICLES:
        return _finish(body)
    return _finish(body.rstrip(" ?.!") + " " + topic)


def is_follow_up(text: str) -> bool:
    """Whether a turn looks like it points back to the conversation (cheap, no model)."""
    if _ABOUT.match(text) or _SHORT.match(text) or _CONNECTIVE.match(text):
        return True
    words = list(_WORD.finditer(text))
    for k in range(len(words)):
        if _is_pronoun(words, k, text) is not None:
            return not _names_before(words, k)
    content = [m.group() for m in words if _content(m.group())]
    named = any(_named(m.group()) for m in words[1:])
    short = len(content) <= 2 and not named and not _DEFINITION.match(text)
    return short and _asks(text, [m.group().lower() for m in words])
