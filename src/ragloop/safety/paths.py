"""Paths from specs and datasets stay inside their folder; outputs never touch the inputs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ragloop.errors import ConfigError
from ragloop.safety.owned import check_replaceable

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


def check_output(
    out: str | Path,
    inputs: Iterable[tuple[str, str | Path | None]],
    flag: str = "--out",
    kind: str | None = None,
) -> None:
    """Refuse an output path that is, holds or lies inside one of the run's inputs.

    Called before any work: an output never replaces a corpus file or an input dataset,
    never lands inside the corpus being read (its files would be read as documents next
    time), and an output folder never contains an input (replacing it would take the
    input with it). ``inputs``: (what, path) pairs, None skipped. ``kind`` (``"output"``,
    ``"index"``): also refuse a folder of the user's files now, not after the work.
    """
    target = Path(out).resolve()
    for what, given in inputs:
        if given is None or str(given) == "-":
            continue
        src = Path(given).resolve()
        where = None
        if target == src:
            where = f"is the {what} ({given})"
        elif src in target.parents:
            where = f"lies inside the {what} ({given})"
        elif target in src.parents:
            where = f"holds the {what} ({given})"
        if where:
            raise ConfigError(
                f"{flag} {out} {where}: nothing was changed. Pass a {flag} outside the "
                "corpus and the datasets this command reads"
            )
    if kind is not None:
        check_replaceable(target, kind, flag)
