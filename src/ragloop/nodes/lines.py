"""What kind of line a sentence is, and what a corpus says on every page.

A sentence an answer must never quote is a code block or signature (``is_code``), an
index, contents or table block (``is_toc``; a table's rows are read one by one:
``table_rows``), a question (``is_question``), or boilerplate: a
sentence a fifth of the corpus's pages repeat (``repeated_sentences``,
``corpus_boilerplate``; compared by ``key``). ``choose_profile`` reads a corpus's genre
from how often its chunks hold entry lines.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from ragloop.documents.chunking import SEPARATOR
from ragloop.text import split_sentences

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
    """An index, contents or table block, not a sentence: dot leaders ("9 asn1_der_coding .
    . . . 12"), a run of lines most of which are table cells or index entries ("set: | The
    Set Builtin", "S", "From | To | Use"), or a line of letters to jump to ("Jump to: | A B C
    D ...")."""
    if _LEADERS.search(sentence):
        return True
    lines = [line.strip() for line in sentence.splitlines() if line.strip()]
    if len(lines) >= 2:
        rows = [" | " in ln or ln.startswith("|") or len(ln.split()) == 1 for ln in lines]
        if sum(rows) >= 0.6 * len(lines):
            return True
    tokens = sentence.split()
    return len(tokens) >= 8 and sum(len(t) == 1 for t in tokens) >= 0.6 * len(tokens)


def table_rows(sentence: str) -> list[str]:
    """The rows of a table block ("cidr | 7 or 19 bytes | IPv4 and IPv6 networks" lines, as
    the document readers write a simple table's rows), or [] for anything else.

    A table block is read as one sentence (``split_sentences``) and, as a whole, is no
    sentence to quote (``is_toc``); a row of it may be the answer, and is quoted on its own
    (``sentences.quotable``) when it reads as prose. Lines without a cell separator (an
    index's letter headings) are left out; a fenced block or dot leaders are no table."""
    if sentence.lstrip().startswith("```") or _LEADERS.search(sentence):
        return []
    lines = [line.strip() for line in sentence.splitlines() if line.strip()]
    rows = [ln for ln in lines if " | " in ln]
    return rows if len(lines) >= 2 and len(rows) >= 0.6 * len(lines) else []


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
    units: Iterable[tuple[str, str]], share: float = 0.2, least: int = 3, pages: bool = False
) -> frozenset[str]:
    """Keys of sentences found in at least ``share`` of the units (and ``least`` of them).

    ``units`` are (unit, text) pairs: a page's source, or a top-level section when the corpus
    is one page, with a chunk's text. "Part of the ... suite", a navigation line every page
    repeats, is found this way; a sentence of three words or fewer is never counted. With
    ``pages`` (units are page sources), a sentence that names its own page is compared with
    that name left out, so a template every page fills in with its own name ("or available
    locally via: info '(coreutils) touch invocation'" on touch.html) counts as repeated too.
    """
    where: dict[str, set[str]] = defaultdict(set)
    keys: dict[str, set[str]] = defaultdict(set)  # compared form -> the sentences' own keys
    seen: set[str] = set()
    for unit, text in units:
        seen.add(unit)
        own = _page_name(unit) if pages else None
        for s in split_sentences(text):
            if len(s.split()) > 3 and not s.startswith(("```", "#")):
                compared = own.sub("\u00a7", s) if own else s
                k = key(compared) + ("\u00a7" if compared != s else "")
                where[k].add(unit)
                keys[k].add(key(s))
    need = max(least, share * len(seen))
    return frozenset(o for k, us in where.items() if len(us) >= need for o in keys[k])


def _page_name(source: str) -> re.Pattern[str] | None:
    """The page's own name as a whole word ("touch" of "touch.html"), or None when the name is
    too short to be one."""
    name = source.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0]
    return re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", re.I) if len(name) >= 2 else None


#: a line that opens a reference entry: a signature "abs(X)", a term "wal_buffers (integer):",
#: an entry "ALTER VIEW — change ...", a fenced signature line
_ENTRY_LINE = re.compile(
    r"^[ \t]*(?:[\w.$:-]+[ \t]*\([^)\n]{0,80}\)|[A-Z][A-Z_ ]{2,40}[ \t]+[\u2014\u2013-][ \t]|"
    r"[\w.-]+ \(\w[\w ]*\):)",
    re.M,
)
#: a corpus whose chunks hold entry lines at least this often is a reference manual
REFERENCE_SHARE = 0.1
_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def has_entry_line(text: str) -> bool:
    """The chunk holds an entry line: in its prose, or as a code block of one line (a
    signature set as code, as Sphinx does). A line of a longer code block is a program's
    (``thread::spawn(move || {``), not an entry: a guide full of examples is no reference."""
    if _ENTRY_LINE.search(_FENCED.sub("", text)):
        return True
    for body in _FENCED.findall(text):
        lines = [line for line in body.splitlines() if line.strip()]
        if len(lines) == 1 and _ENTRY_LINE.search(lines[0]):
            return True
    return False


def choose_profile(texts: list[str]) -> tuple[str, str]:
    """(profile, why) for a corpus from its chunk texts: ``reference`` when a tenth or more of
    its chunks hold an entry line (``has_entry_line``: a signature, a term, "NAME — what it
    does"), ``guide`` for other corpora of 50 chunks or more, ``generic`` for small ones."""
    if not texts:
        return "generic", "no chunks"
    share = sum(has_entry_line(t) for t in texts) / len(texts)
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
        (
            (src if by_page else title.split(SEPARATOR)[0].strip(), text)
            for src, title, text in chunks
        ),
        pages=by_page,
    )


def is_question(sentence: str) -> bool:
    """A sentence that asks rather than states: it ends with a question mark (one that quotes
    a question, 'He asked "why?"', states)."""
    return sentence.rstrip().endswith("?")
