"""LLM strategies: one structured call each for draft, judge and rewrite; a cited answer."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, BeforeValidator, Field, create_model

from ragloop.errors import RagloopError
from ragloop.eval.judge import Judge
from ragloop.eval.metrics import DEFAULT_TEMPERATURE
from ragloop.eval.metrics.base import MetricResult, get_metric
from ragloop.llm.profile import ClientConfig
from ragloop.llm.reply_cap import cut_at_cap
from ragloop.nodes import prompts
from ragloop.nodes.base import Answer, Assessment, Draft, Rewrite
from ragloop.nodes.offline import OfflineStrategies
from ragloop.state import ContextItem
from ragloop.text import split_sentences

_CITE = re.compile(r"\[(\d+)\]")
#: how a reply says the contexts do not answer (the answer prompt asks it to say so)
_NOT_FOUND = re.compile(
    r"\b(?:could ?n[o']t|can ?n[o']t|cannot|unable to|did ?n[o']t|was ?n[o']t able to)"
    r" (?:find|locate|determine|identify|answer)"
    r"|\b(?:do|does|did)(?: not|n't) (?:contain|mention|say|state|include|provide|cover|answer"
    r"|explain|specify|describe|address)"
    r"|\bno (?:information|mention|answer|relevant|details?)\b"
    r"|\bnot (?:mentioned|found|covered|provided|specified|stated|described|addressed)\b"
    r"|\bi (?:do not|don't) know\b",
    re.IGNORECASE,
)


def says_not_found(reply: str) -> bool:
    """True when the reply opens with an uncited sentence saying the contexts do not answer.

    The answer prompt asks the model to say it could not find the answer; a reply that then
    lists the closest passages with citations is still "not found", while one that first
    states something with a citation is an answer, whatever it adds about the rest.
    """
    first = split_sentences(reply)[:1]
    return bool(first) and not _CITE.search(first[0]) and bool(_NOT_FOUND.search(first[0]))


class DraftOut(BaseModel):
    answer: str
    noncommittal: bool = False
    needs_retrieval: bool = True


class Grade(BaseModel):
    id: str = Field(description="the context's id, as given")
    grade: int = Field(description="0 not relevant, 1 partly, 2 fully relevant")


class Support(BaseModel):
    id: str = Field(description="the claim's id, as given")
    supported: bool


class AssessOut(BaseModel):
    grades: list[Grade] = Field(description="one grade per new context, by its id")
    claims: list[Support] = Field(description="one flag per claim, by its id")


def _number(value: Any) -> Any:
    """A grade a small model wrote as text ("2") read as the number it means."""
    return int(value) if isinstance(value, str) and value.strip() in ("0", "1", "2") else value


#: a grade in the compact judge's reply: the enum is what a server's grammar allows
CompactGrade = Annotated[Literal[0, 1, 2], BeforeValidator(_number)]


@functools.lru_cache(maxsize=64)
def compact_assess_model(contexts: int, claims: int) -> type[BaseModel]:
    """The compact judge's reply for ``contexts`` contexts and ``claims`` claims: one key per
    id, ``{"c1": 2, "c2": 0, "k1": true}``.

    Every id is a required key, so a server that constrains its reply to the schema (llama.cpp's
    grammar) cannot leave an id out, repeat one or invent one, which the list form allowed;
    the reply is short and the schema needs no ``$defs``.
    """
    fields: dict[str, Any] = {f"c{n}": (CompactGrade, ...) for n in range(1, contexts + 1)}
    fields.update({f"k{n}": (bool, ...) for n in range(1, claims + 1)})
    return create_model(f"AssessCompact{contexts}x{claims}", **fields)


class RewriteOut(BaseModel):
    query: str


def _by_id(items: list[Any], ids: list[str], what: str) -> dict[str, Any]:
    """Items keyed by id; a missing, unknown or repeated id triggers the judge's repair."""
    keyed = {item.id.strip(): item for item in items}
    missing = [i for i in ids if i not in keyed]
    extra = sorted(set(keyed) - set(ids))
    if missing or extra or len(items) != len(ids):
        raise ValueError(
            f"{what}: expected each of the ids {', '.join(ids)} exactly once"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(extra)}" if extra else "")
        )
    return keyed


