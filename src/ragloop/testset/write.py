"""Write a test set as JSON lines: atomically, and never over an existing file unless asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragloop.errors import ConfigError
from ragloop.safety.atomic import atomic_write_text


def write_rows(rows: list[dict[str, Any]], path: str | Path, *, force: bool = False) -> Path:
    """One JSON object per line; an existing file is refused without ``force``."""
    target = Path(path)
    if target.exists() and not force:
        raise ConfigError(f"{target} exists: pass --force to replace it, or choose another --out")
    if target.exists() and not target.is_file():
        raise ConfigError(f"{target} is not a file: choose another --out")
    if not target.parent.is_dir():
        raise ConfigError(f"folder {target.parent} does not exist: create it or pick another")
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return atomic_write_text(target, text)
