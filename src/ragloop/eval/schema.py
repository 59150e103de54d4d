"""RAGAS-compatible samples and datasets, with old column names accepted."""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragloop.errors import DatasetError
from ragloop.eval.cells import (
    LIST_COLUMNS,  # noqa: F401 - kept importable from here
    row_too_large,
)
from ragloop.eval.cells import csv_cell as _csv_cell
from ragloop.eval.readers import csv_records, jsonl_lines, read_json
from ragloop.safety.atomic import atomic_writer

log = logging.getLogger("ragloop")

#: Old RAGAS column names and the names they became.
RENAMED_COLUMNS = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
    "ground_truths": "reference",
    "multi_response": "multi_responses",
    "rubric": "rubrics",
}


class SingleTurnSample(BaseModel):
    """One question/answer exchange, with the columns RAGAS metrics read."""

    model_config = ConfigDict(extra="allow")

    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = None
    retrieved_context_ids: list[str | int] | None = None
    reference_context_ids: list[str | int] | None = None
    persona_name: str | None = None
    query_style: str | None = None
    query_length: str | None = None

    def extras(self) -> dict[str, Any]:
        """Columns outside the RAGAS schema (ids, tags), kept through round trips."""
        return dict(self.model_extra or {})


class ToolCall(BaseModel):
    """A tool call made by the AI in a multi-turn conversation."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """One message of a multi-turn conversation."""

    type: Literal["human", "ai", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] | None = None

    def pretty_repr(self) -> str:
        """The message as RAGAS prints it in a transcript (``Human:``, ``AI:``, ``ToolOutput:``)."""
        if self.type == "human":
            return f"Human: {self.content}"
        if self.type == "tool":
            return f"ToolOutput: {self.content}"
        lines = [f"AI: {self.content}"] if self.content != "" else []
        if self.tool_calls is not None:
            lines.append("Tools:")
            lines += [f"  {call.name}: {call.args}" for call in self.tool_calls]
        return "\n".join(lines)


class MultiTurnSample(BaseModel):
    """A conversation (human/AI/tool messages) with its references."""

    model_config = ConfigDict(extra="allow")

    user_input: list[Message] | None = None
    reference: str | None = None
    reference_tool_calls: list[ToolCall] | None = None
    rubrics: dict[str, str] | None = None
    reference_topics: list[str] | None = None

    def pretty_repr(self) -> str:
        """The conversation as a transcript, one message after another (RAGAS's format)."""
        return "\n".join(m.pretty_repr() for m in self.user_input or [])

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the AI made, in order."""
        return [c for m in self.user_input or [] if m.type == "ai" for c in m.tool_calls or []]


Sample = SingleTurnSample | MultiTurnSample


@dataclass(frozen=True)
class RowError:
    """A row that could not be read, with its 0-based index and the reason."""

    index: int
    reason: str


def normalise_row(row: dict[str, Any], notices: set[str] | None = None) -> dict[str, Any]:
    """Rename old column names to the RAGAS ones; record each renaming once in ``notices``."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        new = RENAMED_COLUMNS.get(key, key)
        if new != key:
            said = notices is not None and key in {n.split("'")[1] for n in notices}
            if new in row:  # both names present: the new one wins, the old one is dropped
                if notices is not None and not said:
                    notices.add(f"column '{key}' ignored: the row also has '{new}', which is used")
                continue
            if notices is not None and not said:
                notices.add(f"column '{key}' renamed to '{new}'")
            if key == "ground_truths" and isinstance(value, list):
                value = " ".join(str(v) for v in value)
        out[new] = value
    return out


def to_sample(row: dict[str, Any] | Sample, notices: set[str] | None = None) -> Sample:
    """Turn a dict (old or new column names) into a Single- or MultiTurnSample."""
    if isinstance(row, SingleTurnSample | MultiTurnSample):
        return row
    if not isinstance(row, dict):
        raise DatasetError(f"a row must be an object/dict, got {type(row).__name__}")
    data = normalise_row(row, notices)
    try:
        if isinstance(data.get("user_input"), list):
            return MultiTurnSample.model_validate(data)
        return SingleTurnSample.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise DatasetError(f"invalid row: {problems}") from None


class EvaluationDataset:
    """A list of samples plus the rows that could not be read (reported, not fatal)."""

    def __init__(
        self,
        samples: Iterable[Sample] = (),
        errors: Iterable[RowError] = (),
        notices: Iterable[str] = (),
        total_rows: int | None = None,
    ):
        self.samples: list[Sample] = list(samples)
        self.errors: list[RowError] = list(errors)
        self.notices: list[str] = sorted(notices)
        self.total_rows = (
            total_rows if total_rows is not None else len(self.samples) + len(self.errors)
        )
        #: original row index of each sample (bad rows leave gaps)
        self.indices: list[int] = list(range(len(self.samples)))

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __getitem__(self, i: int) -> Sample:
        return self.samples[i]

    @classmethod
    def from_list(cls, rows: Iterable[Any]) -> EvaluationDataset:
        """Build from dicts or samples; a bad row is recorded in ``errors`` and skipped."""
        samples: list[Sample] = []
        errors: list[RowError] = []
        notices: set[str] = set()
        indices: list[int] = []
        n = 0
        for n, row in enumerate(rows, start=1):
            try:
                samples.append(to_sample(row, notices))
                indices.append(n - 1)
            except DatasetError as exc:
                errors.append(RowError(n - 1, str(exc)))
        for notice in sorted(notices):
            log.warning("ragloop: %s", notice)
        ds = cls(samples, errors, notices, total_rows=n)
        ds.indices = indices
        return ds

    @classmethod
    def from_jsonl(cls, path: str | Path) -> EvaluationDataset:
        """Read JSON Lines; a line that is not a JSON object becomes a RowError."""
        path = Path(path)
        rows: list[Any] = []
        bad: dict[int, str] = {}
        for i, value, problem in jsonl_lines(path):  # BOM/UTF-16 aware; trailing blanks dropped
            if problem is not None:
                bad[i] = problem
            rows.append(value)
        return cls._from_rows_with_bad(rows, bad)

    @classmethod
    def from_csv(cls, path: str | Path) -> EvaluationDataset:
        """Read CSV; list columns hold JSON lists."""
        path = Path(path)
        rows: list[Any] = []
        bad: dict[int, str] = {}
        records, notices = csv_records(path)  # BOM-aware, no 131,072-character field limit
        for notice in notices:
            log.warning("ragloop: %s: %s", path, notice)
        for i, rec in enumerate(records):
            too_large = row_too_large(rec)  # limits apply before a cell is parsed
            if too_large:
                bad[i] = too_large
                rows.append(None)
                continue
            try:
                rows.append({k: _csv_cell(k, v or "") for k, v in rec.items() if k})
            except DatasetError as exc:
                bad[i] = str(exc)
                rows.append(None)
        ds = cls._from_rows_with_bad(rows, bad)
        ds.notices = sorted({*ds.notices, *notices})
        return ds

    @classmethod
    def load(cls, path: str | Path) -> EvaluationDataset:
        """Read a ``.jsonl``/``.json`` or ``.csv`` file, chosen by suffix."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".ndjson"):
            return cls.from_jsonl(path)
        if suffix == ".csv":
            return cls.from_csv(path)
        if suffix == ".json":
            if not path.is_file():
                raise DatasetError(f"dataset file not found: {path}")
            data = read_json(path)
            if not isinstance(data, list):
                raise DatasetError(f"{path}: a .json dataset must be a list of objects")
            return cls.from_list(data)
        raise DatasetError(f"{path}: unknown dataset format '{suffix}'; use .jsonl, .json or .csv")

    @classmethod
    def _from_rows_with_bad(cls, rows: list[Any], bad: dict[int, str]) -> EvaluationDataset:
        good = [(i, r) for i, r in enumerate(rows) if i not in bad]
        inner = cls.from_list(r for _, r in good)
        errors = [RowError(i, reason) for i, reason in bad.items()]
        errors += [RowError(good[e.index][0], e.reason) for e in inner.errors]
        ds = cls(inner.samples, sorted(errors, key=lambda e: e.index), inner.notices, len(rows))
        ds.indices = [good[j][0] for j in inner.indices]
        return ds

    def to_list(self) -> list[dict[str, Any]]:
        """Samples as dicts (None fields left out)."""
        return [s.model_dump(exclude_none=True) for s in self.samples]

    def to_jsonl(self, path: str | Path) -> None:
        """Write one JSON object per line."""
        with atomic_writer(path) as fh:  # temp, fsync, rename: never half a file
            for row in self.to_list():
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def to_csv(self, path: str | Path) -> None:
        """Write CSV with list and dict columns as JSON."""
        rows = self.to_list()
        columns: list[str] = []
        for row in rows:
            columns += [c for c in row if c not in columns]
        with atomic_writer(path, newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {
                        k: json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v
                        for k, v in row.items()
                    }
                )
