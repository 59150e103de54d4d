"""Question wording for the PostgreSQL-docs bench: ask by name, or paraphrase without the name.

The paraphrase rewrites a target's own description with a small rephrasing table (verbs and
stock phrases of the PostgreSQL reference pages), drops the name and varies the template. A
paraphrase that still contains the name, or every word of a multi-word name, is refused.
"""

from __future__ import annotations

import random
import re

from _pgdocs_parse import Target

NAMED = {
    "command": (
        "What does the SQL command {n} do?",
        "What is {n} used for in PostgreSQL?",
        "Explain what the {n} statement does.",
    ),
    "program": (
        "What does the PostgreSQL program {n} do?",
        "What is the {n} client application for?",
        "What is {n} used for?",
    ),
    "function": (
        "What does the function {n} do?",
        "What does {n}() return in PostgreSQL?",
        "What is the PostgreSQL function {n} for?",
    ),
    "setting": (
        "What does the setting {n} control?",
        "What is the configuration parameter {n} for?",
        "What does {n} do in postgresql.conf?",
    ),
}

PARAPHRASE_VERB = {
    "command": (
        "Which SQL command do I use to {p}?",
        "How can I {p} in PostgreSQL?",
        "What is the SQL statement to {p}?",
    ),
    "program": (
        "Which PostgreSQL command-line program can {p}?",
        "What tool do I run to {p}?",
        "How do I {p} from the shell?",
    ),
}
PARAPHRASE_NOUN = ("Which PostgreSQL program is the {p}?", "What is the name of the {p}?")
PARAPHRASE_CLAUSE = {
    "function": (
        "Which function {p}?",
        "Is there a built-in PostgreSQL function that {p}?",
        "What SQL function {p}?",
    ),
    "setting": (
        "Which setting {p}?",
        "What configuration parameter {p}?",
        "Which postgresql.conf parameter {p}?",
    ),
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Base-form verbs that open a command's or program's one-line purpose.
_BASE_VERBS = _words(
    "abort analyze allocate call change check checkpoint close cluster collect commit compute "
    "conditionally control copy create deallocate declare define delete destroy discard display "
    "empty enable execute extract fetch garbage-collect generate import initialize insert inspect "
    "invoke list "
    "listen load lock move notify obtain position prepare reassign rebuild receive refresh "
    "register reindex release remove replace reset restore retrieve revoke roll "
    "select set show start stop store stream synchronize take update verify"
)
# Third-person verbs that open a function's or setting's description.
_THIRD_VERBS = _words(
    "adds appends applies builds calculates checks computes concatenates constructs controls "
    "converts counts creates decodes determines encodes enables evaluates expands extracts "
    "finds formats generates gets gives indicates inserts limits logs makes produces reads "
    "removes replaces reports resets returns reverses selects sends sets specifies splits "
    "starts stops strips tells terminates tests translates trims truncates writes yields"
)

# Words a cut-off clause must not end on.
_DANGLING = _words(
    "a an the of for from to in into on at by with and or any some that which whose when "
    "than is are be been will can may should having its their this these each every all "
    "before after about over under between within without spanning"
)

# (pattern, alternatives): applied left to right on the lowercased description.
_REPHRASE: list[tuple[str, tuple[str, ...]]] = [
    (
        r"\bchange the definition of (?:an?|the) ",
        ("modify an existing ", "make changes to an existing "),
    ),
    (r"\bdefine a new ", ("set up a new ", "make a new ", "add a new ")),
    (r"\bdefine an? ", ("set up a ", "declare a ")),
    (r"\bremove (an?|the) ", ("get rid of \\1 ", "delete \\1 ")),
    (r"\benables or disables\b", ("turns on or off", "switches on or off")),
    (r"\breturns\b", ("gives back", "yields", "produces")),
    (r"\bcomputes\b", ("calculates", "works out")),
    (r"\bconverts\b", ("turns", "transforms")),
    (r"\bremoves\b", ("strips", "takes away")),
    (r"\bextracts\b", ("pulls out", "gets")),
    (r"\bspecifies\b", ("determines", "defines")),
    (r"\bsets\b", ("determines", "configures")),
    (r"\bcontrols\b", ("governs", "decides")),
    (r"\bthe maximum\b", ("the largest allowed", "the upper limit on the")),
    (r"\bthe minimum\b", ("the smallest allowed", "the lower limit on the")),
    (r"\bspecified\b", ("given",)),
    (r"\bwhether\b", ("if",)),
    (r"\bthe current transaction\b", ("the transaction in progress", "the open transaction")),
    (r"\bthe current session\b", ("this session", "my session")),
    (r"\bnumber of\b", ("count of", "number of")),
]


def _rephrase(text: str, rng: random.Random) -> str:
    for pattern, alternatives in _REPHRASE:
        if re.search(pattern, text):
            text = re.sub(pattern, rng.choice(alternatives), text, count=1)
    return text


def _core(sentence: str, max_words: int = 18) -> str:
    """The description's main clause: no parentheses, no trailing clauses, lowercase start."""
    text = re.sub(r"\s*\([^()]*\)", "", sentence).strip().rstrip(".")
    text = re.split(r";|:|\. | — ", text, maxsplit=1)[0]
    words = text.split()
    if len(words) > max_words:
        cut = " ".join(words[:max_words])
        words = (cut.rsplit(",", 1)[0] if "," in cut else cut).split()
        while len(words) > 3 and words[-1].lower() in _DANGLING:
            words.pop()  # "... a message about a" -> "... a message"
        text = " ".join(words)
    return text[:1].lower() + text[1:]


def mentions(question: str, name: str) -> bool:
    """True when the question names the target (the name, or every word of a multi-word name)."""
    q, n = question.casefold(), name.casefold()
    if re.search(r"(?<![\w.])" + re.escape(n) + r"(?![\w])", q):
        return True
    words = n.split()
    return len(words) > 1 and all(re.search(rf"\b{re.escape(w)}\b", q) for w in words)


def named(target: Target, rng: random.Random) -> str:
    """Ask about the target by its name."""
    return rng.choice(NAMED[target.kind]).format(n=target.name)


def paraphrase(target: Target, rng: random.Random) -> str | None:
    """Ask for the target by a reworded description that does not name it (None if it can't)."""
    core = _core(target.purpose)
    first = core.split(" ", 1)[0] if core else ""
    if target.kind in PARAPHRASE_VERB:
        if first not in _BASE_VERBS and first.endswith("s") and first[:-1] in _BASE_VERBS:
            core = first[:-1] + core[len(first) :]  # "checks for corruption" -> "check for ..."
            first = first[:-1]
        if first in _BASE_VERBS or target.kind == "command":
            templates = PARAPHRASE_VERB[target.kind]
        else:
            templates = PARAPHRASE_NOUN
    elif first in _THIRD_VERBS:
        templates = PARAPHRASE_CLAUSE[target.kind]
    else:
        return None
    if len(core.split()) < 3:
        return None
    question = rng.choice(templates).format(p=_rephrase(core, rng))
    return None if mentions(question, target.name) else question
