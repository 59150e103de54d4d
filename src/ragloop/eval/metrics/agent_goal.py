"""RAGAS AgentGoalAccuracy (with and without reference) over a conversation."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from ragloop.errors import ConfigError
from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import MultiTurnLLMMetric, calls, failed
from ragloop.eval.metrics.base import MetricResult
from ragloop.eval.schema import MultiTurnSample

MODES = ("auto", "with_reference", "without_reference")


class Outcome(BaseModel):
    user_goal: str = Field(description="what the human wanted from the conversation")
    end_state: str = Field(description="what the conversation actually achieved")


class Verdict(BaseModel):
    reason: str = ""
    verdict: int = Field(description="1 when the outcome meets the goal, else 0")

    @field_validator("verdict", mode="before")
    @classmethod
    def _binary(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip() in ("0", "1"):
            return int(value.strip())
        if value in (0, 1, True, False):
            return int(value)
        raise ValueError("verdict must be 0 or 1")


WORKFLOW_PROMPT = Prompt(
    name="agent_goal_accuracy.workflow",
    instruction=(
        "Read the conversation between a human and an AI (with any tool calls and their "
        "outputs). State the human's goal and the end state the conversation reached, each "
        "in one sentence."
    ),
    examples=[
        (
            {"conversation": "Human: Book a table for two at 8.\nAI: Booked for 8 pm, two."},
            {"user_goal": "book a table for two at 8", "end_state": "a table for two at 8 pm"},
        )
    ],
)
COMPARE_PROMPT = Prompt(
    name="agent_goal_accuracy.compare",
    instruction=(
        "Compare the desired outcome with the outcome reached. Verdict 1 when the reached "
        "outcome achieves the desired one, 0 when it does not; give a short reason."
    ),
    examples=[
        (
            {"desired_outcome": "a table for two at 8", "arrived_outcome": "no table was free"},
            {"reason": "nothing was booked", "verdict": 0},
        )
    ],
)


class AgentGoalAccuracy(MultiTurnLLMMetric):
    """RAGAS ``agent_goal_accuracy``: 1.0 when the conversation reached the goal, else 0.0.

    Call 1 infers the user's goal and the end state from the transcript; call 2 compares
    the end state with the desired outcome, which is ``reference`` (RAGAS's
    AgentGoalAccuracyWithReference) or the inferred goal (…WithoutReference).
    ``mode="auto"`` picks the first when the sample has a reference.
    """

    name = "agent_goal_accuracy"
    required_columns = ("user_input",)
    output_type = "binary"
    prompts: ClassVar[dict[str, Prompt]] = {
        "workflow": WORKFLOW_PROMPT,
        "compare": COMPARE_PROMPT,
    }
    mode: Literal["auto", "with_reference", "without_reference"] = "auto"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {self.mode!r}")

    def missing_columns(self, sample: Any) -> list[str]:
        missing = super().missing_columns(sample)
        if self.mode == "with_reference" and getattr(sample, "reference", None) is None:
            missing.append("reference")
        return missing

    async def _multi_turn_ascore(self, sample: MultiTurnSample) -> MetricResult:
        first = await self.ask("workflow", {"conversation": sample.pretty_repr()}, Outcome)
        if not first.ok:
            return failed(first)
        use_ref = self.mode == "with_reference" or (
            self.mode == "auto" and sample.reference is not None
        )
        desired = sample.reference if use_ref else first.output.user_goal
        second = await self.ask(
            "compare",
            {"desired_outcome": desired, "arrived_outcome": first.output.end_state},
            Verdict,
        )
        if not second.ok:
            return failed(first, second)
        details = {
            "user_goal": first.output.user_goal,
            "end_state": first.output.end_state,
            "against": "reference" if use_ref else "inferred goal",
            "llm_calls": calls(first, second),
        }
        return MetricResult(float(second.output.verdict), second.output.reason or None, details)
