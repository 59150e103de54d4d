"""RAGAS tool-call metrics over a conversation: ToolCallAccuracy and ToolCallF1 (no LLM)."""

from __future__ import annotations

from typing import Any, ClassVar

from ragloop.eval.metrics.base import MetricResult, MultiTurnMetric
from ragloop.eval.schema import MultiTurnSample, ToolCall


def _sort_key(call: ToolCall) -> tuple[str, ...]:
    """RAGAS's order for flexible matching: the name, then each argument name and value."""
    key = [call.name]
    for arg in sorted(call.args):
        key += [arg, str(call.args[arg])]
    return tuple(key)


def _arg_score(pred: dict[str, Any], ref: dict[str, Any]) -> float:
    """Share of the reference arguments the prediction gives with the same text (``str()``)."""
    if not ref and not pred:
        return 1.0
    if not ref:
        return 0.0
    hits = sum(1 for arg, value in ref.items() if arg in pred and str(pred[arg]) == str(value))
    return hits / len(ref)


class ToolCallAccuracy(MultiTurnMetric):
    """RAGAS ``tool_call_accuracy``: the AI's tool calls against ``reference_tool_calls``.

    Pairs calls in order (``strict_order=False``: both sides sorted first); each pair with
    the same tool name earns its argument score (exact text match per reference argument);
    the sum is divided by the number of reference calls, scaled by the overlap when fewer
    calls were made, and zeroed unless the sequences of tool names align. No calls on
    either side is 1.0; calls on one side only is 0.0.
    """

    name = "tool_call_accuracy"
    required_columns = ("user_input", "reference_tool_calls")
    strict_order: bool = True

    def _compute_score(self, pred: list[ToolCall], ref: list[ToolCall]) -> float:
        if not pred and not ref:
            return 1.0
        if not pred or not ref:
            return 0.0
        if not self.strict_order:
            pred, ref = sorted(pred, key=_sort_key), sorted(ref, key=_sort_key)
        names_p, names_r = [c.name for c in pred], [c.name for c in ref]
        aligned = names_p == names_r if self.strict_order else sorted(names_p) == sorted(names_r)
        score = sum(
            _arg_score(p.args, r.args) for r, p in zip(ref, pred, strict=False) if r.name == p.name
        )
        score /= len(ref)
        compared = min(len(pred), len(ref))
        if compared < len(ref):
            score *= compared / len(ref)
        return score * int(aligned)

    async def _ascore(self, sample: MultiTurnSample) -> MetricResult:
        pred, ref = sample.tool_calls(), list(sample.reference_tool_calls or [])
        value = self._compute_score(pred, ref)
        reason = f"{len(pred)} tool calls made, {len(ref)} expected"
        return MetricResult(value, reason, {"made": [c.model_dump() for c in pred]})


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set):
        return frozenset(_hashable(v) for v in value)
    return value


class ToolCallF1(MultiTurnMetric):
    """RAGAS ``tool_call_f1``: F1 of the set of (name, args) calls made vs. expected.

    Order and repeats are ignored; rounded to 4 decimals as RAGAS does.
    """

    name = "tool_call_f1"
    required_columns: ClassVar[tuple[str, ...]] = ("user_input", "reference_tool_calls")

    @staticmethod
    def _compute_score(pred: list[ToolCall], ref: list[ToolCall]) -> float:
        made = {(c.name, _hashable(c.args)) for c in pred}
        expected = {(c.name, _hashable(c.args)) for c in ref}
        tp, fp, fn = len(made & expected), len(made - expected), len(expected - made)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return round(f1, 4)

    async def _ascore(self, sample: MultiTurnSample) -> MetricResult:
        pred, ref = sample.tool_calls(), list(sample.reference_tool_calls or [])
        value = self._compute_score(pred, ref)
        return MetricResult(value, f"{len(pred)} tool calls made, {len(ref)} expected")
