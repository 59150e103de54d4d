"""Per-configuration figures of an experiment: bootstrap intervals, loop behaviour, cost."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragloop.experiments.grid import Configuration

DECIMALS = 4
ACTIONS = ("rewrite", "swap", "web")
EXAMPLES = 3


def fmt(value: Any, digits: int = DECIMALS) -> str:
    """One text form for a figure, shared by results.csv and the reports (NaN/None empty)."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _r(value: float | None) -> float:
    return math.nan if value is None or math.isnan(value) else round(float(value), DECIMALS)


def bootstrap_ci(values: Sequence[float], resamples: int, seed: int) -> tuple[float, float]:
    """Percentile 95% interval of the mean (fixed seed); NaN values are left out."""
    data = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if data.size == 0:
        return math.nan, math.nan
    if data.size == 1:
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def context_hit(sources: list[str], doc_ids: list[str]) -> bool | None:
    """Whether a kept context comes from a reference document (None: the row names none)."""
    if not doc_ids:
        return None
    return any(s == d or s.endswith("/" + d) for s in sources for d in doc_ids)


def action_kinds(actions: list[dict[str, Any]]) -> list[str]:
    """The corrective actions taken (skipped ones and 'none' left out)."""
    return [a.get("action", "") for a in actions if a.get("action") in ACTIONS]


def summarize(
    config: Configuration, rows: list[dict[str, Any]], metrics: list[str], resamples: int, seed: int
) -> dict[str, Any]:
    """One results.csv record: settings, metric means with intervals and coverage, loop and cost."""
    n = len(rows)
    rec: dict[str, Any] = {
        "config": config.id,
        "label": config.label,
        "retrievers": ",".join(config.settings.retrievers),
        "judge_mode": config.settings.judge_mode,
        "max_iterations": config.settings.max_iterations,
        "k": config.settings.k,
    }
    for key, value in config.values.items():
        if key not in rec:
            rec[key] = value
    for kind, name in config.prompt_names.items():
        rec[f"prompt_{kind}"] = name
    rec["rows"] = n
    for m in metrics:
        values = [r["metrics"].get(m) for r in rows]
        measured = [float(v) for v in values if v is not None and not math.isnan(v)]
        lo, hi = bootstrap_ci(measured, resamples, seed)
        rec[m] = _r(math.fsum(measured) / len(measured)) if measured else math.nan
        rec[f"{m}_lo"], rec[f"{m}_hi"] = _r(lo), _r(hi)
        rec[f"{m}_coverage"] = _r(len(measured) / n) if n else math.nan
    kinds = Counter(k for r in rows for k in action_kinds(r["actions"]))
    latencies = [r["latency_ms"] for r in rows if not r.get("error")]
    hits = [r["context_hit"] for r in rows if r["context_hit"] is not None]
    p50, p95 = np.percentile(latencies, [50, 95]) if latencies else (math.nan, math.nan)
    rewrite, corrected = _shares(rows)
    rec.update(
        mean_iterations=_r(float(np.mean([r["iterations"] for r in rows]))),
        cap_share=_r(sum(r["stop_reason"] == "max_iterations" for r in rows) / n),
        **{f"actions_{a}": kinds.get(a, 0) for a in ACTIONS},
        rewrite_share=rewrite,
        corrected_share=corrected,
        llm_calls_per_question=_r(sum(r["llm_calls"] for r in rows) / n),
        tokens_per_question=_r(sum(r["tokens"] for r in rows) / n),
        latency_p50_ms=_r(float(p50)),
        latency_p95_ms=_r(float(p95)),
        context_hit_rate=_r(sum(hits) / len(hits)) if hits else math.nan,
    )
    return rec


def _shares(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """Share of rows that needed a rewrite, and share that needed any correction."""
    if not rows:
        return math.nan, math.nan
    kinds = [action_kinds(r["actions"]) for r in rows]
    return _r(sum("rewrite" in k for k in kinds) / len(rows)), _r(sum(map(bool, kinds)) / len(rows))


def prompt_variants(
    configs: list[Configuration], rows_by_config: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Per prompt variant ('default' when none is named): rewrite share and rewritten queries."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for config in configs:
        for kind, name in (config.prompt_names or {"draft": "default"}).items():
            groups.setdefault((kind, name), []).extend(rows_by_config[config.id])
    out = []
    for (kind, name), rows in groups.items():
        examples: list[dict[str, str]] = []
        for r in rows:
            for a in r["actions"]:
                pair = {"question": r["user_input"], "rewritten": a.get("query", "")}
                if a.get("action") == "rewrite" and pair not in examples:
                    examples.append(pair)
        rewrite, corrected = _shares(rows)
        out.append(
            {
                "kind": kind,
                "variant": name,
                "runs": len(rows),
                "rewrite_share": rewrite,
                "corrected_share": corrected,
                "examples": examples[:EXAMPLES],
            }
        )
    return out
