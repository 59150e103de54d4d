"""The order in which the answer reads the loop's kept contexts (it reads the first k).

``judge_order`` ranks by the judge's grade and evidence; ``rank_contexts`` fuses that rank with
the order the loop found them in, as ``bench/reading_order_fit.py`` fitted
(``reading_order.json``: its weights and provenance).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ragloop.errors import ConfigError
from ragloop.nodes.sentences import defines_subject
from ragloop.state import ContextItem

#: what a chunk that says what its section's subject does adds to its evidence in the reading
#: order, when the question names nothing (see ``rank_contexts``)
SUBJECT_BONUS = 0.2


def judge_order(contexts: list[ContextItem], nameless: bool = False) -> list[ContextItem]:
    """Kept contexts best first on one scale: the judge's grade, then its evidence.

    Retriever scores (BM25 5-8, cosine ~0.4, RRF ~0.03) are never compared; without
    evidence (an LLM judge) equal grades keep the order in which they were found.

    When the question names nothing (``nameless``), a chunk with a sentence that says what
    its section's subject does ("REINDEX rebuilds an index ...", ``sentences.defines_subject``)
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


@dataclass(frozen=True)
class ReadingOrder:
    """How the judge's order and the order found are fused (see ``rank_contexts``);
    ``found_weight`` 0 reads in the judge's order alone."""

    k0: float = 1.0
    found_weight: float = 0.0


#: the fitted reading order (``bench/reading_order_fit.py`` writes it)
READING_ORDER_FILE = "reading_order.json"


@functools.cache
def fitted_reading_order() -> ReadingOrder:
    """The shipped ``READING_ORDER_FILE`` (checked: ``k0`` > 0, ``found_weight`` >= 0);
    the judge's order alone when no file ships."""
    ref = resources.files("ragloop.data").joinpath(READING_ORDER_FILE)
    if not ref.is_file():
        return ReadingOrder()
    try:
        data = json.loads(ref.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{READING_ORDER_FILE}: not JSON ({exc})") from exc
    return checked_reading_order(data)


def checked_reading_order(data: Any) -> ReadingOrder:
    """A ``ReadingOrder`` from a ``READING_ORDER_FILE``'s contents; a bad one is a clear
    error (numbers only: nothing read from the file runs)."""
    values = {}
    for name, low in (("k0", 0.0), ("found_weight", -1e-12)):
        v = data.get(name) if isinstance(data, dict) else None
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ConfigError(f"{READING_ORDER_FILE}: {name} must be a number, got {v!r}")
        if v <= low:
            need = "above 0" if name == "k0" else "0 or more"
            raise ConfigError(f"{READING_ORDER_FILE}: {name} must be {need}, got {v}")
        values[name] = float(v)
    return ReadingOrder(**values)


def rank_contexts(
    contexts: list[ContextItem], nameless: bool = False, reading: ReadingOrder | None = None
) -> list[ContextItem]:
    """The order the answer reads kept contexts in (it reads the first k).

    ``contexts`` come in the order the loop kept them (the first round first, each round in
    its retriever's order). With an evidence-measuring judge, the judge's order
    (``judge_order``) is fused with that one, reciprocal-rank style: a context scores
    ``1 / (k0 + its place by the judge) + found_weight / (k0 + its place found)``, with
    ``reading`` or the fitted ``READING_ORDER_FILE``. Ranked by the judge alone, the later
    rounds' passages could push the first retrieval's out of the first k (with WordLlama on
    the PostgreSQL docs the loop read the gold less often than naive hybrid); the fit is
    ``bench/reading_order_fit.py``'s, kept because it wins on corpora left out. Without
    evidence (an LLM judge) the judge's order stands.
    """
    ranked = judge_order(contexts, nameless)
    reading = fitted_reading_order() if reading is None else reading
    if reading.found_weight <= 0 or not all("evidence" in c for c in contexts):
        return ranked
    place = {id(c): i for i, c in enumerate(ranked)}
    found = {id(c): i for i, c in enumerate(contexts)}

    def score(c: ContextItem) -> float:
        k0 = reading.k0
        return 1.0 / (k0 + place[id(c)]) + reading.found_weight / (k0 + found[id(c)])

    return sorted(contexts, key=lambda c: -score(c))
