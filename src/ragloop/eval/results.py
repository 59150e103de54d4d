"""The result of an evaluation run: per-row scores with reasons, per-metric coverage, totals."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloop.redact import redact_value, secret_values
from ragloop.safety import atomic_writer, claim_output_folder, folder_lock

#: reasons whose whole text is their kind (short and already general)
_WHOLE = ("skipped:", "missing column")


def reason_kind(reason: str | None) -> str:
    """The general kind of a NaN reason, for grouping (details after the first ': ' dropped)."""
    text = (reason or "unknown").strip()
    if not text.startswith(_WHOLE):
        text = text.split(": ", 1)[0]
    return text[:80]


def _json_value(value: float) -> float | None:
    return None if value is None or math.isnan(value) else value


@dataclass
class RowResult:
    """One dataset row: its original index, each metric's value (NaN if unmeasured), reason."""

    index: int
    values: dict[str, float] = field(default_factory=dict)
    reasons: dict[str, str | None] = field(default_factory=dict)
    user_input: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)  # the sample's columns, as JSON values


@dataclass(frozen=True)
class BadRow:
    """A row skipped (wholly or for some metrics) with the reason and the metrics it affects."""

    index: int
    reason: str
    metrics: tuple[str, ...] = ()


@dataclass
class MetricSummary:
    """Mean over measured rows only, how many were measured, and why the rest were not."""

    name: str
    mean: float
    measured: int
    total: int
    nan_reasons: list[dict[str, Any]] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.measured / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": _json_value(self.mean),
            "measured": self.measured,
            "total": self.total,
            "coverage": round(self.coverage, 6),
            "nan_reasons": self.nan_reasons,
        }


def summarise(name: str, rows: list[RowResult]) -> MetricSummary:
    """Aggregate one metric over every row; NaN never enters the mean."""
    values = [r.values.get(name, math.nan) for r in rows]
    measured = [v for v in values if not math.isnan(v)]
    kinds: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for row, value in zip(rows, values, strict=True):
        if math.isnan(value):
            reason = row.reasons.get(name) or "unknown"
            kind = reason_kind(reason)
            kinds[kind] += 1
            examples.setdefault(kind, reason)
    mean = math.fsum(measured) / len(measured) if measured else math.nan
    reasons = [{"kind": k, "count": n, "example": examples[k]} for k, n in kinds.most_common()]
    return MetricSummary(name, mean, len(measured), len(rows), reasons)


@dataclass
class EvaluationResult:
    """Everything a run produced; ``summary()`` and ``write()`` give the JSON forms."""

    rows: list[RowResult]
    metrics: dict[str, MetricSummary]
    bad_rows: list[BadRow] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    run_id: str = ""

    @classmethod
    def build(cls, rows: list[RowResult], names: list[str], **kwargs: Any) -> EvaluationResult:
        """Summarise every metric over ``rows`` (sorted by original index)."""
        rows = sorted(rows, key=lambda r: r.index)
        return cls(rows, {n: summarise(n, rows) for n in names}, **kwargs)

    def means(self) -> dict[str, float]:
        """Each metric's mean over its measured rows (NaN when none was measured)."""
        return {name: s.mean for name, s in self.metrics.items()}

    @property
    def scores(self) -> list[dict[str, float]]:
        """One dict per row, metric -> value (NaN when unmeasured), as RAGAS's ``scores``."""
        return [{n: row.values.get(n, math.nan) for n in self.metrics} for row in self.rows]

    def __getitem__(self, name: str) -> list[float]:
        """The per-row values of metric ``name`` (RAGAS's ``result[name]``); means: ``means()``."""
        if name not in self.metrics:
            known = ", ".join(self.metrics) or "none"
            raise KeyError(f"no metric '{name}' in this result; metrics: {known}")
        return [row.values.get(name, math.nan) for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def to_pandas(self) -> Any:
        """A DataFrame as RAGAS gives: every input column, then each metric, plus reasons.

        One row per dataset row, with ragloop's ``index`` (the row's place in the dataset)
        first and ``<metric>.reason`` after each metric. Needs pandas:
        ``pip install 'ragloop[pandas]'``.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "EvaluationResult.to_pandas() needs pandas: pip install 'ragloop[pandas]' "
                "(or use to_records(), summary() and write(), which need nothing more)"
            ) from None
        inputs = dict.fromkeys(k for row in self.rows for k in row.inputs)
        if any(row.user_input is not None for row in self.rows):
            inputs.setdefault("user_input")
        metrics = [c for name in self.metrics for c in (name, f"{name}.reason")]
        columns = ["index", *(k for k in inputs if k not in self.metrics), *metrics]
        return pd.DataFrame.from_records(self.to_records(), columns=columns)

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per row: ``index``, the input columns, each metric and its reason.

        An unreadable row has no input columns; a metric whose name is also an input
        column's wins the column (the input stays in the dataset).
        """
        records = []
        for row in self.rows:
            rec: dict[str, Any] = {"index": row.index, **row.inputs}
            if row.user_input is not None:
                rec["user_input"] = row.user_input
            for name in self.metrics:
                rec[name] = row.values.get(name, math.nan)
                rec[f"{name}.reason"] = row.reasons.get(name)
            records.append(rec)
        return records

    def summary(self) -> dict[str, Any]:
        """A JSON-safe summary: per-metric figures, bad rows, totals, notes and errors."""
        return {
            "run_id": self.run_id,
            "metrics": {name: s.to_dict() for name, s in self.metrics.items()},
            "bad_rows": {
                "count": len(self.bad_rows),
                "rows": [
                    {"index": b.index, "reason": b.reason, "metrics": list(b.metrics)}
                    for b in self.bad_rows
                ],
            },
            "totals": dict(self.totals),
            "notes": list(self.notes),
            "errors": list(self.errors),
        }

    def write(self, out_dir: str | Path) -> tuple[Path, Path]:
        """Write ``rows.jsonl`` (one record per row, NaN as null) and ``summary.json``."""
        out = claim_output_folder(Path(out_dir))  # never into a folder of the user's files
        rows_path, summary_path = out / "rows.jsonl", out / "summary.json"
        secrets = secret_values()
        with folder_lock(out):  # each file replaced whole: temp in the folder, fsync, rename
            with atomic_writer(rows_path) as fh:
                for rec in self.to_records():
                    clean = {
                        k: _json_value(v) if isinstance(v, float) else v for k, v in rec.items()
                    }
                    fh.write(json.dumps(redact_value(clean, secrets), ensure_ascii=False) + "\n")
            with atomic_writer(summary_path) as fh:
                summary = redact_value(self.summary(), secrets)
                fh.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
        return rows_path, summary_path

    def __repr__(self) -> str:
        parts = ", ".join(
            f"'{n}': {s.mean:.4f} ({s.measured}/{s.total})" for n, s in self.metrics.items()
        )
        return f"EvaluationResult({{{parts}}}, bad_rows={len(self.bad_rows)})"
