"""What the extractive answer knows about each sentence it may quote: named, bounded features.

Every feature is a number in [0, 1] (``cosine`` and ``heading_cosine`` are cosines, in
[-1, 1]) computed from the question, the sentence, its heading and its chunk:

==================  ===========================================================================
cosine              the sentence's cosine to the question (sentences embedded alone)
heading_cosine      the cosine of the heading it sits under to the question
terms               share of the question's words the sentence and its heading hold
name_sentence       the sentence names what the question names (a name all read chunks give
                    counts less: ``extractive.name_weights``)
name_heading        its heading names it
name_entry          the sentence is, or follows, the name's entry line ("abs(X)", "wal_buffers
                    (integer)", "ALTER VIEW — ...")                        [reference profile]
subject_entry       the question names nothing and the sentence starts with its section's
                    subject, or is (or follows) its entry line             [reference profile]
evidence            the judge's evidence for the whole chunk (0 when it gave none)
first               1 for the first sentence of its section in the chunk, 1/2 the next, ...
code                a code block or a line with fewer than three lower-case words (a signature)
toc                 an index or table-of-contents line (dot leaders)
boilerplate         a sentence found on a fifth of the corpus's pages or more
==================  ===========================================================================

``code``, ``toc`` and ``boilerplate`` sentences are never quoted (``flawed``); they stay
features so a fitted model can also learn what their neighbours are worth. Nor is a question
(a sentence ending in "?": a FAQ's or a blog's own question states no answer, and it is the
sentence most likely to echo the user's). The genre features
are on in the ``reference`` profile only (``PROFILES``), chosen at index time
(``profiles.choose_profile``).

Whether the read passages answer at all is a question-level decision, read from what the
sentence scores and the judge say about the question as a whole (``QUESTION_FEATURES``, each in
[0, 1] or a cosine in [-1, 1]; ``question_features``):

==================  ===========================================================================
best                the best quotable sentence's probability of answering
second              the second best's (one lucky sentence against several that agree)
top_mean            the mean probability of the five best
cosine_max          the highest cosine of a quotable sentence to the question
cosine_mean         the mean cosine of the five closest
evidence_max        the judge's best evidence among the read passages (0 when it gave none)
==================  ===========================================================================
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ragloop.documents.chunking import SEPARATOR
from ragloop.nodes.entries import defines, subject_entry
from ragloop.nodes.evidence import name_match
from ragloop.state import ContextItem
from ragloop.text import split_sentences, token_recall

FEATURES = (
    "cosine",
    "heading_cosine",
    "terms",
    "name_sentence",
    "name_heading",
    "name_entry",
    "subject_entry",
    "evidence",
    "first",
    "code",
    "toc",
    "boilerplate",
)
#: what the abstention model reads about the question as a whole (see the module docstring)
QUESTION_FEATURES = ("best", "second", "top_mean", "cosine_max", "cosine_mean", "evidence_max")
#: features that assume a reference manual's layout (entry lines, pages about one subject)
GENRE = frozenset({"name_entry", "subject_entry"})
PROFILES: dict[str, frozenset[str]] = {
    "reference": frozenset(FEATURES),
    "guide": frozenset(FEATURES) - GENRE,
    "generic": frozenset(FEATURES) - GENRE,
}
_LEADERS = re.compile(r"(?:\.\s?){5,}|(?:…\s?){3,}|(?:\. ){3,}\s*\d")
#: a plain lower-case word: not part of a dotted, hyphenated or snake name, not called
_WORD = re.compile(r"(?<![\w.\-/$])[a-z]+(?![\w\-(/]|\.\w)")
#: words that only prose has ("remove a procedure", "Return the arctangent of X")
_SYMBOL = re.compile(r"[^\w\s.,;:'\u2014\u2013-]")
#: a plain word in lower or title case ("The"; not "BY" of "ORDER BY")
_ANY_WORD = re.compile(r"(?<![\w.\-/$])[A-Za-z][a-z]*(?![\w\-(/]|\.\w)")
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "is",
        "are",
        "be",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "if",
        "when",
        "that",
        "this",
        "it",
        "as",
        "on",
        "at",
        "not",
        "no",
        "its",
        "their",
        "which",
        "into",
        "than",
    ]
)
_KEY = re.compile(r"\W+")


def is_toc(sentence: str) -> bool:
    """An index or table-of-contents line: dot leaders ("9 asn1_der_coding . . . . 12")."""
    return bool(_LEADERS.search(sentence))


def is_code(sentence: str) -> bool:
    """A fenced code block, or a line that is not prose: fewer than three plain lower-case
    words, or none of them a function word ("os.setresgid(rgid, egid, sgid)", "cd [-L]
    [directory]"). An entry line's description counts ("DROP PROCEDURE — remove a procedure")."""
    if sentence.lstrip().startswith("```"):
        return True
    body = re.split(r"\s[\u2014\u2013]\s", sentence, maxsplit=1)[-1]
    if len(_SYMBOL.findall(body)) > 0.2 * len(body.replace(" ", "")):
        return True  # an example or a signature: '{"a": [0,1,2]}' -> ...
    words = _WORD.findall(body)
    # "The P-40 pump moves 40 litres per minute.": a capitalised function word counts too
    return len(words) < 3 or not any(w.lower() in _FUNCTION_WORDS for w in _ANY_WORD.findall(body))


def key(sentence: str) -> str:
    """A sentence's comparison key: letters and digits only, casefolded."""
    return _KEY.sub("", sentence).casefold()


def repeated_sentences(
    units: Iterable[tuple[str, str]], share: float = 0.2, least: int = 3
) -> frozenset[str]:
    """Keys of sentences found in at least ``share`` of the units (and ``least`` of them).

    ``units`` are (unit, text) pairs: a page's source, or a top-level section when the corpus
    is one page, with a chunk's text. "Part of the ... suite", a navigation line every page
    repeats, is found this way; a sentence of three words or fewer is never counted.
    """
    where: dict[str, set[str]] = defaultdict(set)
    seen: set[str] = set()
    for unit, text in units:
        seen.add(unit)
        for s in split_sentences(text):
            if len(s.split()) > 3 and not s.startswith(("```", "#")):
                where[key(s)].add(unit)
    need = max(least, share * len(seen))
    return frozenset(k for k, us in where.items() if len(us) >= need)


#: a line that opens a reference entry: a signature "abs(X)", a term "wal_buffers (integer):",
#: an entry "ALTER VIEW — change ...", a fenced signature line
_ENTRY_LINE = re.compile(
    r"^[ \t]*(?:[\w.$:-]+[ \t]*\([^)\n]{0,80}\)|[A-Z][A-Z_ ]{2,40}[ \t]+[\u2014\u2013-][ \t]|"
    r"[\w.-]+ \(\w[\w ]*\):)",
    re.M,
)
#: a corpus whose chunks hold entry lines at least this often is a reference manual
REFERENCE_SHARE = 0.1


def choose_profile(texts: list[str]) -> tuple[str, str]:
    """(profile, why) for a corpus from its chunk texts: ``reference`` when a tenth or more of
    its chunks hold an entry line (a signature, a term, "NAME — what it does"), ``guide``
    for other corpora of 50 chunks or more, ``generic`` for small ones."""
    if not texts:
        return "generic", "no chunks"
    share = sum(bool(_ENTRY_LINE.search(t)) for t in texts) / len(texts)
    why = f"entry lines in {share:.0%} of {len(texts)} chunks"
    if share >= REFERENCE_SHARE:
        return "reference", why
    return ("guide" if len(texts) >= 50 else "generic"), why


def corpus_boilerplate(chunks: list[tuple[str, str, str]]) -> frozenset[str]:
    """``repeated_sentences`` of a corpus's (source, title, text) chunks: by page, or by
    top-level section when the corpus has fewer than 20 pages (one long manual)."""
    sources = {src for src, _, _ in chunks}
    by_page = len(sources) >= 20
    return repeated_sentences(
        (src if by_page else title.split(SEPARATOR)[0].strip(), text) for src, title, text in chunks
    )


@dataclass(frozen=True)
class Quotable:
    """A sentence an answer may quote, where it sits, and what came just before it."""

    sentence: str
    n: int  # context number, from 1
    heading: str
    before: str
    first: float  # 1 for the first sentence of its section in the chunk, 1/2 the next, ...


def quotable(contexts: list[ContextItem]) -> list[Quotable]:
    """Every sentence of four words or more of the contexts (headings left out)."""
    out: list[Quotable] = []
    for n, ctx in enumerate(contexts, start=1):
        heading, before, at = str(ctx.get("title") or ""), "", 0
        for sent in split_sentences(ctx["text"]):
            if sent.startswith("#"):
                heading, at = sent.lstrip("#").strip(), 0
            elif len(sent.split()) >= 4:
                at += 1
                out.append(Quotable(sent, n, heading, before, 1.0 / at))
            before = sent
        # a code block counts as a sentence of its section too: it moves ``first`` on
    return out


def flawed(q: Quotable, boilerplate: frozenset[str]) -> bool:
    """Never quoted: a bare code block or signature, a TOC line, boilerplate, or a question."""
    return (
        is_code(q.sentence)
        or is_toc(q.sentence)
        or key(q.sentence) in boilerplate
        or is_question(q.sentence)
    )


def is_question(sentence: str) -> bool:
    """A sentence that asks rather than states: it ends with a question mark (one that quotes
    a question, 'He asked "why?"', states)."""
    return sentence.rstrip().endswith("?")


def lexical_features(
    question: str,
    q: Quotable,
    names: list[str],
    spread: dict[str, float],
    defined: dict[str, float],
    boilerplate: frozenset[str],
    profile: frozenset[str],
) -> dict[str, float]:
    """The features of one sentence that need no embeddings (see the module docstring)."""

    def named(text: str, heading: bool = False) -> float:
        return max((spread.get(n, 1.0) * name_match(n, text, heading) for n in names), default=0)

    genre = {
        "name_entry": max(
            (
                defined.get(n, 1.0) * max(defines(n, q.sentence), defines(n, q.before))
                for n in names
            ),
            default=0.0,
        ),
        "subject_entry": 0.0 if names else subject_entry(q.sentence, q.before, q.heading),
    }
    out = {
        "terms": token_recall(question, f"{q.heading}: {q.sentence}"),
        "name_sentence": named(q.sentence),
        "name_heading": named(q.heading, heading=True),
        "first": q.first,
        "code": float(is_code(q.sentence)),
        "toc": float(is_toc(q.sentence)),
        "boilerplate": float(key(q.sentence) in boilerplate),
    }
    out.update({k: v if k in profile else 0.0 for k, v in genre.items()})
    return out


def signature_before(q: Quotable) -> str | None:
    """The one-line signature just before a sentence ("cd [-L|[-P [-e]] [directory]"), if any:
    shown with the description it introduces, never quoted instead of it."""
    before = q.before.strip()
    if not before.startswith("```"):
        return None
    body = before.strip("`").replace("\u00b6", "").strip()  # texinfo's anchor mark
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) != 1 or len(lines[0]) > 120:
        return None
    return lines[0].strip()


def question_features(
    probability: np.ndarray, cosine: np.ndarray, evidence: Iterable[float]
) -> dict[str, float]:
    """``QUESTION_FEATURES`` from the quotable sentences' probabilities and cosines and the
    read passages' judge evidence (empty or all 0 when no judge measured it)."""
    p = np.sort(np.asarray(probability, dtype=float))[::-1]
    c = np.sort(np.asarray(cosine, dtype=float))[::-1]
    ev = [float(e) for e in evidence]
    return {
        "best": float(p[0]) if len(p) else 0.0,
        "second": float(p[1]) if len(p) > 1 else 0.0,
        "top_mean": float(p[:5].mean()) if len(p) else 0.0,
        "cosine_max": float(c[0]) if len(c) else 0.0,
        "cosine_mean": float(c[:5].mean()) if len(c) else 0.0,
        "evidence_max": max(ev, default=0.0),
    }
