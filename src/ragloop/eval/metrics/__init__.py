"""Metrics with RAGAS names, columns and formulas, plus offline variants."""

from ragloop.eval.metrics._aggregate import DEFAULT_TEMPERATURE
from ragloop.eval.metrics.base import (
    Metric,
    MetricResult,
    SingleTurnMetric,
    get_metric,
    get_metric_class,
    metric_names,
)

__all__ = [
    "DEFAULT_TEMPERATURE",
    "Metric",
    "MetricResult",
    "SingleTurnMetric",
    "get_metric",
    "get_metric_class",
    "metric_names",
]
