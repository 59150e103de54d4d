"""Printing text that came from users, documents or models: never markup, never raw controls.

``shown(x)`` is for interpolating into a rich markup string (markup escaped, controls made
visible); ``plain(x)`` is a ``rich.text.Text`` for tables and ``print``. Terminal escape
sequences (screen clear, window title) and bidi overrides are shown as ``\\x1b``-style text.
"""

from __future__ import annotations

import re
from typing import Any

from rich.markup import escape
from rich.text import Text

#: C0 controls but tab and newline, DEL, C1 controls, and the bidi embedding/isolate controls
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(value: Any) -> str:
    """``str(value)`` with every control character replaced by a visible ``\\xNN`` escape."""
    text = value if isinstance(value, str) else str(value)
    return _CONTROL.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def shown(value: Any) -> str:
    """``value`` ready to sit inside a rich markup string: controls neutralised, markup escaped."""
    return escape(clean(value))


def plain(value: Any, style: str | None = None) -> Text:
    """``value`` as rich ``Text`` (never parsed as markup), controls neutralised."""
    return Text(clean(value), style=style or "")
