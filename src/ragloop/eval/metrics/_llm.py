"""Shared plumbing of the LLM-judged metrics: the judge, prompt overrides, call tallies."""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from ragloop.errors import ConfigError
from ragloop.eval.judge import Judge, JudgeResult, Prompt
from ragloop.eval.metrics.base import MetricResult, SingleTurnMetric, nan
from ragloop.eval.schema import MultiTurnSample, SingleTurnSample


class LLMMetric(SingleTurnMetric, ABC):
    """A single-turn metric judged by an LLM through ``Judge``.

    ``prompts`` holds the metric's prompts by role; ``prompt=`` replaces one (a ``Prompt``
    for a one-prompt metric, or a dict role -> Prompt). ``judge=`` shares a Judge (and its
    call/token counters) between metrics.
    """

    needs_llm: ClassVar[bool] = True
    prompts: ClassVar[dict[str, Prompt]] = {}

    def __init__(
        self,
        *,
        llm: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        prompt: Prompt | dict[str, Prompt] | None = None,
        judge: Judge | None = None,
        **params: Any,
    ):
        if llm is None and judge is not None:
            llm = judge.llm
        super().__init__(llm=llm, embeddings=embeddings, **params)
        self.prompts = dict(type(self).prompts)  # type: ignore[misc]
        if prompt is not None:
            self._override(prompt)
        assert self.llm is not None  # checked by Metric.__init__
        self.judge = judge or Judge(self.llm)

    def _override(self, prompt: Prompt | dict[str, Prompt]) -> None:
        if isinstance(prompt, Prompt):
            if len(self.prompts) != 1:
                raise ConfigError(
                    f"metric '{self.name}' has several prompts ({', '.join(self.prompts)}): "
                    "pass prompt={role: Prompt(...)}"
                )
            prompt = {next(iter(self.prompts)): prompt}
        for role, value in prompt.items():
            if role not in self.prompts or not isinstance(value, Prompt):
                raise ConfigError(
                    f"metric '{self.name}' has no prompt role '{role}' taking a Prompt; "
                    f"roles: {', '.join(self.prompts)}"
                )
            self.prompts[role] = value

    async def ask(
        self,
        role: str,
        inputs: dict[str, Any],
        output_model: type[BaseModel],
        check: Any = None,
        prompt: Prompt | None = None,
    ) -> JudgeResult:
        """Ask the judge with the prompt of ``role`` (or an explicit variant of it)."""
        return await self.judge.ask(prompt or self.prompts[role], inputs, output_model, check=check)


def calls(*results: JudgeResult) -> int:
    """Total LLM requests behind some judge results."""
    return sum(r.calls for r in results)


def failed(*results: JudgeResult, **details: Any) -> MetricResult:
    """NaN whose reason is the parse error(s) of the failed judge results."""
    errors = [r.error for r in results if r.error]
    return nan(
        "; ".join(errors) or "judge gave no usable reply", llm_calls=calls(*results), **details
    )


def expect_length(n: int, field_name: str) -> Any:
    """A ``check`` for ``Judge.ask``: the reply's list ``field_name`` must hold ``n`` items."""

    def check(output: BaseModel) -> None:
        got = len(getattr(output, field_name))
        if got != n:
            raise ValueError(f"'{field_name}' has {got} items; expected exactly {n}, one per input")

    return check


def mean_of_judges(ratings: Sequence[float | None], scale: float) -> float:
    """RAGAS dual-judge rule: mean of rating/scale over the judges that answered; NaN if none."""
    usable = [r / scale for r in ratings if r is not None and not math.isnan(r)]
    return sum(usable) / len(usable) if usable else math.nan


def join_contexts(contexts: Sequence[str]) -> str:
    """Contexts as one text, the way RAGAS joins them."""
    return "\n".join(contexts)


class DualJudgeMetric(LLMMetric, ABC):
    """The NVIDIA/RAGAS two-judge pattern: prompts ``judge1``/``judge2`` rate on 0..``scale``.

    Score = mean of rating/scale over the judges whose reply was usable (RAGAS keeps the
    other judge when one fails); NaN with both parse errors when neither was.
    """

    scale: ClassVar[float] = 2.0
    rating_model: ClassVar[type[BaseModel]]

    @classmethod
    def _compute_score(cls, rating1: float | None, rating2: float | None) -> float:
        """Mean of the available ratings on the 0..1 scale; NaN when neither judge answered."""
        return mean_of_judges([rating1, rating2], cls.scale)

    @abstractmethod
    def judge_inputs(self, sample: SingleTurnSample) -> tuple[dict[str, Any], dict[str, Any]]:
        """What judge 1 and judge 2 are shown."""

    def precheck(self, sample: SingleTurnSample) -> MetricResult | None:
        """A result decided without asking (RAGAS' blank-input rules), or None."""
        return None

    def extra_details(self, sample: SingleTurnSample, ok: list[BaseModel]) -> dict[str, Any]:
        """More details from the usable replies."""
        return {}

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        early = self.precheck(sample)
        if early is not None:
            return early
        in1, in2 = self.judge_inputs(sample)
        r1, r2 = await asyncio.gather(
            self.ask("judge1", in1, self.rating_model), self.ask("judge2", in2, self.rating_model)
        )
        if not r1.ok and not r2.ok:
            return failed(r1, r2)
        ratings = [r.output.rating if r.ok else None for r in (r1, r2)]
        details = {
            "ratings": ratings,
            "errors": [r.error for r in (r1, r2) if r.error],
            "llm_calls": calls(r1, r2),
            **self.extra_details(sample, [r.output for r in (r1, r2) if r.ok]),
        }
        used = "/".join(str(r) for r in ratings if r is not None)
        reason = f"judge ratings {used} on the 0-{self.scale:g} scale"
        return MetricResult(self._compute_score(*ratings), reason, details)


def decided(value: float, reason: str) -> MetricResult:
    """A result fixed by a rule, without any LLM call."""
    return MetricResult(value, reason, {"llm_calls": 0})


class MultiTurnLLMMetric(LLMMetric, ABC):
    """An LLM-judged metric over a conversation (``MultiTurnSample``)."""

    multi_turn: ClassVar[bool | None] = True

    async def _ascore(self, sample: Any) -> MetricResult:
        return await self._multi_turn_ascore(sample)

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        raise TypeError(f"metric '{self.name}' scores conversations only")

    @abstractmethod
    async def _multi_turn_ascore(self, sample: MultiTurnSample) -> MetricResult:
        """Score a checked conversation."""
