"""LLM strategies: one structured call each for draft, judge and rewrite; a cited answer."""

from __future__ import annotations

import re

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from ragloop.errors import RagloopError
from ragloop.eval.judge import Judge
from ragloop.eval.metrics.base import MetricResult, get_metric
from ragloop.nodes import prompts
from ragloop.nodes.base import Assessment, Draft, Rewrite
from ragloop.nodes.offline import OfflineStrategies
from ragloop.state import ContextItem

_CITE = re.compile(r"\[(\d+)\]")


class DraftOut(BaseModel):
    answer: str
    noncommittal: bool = False
    needs_retrieval: bool = True


class AssessOut(BaseModel):
    grades: list[int] = Field(description="one grade 0, 1 or 2 per new context, in order")
    supported: list[bool] = Field(description="one flag per claim, in order")


class RewriteOut(BaseModel):
    query: str


class LLMStrategies:
    """LLM-backed steps; draft relevancy and the second-response check stay cheap (offline)."""

    name = "llm"

    def __init__(self, llm: BaseChatModel, embeddings: Embeddings, offline: OfflineStrategies):
        self.llm = llm
        self.judge = Judge(llm)
        self.offline = offline
        self.common_words = offline.common_words  # the answer's reading order reads them
        self.relevancy = get_metric("answer_relevancy", llm=llm, embeddings=embeddings)

    async def draft(self, question: str, prompt: str | None = None) -> Draft:
        p = prompts.DRAFT.with_instruction(prompt) if prompt else prompts.DRAFT
        out = await self.judge.ask(p, {"question": question}, DraftOut)
        if out.output is None:  # no closed-book answer to trust: retrieve, and say why
            return Draft("", "none", True, True, fallback=f"{out.error}; no draft, retrieving")
        o = out.output
        return Draft(o.answer, "llm", o.noncommittal or not o.answer.strip(), o.needs_retrieval)

    async def claims(self, question: str, draft: Draft) -> list[str]:
        return await self.offline.claims(question, draft)

    async def assess(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        inputs = {
            "question": question,
            "kept_contexts": prompts.render_contexts(kept),
            "new_contexts": prompts.render_contexts(candidates),
            "claims": claims,
        }

        def fits(o: AssessOut) -> None:  # a wrong count triggers the judge's one repair
            if len(o.grades) != len(candidates):
                raise ValueError(f"{len(o.grades)} grades for {len(candidates)} new contexts")
            if len(o.supported) != len(claims):
                raise ValueError(f"{len(o.supported)} supported flags for {len(claims)} claims")

        out = await self.judge.ask(prompts.ASSESS, inputs, AssessOut, check=fits)
        o = out.output
        if o is None:
            # a judge that cannot be read is not trusted: the offline judge grades, and says so
            fallback = await self.offline.assess(question, candidates, kept, claims, keep)
            fallback.fallback = f"{out.error}; graded by the offline judge instead"
            return fallback
        grades = [min(2, max(0, int(g))) for g in o.grades]
        return Assessment(grades, list(o.supported))

    async def rewrite(
        self, question: str, query: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> str:
        inputs = {
            "question": question,
            "current_query": query,
            "seen": prompts.render_contexts([c["text"][:300] for c in contexts[:3]]),
        }
        p = prompts.REWRITE.with_instruction(prompt) if prompt else prompts.REWRITE
        out = await self.judge.ask(p, inputs, RewriteOut)
        if out.output is not None:
            return out.output.query.strip()
        # an unreadable reply: the offline rewrite (the kept chunks' own words), recorded
        offline = await self.offline.rewrite(question, query, contexts, prompt)
        return Rewrite.by_fallback(offline, f"{out.error}; rewritten offline instead")

    async def answer(
        self, question: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> tuple[str, list[int]]:
        body = prompts.render_contexts(
            [c["text"] for c in contexts], [c.get("origin", "kb") for c in contexts]
        )
        messages = [
            SystemMessage(content=prompt or prompts.ANSWER_SYSTEM),
            HumanMessage(content=f"{body}\n\nQuestion: {question}"),
        ]
        reply = await self.llm.ainvoke(messages)
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        if not text.strip():
            raise RagloopError("the LLM returned an empty answer")
        return text.strip(), [int(n) for n in _CITE.findall(text)]

    async def answer_relevancy(
        self, question: str, answer: str, temperature: float = 0.5
    ) -> MetricResult:
        """RAGAS ResponseRelevancy with the LLM (``temperature`` is the offline scorer's T)."""
        if not answer.strip():
            return MetricResult(0.0, "empty answer")
        return await self.relevancy.ascore({"user_input": question, "response": answer})

    async def draft_relevancy(
        self, question: str, draft: str, temperature: float = 0.5
    ) -> MetricResult:
        return await self.offline.draft_relevancy(question, draft, temperature)

    async def second_response(self, answer: str, reference: str) -> float:
        return await self.offline.second_response(answer, reference)
