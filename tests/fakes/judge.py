"""A scripted reply to the local profile's compact judge (``assess.compact``)."""

from __future__ import annotations

import re


def compact_reply(human: str, grade: int, supported: bool) -> dict:
    """Every context id the prompt shows graded ``grade``, every claim id ``supported``:
    the reply's shape is one key per id (``{"c1": 2, "k1": true}``)."""
    ids = re.findall(r'<context id="(c\d+)"', human)
    claims = re.findall(r"^(k\d+): ", human, re.MULTILINE)
    return {**dict.fromkeys(ids, grade), **dict.fromkeys(claims, supported)}
