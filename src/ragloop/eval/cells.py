"""CSV cells as values: list and dict cells in JSON or Python-literal form (never ``eval``)."""

from __future__ import annotations

import ast
import json
from typing import Any

from ragloop.errors import DatasetError

#: columns whose CSV cells must hold a list
LIST_COLUMNS = (
    "retrieved_contexts",
    "reference_contexts",
    "multi_responses",
    "retrieved_context_ids",
    "reference_context_ids",
    "reference_topics",
)
#: a CSV row longer than this (all cells together) is a bad row before any cell is parsed: the
#: runner's default ``max_row_chars``, and ``ast.literal_eval`` takes ~250x a cell's size
MAX_ROW_CHARS = 1_000_000


def _structured(value: str) -> Any:
    """A list/dict cell as JSON or as a Python literal (pandas writes ``['a', 'b']``).

    ``ast.literal_eval`` only builds literals (strings, numbers, lists, dicts ...); it
    never runs code. Returns ``_NOT_PARSED`` when the text is neither.
    """
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise DatasetError("a cell is nested too deeply to read: flatten it") from None
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_PARSED
    return parsed if isinstance(parsed, list | dict | tuple) else _NOT_PARSED


_NOT_PARSED = object()


def row_too_large(record: dict[str, str]) -> str | None:
    """Why a raw CSV row is refused before its cells are parsed, or None."""
    size = sum(len(k) + len(v or "") for k, v in record.items() if k)
    if size > MAX_ROW_CHARS:
        return f"row too large ({size:,} characters > {MAX_ROW_CHARS:,}, before parsing): trim it"
    return None


def csv_cell(column: str, value: str) -> Any:
    """One CSV cell as a value: list columns (and anything shaped like a list/dict) parsed."""
    if value == "":
        return None
    wants_list = column in LIST_COLUMNS or column in ("contexts", "ground_truths")
    if wants_list or column == "rubrics" or value.lstrip()[:1] in ("[", "{"):
        parsed = _structured(value.strip())
        if parsed is not _NOT_PARSED:
            return list(parsed) if isinstance(parsed, tuple) else parsed
        if wants_list:
            raise DatasetError(
                f'column \'{column}\' must hold a list in CSV, as JSON ["a", "b"] '
                "or as Python ['a', 'b'] (what pandas writes)"
            )
    return value
