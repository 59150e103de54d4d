"""Offline strategies for every LLM step: embeddings, lexical overlap and extraction, no key."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.documents.quoting import attach_code
from ragloop.eval.metrics import DEFAULT_TEMPERATURE
from ragloop.eval.metrics.base import MetricResult
from ragloop.eval.metrics.offline import (
    OfflineAnswerRelevancy,
    OfflineContextRecall,
    OfflineContextRelevance,
    is_noncommittal,
)
from ragloop.eval.metrics.semantic import unit_vectors
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.answer_model import AnswerModel
from ragloop.nodes.base import Answer, Assessment, Draft
from ragloop.nodes.evidence import written_as
from ragloop.nodes.extractive import AnswerWeights, Extract, extract
from ragloop.nodes.memo import Lookup, MemoEmbeddings
from ragloop.nodes.notfound import not_answered, see_also
from ragloop.nodes.offline_judge import (
    JudgeCalibration,
    evidence_of,
    grade,
    recall_of,
    signals,
)
from ragloop.nodes.sentences import Quotable, sentence_table
from ragloop.nodes.vocabulary import names_never_mentioned, unknown_names
from ragloop.state import ContextItem
from ragloop.text import STOPWORDS, split_sentences, token_f1, tokenize

NONCOMMITTAL_DRAFT = "I don't know yet; I need to look this up."


class OfflineStrategies:
    """No-LLM implementations of draft, judge, rewrite, answer and answer relevancy."""

    name = "offline"
    #: never calls a chat model (``nodes.base.may_call_llm``)
    calls_llm = False

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
        common_words: frozenset[str] = frozenset(),
        answer_model: AnswerModel | None = None,
        boilerplate: frozenset[str] = frozenset(),
        profile: str = "reference",
        vocabulary: Mapping[str, int] | None = None,
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
        self._relevancies = {self.relevancy.temperature: self.relevancy}
        self.max_sentences = max_sentences
        self.min_sentence_score = min_sentence_score
        self.expansion_terms = expansion_terms
        # MMR lambda: 1 = relevance only (the default: one sentence a source already varies
        # the answer, and a lower value quoted the defining passage less often)
        self.diversity = diversity
        self.answer_weights = answer_weights or AnswerWeights()
        #: a sentence is quoted only when it scores this share of the best one
        self.floor_share = 0.7
        #: the corpus's own words ("PostgreSQL" on its docs): never a name the judge or the
        #: answer looks for (``vocabulary.common_words``; empty when the corpus is small)
        self.common_words = common_words
        #: a fitted sentence scorer (``answer_model``); None scores with ``answer_weights``
        self.answer_model = answer_model
        #: keys of sentences a fifth of the corpus's pages repeat: never quoted
        self.boilerplate = boilerplate
        #: the corpus's genre profile (``sentences.PROFILES``): which features are on
        self.profile = profile
        #: word -> number of chunks holding it (the sparse index's counts): what the corpus
        #: mentions at all (``unknown_names``); None when not known
        self.vocabulary = vocabulary
        #: when set, the answer says "not found" below this support instead of the level the
        #: model gives (``extractive.Extract.level``)
        self.not_found_below: float | None = None

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
            found = evidence_of(
                self.calibration, question, texts, unit[0], unit[1:], self.common_words
            )
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
            signals=signals(question, new, self.common_words),
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
        """Extractive: the sentences closest to the question, each cited (``extractive``); a
        quoted sentence that introduces code ("as follows:") brings that code along. When the
        best support is under the fitted not-found level, the answer says the documents do
        not seem to answer and cites the closest passages instead (``Answer.not_found``).
        Support and level come from the model's abstention fit (``extractive.extract``)."""
        found = await self.extract(question, contexts)
        level = found.level if self.not_found_below is None else self.not_found_below
        if found.support < level:
            see = found.closest[:3]
            lines = [see_also(contexts[n - 1], n) for n in see]
            why = f"support {found.support:.2f} < {level:.2f}"
            unknown = names_never_mentioned(question, self.vocabulary, self.common_words)
            shown = [written_as(n, question) for n in unknown]
            if shown:
                why += "; no document mentions " + ", ".join(shown)
            return Answer.saying_not_found(not_answered(lines, shown), why), see
        return attach_code(found.text, [c.get("text", "") for c in contexts]), found.cited

    async def sentence_table(
        self, question: str, contexts: list[ContextItem]
    ) -> tuple[list[Quotable], np.ndarray]:
        """The quotable sentences of ``contexts`` and their features, with this answerer's
        own corpus settings (what the answer scores, and what calibration rows record)."""
        return await sentence_table(
            self.embeddings,
            question,
            contexts,
            common=self.common_words,
            boilerplate=self.boilerplate,
            profile=self.profile,
            spread_names=self.answer_weights.spread_names,
        )

    async def extract(self, question: str, contexts: list[ContextItem]) -> Extract:
        """The extractive answer with its support and the closest passages (``extract``)."""
        return await extract(
            self.embeddings,
            question,
            contexts,
            self.answer_weights,
            model=self.answer_model,
            max_sentences=self.max_sentences,
            min_sentence_score=self.min_sentence_score,
            floor_share=self.floor_share,
            boilerplate=self.boilerplate,
            table=await self.sentence_table(question, contexts),
            unknown_names=self.unknown_names(question),
        )

    def unknown_names(self, question: str) -> float:
        """Share of the question's names this corpus never mentions (``vocabulary.unknown_names``;
        0 without a vocabulary)."""
        return unknown_names(question, self.vocabulary, self.common_words)

    async def answer_relevancy(
        self, question: str, answer: str, temperature: float = DEFAULT_TEMPERATURE
    ) -> MetricResult:
        """Statement-level relevancy, aggregated with the temperature softmax at ``temperature``."""
        if not answer.strip():
            return MetricResult(0.0, "empty answer")
        metric = self._relevancy_at(temperature)
        return await metric.ascore({"user_input": question, "response": answer})

    def _relevancy_at(self, temperature: float) -> OfflineAnswerRelevancy:
        if temperature not in self._relevancies:
            self._relevancies[temperature] = OfflineAnswerRelevancy(
                embeddings=self.embeddings, temperature=temperature
            )
        return self._relevancies[temperature]

    async def draft_relevancy(
        self, question: str, draft: str, temperature: float = DEFAULT_TEMPERATURE
    ) -> MetricResult:
        """A cached answer is trusted when its question matched; else offline answer relevancy."""
        hit = self.cache.lookup(question) if self.cache else None
        if hit is not None and hit[1] == draft:
            return MetricResult(1.0, f"answer cache match (similarity {hit[2]:.2f})")
        return await self.answer_relevancy(question, draft, temperature)

    async def second_response(self, answer: str, reference: str) -> float:
        """How well an intermediate answer matches the reference (token F1)."""
        return token_f1(answer, reference)
