"""What an answer says when the documents do not seem to answer: the words and "see also"."""

from __future__ import annotations

from ragloop.state import ContextItem

#: what the answer says when nothing relevant was kept at all
NOT_FOUND = "I could not find an answer to this in the sources I can search."
#: what the offline answer says when every sentence it read is weak evidence
NOT_ANSWERED = "The documents do not seem to answer this. See also, the closest passages:"


def see_also(ctx: ContextItem, n: int) -> str:
    """One "see also" line: the passage's heading path (or its source) and its citation."""
    where = str(ctx.get("title") or ctx.get("source") or "passage")
    return f"{where} [{n}];"
