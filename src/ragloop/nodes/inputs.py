"""What a turn's input must be, checked before any work: text where text is expected, and a
question no longer than the server's cap (a 1 MB question would hold a worker for seconds).

A client sends JSON; LangGraph stores it as it came, so ``{"question": 12345}`` or a list would
otherwise be answered as its string form. Errors name the field and say how to fix it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection
from typing import Any

from ragloop.config import default_of
from ragloop.errors import ConfigError

__all__ = ["DEFAULT_MAX_QUESTION_CHARS", "check_inputs", "check_question", "known_keys"]

#: the default cap on a question's length: the setting's
DEFAULT_MAX_QUESTION_CHARS: int = default_of("max_question_chars")


def _kind(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }
    return names.get(type(value), type(value).__name__)


def check_question(value: Any, field: str, limit: int = DEFAULT_MAX_QUESTION_CHARS) -> str:
    """``value`` as the turn's text; a clear error when it is not text or is too long."""
    if not isinstance(value, str):
        raise ConfigError(
            f"input '{field}' must be text, got {_kind(value)} ({str(value)[:40]}): "
            'send {"question": "..."} or {"messages": [{"role": "user", "content": "..."}]}'
        )
    if len(value) > limit:
        raise ConfigError(
            f"input '{field}' is {len(value):,} characters; the limit is {limit:,} "
            "(shorten it, or raise max_question_chars / RAGLOOP_MAX_QUESTION_CHARS on the server)"
        )
    return value


def check_inputs(state: Any) -> None:
    """The optional per-turn inputs: ``reference`` is text or null, ``reference_contexts`` a
    list of texts."""
    reference = state.get("reference")
    if reference is not None and not isinstance(reference, str):
        raise ConfigError(f"input 'reference' must be text or null, got {_kind(reference)}")
    contexts = state.get("reference_contexts")
    if contexts is not None and (
        not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts)
    ):
        raise ConfigError("input 'reference_contexts' must be a list of texts")


def known_keys(accepted: Collection[str]) -> Callable[[Any], Any]:
    """A check of a turn's input object: a key outside ``accepted`` is an error naming it.

    LangGraph drops input keys its input schema does not have, so ``{"questoin": ...}``
    would otherwise fail later as "the turn has no question", with the typo unnamed.
    The check hands the input on unchanged; anything but a dict (a resume, a ``Command``)
    passes as it is.
    """
    names = sorted(accepted)

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        unknown = [str(key) for key in value if key not in accepted]
        if unknown:
            hints = []
            for key in unknown:
                close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
                hints.append(f"'{key}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
            raise ConfigError(
                f"unknown input key{'s' if len(unknown) > 1 else ''} {', '.join(hints)}: "
                f"a turn takes {', '.join(names)}"
            )
        return value

    return check
