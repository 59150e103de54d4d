"""Plan a run: read the dataset, report unreadable or unfit rows, and list the jobs to run."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragloop.errors import ConfigError, MissingColumnsError, RagloopError
from ragloop.eval.cache import Store, digest
from ragloop.eval.metrics.base import Metric
from ragloop.eval.prepare import fingerprint
from ragloop.eval.results import BadRow, RowResult
from ragloop.eval.schema import EvaluationDataset, Sample


@dataclass
class Job:
    """One (row, metric) pair to score; ``key`` names its journal entry."""

    row: RowResult
    metric: Metric
    label: str
    sample: Sample
    key: str | None


def load_dataset(dataset: Any) -> EvaluationDataset:
    """Accept an EvaluationDataset, a path (.jsonl/.json/.csv) or an iterable of dicts/samples."""
    if isinstance(dataset, EvaluationDataset):
        return dataset
    if isinstance(dataset, str | Path):
        return EvaluationDataset.load(dataset)
    if isinstance(dataset, Iterable) and not isinstance(dataset, dict | bytes):
        return EvaluationDataset.from_list(dataset)
    raise ConfigError(
        f"dataset must be an EvaluationDataset, a file path or a list of dicts; "
        f"got {type(dataset).__name__}"
    )


def _row_problem(metric: Metric, sample: Sample, max_chars: int | None, size: int) -> str | None:
    if max_chars is not None and size > max_chars:
        return f"row too large ({size:,} characters > max_row_chars={max_chars:,}): trim it"
    try:
        metric.check(sample)
    except MissingColumnsError as exc:
        return f"missing column(s): {', '.join(exc.missing)}"
    except RagloopError as exc:
        return str(exc)
    return None


def set_value(row: RowResult, label: str, value: float, reason: str | None) -> None:
    """Record one metric's value and reason on a row."""
    row.values[label] = value
    row.reasons[label] = reason


def plan(
    ds: EvaluationDataset,
    metrics: list[tuple[str, Metric]],
    store: Store | None,
    max_row_chars: int | None,
) -> tuple[list[RowResult], list[BadRow], list[Job]]:
    """Rows for every original index; unreadable or unfit rows reported; jobs for the rest."""
    labels = tuple(label for label, _ in metrics)
    rows = {i: RowResult(i) for i in range(ds.total_rows)}
    bad = []
    for err in ds.errors:
        for label in labels:
            set_value(rows[err.index], label, math.nan, f"bad row: {err.reason}")
        bad.append(BadRow(err.index, err.reason, labels))
    prints = {label: fingerprint(m) for label, m in metrics} if store else {}
    jobs = []
    for index, sample in zip(ds.indices, ds.samples, strict=True):
        row = rows.setdefault(index, RowResult(index))
        text = getattr(sample, "user_input", None)
        row.user_input = text if isinstance(text, str) else None
        row.inputs = sample.model_dump(mode="json", exclude_none=True)
        size = len(sample.model_dump_json()) if max_row_chars is not None else 0
        content = digest(row.inputs) if store else None
        problems: dict[str, list[str]] = {}
        for label, metric in metrics:
            problem = _row_problem(metric, sample, max_row_chars, size)
            if problem is not None:
                set_value(row, label, math.nan, problem)
                problems.setdefault(problem, []).append(label)
                continue
            key = digest([content, prints[label]]) if store else None
            jobs.append(Job(row, metric, label, sample, key))
        if problems:
            reason = "; ".join(f"{', '.join(ls)}: {p}" for p, ls in problems.items())
            bad.append(BadRow(index, reason, tuple(x for ls in problems.values() for x in ls)))
    return list(rows.values()), sorted(bad, key=lambda b: b.index), jobs
