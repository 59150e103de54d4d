"""What the answer reads: the kept contexts in reading order, made up to k.

The answer node reads the best ``k`` of these; the judge asks the answerer how well those
same passages would answer (``Answerer.support``) to decide whether to stop.
"""

from __future__ import annotations

from ragloop.documents.boilerplate import quotable
from ragloop.nodes.extractive import defines_subject
from ragloop.state import ContextItem

#: what a chunk that says what its section's subject does adds to its evidence in the reading
#: order, when the question names nothing (see ``rank_contexts``)
SUBJECT_BONUS = 0.2


def rank_contexts(contexts: list[ContextItem], nameless: bool = False) -> list[ContextItem]:
    """Kept contexts best first on one scale: the judge's grade, then its evidence.

    Retriever scores (BM25 5-8, cosine ~0.4, RRF ~0.03) are never compared; without
    evidence (an LLM judge) equal grades keep the order in which they were found.

    When the question names nothing (``nameless``), a chunk with a sentence that says what
    its section's subject does ("REINDEX rebuilds an index ...", ``extractive.defines_subject``)
    adds ``SUBJECT_BONUS`` to its evidence: the answer reads the best k, and the judge
    scores such a chunk by the question's words, which the subject's own line seldom
    repeats. The bonus orders reading only: inside the judge's evidence it would stop the
    loop on pages that merely define something (CHANGELOG.md has the measurements).
    """

    def evidence(c: ContextItem) -> float:
        found = c.get("evidence", 0.0)
        if nameless and "evidence" in c:
            found += SUBJECT_BONUS * defines_subject(c)
        return found

    return sorted(contexts, key=lambda c: (-c.get("grade", 0), -evidence(c)))


def fill_to_k(
    kept: list[ContextItem], dropped: list[ContextItem], k: int
) -> tuple[list[ContextItem], int]:
    """Kept contexts, then (when fewer than ``k``) dropped ones in the order they were found.

    A judge that measures evidence is sometimes wrong at the margin; reading what it graded
    low after everything it kept, as naive RAG would, means one false low grade cannot lose
    a passage the first retrieval found. Only chunks that judge graded are used, so an LLM
    judge's "irrelevant" is never read; nothing is added when nothing was kept.
    """
    if not kept or len(kept) >= k:
        return kept, 0
    have = {c["id"] for c in kept}
    extra = [c for c in dropped if c["id"] not in have][: k - len(kept)]
    return [*kept, *extra], len(extra)


def read_first(
    contexts: list[ContextItem], dropped: list[ContextItem], nameless: bool, k: int
) -> list[ContextItem]:
    """The passages the answer would read now: quotable kept contexts in reading order, made
    up to ``k`` with low-graded ones, the first ``k`` (what the answer node reads)."""
    ranked = rank_contexts(quotable(contexts), nameless)
    return fill_to_k(ranked, dropped, k)[0][:k]
