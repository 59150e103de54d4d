"""The offline extractive answer: which sentences of the contexts read to quote, and cite.

Each quotable sentence gets the features of ``sentences.FEATURES``; a fitted model
(``answer_model.AnswerModel``) turns them into the probability that the sentence answers, or,
without one, the hand-set ``AnswerWeights`` add bonuses to its cosine. The best sentence leads,
with the next one of its passage and, when they score close to it, other sources' best.
Whether to answer at all is the model's abstention fit (``answer_model.Abstention``): the
probability that the read passages answer, from the question-level features
(``question.question_features``), is the answer's support, and the answer step says "not
found" below the fit's level. Passages a judge measured use the ``judged`` fit, which reads
the judge's evidence too; others the ``unjudged`` one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.nodes.answer_model import AnswerModel
from ragloop.nodes.lines import key
from ragloop.nodes.question import question_features
from ragloop.nodes.sentences import (
    FEATURES,
    Quotable,
    flawed,
    sentence_table,
    signature_before,
)
from ragloop.state import ContextItem


@dataclass(frozen=True)
class AnswerWeights:
    """The hand-set way to score a sentence: its cosine to the question plus these bonuses
    (each a feature of ``sentences.FEATURES`` times its weight).

    Used when no fitted model (``answer_model.AnswerModel``) is given; the fitted one reads the
    same features. The weights were grid-searched on the PostgreSQL and Python docs benches.
    """

    terms: float = 0.0  # share of the question's words the sentence (with heading) holds
    name_sentence: float = 0.1  # the sentence names what the question names
    name_heading: float = 0.25  # its section's heading names it (where it is defined)
    grade: float = 0.0  # the judge's 0/1/2 grade of the chunk
    evidence: float = 0.1  # the judge's evidence for the whole chunk
    heading_cosine: float = 0.1  # the heading's own cosine to the question (headings apart)
    #: the sentence is, or follows, the line that defines the name (``entries.defines``)
    name_entry: float = 0.2
    spread_names: bool = True  # a name every read context gives counts less (name_weights)
    #: when the question names nothing: the sentence starts with its heading's subject, or is
    #: (or follows) the subject's entry line ("REINDEX rebuilds an index ...", see below)
    subject_entry: float = 0.2


def repeats(sentence_key: str, said: list[str]) -> bool:
    """The sentence (by ``lines.key``) is one already quoted, or part of one, or holds one:
    overlapping chunks repeat a sentence, and a chunk cut inside it holds only its start."""
    return any(sentence_key in k or k in sentence_key for k in said if k and sentence_key)


@dataclass(frozen=True)
class Extract:
    """What the extractive answer chose: the text, the cited context numbers, the support
    (the abstention fit's probability that the passages answer; without one, the best
    sentence's probability or hand-set score), best first the context numbers of the closest
    passages (what "see also" shows when nothing answers), and the level of support below
    which the answer should say "not found"."""

    text: str
    cited: list[int]
    support: float
    closest: list[int]
    level: float = 0.0


def handset(
    x: np.ndarray, w: AnswerWeights, contexts: list[ContextItem], quotes: list[Quotable]
) -> np.ndarray:
    """The hand-set score of each row: cosine plus ``AnswerWeights`` times its features."""
    col = {name: x[:, i] for i, name in enumerate(FEATURES)}
    grade = np.array([float(contexts[q.n - 1].get("grade", 1)) for q in quotes])
    return (
        col["cosine"]
        + w.terms * col["terms"]
        + w.name_sentence * col["name_sentence"]
        + w.name_heading * col["name_heading"]
        + w.heading_cosine * col["heading_cosine"]
        + w.name_entry * col["name_entry"]
        + w.subject_entry * col["subject_entry"]
        + w.grade * grade
        + w.evidence * col["evidence"]
    )


async def extract(
    embeddings: Embeddings,
    question: str,
    contexts: list[ContextItem],
    weights: AnswerWeights,
    *,
    model: AnswerModel | None = None,
    max_sentences: int = 3,
    min_sentence_score: float = 0.25,
    floor_share: float = 0.7,
    common: frozenset[str] = frozenset(),
    boilerplate: frozenset[str] = frozenset(),
    profile: str = "reference",
    table: tuple[list[Quotable], np.ndarray] | None = None,
    unknown_names: float = 0.0,
) -> Extract:
    """The sentences that best answer the question, each cited ``[n]`` (see module doc).
    ``table``: the contexts' ``sentence_table`` when the caller has it (the answerer builds
    it with its own corpus settings), else it is built here. ``unknown_names``: the share of
    the question's names the corpus never mentions (``vocabulary.unknown_names``), which the
    abstention fit reads.

    A code block, signature, TOC line or boilerplate sentence is never quoted; a signature
    just before a quoted sentence is shown with it. The best sentence leads; the sentence
    after it in the same passage follows when it also scores; another source is quoted only
    when it scores ``floor_share`` of the best, so one coherent passage wins over stitching.
    """
    if table is None:
        table = await sentence_table(
            embeddings, question, contexts, common=common, boilerplate=boilerplate,
            profile=profile, spread_names=weights.spread_names,
        )  # fmt: skip
    quotes, x = table
    ok = [i for i, q in enumerate(quotes) if not flawed(q, boilerplate)]
    level = model.not_found_below if model is not None else 0.0
    if not ok:
        return Extract(contexts[0]["text"][:400] + " [1]", [1], 0.0, [1], level)
    if model is not None:
        relevance, floor_share = model.probability(x), model.floor_share
        floor = floor_share * float(relevance[ok].max())
    else:
        relevance = handset(x, weights, contexts, quotes)
        floor = max(min_sentence_score, floor_share * float(relevance[ok].max()))
    ranked = sorted(ok, key=lambda i: -relevance[i])
    best = ranked[0]
    support = float(relevance[best])
    fit = model.abstention(judged=all("evidence" in c for c in contexts)) if model else None
    if fit is not None:
        asked = question_features(
            relevance[ok],
            x[ok, FEATURES.index("cosine")],
            [float(c.get("evidence", 0.0)) for c in contexts],
            unknown_names,
        )
        support, level = fit.probability(asked), fit.level
    picked = [best]
    follow = best + 1  # the passage goes on: the next sentence of the same chunk and section
    if (
        follow in ok
        and quotes[follow].n == quotes[best].n
        and quotes[follow].heading == quotes[best].heading
        and relevance[follow] >= floor
    ):
        picked.append(follow)
    said = [key(quotes[i].sentence) for i in picked]
    used = {quotes[best].n}
    for i in ranked[1:]:
        if len(picked) >= max_sentences:
            break
        q = quotes[i]
        if relevance[i] >= floor and q.n not in used and not repeats(key(q.sentence), said):
            picked.append(i)
            used.add(q.n)
            said.append(key(q.sentence))
    picked.sort(key=lambda i: (quotes[i].n != quotes[best].n, quotes[i].n, i))
    parts = []
    for i in picked:
        sig = signature_before(quotes[i])
        lead = f"`{sig}`: " if sig and sig not in quotes[i].sentence else ""
        parts.append(f"{lead}{quotes[i].sentence} [{quotes[i].n}]")
    closest = list(dict.fromkeys(quotes[i].n for i in ranked))
    return Extract(" ".join(parts), [quotes[i].n for i in picked], support, closest, level)
