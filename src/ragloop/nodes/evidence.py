"""Evidence the offline judge and the extractive answer read: identifiers, terms, headings.

A question names things exactly (``os.path.isdir``, ``Path.exists``, ``KX-217``,
``pg_stat_activity``, ``CREATE INDEX``) and asks with content words. A chunk holds the answer
when a sentence under its heading covers those words and, above all, when its heading names
the identifier. Everything here is lexical and cheap; the semantic part (cosine of the
question and the chunk) is added by the strategies that own the embeddings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ragloop.nodes.entries import defines, page_subject
from ragloop.text import STOPWORDS, forget_sentences, split_sentences, tokenize

_PATTERNS = (
    re.compile(r"`([^`\n]{2,60})`"),  # anything the user put in backticks
    re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"),  # os.path.isdir, Path.exists
    re.compile(r"\b[A-Za-z]\w*_\w+\b"),  # pg_stat_activity, work_mem, to_tsvector
    re.compile(r"\b[A-Za-z_]\w*(?=\(\))"),  # a word written as a call: asind(), len()
    re.compile(r"\b(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])\w+(?:[-.]\w+)*\b"),  # KX-217, v4.2.0, md5
    re.compile(r"\b\d+(?:\.\d+){2,}\b"),  # version numbers: 4.2.0
    re.compile(r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"),  # camelCase, TidyOS
    re.compile(r"\b[A-Z][A-Z0-9_]+(?:[ \t]+[A-Z][A-Z0-9_]+)*\b"),  # CREATE INDEX, VACUUM
    # proper names inside a sentence: "at Nordwelt Electronics", "the Lumo Home Hub"
    re.compile(r"(?<=[a-z0-9,;:)] )[A-Z][a-z]{2,}(?:[ \t]+[A-Z][a-z]+)*\b"),
)
#: words that frame a question but say nothing about what it asks for
FRAME_WORDS = frozenset(
    """do does doing done what how use used using mean means meaning purpose describe explain
    tell want need way work works happen happens someone something thing things get give
    show find like please know""".split()  # noqa: SIM905
)


@functools.cache
def _porter():  # type: ignore[no-untyped-def]
    from nltk.stem.porter import PorterStemmer  # ships with rouge-score; needs no data files

    return PorterStemmer()


@functools.lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """Porter stem of one lowercase word (non-ASCII words as they are)."""
    return _porter().stem(word) if word.isascii() and word.isalpha() else word


#: no word is one of a corpus's own words (``common_words``) in an index smaller than this:
#: a few dozen chunks of one product all say its name, and its model names (T2, T3) still
#: tell them apart
COMMON_MIN_CHUNKS = 1000
#: a word in more than this share of the chunks is one of the corpus's own words
COMMON_SHARE = 0.1


def common_words(
    chunk_counts: dict[str, int],
    chunks: int,
    pages: Iterable[str] = (),
    share: float = COMMON_SHARE,
    min_chunks: int | None = None,
) -> frozenset[str]:
    """The corpus's own words: tokens in more than ``share`` of its ``chunks`` chunks, less
    those a page is about (its title, given in ``pages``, is the word, or "word — ...").

    ``chunk_counts`` maps a token to the number of chunks holding it (a sparse index's
    document frequencies). Like a vectorizer's ``max_df``, these are words a question gives
    that tell no chunk apart: "PostgreSQL" (in 19% of the PostgreSQL docs' chunks) and "SQL"
    (14%) in "How can I get rid of a procedure in PostgreSQL?" made every "Compatibility"
    section ("... conforms to the SQL standard, with these PostgreSQL extensions") look more
    evident than the line that answers ("DROP PROCEDURE — remove a procedure"). "SELECT" is
    as common there (12%), but the page "SELECT" is about it, so it stays a name.
    """
    if chunks < (COMMON_MIN_CHUNKS if min_chunks is None else min_chunks):
        return frozenset()
    subjects = {page_subject(t).lower() for t in pages}
    return frozenset(t for t, n in chunk_counts.items() if n > share * chunks and t not in subjects)


def question_names(question: str, common: frozenset[str] = frozenset()) -> list[str]:
    """The names a question gives (``identifiers``) less the corpus's own words (``common``)."""
    return list(_question_names(question, common))


@functools.lru_cache(maxsize=4096)
def _question_names(question: str, common: frozenset[str]) -> tuple[str, ...]:
    # remembered: the judge reads the question's names once for every chunk it grades
    return tuple(n for n in identifiers(question) if n not in common)


def unknown_names(
    question: str, vocabulary: Mapping[str, int] | None, common: frozenset[str] = frozenset()
) -> float:
    """Share of the question's names (``question_names``) that the corpus never mentions: a
    word of the name is in none of its chunks (``vocabulary``: word -> number of chunks
    holding it, the sparse index's counts). 0 when the question names nothing or no
    vocabulary is given.

    A question about something a corpus never names ("PgBouncer's pool_mode" asked of the
    PostgreSQL manual, "GraphQL" of a web framework's) is rarely answered by it, however close
    its other words come; the answer's abstention reads this beside the sentence scores.
    """
    names = question_names(question, common)
    if not names or not vocabulary:
        return 0.0
    return len(names_never_mentioned(question, vocabulary, common)) / len(names)


def names_never_mentioned(
    question: str, vocabulary: Mapping[str, int] | None, common: frozenset[str] = frozenset()
) -> list[str]:
    """The question's names (``question_names``) with a word that no chunk holds, by
    ``vocabulary`` (word -> number of chunks holding it); empty without a vocabulary.

    A dotted, hyphenated or slashed word counts as held when all its parts are, as the sparse
    index reads it: "Path.exists" asked of docs that write ``exists()`` under ``pathlib.Path``,
    "a 52-card deck", "out.log"; "pandas.read_excel" asked of the Python library is not.
    """
    if not vocabulary:
        return []

    def held(word: str) -> bool:
        if vocabulary.get(word, 0) > 0:
            return True
        parts = [p for p in re.split(r"[-./]", word) if p]
        return len(parts) > 1 and all(vocabulary.get(p, 0) > 0 for p in parts)

    return [
        n
        for n in question_names(question, common)
        if not all(held(t) for t in tokenize(n, drop_stopwords=True))
    ]


def identifiers(text: str) -> list[str]:
    """Names the text mentions exactly, lowercased, longest first (duplicates dropped)."""
    found: list[str] = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(text or ""):
            name = (m.group(1) if m.groups() else m.group(0)).strip().removesuffix("()")
            name = re.sub(r"\s+", " ", name).lower()
            if len(name) >= 2 and name not in found and name not in STOPWORDS:
                found.append(name)
    # a name inside a longer one ("path" in "os.path") adds nothing
    out = [n for n in found if not any(n != o and n in o for o in found)]
    return sorted(out, key=lambda n: -len(n))


@functools.lru_cache(maxsize=65536)
def _name_pattern(name: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(p) for p in name.split())
    return re.compile(rf"(?<![\w.]){body}(?![\w])", re.IGNORECASE)


def name_match(name: str, text: str, heading: bool = False) -> float:
    """How surely ``text`` mentions ``name``: 1 for the full name, less for its last part.

    ``os.setresgid`` documented as ``setresgid(rgid, egid, sgid)`` under the ``os`` module
    still counts: the last dotted part written as a call or in a heading scores 0.8, and a
    bare occurrence of it 0.4 (a last part such as ``exists`` is also an ordinary word).
    """
    if not text:
        return 0.0
    if _name_pattern(name).search(text):
        return 1.0
    if "." not in name:
        return 0.0
    tail = name.rsplit(".", 1)[1]
    if len(tail) < 3:
        return 0.0
    hit = _name_pattern(tail).search(text)
    if not hit:
        return 0.0
    if heading or re.match(r"\s*\(", text[hit.end() :]):
        return 0.8
    return 0.4


def terms(text: str, common: frozenset[str] = frozenset()) -> list[str]:
    """Content stems of a question: stopwords, frame words and identifiers' dots kept apart;
    a name the question gives that is one of the corpus's own words (``common``) left out."""
    return list(_terms(text, common))


@functools.lru_cache(maxsize=4096)
def _terms(text: str, common: frozenset[str]) -> tuple[str, ...]:
    # remembered: the judge reads the question's terms once for every chunk it grades
    skip = {n for n in identifiers(text) if n in common} if common else set()
    out: list[str] = []
    for tok in tokenize(text, drop_stopwords=True):
        parts = [tok] if not any(c in tok for c in "./") else re.split(r"[./]", tok)
        for p in parts:
            if (
                p
                and p not in STOPWORDS
                and p not in FRAME_WORDS
                and not p.isdigit()
                and p not in skip
            ):
                s = stem(p)
                if s not in out:
                    out.append(s)
    return tuple(out)


def forget() -> None:
    """Forget every remembered lexical reading (texts' stems, sentences, evidence), so a
    timing starts cold; the results are the same either way."""
    lexical.cache_clear()
    stems_of.cache_clear()
    forget_sentences()


#: where a dotted, hyphenated or slashed token splits into its parts
_PARTS = re.compile(r"[-./]")


@functools.lru_cache(maxsize=200_000)
def stems_of(text: str) -> frozenset[str]:
    """The stems present in a text (dotted/hyphenated tokens also by their parts).

    Remembered: the loop re-reads the same chunks' sentences and headings at every judge
    step and for every question that retrieves them.
    """
    tokens = set(tokenize(text))  # each distinct token once
    have = set(map(stem, tokens))
    joined = " ".join(tokens)
    if "-" in joined or "." in joined or "/" in joined:
        for tok in tokens:
            if "-" in tok or "." in tok or "/" in tok:
                have.update(stem(p) for p in _PARTS.split(tok) if p)
    return frozenset(have)


@dataclass(frozen=True)
class Lexical:
    """Lexical evidence of one chunk for one question, each part in [0, 1]."""

    sentence: float  # best term coverage of one sentence read with its heading
    heading: float  # term coverage of the heading path alone
    names_heading: tuple[float, ...]  # per question identifier: match in the heading path
    names_text: tuple[float, ...]  # per question identifier: match anywhere in the text
    best: int  # index of the best sentence in ``sentences``
    sentences: tuple[str, ...]


def split_heading(text: str) -> tuple[str, str]:
    """(heading path, body) of a judged text: its first line is the heading when it has one.

    The judge hands strategies ``title + newline + text`` (what the dense index embeds),
    so the first line is the section's heading path.
    """
    head, _, body = text.partition("\n")
    if not body:
        return "", text
    return head.lstrip("#").strip(), body


@functools.lru_cache(maxsize=8192)
def lexical(
    question: str, text: str, heading: str = "", common: frozenset[str] = frozenset()
) -> Lexical:
    """Sentence- and section-level lexical evidence of ``text`` (under ``heading``), the
    corpus's own words (``common``) not counted as names or terms.

    Remembered per (question, text, heading): a kept chunk is judged again at every step.
    """
    want = terms(question, common)
    names = question_names(question, common)
    sentences: list[str] = []
    scores: list[float] = []
    current = heading
    head_stems = stems_of(heading)
    pieces = split_sentences(text) or [text]
    for sent in pieces:
        if sent.startswith("#"):  # an inner Markdown heading rules the sentences below it
            current = f"{heading} {sent.lstrip('#').strip()}"
            head_stems = head_stems | stems_of(current)
            continue
        own, under = stems_of(sent), stems_of(current)
        sentences.append(sent)
        scores.append(sum(w in own or w in under for w in want) / len(want) if want else 0.0)
    best = max(range(len(scores)), key=scores.__getitem__) if scores else 0
    heading_cov = sum(w in head_stems for w in want) / len(want) if want else 0.0
    headings = " ".join([heading, *(s for s in pieces if s.startswith("#"))])
    return Lexical(
        sentence=scores[best] if scores else 0.0,
        heading=heading_cov,
        # a heading that names it, or an entry in the text that defines it
        names_heading=tuple(
            max(name_match(n, headings, heading=True), defines(n, text)) for n in names
        ),
        names_text=tuple(name_match(n, text) for n in names),
        best=best,
        sentences=tuple(sentences),
    )