class LLMStrategies:
    """LLM-backed steps; draft relevancy and the second-response check stay cheap (offline)."""

    name = "llm"

    def __init__(
        self,
        llm: BaseChatModel,
        embeddings: Embeddings,
        offline: OfflineStrategies,
        *,
        client: ClientConfig | None = None,
        prompts_dir: str | Path | None = None,
    ):
        client = client or ClientConfig()
        self.llm = llm
        self.judge = Judge(llm, structured=client.structured, compact=client.compact)
        self.prompts = prompts.prompts_for(prompts_dir)
        self.answer_system = self.prompts["answer"].instruction.strip()
        self.offline = offline
        self.common_words = offline.common_words  # the answer's reading order reads them
        self.relevancy = get_metric(
            "answer_relevancy", llm=llm, embeddings=embeddings, judge=self.judge
        )

    async def draft(self, question: str, prompt: str | None = None) -> Draft:
        p = self.prompts["draft"]
        p = p.with_instruction(prompt) if prompt else p
        out = await self.judge.ask(p, {"question": question}, DraftOut)
        if out.output is None:  # no closed-book answer to trust: retrieve, and say why
            return Draft("", "none", True, True, fallback=f"{out.error}; no draft, retrieving")
        o = out.output
        noncommittal = o.noncommittal or not o.answer.strip()
        return Draft(o.answer, "llm", noncommittal, o.needs_retrieval, fallback=out.fallback)

    async def claims(self, question: str, draft: Draft) -> list[str]:
        return await self.offline.claims(question, draft)

    async def assess(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        if self.judge.compact:
            return await self._assess_compact(question, candidates, kept, claims, keep)
        ids = [f"c{n}" for n in range(1, len(candidates) + 1)]
        claim_ids = [f"k{n}" for n in range(1, len(claims) + 1)]
        inputs = {
            "question": question,
            "kept_contexts": prompts.render_contexts(kept),
            "new_contexts": prompts.render_contexts(candidates, ids=ids),
            "claims": [{"id": i, "claim": c} for i, c in zip(claim_ids, claims, strict=True)],
        }

        def fits(o: AssessOut) -> None:  # a missing or unknown id triggers the one repair
            _by_id(o.grades, ids, "grades")
            _by_id(o.claims, claim_ids, "claims")

        out = await self.judge.ask(self.prompts["assess"], inputs, AssessOut, check=fits)
        o = out.output
        if o is None:
            return await self._offline_assess(question, candidates, kept, claims, keep, out.error)
        grades, support = _by_id(o.grades, ids, "grades"), _by_id(o.claims, claim_ids, "claims")
        return Assessment(
            [min(2, max(0, int(grades[i].grade))) for i in ids],
            [bool(support[i].supported) for i in claim_ids],
            fallback=out.fallback,
        )

    async def _assess_compact(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        """The judge for a small local model (``compact``): the ``assess.compact`` prompt,
        every context trimmed to its opening, contexts already kept shown first under ids of
        their own, and a reply with one key per id (``compact_assess_model``)."""
        shown = [*kept, *candidates]
        ids = [f"c{n}" for n in range(1, len(shown) + 1)]
        claim_ids = [f"k{n}" for n in range(1, len(claims) + 1)]
        texts: list[str] = [
            prompts.Passage(prompts.trimmed(t), getattr(t, "origin", "kb")) for t in shown
        ]
        inputs = {
            "question": question,
            "contexts": prompts.render_contexts(texts, ids=ids),
            "claims": [{"id": i, "claim": c} for i, c in zip(claim_ids, claims, strict=True)],
        }
        model = compact_assess_model(len(shown), len(claims))
        out = await self.judge.ask(self.prompts["assess.compact"], inputs, model)
        if out.output is None:
            return await self._offline_assess(question, candidates, kept, claims, keep, out.error)
        reply = out.output
        return Assessment(
            [int(getattr(reply, i)) for i in ids[len(kept) :]],
            [bool(getattr(reply, i)) for i in claim_ids],
            fallback=out.fallback,
        )

    async def _offline_assess(
        self,
        question: str,
        candidates: list[str],
        kept: list[str],
        claims: list[str],
        keep: int,
        error: str | None,
    ) -> Assessment:
        # a judge that cannot be read is not trusted: the offline judge grades, and says so
        fallback = await self.offline.assess(question, candidates, kept, claims, keep)
        fallback.fallback = f"{error}; graded by the offline judge instead"
        return fallback

    async def rewrite(
        self, question: str, query: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> str:
        inputs = {
            "question": question,
            "current_query": query,
            "seen": prompts.render_contexts([c["text"][:300] for c in contexts[:3]]),
        }
        p = self.prompts["rewrite"]
        p = p.with_instruction(prompt) if prompt else p
        out = await self.judge.ask(p, inputs, RewriteOut)
        if out.output is not None:
            query = out.output.query.strip()
            return Rewrite.by_fallback(query, out.fallback) if out.fallback else query
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
            SystemMessage(content=prompt or self.answer_system),
            HumanMessage(content=f"{body}\n\nQuestion: {question}"),
        ]
        reply = await self.llm.ainvoke(messages)
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        if not text.strip():
            raise RagloopError("the LLM returned an empty answer")
        text = text.strip()
        answer = Answer.from_reply(text, reply.id, cut_at_cap(reply))
        answer.not_found = says_not_found(text)
        return answer, [int(n) for n in _CITE.findall(text)]

    async def answer_relevancy(
        self, question: str, answer: str, temperature: float = DEFAULT_TEMPERATURE
    ) -> MetricResult:
        """RAGAS ResponseRelevancy with the LLM (``temperature`` is the offline scorer's T)."""
        if not answer.strip():
            return MetricResult(0.0, "empty answer")
        return await self.relevancy.ascore({"user_input": question, "response": answer})

    async def draft_relevancy(
        self, question: str, draft: str, temperature: float = DEFAULT_TEMPERATURE
    ) -> MetricResult:
        return await self.offline.draft_relevancy(question, draft, temperature)

    async def second_response(self, answer: str, reference: str) -> float:
        return await self.offline.second_response(answer, reference)
