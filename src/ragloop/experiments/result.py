"""What an experiment produced: the one type the runner, the reports and the CLI share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloop.experiments.spec import ExperimentSpec


@dataclass
class ExperimentResult:
    """Everything an experiment produced; ``records`` are the rows of results.csv."""

    spec: ExperimentSpec
    records: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    chosen: str | None
    totals: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    verdict: str = ""  # the paired test against the best, and why the chosen one was chosen
    files: dict[str, Path] = field(default_factory=dict)

    def record(self, config_id: str | None) -> dict[str, Any] | None:
        """The results.csv record of one configuration."""
        return next((r for r in self.records if r["config"] == config_id), None)
