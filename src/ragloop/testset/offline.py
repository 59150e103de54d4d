"""The offline generator: questions read off the parsed structure, no model involved.

Questions take the forms people use (``ragloop.testset.forms``), never a passage's sentence:

- specific (``single_hop_specific_query_synthesizer``): names its subject (a heading that
  can be a subject, else the document): "What does os.makedirs do?", "How do I use X to
  ...?", "What happens with X when ...?". The reference is the sentence it was read from.
- paraphrased (``single_hop_paraphrased_query_synthesizer``): the subject is withheld and
  its intent asked: "How do I get the number of CPUs?", "Which command should I use to
  create an index?"; the reference is the name and the sentence.
- multi-passage and abstract: see ``ragloop.testset.related``; unanswerable: see
  ``ragloop.testset.unanswerable``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ragloop.testset import forms
from ragloop.testset.checks import is_subject
from ragloop.testset.passages import Part, Passage

SPECIFIC = "single_hop_specific_query_synthesizer"
PARAPHRASED = "single_hop_paraphrased_query_synthesizer"
MULTI = "multi_hop_specific_query_synthesizer"
UNANSWERABLE = "single_hop_unanswerable_query_synthesizer"
ABSTRACT = "multi_hop_abstract_query_synthesizer"
KINDS = {
    SPECIFIC: "specific",
    PARAPHRASED: "paraphrased",
    MULTI: "multi_passage",
    ABSTRACT: "abstract",
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
_IDENT = re.compile(r"[A-Za-z_][\w]*")
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


def lead(part: Part, n: int = 2, limit: int = 320) -> str:
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


def best_part(passage: Passage, rng: random.Random, named: bool = False) -> Part | None:
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


def is_api(name: str) -> bool:
    """An identifier, a program name or an upper-case command (``CREATE INDEX``)."""
    if re.fullmatch(r"[A-Z][A-Z_]*(?: [A-Z_]+){0,4}", name) and len(name) > 2:
        return True
    return bool(_API.match(name)) and (
        any(c in name for c in "._()`:") or name.isupper() or name.islower()
    )


def subject_of(part: Part, passage: Passage) -> str:
    """What a part is about: its heading when that can be a subject, else its document."""
    for name in (part.heading.strip().strip("`"), passage.doc_title):
        name = short_name(name)
        if name and not is_generic(name) and name.lower() not in SKIP and is_subject(name):
            return name
    return ""


_TITLE_DASH = re.compile(r"\s+[\u2014\u2013]\s+|\s+--?\s+")


def short_name(title: str) -> str:
    """A page title's name without its tagline ("pathlib — Object-oriented filesystem paths"
    is pathlib; "bash - GNU Bourne-Again SHell" is bash)."""
    head, *rest = _TITLE_DASH.split(title.strip(), maxsplit=1)
    return head.strip() if rest and head.strip() and len(head.split()) <= 3 else title.strip()


def _from(part: Part, i: int) -> str:
    """The reference: sentence ``i`` of the part and, when short, the next one."""
    out = part.sentences[i]
    if len(out) < 120 and i + 1 < len(part.sentences):
        out = f"{out} {part.sentences[i + 1]}"
    return out


def specific(passage: Passage, rng: random.Random) -> Draft | None:
    """A question that names its subject: what it does, how to use it for what it does."""
    part = best_part(passage, rng)
    if part is None:
        return None
    name = subject_of(part, passage)
    if not name:
        return None
    api = is_api(name)
    for i, sentence in enumerate(part.sentences[:4]):
        match = _DEFINITION.match(sentence)
        term = match.group("term").strip() if match else ""
        named = any(c.isupper() or c in "_.()" for c in term[1:]) or len(term.split()) > 1
        fits = named and term.lower() != name.lower() and 1 <= len(term.split()) <= 4
        if fits and is_subject(term) and term.split()[0].lower() not in STOP | OPENERS:
            q = forms.named_question(term, None, rng, is_api(term))
            return Draft(SPECIFIC, q, sentence, (passage,), term, {})
        question = forms.what_happens(sentence, name) or forms.why(sentence, name)
        it = forms.intent(sentence, name)
        if question is None and (it is not None or (i == 0 and passage.lead)):
            question = forms.named_question(name, it, rng, api)
        if question:
            return Draft(SPECIFIC, question, _from(part, i), (passage,), name, {})
    return None


def paraphrased(passage: Passage, rng: random.Random) -> Draft | None:
    """The subject withheld, its intent asked: "How do I ...?", "Which ... should I use"."""
    part = best_part(passage, rng, named=True)
    if part is None:
        return None
    name = subject_of(part, passage)
    if not name or name != part.heading.strip().strip("`"):
        return None
    kind = forms.subject_kind(name) if is_api(name) else ""
    for sentence in part.sentences[:4]:
        it = forms.intent(sentence, name)
        question = forms.how_to(it, rng, kind) if it else None
        if question and not names(question, name):
            return Draft(PARAPHRASED, question, f"{name}: {sentence}", (passage,), name, {})
    return None


def names(question: str, name: str) -> bool:
    """Whether a question gives its subject away: the whole name, or, for an identifier, its
    last part ("a new partialmethod descriptor" names functools.partialmethod)."""
    hidden = words(name)
    if not hidden or name.lower() in question.lower() or hidden <= words(question):
        return True
    leaf = re.split(r"[.:]+", name.strip("()` "))[-1].lower()
    return is_api(name) and len(leaf) > 2 and leaf in {t.lower() for t in _IDENT.findall(question)}


def with_word(passage: Passage, term: str) -> str:
    """The first prose sentence of the passage that holds ``term`` as a word."""
    for part in passage.parts:
        for sentence in part.sentences:
            if term in words(sentence):
                return sentence
    return ""


def word_counts(pool: list[Passage]) -> Counter[str]:
    """In how many passages each word occurs (count it once for a corpus)."""
    return Counter(w for p in pool for w in words(p.text))
