"""Unanswerable questions: a neighbouring aspect of a corpus subject that no passage mentions.

The aspect (its licence, its founder, GPU support, a mobile app ...) is one whose key words
occur in no passage of the corpus, checked once per corpus; the reference says the documents
do not answer, and the row keeps those key words as ``absent_terms``.
"""

from __future__ import annotations

import random
import re

from ragloop.testset.offline import SKIP, UNANSWERABLE, Draft, is_generic
from ragloop.testset.passages import Passage

#: neighbouring aspects: (question template, what the reference says is missing, key words)
ASPECTS = (
    ("Who created {x}, and in which year?", "who created {x} or when",
     ("founded", "founder", "invented", "inventor", "creator")),
    ("Under which software licence is {x} distributed?", "under which licence {x} is "
     "distributed", ("licence", "license", "licensed", "licensing")),
    ("Does {x} support GPU acceleration?", "whether {x} supports GPU acceleration",
     ("gpu", "cuda", "graphics card")),
    ("Is there a mobile app for {x}?", "whether there is a mobile app for {x}",
     ("mobile app", "android", "iphone")),
    ("How much does an enterprise subscription for {x} cost?", "what an enterprise "
     "subscription for {x} costs", ("enterprise", "subscription", "pricing")),
    ("What do customer reviews say about {x}?", "what customer reviews say about {x}",
     ("review", "reviews", "rating", "ratings")),
    ("Which awards has {x} won?", "which awards {x} has won", ("award", "awards", "prize")),
    ("How is {x} configured on a Kubernetes cluster?", "how {x} is configured on Kubernetes",
     ("kubernetes", "k8s")),
    ("What carbon footprint does {x} have?", "what carbon footprint {x} has",
     ("carbon", "emissions", "footprint")),
    ("In which year will {x} be retired?", "when {x} will be retired",
     ("retired", "retire", "end-of-life", "sunset")),
)  # fmt: skip


def open_aspects(corpus_words: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """The neighbouring aspects none of whose key words occur anywhere in the corpus."""
    return [
        aspect
        for aspect in ASPECTS
        if not any(re.search(rf"\b{re.escape(k)}\b", corpus_words) for k in aspect[2])
    ]


def unanswerable(
    passage: Passage, aspects: list[tuple[str, str, tuple[str, ...]]], rng: random.Random
) -> Draft | None:
    """A neighbouring aspect of the passage's subject (from ``open_aspects``)."""
    if not aspects:
        return None
    subject = passage.subject
    if not subject or is_generic(subject) or subject.lower() in SKIP:
        subject = passage.doc_title
    if not subject:
        return None
    template, missing, keys = rng.choice(aspects)
    reference = f"The documents do not say {missing.format(x=subject)}."
    extra = {"absent_terms": list(keys), "neighbour_context_ids": [passage.id]}
    return Draft(UNANSWERABLE, template.format(x=subject), reference, (), subject, extra)
