"""The experiment's objective: a figure to maximise or minimise under constraints; the pick."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragloop.experiments.checks import spec_error

#: per-configuration figures an objective or constraint may name (besides metric means)
COST_FIELDS = (
    "llm_calls_per_question", "tokens_per_question", "latency_p50_ms", "latency_p95_ms",
    "mean_iterations", "cap_share", "rewrite_share", "corrected_share", "context_hit_rate",
)  # fmt: skip
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|<|>)\s*(-?[\d.]+(?:e-?\d+)?)\s*$")


@dataclass(frozen=True)
class Constraint:
    """``name op bound``, e.g. ``llm_calls_per_question <= 4``."""

    name: str
    op: str
    bound: float

    def holds(self, value: float | None) -> bool:
        """Whether ``value`` satisfies the bound (an unmeasured value never does)."""
        if value is None or math.isnan(value):
            return False
        return {
            "<=": value <= self.bound,
            ">=": value >= self.bound,
            "<": value < self.bound,
            ">": value > self.bound,
        }[self.op]

    def __str__(self) -> str:
        return f"{self.name} {self.op} {self.bound:g}"


@dataclass(frozen=True)
class Objective:
    """Which figure to maximise or minimise, subject to constraints."""

    metric: str
    maximize: bool
    constraints: tuple[Constraint, ...] = ()

    def __str__(self) -> str:
        text = f"{'maximize' if self.maximize else 'minimize'} {self.metric}"
        if self.constraints:
            text += " subject to " + ", ".join(map(str, self.constraints))
        return text


def parse_objective(
    raw: Any, metrics: list[str], aliases: dict[str, str], where: Path
) -> Objective:
    """The [objective] table: ``maximize``/``minimize`` a figure, ``constraints`` on others."""
    if not isinstance(raw, dict) or ("maximize" in raw) == ("minimize" in raw):
        raise spec_error(
            where, '[objective] needs exactly one of maximize = "<metric>" or minimize'
        )
    unknown = set(raw) - {"maximize", "minimize", "constraints"}
    if unknown:
        raise spec_error(where, f"unknown [objective] key(s): {', '.join(sorted(unknown))}")
    name = str(raw.get("maximize", raw.get("minimize")))
    known = [*metrics, *COST_FIELDS]
    metric = aliases.get(name, name)
    if metric not in known:
        raise spec_error(
            where,
            f"objective '{name}' is neither a metric of this spec ({', '.join(metrics)}) "
            f"nor one of {', '.join(COST_FIELDS)}: add it to metrics or pick another",
        )
    texts = raw.get("constraints", [])
    if not isinstance(texts, list):
        raise spec_error(where, 'constraints must be a list like ["llm_calls_per_question <= 4"]')
    constraints = []
    for text in texts:
        match = _CONSTRAINT.match(str(text))
        if not match:
            raise spec_error(where, f"constraint '{text}' must look like 'name <= number'")
        field = aliases.get(match[1], match[1])
        if field not in known:
            raise spec_error(
                where,
                f"constraint '{text}': unknown figure '{match[1]}'; use a metric of this spec "
                f"or one of {', '.join(COST_FIELDS)}",
            )
        constraints.append(Constraint(field, match[2], float(match[3])))
    return Objective(metric, "maximize" in raw, tuple(constraints))


def choose(records: list[dict[str, Any]], objective: Objective) -> str | None:
    """Mark each record ``feasible`` and ``chosen``; return the picked id (None if none fits).

    Records hold the rounded figures of results.csv, so the pick can be redone from the
    table. Ties on the objective go to fewer LLM calls, then fewer tokens, then fewer loop
    iterations per question, then grid order; latency is left out as too noisy.
    """
    best: tuple[Any, ...] | None = None
    chosen = None
    for order, rec in enumerate(records):
        value = rec.get(objective.metric)
        feasible = all(c.holds(rec.get(c.name)) for c in objective.constraints)
        rec["feasible"] = feasible = feasible and value is not None and not math.isnan(value)
        if not feasible or value is None:
            continue
        key = (
            -value if objective.maximize else value,
            rec.get("llm_calls_per_question", 0),
            rec.get("tokens_per_question", 0),
            rec.get("mean_iterations", 0),
            order,
        )
        if best is None or key < best:
            best, chosen = key, rec["config"]
    for rec in records:
        rec["chosen"] = rec["config"] == chosen
    return chosen
