"""Questions that need several passages: two related sections, or a theme across a document.

Passages are related when they are close in an idf-weighted word space (the cosine of their
rare words, the lexical stand-in for an embedding neighbour): a section is paired with the
nearest other section of its own document, else of the corpus, and only above
``RELATED_AT``, so a pair is never two unrelated sections picked at random.

- multi-passage (``multi_hop_specific_query_synthesizer``): "What is the difference
  between A and B?", "Should I use A or B to ...?"; the reference joins a sentence of each.
- abstract (``multi_hop_abstract_query_synthesizer``, RAGAS's thematic kind): a theme word
  that runs through two or three passages: "What should I know about locking?"; the
  reference joins the sentence of each that holds it.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

from ragloop.testset import forms
from ragloop.testset.offline import (
    ABSTRACT,
    MULTI,
    Draft,
    best_part,
    is_api,
    lead,
    subject_of,
    with_word,
    words,
)
from ragloop.testset.passages import Passage

#: the least idf-weighted cosine for two passages to count as related
RELATED_AT = 0.12
CANDIDATES = 200
#: frequent words that are no theme
NOT_THEMES = frozenset(
    [
        "cannot",
        "within",
        "without",
        "another",
        "others",
        "should",
        "would",
        "itself",
        "something",
        "anything",
        "following",
        "given",
        "called",
        "whether",
        "further",
        "instead",
        "rather",
        "unless",
        "either",
    ]
)


class Related:
    """Word sets and idf of a corpus's passages, for nearest-section look-ups."""

    def __init__(self, passages: list[Passage], counts: Counter[str]):
        self.passages = passages
        self.counts = counts
        n = max(len(passages), 1)
        self.idf = {w: math.log((n + 1) / (c + 0.5)) for w, c in counts.items()}
        self.bags = {p.id: words(p.text) for p in passages}
        self.norm = {
            pid: math.sqrt(sum(self.idf.get(w, 0.0) ** 2 for w in bag))
            for pid, bag in self.bags.items()
        }

    def similarity(self, a: Passage, b: Passage) -> float:
        shared = self.bags[a.id] & self.bags[b.id]
        den = self.norm[a.id] * self.norm[b.id]
        return sum(self.idf.get(w, 0.0) ** 2 for w in shared) / den if den else 0.0

    def nearest(self, first: Passage, rng: random.Random) -> list[tuple[float, Passage]]:
        """Related passages of other sections, nearest first (own document, then a sample)."""
        same = [p for p in self.passages if p.source == first.source and p.id != first.id]
        others = [p for p in self.passages if p.source != first.source]
        pool = same + rng.sample(others, min(len(others), CANDIDATES))
        scored = [
            (self.similarity(first, p), p)
            for p in pool
            if (p.source, p.section) != (first.source, first.section)
        ]
        return sorted((s for s in scored if s[0] >= RELATED_AT), key=lambda s: -s[0])


def multi(first: Passage, related: Related, rng: random.Random) -> Draft | None:
    """Two related sections that name different subjects, asked about together."""
    a = best_part(first, rng, named=True)
    name_a = subject_of(a, first) if a else ""
    if a is None or not name_a:
        return None
    for score, other in related.nearest(first, rng)[:8]:
        b = best_part(other, rng, named=True)
        name_b = subject_of(b, other) if b else ""
        if (
            b is None
            or not name_b
            or name_a.lower() in name_b.lower() + " "
            or (name_b.lower() in name_a.lower())
        ):
            continue
        it = next((i for s in a.sentences[:3] if (i := forms.intent(s, name_a))), None)
        choices = [
            "What is the difference between {a} and {b}?",
            "Can I use {a} together with {b}?",
        ]
        if forms.is_topic(name_a) and forms.is_topic(name_b):
            name_a, name_b = name_a.lower(), name_b.lower()
            verb = "do" if name_a.endswith("s") and not name_a.endswith("ss") else "does"
            choices = [f"How {verb} {{a}} affect {{b}}?", "What should I know about {a} and {b}?"]
        elif it is not None and is_api(name_a) == is_api(name_b):
            choices.append(f"Should I use {{a}} or {{b}} to {it.verb} {it.obj}?")
        question = rng.choice(choices).format(a=name_a, b=name_b)
        reference = f"{name_a}: {lead(a, 1)} {name_b}: {lead(b, 1)}"
        hop = "document" if other.source == first.source else "corpus"
        extra = {"hop": hop, "relatedness": round(score, 3)}
        return Draft(MULTI, question, reference, (first, other), name_a, extra)
    return None


def _theme(first: Passage, related: Related, rng: random.Random) -> tuple[str, list[Passage]]:
    """A word of ``first``'s heading that two or three related passages also use, and those."""
    near = [p for _, p in related.nearest(first, rng)[:12]]
    total = len(related.passages)
    heading = sorted(words(first.subject))
    rest = sorted(w for w in related.bags[first.id] - set(heading) if not w.endswith(("ed", "ing")))
    candidates = [
        w
        for w in heading + rest
        if len(w) > 4
        and w.isalpha()
        and w not in NOT_THEMES
        and 2 <= related.counts[w] <= max(3, total // 5)
        and re.search(rf"(?<![\w.]){w}\b", first.text)  # used in lower case: not a name
    ]
    first_choice = [w for w in candidates if w in heading]  # the heading's words before the rest
    others = [w for w in candidates if w not in heading]
    rng.shuffle(first_choice)
    rng.shuffle(others)
    for word in first_choice + others:
        holders = [p for p in near if word in related.bags[p.id]][:2]
        if holders and with_word(first, word) and all(with_word(p, word) for p in holders):
            return word, [first, *holders]
    return "", []


def abstract(first: Passage, related: Related, rng: random.Random) -> Draft | None:
    """A theme that runs through related passages, asked about as a whole."""
    word, passages = _theme(first, related, rng)
    if not word:
        return None
    forms_ = [
        "What should I know about {w}?",
        "How is {w} handled, and what are my options?",
        "What do I need to keep in mind regarding {w}?",
        "What are the main things to understand about {w} here?",
    ]
    question = rng.choice(forms_).format(w=word)
    reference = " ".join(with_word(p, word) for p in passages)
    return Draft(ABSTRACT, question, reference, tuple(passages), word, {"theme": word})
