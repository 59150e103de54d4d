"""Answer relevancy: RAGAS ResponseRelevancy and the eval_lib intent/verdict form."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, field_validator

from ragloop.errors import ConfigError
from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._aggregate import DEFAULT_TEMPERATURE, VERDICT_SCORES, check_temperature
from ragloop.eval.metrics._aggregate import temperature_softmax as _softmax
from ragloop.eval.metrics._llm import LLMMetric, calls, expect_length, failed
from ragloop.eval.metrics.base import MetricResult, nan
from ragloop.eval.metrics.semantic import ragas_cosine
from ragloop.eval.schema import SingleTurnSample

# --- ResponseRelevancy (RAGAS `answer_relevancy`) -------------------------------------------


class GeneratedQuestion(BaseModel):
    question: str = Field(description="a question the response answers")
    noncommittal: bool = Field(description="true when the response is evasive or vague")


class GeneratedQuestions(BaseModel):
    questions: list[GeneratedQuestion]


QUESTIONS_PROMPT = Prompt(
    name="answer_relevancy.questions",
    instruction=(
        "Read the response and write n different questions that it answers (n is given in "
        "the input), each phrased the way a user would ask it. For each question also say "
        "whether the response is noncommittal: true when it dodges, hedges or admits not "
        "knowing (for instance 'I am not sure', 'that depends'), false when it commits to an "
        "answer. Return exactly n items in 'questions'."
    ),
    examples=[
        (
            {"response": "The Amazon river flows into the Atlantic Ocean.", "n": 2},
            {
                "questions": [
                    {"question": "Into which ocean does the Amazon flow?", "noncommittal": False},
                    {"question": "Where does the Amazon river end?", "noncommittal": False},
                ]
            },
        ),
        (
            {
                "response": "I can't say which phone sold best in 2031; I have no data for it.",
                "n": 1,
            },
            {
                "questions": [
                    {"question": "Which phone sold best in 2031?", "noncommittal": True},
                ]
            },
        ),
    ],
)


class ResponseRelevancy(LLMMetric):
    """RAGAS answer relevancy: mean cosine between the question and questions the response answers.

    N = ``strictness`` questions come from ONE call. The score is zeroed when ALL of them
    are flagged noncommittal — RAGAS 0.4 multiplies by ``int(not all(noncommittal))``
    (``np.all``), not by ``any``. Cosine is not clamped, so the range is [-1, 1].
    """

    name = "answer_relevancy"
    required_columns = ("user_input", "response")
    value_range = (-1.0, 1.0)
    needs_embeddings = True
    prompts: ClassVar[dict[str, Prompt]] = {"questions": QUESTIONS_PROMPT}
    strictness: int = 3

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(self.strictness, int) or self.strictness < 1:
            raise ConfigError(f"strictness must be a positive integer; got {self.strictness!r}")

    @staticmethod
    def _compute_score(
        question_vec: Sequence[float],
        generated_vecs: Sequence[Sequence[float]],
        noncommittal: Sequence[bool],
    ) -> float:
        """Mean cosine of the generated questions to the question, times 0 if all noncommittal."""
        if len(generated_vecs) == 0:
            return float("nan")
        mean = float(np.mean([ragas_cosine(v, question_vec) for v in generated_vecs]))
        return mean * int(not all(noncommittal))

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        n = self.strictness
        res = await self.ask("questions", {"response": sample.response, "n": n}, GeneratedQuestions)
        if not res.ok:
            return failed(res)
        items = res.output.questions[:n]
        if all(not q.question for q in items):
            return nan("the judge generated no question from the response", llm_calls=res.calls)
        questions = [q.question for q in items]
        flags = [q.noncommittal for q in items]
        assert self.embeddings is not None
        question_vec = await self.embeddings.aembed_query(sample.user_input or "")
        vecs = await self.embeddings.aembed_documents(questions)
        value = self._compute_score(question_vec, vecs, flags)
        details = {
            "questions": questions,
            "noncommittal": flags,
            "similarities": [ragas_cosine(v, question_vec) for v in vecs],
            "llm_calls": calls(res),
        }
        if math.isnan(value):
            return nan("a question embeds to the zero vector (nothing to compare)", **details)
        if all(flags):
            reason = "every generated question marks the response as noncommittal: score 0"
        else:
            reason = f"mean cosine of {len(questions)} generated questions to the question"
        return MetricResult(value, reason, details)


# --- Intent answer relevancy (eval_lib form) ------------------------------------------------

Level = Literal["fully", "mostly", "partial", "minor", "none"]


class IntentStatements(BaseModel):
    intent: str = Field(description="what the user wants to get out of the question")
    statements: list[str] = Field(description="atomic statements made by the response")


class StatementVerdict(BaseModel):
    verdict: Level
    reason: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class IntentVerdicts(BaseModel):
    verdicts: list[StatementVerdict]
    reason: str = Field(default="", description="one or two sentences summing up the verdicts")


INTENT_PROMPT = Prompt(
    name="intent_answer_relevancy.statements",
    instruction=(
        "First state the user's intent: what they actually want from the question (a fact, "
        "steps to follow, a comparison...). Then split the response into atomic statements: "
        "short self-contained sentences that each carry one fact or instruction, with pronouns "
        "resolved."
    ),
    examples=[
        (
            {
                "question": "How tall is Mount Kilimanjaro?",
                "response": "Kilimanjaro rises 5,895 m. It is in Tanzania and popular with hikers.",
            },
            {
                "intent": "learn the height of Mount Kilimanjaro",
                "statements": [
                    "Kilimanjaro rises 5,895 m.",
                    "Kilimanjaro is in Tanzania.",
                    "Kilimanjaro is popular with hikers.",
                ],
            },
        )
    ],
)

VERDICT_PROMPT = Prompt(
    name="intent_answer_relevancy.verdicts",
    instruction=(
        "For each statement, in order, judge how much it serves the user's intent: "
        "'fully' (directly satisfies it), 'mostly' (serves it with a small gap), 'partial' "
        "(helps with part of it), 'minor' (on the topic but barely helps), 'none' (does not "
        "help). Give one verdict per statement with a short reason, then a one-sentence "
        "overall reason."
    ),
    examples=[
        (
            {
                "intent": "learn the height of Mount Kilimanjaro",
                "statements": ["Kilimanjaro rises 5,895 m.", "Kilimanjaro is popular with hikers."],
            },
            {
                "verdicts": [
                    {"verdict": "fully", "reason": "gives the height asked for"},
                    {"verdict": "none", "reason": "popularity says nothing about height"},
                ],
                "reason": "The height is given; the remark on hikers is beside the point.",
            },
        )
    ],
)


class IntentAnswerRelevancy(LLMMetric):
    """Intent + atomic statements (call 1), five-level verdicts (call 2), temperature softmax.

    T = 0.5 is the arithmetic mean of the verdict scores, T = 0.1 strict, T = 1.0 lenient;
    T outside [0, 1] is rejected when the metric is built. Two LLM calls (the seed paid 4:
    intent and statements share a call, the reason comes with the verdicts).
    """

    name = "intent_answer_relevancy"
    required_columns = ("user_input", "response")
    value_range = (0.0, 1.0)
    prompts: ClassVar[dict[str, Prompt]] = {"statements": INTENT_PROMPT, "verdicts": VERDICT_PROMPT}
    temperature: float = DEFAULT_TEMPERATURE

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.temperature = check_temperature(self.temperature)  # ConfigError outside [0, 1]

    def _compute_score(self, verdicts: Sequence[str]) -> float:
        """Temperature-softmax of the verdict scores."""
        return _softmax([VERDICT_SCORES[v] for v in verdicts], self.temperature)

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        first = await self.ask(
            "statements",
            {"question": sample.user_input, "response": sample.response},
            IntentStatements,
        )
        if not first.ok:
            return failed(first)
        intent = first.output.intent
        statements = [s for s in first.output.statements if s.strip()]
        if not statements:
            return nan(
                "no statement could be extracted from the response",
                intent=intent,
                llm_calls=calls(first),
            )
        second = await self.ask(
            "verdicts",
            {"intent": intent, "statements": statements},
            IntentVerdicts,
            check=expect_length(len(statements), "verdicts"),
        )
        if not second.ok:
            return failed(first, second, intent=intent, statements=statements)
        verdicts = [v.verdict for v in second.output.verdicts]
        value = self._compute_score(verdicts)
        reason = second.output.reason.strip() or self._summary(verdicts)
        details = {
            "intent": intent,
            "statements": statements,
            "verdicts": [
                {
                    "statement": s,
                    "verdict": v.verdict,
                    "score": VERDICT_SCORES[v.verdict],
                    "reason": v.reason,
                }
                for s, v in zip(statements, second.output.verdicts, strict=True)
            ],
            "temperature": self.temperature,
            "reason": reason,
            "llm_calls": calls(first, second),
        }
        return MetricResult(value, reason, details)

    @staticmethod
    def _summary(verdicts: Sequence[str]) -> str:
        counts = {level: verdicts.count(level) for level in VERDICT_SCORES if level in verdicts}
        parts = ", ".join(f"{n} {level}" for level, n in counts.items())
        return f"{len(verdicts)} statements judged against the intent: {parts}"
