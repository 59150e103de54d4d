"""What an answer says when the documents do not seem to answer: the words and "see also"."""

from __future__ import annotations

from collections.abc import Sequence

from ragloop.state import ContextItem

#: what the answer says when nothing relevant was kept at all
NOT_FOUND = "I could not find an answer to this in the sources I can search."
#: what the offline answer says when every sentence it read is weak evidence: the verdict,
#: then (``not_answered``) what no document mentions, then the closest passages
NOT_ANSWERED_LEAD = "The documents do not seem to answer this."
SEE_ALSO = "See also, the closest passages:"
NOT_ANSWERED = f"{NOT_ANSWERED_LEAD} {SEE_ALSO}"


def not_answered(lines: Sequence[str], unknown: Sequence[str] = ()) -> str:
    """The "not found" answer: the verdict, the question's names no document mentions (as the
    user wrote them), and the "see also" ``lines``."""
    said = [NOT_ANSWERED_LEAD]
    if unknown:
        said.append(f"None of them mentions {', '.join(unknown)}.")
    listed = "; ".join(lines)
    return " ".join([*said, SEE_ALSO, f"{listed}." if listed else "none."])


def see_also(ctx: ContextItem, n: int) -> str:
    """One "see also" item: the passage's heading path (or its source) and its citation
    (``not_answered`` separates the items with semicolons and ends the list)."""
    where = str(ctx.get("title") or ctx.get("source") or "passage")
    return f"{where} [{n}]"
