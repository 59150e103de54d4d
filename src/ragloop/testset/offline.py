"""The offline generator: questions read off the parsed structure, no model involved.

- specific (``single_hop_specific_query_synthesizer``): a definition sentence ("X is ...",
  "X: ...") gives "What is X?"; an API-like heading (``json.dumps``, ``CREATE INDEX``,
  ``pg_dump``) gives "What does X do?"; any other heading gives a question about it in its
  document. The reference is the definition, or the part's first sentences.
- paraphrased (``single_hop_paraphrased_query_synthesizer``): the name is withheld: the
  question quotes the part's first sentence with the name masked and asks what it
  describes; the reference is the name and that sentence. Synonyms are not substituted
  (no offline model gives reliable ones), so the wording is the passage's own.
- multi-passage (``multi_hop_specific_query_synthesizer``): two parts of one document, or
  two documents that share a rare word; the reference joins a sentence of each.
- unanswerable (``single_hop_unanswerable_query_synthesizer``): see
  ``ragloop.testset.unanswerable``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ragloop.testset.passages import Part, Passage

SPECIFIC = "single_hop_specific_query_synthesizer"
PARAPHRASED = "single_hop_paraphrased_query_synthesizer"
MULTI = "multi_hop_specific_query_synthesizer"
UNANSWERABLE = "single_hop_unanswerable_query_synthesizer"
KINDS = {
    SPECIFIC: "specific",
    PARAPHRASED: "paraphrased",
    MULTI: "multi_passage",
    UNANSWERABLE: "unanswerable",
}
_DEFINITION = re.compile(
    r"^(?:An? |The )?(?P<term>[A-Za-z][\w\-./ ]{1,40}?)"
    r"(?: (?:is|are) (?:an?|the|one|any) | means | refers to |: )(?P<rest>.+)"
)
#: words that open a clause, not a term ("When a title is ...")
OPENERS = frozenset(
    re.findall(r"\w+", "when if because after before while since although once until there here")
)
_API = re.compile(r"^[`\w.:\-]+(\(.*\))?$")
_WORD = re.compile(r"[A-Za-z][A-Za-z\-']+")
STOP = frozenset(
    re.findall(
        r"\w+",
        "a an the and or of to in on for with by from at as is are be was were this that these "
        "those it its can may must should will not no you your we our they their which what when "
        "how if then than also each any all more most other such into only one two use used using "
        "see section page example every because about after before while where would could being "
        "through without within between during under over until again always never often usually "
        "already still just very much many some same both either neither first second three "
        "there here have has had does done make made",
    )
)


@dataclass
class Draft:
    """A question before styling: what it asks, its reference and the passages behind it."""

    synthesizer: str
    question: str
    reference: str
    passages: tuple[Passage, ...]
    subject: str
    extra: dict[str, Any]


def words(text: str) -> set[str]:
    """Lower-case words of a text, stop words left out."""
    return {w.lower() for w in _WORD.findall(text)} - STOP


def _lead(part: Part, n: int = 2, limit: int = 320) -> str:
    out = ""
    for s in part.sentences[:n]:
        if out and len(out) + len(s) > limit:
            break
        out = f"{out} {s}".strip()
    return out


#: headings every reference page repeats: they name a kind of section, not a subject
GENERIC = frozenset(
    re.findall(
        r"[^,]+",
        "description,see also,examples,example,notes,note,compatibility,diagnostics,synopsis,"
        "parameters,outputs,environment,files,options,exit status,usage,overview,introduction,"
        "bugs,history,author,authors,summary,details,caution,tip,warning,important",
    )
)
#: headings whose text is a list of links or a grammar, not prose to ask about
SKIP = frozenset({"see also", "synopsis"})


_QUESTION_WORDS = frozenset(
    ["what", "how", "why", "when", "where", "who", "which", "can", "do", "does", "is", "are", "if"]
)


def is_generic(heading: str) -> bool:
    """A heading that is a kind of section ("Description", "See Also") or a phrase that
    cannot stand as a subject ("What Pet Mode does", "How to reset")."""
    words_ = heading.strip().lower().split()
    return heading.strip().lower() in GENERIC or bool(words_ and words_[0] in _QUESTION_WORDS)


def _best_part(passage: Passage, rng: random.Random, named: bool = False) -> Part | None:
    """A part with a real first sentence; ``named``: only parts under a non-generic heading."""
    parts = [
        p
        for p in passage.parts
        if p.sentences
        and len(p.sentences[0]) >= 20
        and p.heading.lower() not in SKIP
        and not (named and is_generic(p.heading))
    ]
    return rng.choice(parts) if parts else None


def _is_api(name: str) -> bool:
    """An identifier, a program name or an upper-case command (``CREATE INDEX``)."""
    if re.fullmatch(r"[A-Z][A-Z_]*(?: [A-Z_]+){0,4}", name) and len(name) > 2:
        return True
    return bool(_API.match(name)) and (
        any(c in name for c in "._()`:") or name.isupper() or name.islower()
    )


def specific(passage: Passage, rng: random.Random) -> Draft | None:
    """What is X / what does X do, from a definition sentence, an API heading or a heading."""
    part = _best_part(passage, rng)
    if part is None:
        return None
    for sentence in part.sentences[:4]:
        match = _DEFINITION.match(sentence)
        term = match.group("term").strip() if match else ""
        opener = term.split()[0].lower() if term else ""
        named = any(c.isupper() or c in "_.()" for c in term[1:]) or len(term.split()) > 1
        if match and named and 1 <= len(term.split()) <= 4 and opener not in STOP | OPENERS:
            return Draft(SPECIFIC, f"What is {term}?", sentence, (passage,), term, {})
    name = part.heading.strip().strip("`")
    if not name or (not passage.lead and part is passage.parts[0]):
        return None  # a continuation chunk's first part does not introduce its heading
    if is_generic(name):
        doc = passage.doc_title
        question = f'What does the {doc} documentation say under "{name}"?'
        if name.lower() == "description":
            question = f"What does {doc} do?" if _is_api(doc) else f"What is {doc}?"
        elif name.lower().startswith("example"):
            question = f"Can you show an example of {doc}?"
        return Draft(SPECIFIC, question, _lead(part), (passage,), doc, {})
    if _is_api(name):
        question = f"What does {name} do?"
    elif name == passage.doc_title:
        plural = name.endswith("s") and not name.endswith("ss")
        question = f"What are the {name}?" if plural else f"What is {name}?"
    else:
        question = f"What does the {passage.doc_title} documentation say about {name}?"
    return Draft(SPECIFIC, question, _lead(part), (passage,), name, {})


def paraphrased(passage: Passage, rng: random.Random) -> Draft | None:
    """The description with the name masked: which thing does it describe?"""
    part = _best_part(passage, rng, named=True)
    if part is None or not part.heading:
        return None
    name = part.heading
    masked = re.sub(re.escape(name), "it", part.sentences[0], flags=re.IGNORECASE)
    name_words = words(name)
    if not name_words or name_words & words(masked) == name_words or len(masked) > 240:
        return None
    where = "" if name == passage.doc_title else f" in the {passage.doc_title} documentation"
    question = f'Which topic{where} is described as: "{masked}"?'
    reference = f"{name}: {part.sentences[0]}"
    return Draft(PARAPHRASED, question, reference, (passage,), name, {})


def _with(passage: Passage, term: str) -> str:
    """The first prose sentence of the passage that holds ``term`` as a word."""
    for part in passage.parts:
        for sentence in part.sentences:
            if term in words(sentence):
                return sentence
    return ""


def word_counts(pool: list[Passage]) -> Counter[str]:
    """In how many passages each word occurs (count it once for a corpus)."""
    return Counter(w for p in pool for w in words(p.text))


def multi(
    first: Passage, pool: list[Passage], rng: random.Random, counts: Counter[str] | None = None
) -> Draft | None:
    """Two parts of one document, else two documents sharing a rare word."""
    a = _best_part(first, rng, named=True)
    if a is None:
        return None
    same = [p for p in pool if p.source == first.source and p.id != first.id]
    rng.shuffle(same)
    for other in same[:8]:
        b = _best_part(other, rng, named=True)
        if b is not None and b.heading != a.heading:
            question = (
                f"In the {first.doc_title} documentation, what do the sections on {a.heading} "
                f"and {b.heading} each say?"
            )
            reference = f"{a.heading}: {_lead(a, 1)} {b.heading}: {_lead(b, 1)}"
            return Draft(MULTI, question, reference, (first, other), a.heading, {"hop": "document"})
    counts = counts if counts is not None else word_counts(pool)
    rare = sorted(
        (w for w in words(" ".join(a.sentences)) if 2 <= counts[w] <= 4 and len(w) > 4),
        key=lambda w: (counts[w], w),
    )
    others = sorted(pool, key=lambda p: p.id)
    rng.shuffle(others)
    for other in others[:64]:
        if other.source == first.source:
            continue
        for term in rare:
            mine = _with(first, term)
            theirs = _with(other, term)
            if mine and theirs:
                question = (
                    f"What do the {first.doc_title} and {other.doc_title} documents each say "
                    f"about {term}?"
                )
                reference = f"{first.doc_title}: {mine} {other.doc_title}: {theirs}"
                extra = {"hop": "corpus"}
                return Draft(MULTI, question, reference, (first, other), term, extra)
    return None
