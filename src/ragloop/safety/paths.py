"""Paths that come from specs and datasets stay inside the folder they belong to."""

from __future__ import annotations

import re
from pathlib import Path

from ragloop.errors import ConfigError

_BAD_NAME = re.compile(r"[\x00-\x1f\x7f/\\:]")


def confined_name(name: str, what: str = "name") -> str:
    """``name`` as one path component: no separators, no ``..``, no control characters."""
    text = str(name).strip()
    if not text or text in (".", "..") or _BAD_NAME.search(text) or text.startswith("."):
        raise ConfigError(
            f"{what} {name!r} cannot be used as a folder name: use letters, digits, '-', '_' "
            "(no '/', '..', or leading '.')"
        )
    return text


def confine(base: str | Path, path: str | Path, what: str = "path") -> Path:
    """``path`` (relative to ``base`` unless absolute) resolved; it must lie inside ``base``."""
    root = Path(base).resolve()
    candidate = Path(path)
    full = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if full != root and root not in full.parents:
        raise ConfigError(f"{what} {path} is outside {root}: keep it inside that folder")
    return full
