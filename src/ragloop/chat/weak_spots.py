"""Evaluate served turns and say where the service is weak: low scores, capped loops, actions."""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragloop.chat.traces import Trace
from ragloop.errors import ConfigError, MissingColumnsError
from ragloop.eval.metrics.base import get_metric_class

#: metrics run on traces by default (the runner swaps in offline variants without an LLM)
DEFAULT_METRICS = ("answer_relevancy", "context_relevance")
DEFAULT_LLM_METRICS = ("answer_relevancy", "context_relevance", "faithfulness")
_OFFLINE = {
    "answer_relevancy": "offline_answer_relevancy",
    "context_relevance": "offline_context_relevance",
    "nv_context_relevance": "offline_context_relevance",
}
CORRECTIVE = ("rewrite", "swap", "web")


@dataclass
class Scored:
    """Per-turn metric values (NaN when unmeasured) and the metrics' names, in order."""

    names: list[str]
    values: list[dict[str, float]]
    notes: list[str] = field(default_factory=list)


@dataclass
class WeakSpots:
    """Where the served turns are weak, ready to print or serialise."""

    turns: int
    means: dict[str, float]
    coverage: dict[str, float]
    lowest: list[dict[str, Any]]
    capped: int
    stop_reasons: dict[str, int]
    actions: list[tuple[str, int]]
    skipped_actions: list[tuple[str, int]]
    notes: list[str] = field(default_factory=list)

    @property
    def cap_share(self) -> float:
        """Share of turns that stopped at the iteration cap (0 when there are none)."""
        return self.capped / self.turns if self.turns else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN means become None)."""
        data = asdict(self) | {"cap_share": self.cap_share}
        data["means"] = {k: None if math.isnan(v) else v for k, v in self.means.items()}
        return data


def to_row(trace: Trace) -> dict[str, Any]:
    """A trace as a RAGAS single-turn row (``user_input`` is the standalone question)."""
    return {
        "user_input": trace.question,
        "response": trace.answer,
        "retrieved_contexts": [str(c.get("text", "")) for c in trace.contexts] or None,
        "trace_id": trace.id,
    }


def default_metrics(has_llm: bool) -> list[str]:
    """The metrics for traces: relevancy of answers and contexts (plus faithfulness with an LLM)."""
    return list(DEFAULT_LLM_METRICS if has_llm else DEFAULT_METRICS)


async def _score_directly(
    rows: list[dict[str, Any]], names: list[str], llm: Any, embeddings: Any
) -> Scored:
    """Score rows metric by metric without the runner (no cache, no retries)."""
    built = {}
    for name in names:
        real = name if llm is not None else _OFFLINE.get(name, name)
        cls = get_metric_class(real)
        kwargs: dict[str, Any] = {}
        if cls.needs_llm:
            kwargs["llm"] = llm
        if cls.needs_embeddings:
            kwargs["embeddings"] = embeddings
        built[real] = cls(**kwargs)
    slots = asyncio.Semaphore(8)

    async def one(metric: Any, row: dict[str, Any]) -> float:
        async with slots:
            try:
                return float((await metric.ascore(row)).value)
            except MissingColumnsError:
                return math.nan

    values: list[dict[str, float]] = [{} for _ in rows]
    for real, metric in built.items():
        scores = await asyncio.gather(*(one(metric, row) for row in rows))
        for target, value in zip(values, scores, strict=True):
            target[real] = value
    return Scored(list(built), values, ["scored without the evaluation runner (not installed)"])


async def ascore_traces(
    traces: Sequence[Trace],
    metrics: Sequence[str] | None = None,
    llm: Any = None,
    embeddings: Any = None,
    *,
    cache_dir: str | Path | None = None,
    progress: Callable[[int, int], Any] | None = None,
    **runner: Any,
) -> Scored:
    """Score each trace with ``metrics`` through the evaluation runner when it is available.

    ``runner``: the runner's limits (``timeout``, ``max_retries``, ``retry``).
    """
    names = list(metrics or default_metrics(llm is not None))
    rows = [to_row(t) for t in traces]
    if not rows:
        return Scored(names, [])
    try:
        from ragloop.eval.runner import aevaluate
    except ModuleNotFoundError as exc:
        if exc.name != "ragloop.eval.runner":
            raise
        return await _score_directly(rows, names, llm, embeddings)
    result = await aevaluate(
        rows,
        names,
        llm,
        embeddings,
        cache=cache_dir is not None,
        cache_dir=cache_dir,
        progress=progress,
        **runner,
    )
    by_index = {row.index: row.values for row in result.rows}
    values = [dict(by_index.get(i, {})) for i in range(len(rows))]
    return Scored(list(result.metrics), values, list(result.notes))


def parse_since(text: str | None) -> str | None:
    """An ISO timestamp from "2024-05-01", "2024-05-01T12:00" or a relative "7d"/"12h"/"30m"."""
    if not text:
        return None
    text = text.strip()
    rel = re.fullmatch(r"(\d+)\s*([dhm])", text)
    if rel:
        seconds = int(rel[1]) * {"d": 86400, "h": 3600, "m": 60}[rel[2]]
        try:
            when = datetime.fromtimestamp(time.time() - seconds, UTC)
        except (ValueError, OverflowError, OSError):  # further back than dates go: everything
            when = datetime.min.replace(tzinfo=UTC)
        return when.isoformat(timespec="microseconds")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--since '{text}' is not a date: use YYYY-MM-DD, YYYY-MM-DDTHH:MM or 7d/12h/30m"
        ) from None
    return (
        (when if when.tzinfo else when.replace(tzinfo=UTC))
        .astimezone(UTC)
        .isoformat(timespec="microseconds")
    )


def _mean(values: list[float]) -> float:
    measured = [v for v in values if not math.isnan(v)]
    return math.fsum(measured) / len(measured) if measured else math.nan


def find_weak_spots(traces: Sequence[Trace], scored: Scored, *, top: int = 5) -> WeakSpots:
    """Lowest-scoring questions, share of turns at the iteration cap, most-used actions."""
    n = len(traces)
    means, coverage = {}, {}
    for name in scored.names:
        column = [v.get(name, math.nan) for v in scored.values]
        means[name] = _mean(column)
        coverage[name] = sum(not math.isnan(x) for x in column) / n if n else 0.0
    ranked = []
    for trace, values in zip(traces, scored.values, strict=True):
        score = _mean([values.get(name, math.nan) for name in scored.names])
        if not math.isnan(score):
            ranked.append((score, trace, values))
    ranked.sort(key=lambda item: (item[0], item[1].ts))
    lowest = [
        {
            "score": round(score, 4),
            "question": trace.question,
            "original": trace.original,
            "thread": trace.thread,
            "ts": trace.ts,
            "stop_reason": trace.stop_reason,
            "scores": {k: (None if math.isnan(v) else round(v, 4)) for k, v in values.items()},
        }
        for score, trace, values in ranked[:top]
    ]
    used: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    for trace in traces:
        for action in trace.actions:
            name = str(action.get("action", ""))
            if name in CORRECTIVE:
                used[name] += 1
            elif name.startswith("skip:"):
                skipped[name.removeprefix("skip:")] += 1
    stops = Counter(t.stop_reason or "unknown" for t in traces)
    return WeakSpots(
        turns=n,
        means=means,
        coverage=coverage,
        lowest=lowest,
        capped=stops.get("max_iterations", 0),
        stop_reasons=dict(stops.most_common()),
        actions=used.most_common(),
        skipped_actions=skipped.most_common(),
        notes=list(scored.notes),
    )
