"""The LLM path: one structured call writes each question, the faithfulness judge checks it.

The offline generator still chooses the passages (and the pair for a multi-passage
question), so the balance and the seed work the same way; the model only writes the
question and its reference. A reply that does not parse is repaired once (``Judge.ask``)
and then dropped and counted; a reference the faithfulness judge does not find supported
by its passages (score below ``FAITHFUL_AT``) is dropped and counted; an unanswerable
question whose key terms the corpus contains is dropped and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from ragloop._async import run_sync
from ragloop.errors import ConfigError, LLMError
from ragloop.eval.judge import Judge, load_prompt
from ragloop.eval.metrics.faithfulness import Faithfulness
from ragloop.eval.schema import SingleTurnSample
from ragloop.llm.faults import server_of
from ragloop.testset.checks import absent
from ragloop.testset.offline import ABSTRACT, MULTI, PARAPHRASED, SPECIFIC, UNANSWERABLE, Draft
from ragloop.testset.passages import Passage
from ragloop.testset.personas import Persona

#: the least faithfulness a reference needs to be kept
FAITHFUL_AT = 0.8
#: unusable replies in a row (none usable between) after which generation stops
MAX_UNUSABLE_IN_ROW = 3
UNANSWERABLE_REFERENCE = "The documents do not answer this question."


class WrittenQuestion(BaseModel):
    question: str = Field(min_length=5, description="the question, as a user would ask it")
    answer: str = Field(description="the reference answer, from the passages only")
    absent_terms: list[str] = Field(
        default_factory=list, description="unanswerable only: words an answer would need"
    )


TASKS = {
    SPECIFIC: "Ask one specific question about the topic that the passage answers, naming it.",
    PARAPHRASED: (
        "Ask one question the passage answers, describing the topic in other words: do not use "
        "its name or the passage's distinctive words."
    ),
    MULTI: "Ask one question that needs both passages to answer (something from each).",
    ABSTRACT: (
        "Ask one broad question about the theme these passages share (the topic), as a person "
        "would ask it before knowing where the answer is; the answer draws on every passage."
    ),
    UNANSWERABLE: (
        "Ask one plausible question about a neighbouring topic that the passage does NOT "
        "answer. Set answer to an empty string and absent_terms to 2-4 words an answer would "
        "have to contain."
    ),
}
#: the writer's prompt, ``ragloop/prompts/testset.question.toml``
WRITE_PROMPT = load_prompt("testset.question")


class LLMWriter:
    """Writes questions with a chat model; counts every drop by its reason in ``dropped``."""

    def __init__(self, llm: Any, passages: list[Passage]):
        self.judge = Judge(llm)
        self.faithfulness = Faithfulness(llm=llm, judge=self.judge)
        self.by_id = {p.id: p for p in passages}
        self.unusable_in_row = 0

    @classmethod
    def of(cls, llm: Any, passages: list[Passage]) -> LLMWriter:
        """From a chat model, or a spec such as ``openai:gpt-4o-mini``."""
        if isinstance(llm, str):
            from ragloop.providers import get_chat_model

            model = get_chat_model(llm)
            if model is None:
                raise ConfigError("llm 'none' writes no questions: drop --llm for offline")
            llm = model
        return cls(llm, passages)

    def rewrite(
        self, draft: Draft, vocab: str, dropped: Counter[str], persona: Persona | None = None
    ) -> Draft | None:
        """The draft with the model's question and reference, or None (and the reason counted)."""
        return run_sync(self._rewrite(draft, vocab, dropped, persona))

    async def _rewrite(
        self, draft: Draft, vocab: str, dropped: Counter[str], persona: Persona | None
    ) -> Draft | None:
        shown = draft.passages or tuple(
            self.by_id[i] for i in draft.extra.get("neighbour_context_ids", []) if i in self.by_id
        )
        inputs = {
            "task": TASKS[draft.synthesizer],
            "topic": draft.subject,
            "passages": [p.text for p in shown],
        }
        if persona is not None:
            inputs["persona"] = f"{persona.name}: {persona.role_description}"
        result = await self.judge.ask(WRITE_PROMPT, inputs, WrittenQuestion)
        if not result.ok:
            dropped["unusable model reply (after one repair)"] += 1
            self.unusable_in_row += 1
            if self.unusable_in_row >= MAX_UNUSABLE_IN_ROW:  # a server that cannot do this
                raise LLMError(
                    f"the LLM server {server_of(self.judge.llm)} gave {self.unusable_in_row} "
                    f"unusable replies in a row (each repaired once): {result.error}; use a "
                    "model that follows instructions, or --llm none"
                )
            return None
        self.unusable_in_row = 0
        out: WrittenQuestion = result.output
        if draft.synthesizer == UNANSWERABLE:
            terms = [t.strip() for t in out.absent_terms if t.strip()]
            if not terms or not absent(terms, vocab):
                dropped["unanswerable question's key terms are in the corpus"] += 1
                return None
            extra = {**draft.extra, "absent_terms": terms}
            return replace(
                draft, question=out.question, reference=UNANSWERABLE_REFERENCE, extra=extra
            )
        if not out.answer.strip():
            dropped["empty reference"] += 1
            return None
        sample = SingleTurnSample(
            user_input=out.question,
            response=out.answer,
            retrieved_contexts=[p.text for p in draft.passages],
        )
        score = (await self.faithfulness.ascore(sample)).value
        if not score >= FAITHFUL_AT:  # NaN (unmeasured) is dropped too
            dropped["reference not supported by its passages (faithfulness)"] += 1
            return None
        extra = {**draft.extra, "reference_faithfulness": round(score, 3)}
        return replace(draft, question=out.question, reference=out.answer, extra=extra)
