"""The outcome of one run: answer, citations, path, scores, cost; converts to a RAGAS sample."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from ragloop.eval.schema import SingleTurnSample
from ragloop.state import render_step


@dataclass
class RunResult:
    """What a user gets back from ``Pipeline.run`` (and what traces and experiments store)."""

    question: str
    answer: str
    citations: list[dict[str, Any]]
    contexts: list[dict[str, Any]]
    scores: dict[str, float]
    iterations: int
    actions: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    stop_reason: str
    retrieved: bool
    llm_calls: int = 0
    tokens: int = 0
    latency_ms: float = 0.0
    reference: str | None = None
    reference_contexts: list[str] = field(default_factory=list)
    draft: str = ""
    #: why each score has its value; an unmeasured (NaN) score always says why
    score_reasons: dict[str, str] = field(default_factory=dict)
    #: the answer says the documents do not seem to answer, and lists the closest passages
    not_found: bool = False

    @classmethod
    def from_state(cls, state: dict[str, Any], **extra: Any) -> RunResult:
        """Build from the graph's final state."""
        return cls(
            question=state["question"],
            answer=state.get("answer", ""),
            citations=list(state.get("citations", [])),
            contexts=[dict(c) for c in state.get("contexts", [])],
            # the state keeps an unmeasured score as None (JSON); results and tables use NaN
            scores={
                k: math.nan if v is None else v for k, v in (state.get("scores") or {}).items()
            },
            iterations=int(state.get("iteration", 0)),
            actions=[dict(a) for a in state.get("actions", [])],
            steps=[dict(s) for s in state.get("steps", [])],
            stop_reason=state.get("stop_reason", ""),
            retrieved=bool(state.get("retrieve")),
            reference=state.get("reference"),
            reference_contexts=list(state.get("reference_contexts") or []),
            draft=state.get("draft", ""),
            score_reasons=dict(state.get("score_reasons") or {}),
            not_found=bool(state.get("not_found")),
            **extra,
        )

    def to_sample(self) -> SingleTurnSample:
        """The run as a RAGAS ``SingleTurnSample`` (for the evaluation runner)."""
        return SingleTurnSample(
            user_input=self.question,
            retrieved_contexts=[c["text"] for c in self.contexts],
            response=self.answer,
            reference=self.reference,
            reference_contexts=self.reference_contexts or None,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN scores become None)."""
        data = asdict(self)
        data["scores"] = {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in self.scores.items()
        }
        data["score_reasons"] = self.reasons()
        return data

    def reasons(self) -> dict[str, str]:
        """A reason for every score (those the graph gave none get one saying so)."""
        out = {}
        for name, value in self.scores.items():
            reason = self.score_reasons.get(name)
            if not reason:
                unmeasured = isinstance(value, float) and math.isnan(value)
                reason = "not measured (no reason recorded)" if unmeasured else "measured"
            out[name] = reason
        return out

    def path(self) -> list[str]:
        """The steps in words, one per line, as shown by ``ragloop ask``."""
        return [render_step(s) for s in self.steps]
