"""What the "not found" decision reads about a question as a whole.

Whether the read passages answer at all is a question-level decision, read from what the
sentence scores and the judge say about the question as a whole (``QUESTION_FEATURES``, each in
[0, 1] or a cosine in [-1, 1]; ``question_features``):

==================  ===========================================================================
best                the best quotable sentence's probability of answering
second              the second best's (one lucky sentence against several that agree)
top_mean            the mean probability of the five best
cosine_max          the highest cosine of a quotable sentence to the question
cosine_mean         the mean cosine of the five closest
evidence_max        the judge's best evidence among the read passages (0 when it gave none)
unknown_names       share of the question's names that no chunk of the corpus holds
                    (``vocabulary.unknown_names``; 0 when it names nothing)
==================  ===========================================================================

The abstention fit (``answer_model.Abstention``) turns them into the probability that the read
passages answer; the sentence features they start from are ``sentences.FEATURES``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: what the abstention model reads about the question as a whole (see the module docstring)
QUESTION_FEATURES = (
    "best",
    "second",
    "top_mean",
    "cosine_max",
    "cosine_mean",
    "evidence_max",
    "unknown_names",
)


def question_features(
    probability: np.ndarray,
    cosine: np.ndarray,
    evidence: Iterable[float],
    unknown_names: float = 0.0,
) -> dict[str, float]:
    """``QUESTION_FEATURES`` from the quotable sentences' probabilities and cosines, the
    read passages' judge evidence (empty or all 0 when no judge measured it) and the share of
    the question's names the corpus never mentions (``vocabulary.unknown_names``)."""
    p = np.sort(np.asarray(probability, dtype=float))[::-1]
    c = np.sort(np.asarray(cosine, dtype=float))[::-1]
    ev = [float(e) for e in evidence]
    return {
        "best": float(p[0]) if len(p) else 0.0,
        "second": float(p[1]) if len(p) > 1 else 0.0,
        "top_mean": float(p[:5].mean()) if len(p) else 0.0,
        "cosine_max": float(c[0]) if len(c) else 0.0,
        "cosine_mean": float(c[:5].mean()) if len(c) else 0.0,
        "evidence_max": max(ev, default=0.0),
        "unknown_names": float(unknown_names),
    }
