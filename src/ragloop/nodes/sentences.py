"""What the extractive answer knows about each sentence it may quote: named, bounded features.

Every feature is a number in [0, 1] (``cosine`` and ``heading_cosine`` are cosines, in
[-1, 1]) computed from the question, the sentence, its heading and its chunk:

==================  ===========================================================================
cosine              the sentence's cosine to the question (sentences embedded alone)
heading_cosine      the cosine of the heading it sits under to the question
terms               share of the question's words the sentence and its heading hold
name_sentence       the sentence names what the question names (a name all read chunks give
                    counts less: ``name_weights``)
name_heading        its heading names it
name_entry          the sentence is, or follows, the name's entry line ("abs(X)", "wal_buffers
                    (integer)", "ALTER VIEW — ...", "-i, --ignore-case"); 0 where no line
                    defines the name, so it is read in every profile
subject_entry       the question names nothing and the sentence starts with its section's
                    subject, or is (or follows) its entry line             [reference profile]
evidence            the judge's evidence for the whole chunk (0 when it gave none)
evidence_gap        how far that evidence is below the best read chunk's (0 for the best, and
                    when the judge gave none): what the loop learned, read as a ranking
first               1 for the first sentence of its section in the chunk, 1/2 the next, ...
code                a code block or a line with fewer than three lower-case words (a signature)
toc                 an index, contents or table block (dot leaders, rows of cells, a row of
                    letters to jump to: ``lines.is_toc``)
boilerplate         a sentence found on a fifth of the corpus's pages or more
==================  ===========================================================================

``sentence_table`` builds the matrix for the passages read (each sentence, and each heading,
embedded with the question; a name every read passage gives counts less: ``name_weights``).
``code``, ``toc`` and ``boilerplate`` sentences are never quoted (``flawed``); they stay
features so a fitted model can also learn what their neighbours are worth. Nor is a question
(a sentence ending in "?": a FAQ's or a blog's own question states no answer, and it is the
sentence most likely to echo the user's). The genre feature
(``subject_entry``: a page about one subject) is on in the ``reference`` profile only
(``PROFILES``), chosen at index time (``lines.choose_profile``).

Whether the read passages answer at all is decided for the question as a whole, from the
sentence scores and the judge (``question.QUESTION_FEATURES``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.eval.metrics.semantic import unit_vectors
from ragloop.nodes.entries import defines, subject_entry
from ragloop.nodes.evidence import name_match, question_names
from ragloop.nodes.lines import is_code, is_question, is_toc, key, table_rows
from ragloop.state import ContextItem
from ragloop.text import option_line, split_sentences, token_recall

FEATURES = (
    "cosine",
    "heading_cosine",
    "terms",
    "name_sentence",
    "name_heading",
    "name_entry",
    "subject_entry",
    "evidence",
    "evidence_gap",
    "first",
    "code",
    "toc",
    "boilerplate",
)
#: what a signature's line holds and a line of prose does not
_BRACKETS = re.compile(r"[\[\](){}<>|]")
#: features that assume a reference manual's layout (pages about one subject). A name's entry
#: line is no such assumption: a man page's option list or a guide's glossary defines a name
#: as a reference does, and ``name_entry`` is 0 where nothing defines it
GENRE = frozenset({"subject_entry"})
PROFILES: dict[str, frozenset[str]] = {
    "reference": frozenset(FEATURES),
    "guide": frozenset(FEATURES) - GENRE,
    "generic": frozenset(FEATURES) - GENRE,
}


@dataclass(frozen=True)
class Quotable:
    """A sentence an answer may quote, where it sits, and what came just before it."""

    sentence: str
    n: int  # context number, from 1
    heading: str
    before: str
    first: float  # 1 for the first sentence of its section in the chunk, 1/2 the next, ...


def quotable(contexts: list[ContextItem]) -> list[Quotable]:
    """Every sentence of four words or more of the contexts (headings left out). A table
    block stands for its rows (``lines.table_rows``): each row of four words or more is a
    sentence of its own ("cidr | 7 or 19 bytes | IPv4 and IPv6 networks"), all at the
    table's place in the section, each after the row above it. A header row is one too;
    it is seldom prose ("Name | Storage Size | Description" is flagged ``code``), and a
    table cut by a chunk or a sentence end starts with a data row, so no row is skipped."""
    out: list[Quotable] = []
    for n, ctx in enumerate(contexts, start=1):
        heading, before, at = str(ctx.get("title") or ""), "", 0
        for sent in split_sentences(ctx["text"]):
            if sent.startswith("#"):
                heading, at = sent.lstrip("#").strip(), 0
            elif len(sent.split()) >= 4:
                at += 1
                rows = table_rows(sent)
                for part in rows or [sent]:
                    if len(part.split()) >= 4:
                        out.append(Quotable(part, n, heading, before, 1.0 / at))
                    before = part
                if rows:
                    continue
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
    genre = {
        "name_entry": entry(names, q.sentence, q.before, defined),
        "subject_entry": 0.0 if names else subject_entry(q.sentence, q.before, q.heading),
    }
    out = {
        "terms": token_recall(question, f"{q.heading}: {q.sentence}"),
        "name_sentence": named(names, q.sentence, weights=spread),
        "name_heading": named(names, q.heading, heading=True, weights=spread),
        "first": q.first,
        "code": float(is_code(q.sentence)),
        "toc": float(is_toc(q.sentence)),
        "boilerplate": float(key(q.sentence) in boilerplate),
    }
    out.update({k: v if k in profile else 0.0 for k, v in genre.items()})
    return out


def signature_before(q: Quotable) -> str | None:
    """The one-line signature just before a sentence ("cd [-L|[-P [-e]] [directory]"), if any:
    shown with the description it introduces, never quoted instead of it. A one-line block
    that reads as prose (a program's output, "Rust is installed now. Great!") is no
    signature: the line must read as code (``is_code``) or hold a signature's brackets
    ("wait [-fn] [-p varname] [jobspec or pid …]"). A command-line option's line written as
    a paragraph of its own ("-i, --ignore-case" before "Ignore case distinctions ...", as a
    man page converted to HTML has it) is one too."""
    before = q.before.strip()
    if not before.startswith("```"):
        return before if option_line(before) and is_code(before) else None
    body = before.strip("`").replace("\u00b6", "").strip()  # texinfo's anchor mark
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) != 1 or len(lines[0]) > 120:
        return None
    if not is_code(lines[0].strip()) and not _BRACKETS.search(lines[0]):
        return None
    return lines[0].strip()


def named(
    names: list[str], text: str, heading: bool = False, weights: dict[str, float] | None = None
) -> float:
    """How surely ``text`` names one of ``names`` (dotted names by their last part too),
    each name counted by its weight when ``weights`` are given (see ``name_weights``)."""
    return max(
        ((weights or {}).get(n, 1.0) * name_match(n, text, heading) for n in names), default=0.0
    )


def entry(
    names: list[str], sentence: str, before: str, weights: dict[str, float] | None = None
) -> float:
    """How surely ``sentence`` is a name's own entry: it starts with the name written as a
    signature, term or entry line, or the line just before it does (``entries.defines``)."""
    return max(
        (
            (weights or {}).get(n, 1.0) * max(defines(n, sentence), defines(n, before))
            for n in names
        ),
        default=0.0,
    )


def name_weights(
    names: list[str], contexts: list[ContextItem], *, defining: bool = False
) -> dict[str, float]:
    """How much each name tells the read contexts apart: 1 when at most half of them name it
    (in the heading path or the text), falling to 0 when all do. With ``defining``, only a
    context holding the name's entry line counts (``entries.defines``).

    "How do I clear DK-04 on the Kestrel Dock?" names the dock on every page of its base, so
    only DK-04 marks where the answer is; "PostgreSQL" in a question on the PostgreSQL docs
    likewise. "ALTER VIEW" is mentioned by every chunk of its page, but only one holds
    "ALTER VIEW — change the definition of a view".
    """
    if len(contexts) < 2:
        return dict.fromkeys(names, 1.0)
    out = {}
    for n in names:
        if defining:
            share = sum(bool(defines(n, c.get("text", ""))) for c in contexts) / len(contexts)
        else:
            share = sum(
                bool(name_match(n, f"{c.get('title', '')}\n{c.get('text', '')}")) for c in contexts
            ) / len(contexts)
        out[n] = min(1.0, 2.0 * (1.0 - share))
    return out


def defines_subject(context: ContextItem) -> float:
    """1 when a quotable sentence of ``context`` starts with the subject of the section it
    sits under, or is (or follows) that subject's entry line (``entries.subject_entry``):
    "REINDEX rebuilds an index ..." under "REINDEX › Description", "Reverse the order of
    the items in the array." under "array.array.reverse" after its signature "reverse()"."""
    return max(
        (subject_entry(q.sentence, q.before, q.heading) for q in quotable([context])),
        default=0.0,
    )


async def sentence_table(
    embeddings: Embeddings,
    question: str,
    contexts: list[ContextItem],
    *,
    common: frozenset[str] = frozenset(),
    boilerplate: frozenset[str] = frozenset(),
    profile: str = "reference",
    spread_names: bool = True,
) -> tuple[list[Quotable], np.ndarray]:
    """The quotable sentences of the contexts and their (sentences x ``FEATURES``) matrix."""
    quotes = quotable(contexts)
    if not quotes:
        return [], np.zeros((0, len(FEATURES)))
    titles = sorted({q.heading for q in quotes})
    unit = await unit_vectors(embeddings, [question, *(q.sentence for q in quotes), *titles])
    qv, vecs = unit[0], unit[1 : 1 + len(quotes)]
    of_title = dict(zip(titles, (unit[1 + len(quotes) :] @ qv).tolist(), strict=True))
    ids = question_names(question, common)
    spread = name_weights(ids, contexts) if spread_names else {}
    defined = name_weights(ids, contexts, defining=True) if spread_names else {}
    on = PROFILES.get(profile, PROFILES["generic"])
    top = max((float(c.get("evidence", 0.0)) for c in contexts), default=0.0)
    rows = []
    for q, cos in zip(quotes, (vecs @ qv).tolist(), strict=True):
        f = lexical_features(question, q, ids, spread, defined, boilerplate, on)
        f["cosine"] = cos
        f["heading_cosine"] = of_title[q.heading]
        f["evidence"] = float(contexts[q.n - 1].get("evidence", 0.0))
        f["evidence_gap"] = top - f["evidence"]
        rows.append([f[name] for name in FEATURES])
    return quotes, np.array(rows, dtype=float)
