"""Evidence the offline judge and the extractive answer read: identifiers, terms, headings.

A question names things exactly (``os.path.isdir``, ``Path.exists``, ``KX-217``,
``pg_stat_activity``, ``CREATE INDEX``, ``--ignore-case``) and asks with content words. A
chunk holds the answer when a sentence under its heading covers those words and, above all,
when its heading names the identifier. Everything here is lexical and cheap; the semantic
part (cosine of the question and the chunk) is added by the strategies that own the
embeddings.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ragloop.nodes.entries import defines
from ragloop.text import STOPWORDS, forget_sentences, split_sentences, tokenize

_PATTERNS = (
    re.compile(r"`([^`\n]{2,60})`"),  # anything the user put in backticks
    # os.path.isdir, Path.exists, std::vec::Vec (a Rust or C++ path)
    re.compile(r"\b[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+(?:\(\))?"),
    re.compile(r"\b[A-Za-z]\w*_\w+\b"),  # pg_stat_activity, work_mem, to_tsvector
    re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?<!-)"),  # command-line options: -i, --ignore-case
    re.compile(r"\b[A-Za-z_]\w*(?=\(\))"),  # a word written as a call: asind(), len()
    re.compile(r"\b(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])\w+(?:[-.]\w+)*\b"),  # KX-217, v4.2.0, md5
    re.compile(r"\b\d+(?:\.\d+){2,}\b"),  # version numbers: 4.2.0
    re.compile(r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"),  # camelCase, TidyOS
    re.compile(r"\b[A-Z][A-Z0-9_]+(?:[ \t]+[A-Z][A-Z0-9_]+)*\b"),  # CREATE INDEX, VACUUM
    # proper names inside a sentence: "at Nordwelt Electronics", "the Lumo Home Hub"
    re.compile(r"(?<=[a-z0-9,;:)] )[A-Z][a-z]{2,}(?:[ \t]+[A-Z][a-z]+)*\b"),
)
_OPTION_VALUE = re.compile(r"^(-[a-z])\d+$")
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


def question_names(question: str, common: frozenset[str] = frozenset()) -> list[str]:
    """The names a question gives (``identifiers``) less the corpus's own words (``common``)."""
    return list(_question_names(question, common))


@functools.lru_cache(maxsize=4096)
def _question_names(question: str, common: frozenset[str]) -> tuple[str, ...]:
    # remembered: the judge reads the question's names once for every chunk it grades
    return tuple(n for n in identifiers(question) if n not in common)


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
    # a short option with its value written onto it names the option: "-j" of "-j8"
    out = list(dict.fromkeys(_OPTION_VALUE.sub(r"\1", n) for n in out))
    return sorted(out, key=lambda n: -len(n))


@functools.lru_cache(maxsize=65536)
def _name_pattern(name: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(p) for p in name.split())
    # an option is not the tail of a longer one: "-h" is not in "--human-readable"
    # nor is a name the tail of a qualified one: "join" is not in "os.path.join", "Vec::new"
    before = r"(?<![\w.-])" if name.startswith("-") else r"(?<![\w.])(?<!::)"
    return re.compile(rf"{before}{body}(?![\w])", re.IGNORECASE)


def written_as(name: str, text: str) -> str:
    """``name`` as ``text`` writes it ("GraphQL" for the name "graphql"), else ``name``."""
    found = _name_pattern(name).search(text or "")
    return found.group(0) if found else name


def name_match(name: str, text: str, heading: bool = False) -> float:
    """How surely ``text`` mentions ``name``: 1 for the full name, less for its last part.

    ``os.setresgid`` documented as ``setresgid(rgid, egid, sgid)`` under the ``os`` module
    still counts: the name under fewer of its qualifiers ("Popen.wait" for
    ``subprocess.Popen.wait``), or its last part written as a call or in a heading, scores
    0.8, and a bare occurrence of the last part 0.4 (a last part such as ``exists`` is also an
    ordinary word). Parts are joined by "." or, in a Rust or C++ path, "::".
    """
    if not text:
        return 0.0
    if _name_pattern(name).search(text):
        return 1.0
    parts = re.split(r"(\.|::)", name)  # the parts with what joins them
    if len(parts) == 1:
        return 0.0
    # written under fewer qualifiers: "Popen.wait" for "subprocess.Popen.wait"
    for cut in range(2, len(parts) - 2, 2):
        if _name_pattern("".join(parts[cut:])).search(text):
            return 0.8
    tail = parts[-1]
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


#: where a dotted, hyphenated or slashed token splits into its parts (as the sparse index
#: splits it)
TOKEN_PARTS = re.compile(r"[-./]")


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
                have.update(stem(p) for p in TOKEN_PARTS.split(tok) if p)
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
