"""Reading dataset files whatever their encoding: BOMs, UTF-16, huge CSV fields, bad JSON.

Every problem is a clear ``DatasetError`` for the file or a reason for one row; nothing here
lets a stray byte order mark rename the first column or swallow the first row.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragloop.errors import DatasetError
from ragloop.safety.encoding import decode_bytes

#: csv's default limit is 131,072 characters a field; a long context must not abort a run
CSV_FIELD_LIMIT = 2**31 - 1


def read_text(path: str | Path) -> str:
    """The whole file as text, or a DatasetError saying why it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(
            f"cannot read {path}: {exc.strerror or exc}; check its permissions"
        ) from None
    return decode_bytes(raw)[0]


def jsonl_lines(path: str | Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line index, parsed value or None, problem or None) per line; trailing blanks dropped."""
    lines = read_text(path).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    for i, line in enumerate(lines):
        if not line.strip():
            yield i, None, "empty line"
            continue
        try:
            yield i, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield i, None, f"not valid JSON ({exc.msg} at column {exc.colno})"
        except RecursionError:
            yield i, None, "not valid JSON (nested too deeply)"


def read_json(path: str | Path) -> Any:
    """A ``.json`` file's value, or a DatasetError naming where the JSON breaks."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; "
            "a .json dataset is a list of objects (or use .jsonl, one object a line)"
        ) from None
    except RecursionError:
        raise DatasetError(f"{path} is not usable JSON: nested too deeply") from None


def csv_records(path: str | Path) -> tuple[list[dict[str, str]], list[str]]:
    """Rows of a CSV file as dicts by header, plus notices (duplicate or missing headers)."""
    text = read_text(path)
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise DatasetError(f"{path} is not readable CSV: {exc}") from None
    if not table:
        return [], []
    header = [h.strip() for h in table[0]]
    notices, seen, keep = [], set(), []
    for n, name in enumerate(header):
        if not name:
            continue
        if name in seen:
            notices.append(f"column '{name}' appears more than once: the first one is used")
            continue
        seen.add(name)
        keep.append((n, name))
    records = []
    for row in table[1:]:
        if not row:  # a blank line is no row (as csv.DictReader has it)
            continue
        records.append({name: row[n] if n < len(row) else "" for n, name in keep})
    return records, notices
