"""Offline strategies for every LLM step: embeddings, lexical overlap and extraction, no key."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.eval.metrics.base import MetricResult
from ragloop.eval.metrics.offline import (
    OfflineAnswerRelevancy,
    OfflineContextRecall,
    OfflineContextRelevance,
    is_noncommittal,
)
from ragloop.eval.metrics.semantic import unit_vectors
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.base import Assessment, Draft
from ragloop.nodes.evidence import identifiers, name_match
from ragloop.nodes.memo import Lookup, MemoEmbeddings
from ragloop.nodes.offline_judge import (
    JudgeCalibration,
    evidence_of,
    grade,
    recall_of,
    signals,
)
from ragloop.state import ContextItem
from ragloop.text import STOPWORDS, split_sentences, token_f1, token_recall, tokenize

NONCOMMITTAL_DRAFT = "I don't know yet; I need to look this up."


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
    spread_names: bool = True  # a name every read context gives counts less (name_weights)


def named(
    names: list[str], text: str, heading: bool = False, weights: dict[str, float] | None = None
) -> float:
    """How surely ``text`` names one of ``names`` (dotted names by their last part too),
    each name counted by its weight when ``weights`` are given (see ``name_weights``)."""
    return max(
        ((weights or {}).get(n, 1.0) * name_match(n, text, heading) for n in names), default=0.0
    )


def name_weights(names: list[str], contexts: list[ContextItem]) -> dict[str, float]:
    """How much each name tells the read contexts apart: 1 when at most half of them name it
    (in the heading path or the text), falling to 0 when all do.

    "How do I clear DK-04 on the Kestrel Dock?" names the dock on every page of its base, so
    only DK-04 marks where the answer is; "PostgreSQL" in a question on the PostgreSQL docs
    likewise.
    """
    if len(contexts) < 2:
        return dict.fromkeys(names, 1.0)
    out = {}
    for n in names:
        share = sum(
            bool(name_match(n, f"{c.get('title', '')}\n{c.get('text', '')}")) for c in contexts
        ) / len(contexts)
        out[n] = min(1.0, 2.0 * (1.0 - share))
    return out


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


class OfflineStrategies:
    """No-LLM implementations of draft, judge, rewrite, answer and answer relevancy."""

    name = "offline"

    def __init__(
        self,
        embeddings: Embeddings,
        cache: AnswerCache | None = None,
        *,
        max_sentences: int = 3,
        min_sentence_score: float = 0.25,
        expansion_terms: int = 3,
        diversity: float = 1.0,
        calibration: JudgeCalibration | None = None,
        known_vectors: Lookup | None = None,
        answer_weights: AnswerWeights | None = None,
    ):
        # judge, answer and score embed the same texts; the memo embeds each once
        memo = embeddings if isinstance(embeddings, MemoEmbeddings) else None
        self.embeddings = memo or MemoEmbeddings(embeddings, known_vectors)
        embeddings = self.embeddings
        self.calibration = calibration or JudgeCalibration()
        self.cache = cache
        self.relevance = OfflineContextRelevance(embeddings=embeddings)
        self.recall = OfflineContextRecall(embeddings=embeddings)
        self.relevancy = OfflineAnswerRelevancy(embeddings=embeddings)
        self.max_sentences = max_sentences
        self.min_sentence_score = min_sentence_score
        self.expansion_terms = expansion_terms
        # MMR lambda: 1 = relevance only (the default: one sentence a source already varies the
        # answer, and on the PG-docs bench any lower value quoted the defining passage less)
        self.diversity = diversity
        self.answer_weights = answer_weights or AnswerWeights()
        #: a sentence is quoted only when it scores this share of the best one
        self.floor_share = 0.7

    async def draft(self, question: str, prompt: str | None = None) -> Draft:
        hit = self.cache.lookup(question) if self.cache else None
        if hit is None:
            return Draft(NONCOMMITTAL_DRAFT, "none", True)
        return Draft(hit[1], "cache", is_noncommittal(hit[1]))

    @staticmethod
    def question_parts(question: str) -> list[str]:
        """The aspects of a question ("X and Y" asks two things)."""
        parts = [
            p.strip() for p in question.replace(" and ", "; ").split(";") if len(p.split()) >= 2
        ]
        return parts or [question]

    async def claims(self, question: str, draft: Draft) -> list[str]:
        """Service-mode recall targets: the question's parts, plus the draft's claims if any."""
        claims = self.question_parts(question)
        if draft.source != "none" and not draft.noncommittal:
            claims += split_sentences(draft.text)
        return claims

    async def assess(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        """Grade by evidence (sentence, heading, names, meaning); recall is the best in hand.

        The question's own aspects count as supported when the best evidence reaches the
        sufficient level; other claims (reference sentences, a draft's statements) are
        attributed sentence by sentence.
        """
        texts = [*candidates, *kept]
        found = []
        if texts:
            unit = await unit_vectors(self.embeddings, [question, *texts])
            found = evidence_of(self.calibration, question, texts, unit[0], unit[1:])
        new, old = found[: len(candidates)], found[len(candidates) :]
        grades = [grade(self.calibration, e.score) for e in new]
        pool = [*(e for e, g in zip(new, grades, strict=True) if g >= keep), *old]
        best = max((e.score for e in pool), default=0.0)
        recall = recall_of(self.calibration, best)
        pool_texts = kept + [c for c, g in zip(candidates, grades, strict=True) if g >= keep]
        parts = set(self.question_parts(question))
        others = [c for c in claims if c not in parts]
        attributed = iter(
            await self.recall.aattribute(others, pool_texts)
            if others and pool_texts
            else [False] * len(others)
        )
        sufficient = best >= self.calibration.grade2
        supported = [sufficient if c in parts else next(attributed) for c in claims]
        return Assessment(
            grades,
            supported,
            recall=recall,
            evidence=[e.score for e in new],
            signals=signals(question, new),
        )

    async def rewrite(
        self, question: str, query: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> str:
        """Pseudo-relevance feedback: add the top terms of the best contexts to the query."""
        best = sorted(contexts, key=lambda c: (-c.get("grade", 0), -c.get("score", 0.0)))[:3]
        have = set(tokenize(query))
        docs = [set(tokenize(c["text"], drop_stopwords=True)) for c in best]
        counts: Counter[str] = Counter()
        for c in best:
            for tok in tokenize(c["text"], drop_stopwords=True):
                if tok not in have and tok not in STOPWORDS and len(tok) > 2 and not tok.isdigit():
                    counts[tok] += 1
        if not counts:
            return query
        df = Counter(t for d in docs for t in d)
        ranked = sorted(counts, key=lambda t: (-counts[t] * math.log(1 + len(docs) / df[t]), t))
        return f"{query} {' '.join(ranked[: self.expansion_terms])}"

    async def answer(
        self, question: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> tuple[str, list[int]]:
        """Extractive: the sentences closest to the question, diversified by MMR, each cited."""
        # each sentence is scored with its section heading (apart, or read with it), so
        # "## KX-217 Dustbin not detected" lends its meaning to the sentences below it
        sentences: list[tuple[str, int]] = []
        scored_as: list[str] = []
        headings: list[str] = []
        for n, ctx in enumerate(contexts, start=1):
            heading = str(ctx.get("title") or "")
            for sent in split_sentences(ctx["text"]):
                if sent.startswith("#"):
                    heading = sent.lstrip("#").strip()
                elif len(sent.split()) >= 4:
                    sentences.append((sent, n))
                    scored_as.append(f"{heading}: {sent}" if heading else sent)
                    headings.append(heading)
        if not sentences:
            return contexts[0]["text"][:400] + " [1]", [1]
        w = self.answer_weights
        read = scored_as if w.with_heading else [sent for sent, _ in sentences]
        titles = sorted(set(headings)) if w.heading_cosine else []
        unit = await unit_vectors(self.embeddings, [question, *read, *titles])
        q, vecs = unit[0], unit[1 : 1 + len(read)]
        of_title = dict(zip(titles, unit[1 + len(read) :] @ q, strict=True))
        ids = identifiers(question)
        weights = name_weights(ids, contexts) if w.spread_names else None
        chunk = [contexts[n - 1] for _, n in sentences]

        def bonus(weight: float, value: Callable[[int], float]) -> np.ndarray:
            """``weight`` x ``value(i)`` for every sentence i (nothing computed at weight 0)."""
            if not weight:
                return np.zeros(len(sentences))
            return weight * np.array([value(i) for i in range(len(sentences))], dtype=float)

        relevance = (
            vecs @ q
            + bonus(w.terms, lambda i: token_recall(question, scored_as[i]))
            + bonus(w.name_sentence, lambda i: named(ids, sentences[i][0], weights=weights))
            # a section whose heading names the identifier is where it is defined
            + bonus(
                w.name_heading, lambda i: named(ids, headings[i], heading=True, weights=weights)
            )
            + bonus(w.heading_cosine, lambda i: float(of_title[headings[i]]))
            + bonus(w.grade, lambda i: float(chunk[i].get("grade", 1)))
            # the judge's evidence for the whole chunk, on one scale for every retriever
            + bonus(w.evidence, lambda i: float(chunk[i].get("evidence", 0.0)))
        )
        floor = max(self.min_sentence_score, self.floor_share * float(relevance.max()))
        ranked = mmr(relevance, vecs @ vecs.T, 3 * self.max_sentences, self.diversity)
        # one sentence a source: a second passage cited beats a second line of the same one;
        # a sentence two chunks share (an overlap, a repeated note) is quoted once
        picked, used, said = [], set(), set()
        for i in ranked:
            text_i = sentences[i][0]
            if relevance[i] >= floor and sentences[i][1] not in used and text_i not in said:
                picked.append(i)
                used.add(sentences[i][1])
                said.add(text_i)
            if len(picked) == self.max_sentences:
                break
        picked = picked or [int(np.argmax(relevance))]
        picked.sort(key=lambda i: (sentences[i][1], i))  # keep source order for readability
        text = " ".join(f"{sentences[i][0]} [{sentences[i][1]}]" for i in picked)
        return text, [sentences[i][1] for i in picked]

    async def answer_relevancy(self, question: str, answer: str) -> MetricResult:
        if not answer.strip():
            return MetricResult(0.0, "empty answer")
        return await self.relevancy.ascore({"user_input": question, "response": answer})

    async def draft_relevancy(self, question: str, draft: str) -> MetricResult:
        """A cached answer is trusted when its question matched; else offline answer relevancy."""
        hit = self.cache.lookup(question) if self.cache else None
        if hit is not None and hit[1] == draft:
            return MetricResult(1.0, f"answer cache match (similarity {hit[2]:.2f})")
        return await self.answer_relevancy(question, draft)

    async def second_response(self, answer: str, reference: str) -> float:
        """How well an intermediate answer matches the reference (token F1)."""
        return token_f1(answer, reference)
