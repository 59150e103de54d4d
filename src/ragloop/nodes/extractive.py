"""The offline extractive answer: which sentences of the kept contexts to quote, and cite.

Each sentence is scored by its cosine to the question plus small bonuses (``AnswerWeights``);
the best sentence of up to three sources is quoted with its ``[n]`` citation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.eval.metrics.semantic import unit_vectors
from ragloop.nodes.evidence import defines, name_match, question_names, subject_entry
from ragloop.state import ContextItem
from ragloop.text import split_sentences, token_recall


@dataclass(frozen=True)
class AnswerWeights:
    """How the extractive answer scores a sentence: its cosine to the question, plus these.

    Grid-searched on the calibration half of the PostgreSQL-docs bench (the sentence that
    holds the defining passage should score highest): lexical bonuses of 0.5, the earlier
    hand-set values, let a chunk's words outvote the meaning, and its best sentence came
    from the gold chunk for 0.51 of held-out questions; with these, 0.62. A heading that
    names the question's identifier keeps a bonus of 0.25: a code such as DK-04 in the
    heading marks the section that answers it.

    Sentences are embedded alone and each heading once, apart, its cosine adding 0.1: read
    as "heading: sentence", a path such as "os.path — Common pathname manipulations ›
    os.path.commonprefix" lifted "If list is empty, return the empty string" above the
    sentence that answered. Cited passage hit rose from 0.667 to 0.690 on the PostgreSQL
    docs and from 0.903 to 0.947 on the Python library docs (bench/loop_pydocs.py).

    A name that every read context gives (the product in a product's base, "PostgreSQL" on
    its docs) tells none of them apart, so its bonuses fade with its spread
    (``name_weights``): cited 0.696 -> 0.706 on the PostgreSQL docs, unchanged on the Python
    docs, and the demo's "How do I clear DK-04 on the Kestrel Dock?" quotes the DK-04 fix.

    (The PostgreSQL figures above were measured before the bench counted a command's entry
    line as gold; those below, after.)

    A sentence that is a name's entry line ("ALTER VIEW — change the definition of a view",
    "wal_buffers (integer): ...") or follows one (the description under "lseg ( box ) →
    lseg") adds ``name_entry``, spread by how many read contexts define the name rather than
    mention it: every chunk of a command's page mentions the command, one defines it. For
    named questions cited passage hit rose from 0.860 to 0.880 on the PostgreSQL docs and
    from 0.960 to 0.973 on the Python docs (0.1 and 0.3 scored within 0.005 of 0.2 overall
    on both).

    A question that names nothing ("How do I rebuild an index that has become bloated or
    corrupted?") was answered with the sentence that echoes it ("An index has become
    corrupted, and no longer contains valid data.") over the one that says what its page's
    subject does ("REINDEX rebuilds an index using the data stored in the index's table").
    Such a sentence, which starts with its page's subject or is that subject's entry line,
    adds ``subject_entry`` when the question gives no name: cited passage hit for natural
    questions rose from 0.333 to 0.372 on the PostgreSQL docs (all three gains on the calib
    half, the held half unchanged at 0.381; paraphrases 0.920 -> 0.927), and was unchanged
    on the Python docs, whose pages are modules (0.1 scored 0.359; 0.3 the same as 0.2 on
    PostgreSQL, but cost the Python docs 0.025).
    """

    terms: float = 0.0  # share of the question's words the sentence (with heading) holds
    name_sentence: float = 0.1  # the sentence names what the question names
    name_heading: float = 0.25  # its section's heading names it (where it is defined)
    grade: float = 0.0  # the judge's 0/1/2 grade of the chunk
    evidence: float = 0.1  # the judge's evidence for the whole chunk
    #: embed each sentence read with its heading ("heading: sentence"), or alone (the default:
    #: a long heading path outweighed the sentence; see below)
    with_heading: bool = False
    heading_cosine: float = 0.1  # the heading's own cosine to the question (headings apart)
    #: the sentence is, or follows, the line that defines the name (``evidence.defines``)
    name_entry: float = 0.2
    spread_names: bool = True  # a name every read context gives counts less (name_weights)
    #: when the question names nothing: the sentence starts with its heading's subject, or is
    #: (or follows) the subject's entry line ("REINDEX rebuilds an index ...", see below)
    subject_entry: float = 0.2


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
    signature, term or entry line, or the line just before it does (``evidence.defines``)."""
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
    context holding the name's entry line counts (``evidence.defines``).

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


def quotable_sentences(contexts: list[ContextItem]) -> list[tuple[str, int, str, str]]:
    """(sentence, context number from 1, heading it sits under, the piece of text just before
    it in its chunk) of every sentence an answer may quote: four words or more,
    headings themselves left out."""
    out: list[tuple[str, int, str, str]] = []
    for n, ctx in enumerate(contexts, start=1):
        heading = str(ctx.get("title") or "")
        before = ""
        for sent in split_sentences(ctx["text"]):
            if sent.startswith("#"):
                heading = sent.lstrip("#").strip()
            elif len(sent.split()) >= 4:
                out.append((sent, n, heading, before))
            before = sent
    return out


def defines_subject(context: ContextItem) -> float:
    """1 when a quotable sentence of ``context`` starts with the subject of the section it
    sits under, or is (or follows) that subject's entry line (``evidence.subject_entry``):
    "REINDEX rebuilds an index ..." under "REINDEX › Description", "Reverse the order of
    the items in the array." under "array.array.reverse" after its signature "reverse()"."""
    return max(
        (subject_entry(s, before, h) for s, _, h, before in quotable_sentences([context])),
        default=0.0,
    )


def mmr(relevance: np.ndarray, similarity: np.ndarray, k: int, lam: float = 0.7) -> list[int]:
    """Maximal marginal relevance: pick ``k`` items trading relevance against redundancy."""
    chosen: list[int] = []
    left = list(range(len(relevance)))
    while left and len(chosen) < k:

        def gain(i: int) -> float:
            redundancy = max((similarity[i, j] for j in chosen), default=0.0)
            return lam * relevance[i] - (1 - lam) * redundancy

        best = max(left, key=gain)
        chosen.append(best)
        left.remove(best)
    return chosen


async def extractive_answer(
    embeddings: Embeddings,
    question: str,
    contexts: list[ContextItem],
    weights: AnswerWeights,
    *,
    max_sentences: int = 3,
    min_sentence_score: float = 0.25,
    floor_share: float = 0.7,
    diversity: float = 1.0,
    common: frozenset[str] = frozenset(),
) -> tuple[str, list[int]]:
    """The sentences closest to the question (see ``AnswerWeights``), each cited ``[n]``.

    At most one sentence a source and ``max_sentences`` in all, each scoring at least
    ``floor_share`` of the best one (and ``min_sentence_score``); ``diversity`` is the MMR
    lambda (1 = relevance only); a name that is one of the corpus's own words (``common``)
    earns no bonus. Returns the text and the cited context numbers (1-based).
    """
    # each sentence is scored with its section heading (apart, or read with it), so
    # "## KX-217 Dustbin not detected" lends its meaning to the sentences below it
    quotable = quotable_sentences(contexts)
    sentences = [(sent, n) for sent, n, _, _ in quotable]
    headings = [heading for _, _, heading, _ in quotable]
    scored_as = [f"{h}: {sent}" if h else sent for sent, _, h, _ in quotable]
    if not sentences:
        return contexts[0]["text"][:400] + " [1]", [1]
    w = weights
    read = scored_as if w.with_heading else [sent for sent, _ in sentences]
    titles = sorted(set(headings)) if w.heading_cosine else []
    unit = await unit_vectors(embeddings, [question, *read, *titles])
    q, vecs = unit[0], unit[1 : 1 + len(read)]
    of_title = dict(zip(titles, unit[1 + len(read) :] @ q, strict=True))
    ids = question_names(question, common)
    spread = name_weights(ids, contexts) if w.spread_names else None
    # a name most contexts mention is defined by few: its entry's bonus spreads by that
    defined = name_weights(ids, contexts, defining=True) if w.spread_names else None
    chunk = [contexts[n - 1] for _, n in sentences]

    def bonus(weight: float, value: Callable[[int], float]) -> np.ndarray:
        """``weight`` x ``value(i)`` for every sentence i (nothing computed at weight 0)."""
        if not weight:
            return np.zeros(len(sentences))
        return weight * np.array([value(i) for i in range(len(sentences))], dtype=float)

    relevance = (
        vecs @ q
        + bonus(w.terms, lambda i: token_recall(question, scored_as[i]))
        + bonus(w.name_sentence, lambda i: named(ids, sentences[i][0], weights=spread))
        # a section whose heading names the identifier is where it is defined
        + bonus(w.name_heading, lambda i: named(ids, headings[i], heading=True, weights=spread))
        + bonus(w.heading_cosine, lambda i: float(of_title[headings[i]]))
        # the entry that defines it: a sentence that is, or follows, "name ( args ) -> type"
        + bonus(w.name_entry, lambda i: entry(ids, quotable[i][0], quotable[i][3], defined))
        + bonus(
            0.0 if ids else w.subject_entry,
            lambda i: subject_entry(quotable[i][0], quotable[i][3], headings[i]),
        )
        + bonus(w.grade, lambda i: float(chunk[i].get("grade", 1)))
        # the judge's evidence for the whole chunk, on one scale for every retriever
        + bonus(w.evidence, lambda i: float(chunk[i].get("evidence", 0.0)))
    )
    floor = max(min_sentence_score, floor_share * float(relevance.max()))
    ranked = mmr(relevance, vecs @ vecs.T, 3 * max_sentences, diversity)
    # one sentence a source: a second passage cited beats a second line of the same one;
    # a sentence two chunks share (an overlap, a repeated note) is quoted once
    picked, used, said = [], set(), set()
    for i in ranked:
        text_i = sentences[i][0]
        if relevance[i] >= floor and sentences[i][1] not in used and text_i not in said:
            picked.append(i)
            used.add(sentences[i][1])
            said.add(text_i)
        if len(picked) == max_sentences:
            break
    picked = picked or [int(np.argmax(relevance))]
    picked.sort(key=lambda i: (sentences[i][1], i))  # keep source order for readability
    text = " ".join(f"{sentences[i][0]} [{sentences[i][1]}]" for i in picked)
    return text, [sentences[i][1] for i in picked]
