"""Small text helpers shared by retrievers, metrics and nodes: sentences, tokens, overlap."""

from __future__ import annotations

import functools
import re

_SENT_END = re.compile(r"(?<=[.!?。！？])\s+(?=[\"'(\[A-Z0-9А-ЯЁ가-힣])|\n{2,}|\n(?=[-*•]\s)")
# a sentence may also start with a lower-case name ("... a path specification. pathname can
# be absolute ..."), as reference docs often do, or a path or command ("Does it help?
# bench/fit.py refits ...", "git-annex adds ..."); not after an abbreviation ("e.g. the")
_LOWER_START = re.compile(r"(?<=[\w)\]\"'`][.!?])\s+(?=[a-zа-яё_][\w./-]*\s)")
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|cf|vs|viz|approx|resp|incl|esp|al|ca|no|fig|sec|ch|eq|ver|"
    r"ref|min|max|avg|std)|\b[A-Za-z]|\.\.)\.$",
    re.IGNORECASE,
)
# a fenced code block, or a Markdown heading line ("# 9.9. Date/Time Functions › 9.9.2. ..."):
# each is one sentence, whatever full stops it holds
_FENCED = re.compile(
    r"(^```[^\n]*\n.*?\n```[ \t]*$|^\#{1,6}[ \t][^\n]*$)", re.MULTILINE | re.DOTALL
)
#: a command-line option's line: "-i, --ignore-case", "-f FILE, --file=FILE", "--color[=WHEN]"
_OPTION_LINE = re.compile(r"--?[A-Za-z0-9][\w-]*(?:[=\[ ,]|$)")
_TOKEN = re.compile(r"[\w][\w\-./]*[\w]|\w", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are as at be but by can could did do does for from had has have how i if in
    into is it its me my no not of on or our she so that the their them then there these they
    this to was we were what when where which who why will with would you your yours about
    after again all am any because been before being both each few more most other some such
    than too very just should now also may might must shall""".split()  # noqa: SIM905
)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (also on blank lines and list bullets); drop empty ones.

    A code block fenced with ``` lines (as ragloop.documents writes them) is one sentence,
    kept whole with its fences, so an answer never quotes half a block; so is a heading
    line, so "# 8.14. JSON Types" is never read as the heading "# 8.14." and the sentence
    "JSON Types".
    """
    return list(_sentences(text))


def option_line(text: str) -> bool:
    """Whether ``text`` is a command-line option's line written on its own ("-i,
    --ignore-case" before the paragraph that says what it does, as a man page converted to
    HTML has it): one line of at most 80 characters that starts with an option and ends
    without a sentence's end ("-1 is returned when ..." is prose)."""
    text = text.strip()
    return (
        "\n" not in text
        and len(text) <= 80
        and not text.endswith((".", "!", "?"))
        and bool(_OPTION_LINE.match(text))
    )


#: an option entry's head: the options a line opens with, before ": " or the line's end
_OPTION_HEAD = re.compile(r"^[ \t]*(--?[A-Za-z][^\n:]{0,80}?)(?::(?:[ \t]|$)|$)", re.M)
#: one option of it, with its argument's placeholder: "-f FILE", "--file=FILE", "--color[=WHEN]"
_OPTION_PART = re.compile(
    r"(--?[A-Za-z][\w-]*)(?:=\S+|\[=?[^\]]*\]|[ \t]+(?:[A-Za-z][\w-]*|<[\w-]+>|\[[^\]]*\]))?"
)


def option_entries(text: str) -> set[str]:
    """The options (lowercased) that ``text``'s option entry lines define, as
    ``nodes.entries.defines`` reads them: a line that opens with options, each with its
    argument's placeholder, then ": " or nothing ("-f FILE, --file=FILE: Obtain patterns ...",
    "-h, --human-readable" as a paragraph of its own; ``option_line`` is the looser test the
    chunker and the answer's signatures use for such a line standing alone)."""
    out: set[str] = set()
    for m in _OPTION_HEAD.finditer(text):
        parts = [_OPTION_PART.fullmatch(p.strip()) for p in re.split(r",[ \t]*", m.group(1))]
        if all(parts):
            out.update(p.group(1).lower() for p in parts if p)
    return out


def forget_sentences() -> None:
    """Forget the remembered splits (``split_sentences``), so a timing starts cold."""
    _sentences.cache_clear()


@functools.lru_cache(maxsize=8192)
def _sentences(text: str) -> tuple[str, ...]:
    # remembered: the judge, the answer and its ranking split the same chunks in one run
    out: list[str] = []
    for n, piece in enumerate(_FENCED.split(text.strip()) if text else []):
        if n % 2:  # the fenced blocks and heading lines, captured by the split
            out.append(piece.strip())
            continue
        for part in _SENT_END.split(piece.strip()):
            out.extend(_lower_starts(part))
    return tuple(p for p in (_unbulleted(s) for s in out) if p)


#: a list item's marker: a dash, star or bullet followed by white space ("- item")
_BULLET = re.compile(r"^(?:[-*•](?:\s+|$))+")


def _unbulleted(sentence: str) -> str:
    """``sentence`` without white space around it or a list item's marker before it; a dash
    or star that is part of a word stays ("-i, --ignore-case: ...", "*args")."""
    return _BULLET.sub("", sentence.strip()).strip()


def _lower_starts(text: str) -> list[str]:
    """``text`` cut where a sentence starts in lower case (never after an abbreviation)."""
    pieces: list[str] = []
    start = 0
    for m in _LOWER_START.finditer(text):
        head = text[start : m.start()]
        if not _ABBREVIATION.search(head):
            pieces.append(head)
            start = m.end()
    pieces.append(text[start:])
    return pieces


def tokenize(text: str, *, drop_stopwords: bool = False) -> list[str]:
    """Lowercase word tokens; identifiers such as ``KX-217`` or ``v2.4.1`` stay whole."""
    tokens = list(map(str.lower, _TOKEN.findall(text or "")))
    if drop_stopwords:
        tokens = [t for t in tokens if t not in STOPWORDS]
    return tokens


def token_recall(needle: str, haystack: str) -> float:
    """Share of the content words of ``needle`` that occur in ``haystack`` (0 when none)."""
    want = set(tokenize(needle, drop_stopwords=True))
    if not want:
        return 0.0
    have = set(tokenize(haystack, drop_stopwords=True))
    return len(want & have) / len(want)


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD-style token F1 between two texts (bag of lowercase tokens)."""
    from collections import Counter

    pred, ref = tokenize(prediction), tokenize(reference)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)
