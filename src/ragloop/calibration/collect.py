"""Labelled sentence rows from a generated test set: run the loop, read what its answer reads.

For each generated question the offline loop runs as it would for the user; the sentences of
the first ``k`` contexts it kept (what the extractive answer reads) get their
``sentences.FEATURES``, and the label says whether the sentence holds the question's reference
(a sentence the generator read the question from, in a document it named). Unanswerable
questions give unlabelled rows: they choose the "not found" level.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ragloop.calibration.rows import META, SentenceRows
from ragloop.errors import ConfigError
from ragloop.nodes.lines import key
from ragloop.nodes.offline import OfflineStrategies
from ragloop.nodes.sentences import FEATURES, flawed
from ragloop.pipeline import Pipeline
from ragloop.state import ContextItem

#: a sentence and a reference must share at least this much text (letters and digits)
MIN_SHARED = 40


def holds_reference(sentence: str, source: str, reference: str, sources: set[str]) -> bool:
    """The sentence is (part of) the reference, or the reference is part of it, in one of the
    reference's documents. Compared letters-and-digits only, so splitting and markup differences
    between the generator's sentences and the answer's do not matter."""
    if sources and source not in sources:
        return False
    s, ref = key(sentence), key(reference)
    if len(s) < 15 or len(ref) < 15:
        return False
    return (
        s in ref
        or ref in s
        or (len(s) >= MIN_SHARED and s[:MIN_SHARED] in ref)
        or (len(ref) >= MIN_SHARED and ref[:MIN_SHARED] in s)
    )


async def question_rows(
    pipe: Pipeline, question: str, reference: str | None, sources: set[str]
) -> list[dict[str, Any]]:
    """Feature rows (with ``label`` and ``flawed``) of the sentences the answer reads."""
    st = pipe.deps.answerer
    if not isinstance(st, OfflineStrategies):
        raise ConfigError(
            "calibration fits the offline extractive answer: run it with RAGLOOP_ANSWER="
            "extractive (or no LLM)"
        )
    result = await pipe.arun(question)
    read = cast(list[ContextItem], list(result.contexts[: pipe.context.k]))
    if not read:
        return []
    quotes, x = await st.sentence_table(question, read)
    rows = []
    for q, values in zip(quotes, x, strict=True):
        source = str(read[q.n - 1].get("source", ""))
        label = reference is not None and holds_reference(q.sentence, source, reference, sources)
        rows.append(
            {
                "label": int(label),
                "flawed": int(flawed(q, st.boilerplate)),
                **dict(zip(FEATURES, (float(v) for v in values), strict=True)),
            }
        )
    return rows


async def collect_rows(
    pipe: Pipeline,
    questions: list[dict[str, Any]],
    *,
    corpus: str = "self",
    progress: Callable[[int, int], None] | None = None,
) -> SentenceRows:
    """Labelled rows of every generated question (RAGAS columns, ``kind`` as the generator
    names it; unanswerable ones carry no reference)."""
    records: list[dict[str, object]] = []
    for n, row in enumerate(questions, start=1):
        unanswerable = row.get("kind") == "unanswerable"
        question = str(row["user_input"])
        qid = str(row.get("id") or f"q{n}")
        found = await question_rows(
            pipe,
            question,
            None if unanswerable else str(row.get("reference") or ""),
            set(row.get("reference_doc_ids") or []),
        )
        meta = {"corpus": corpus, "qid": qid, "kind": str(row.get("kind", ""))}
        records += [{**meta, "unanswerable": int(unanswerable), **r} for r in found]
        if progress is not None:
            progress(n, len(questions))
    if not records:
        raise ConfigError(
            "calibration: the loop read no sentence for any generated question; is the index empty?"
        )
    assert set(META) <= set(records[0])
    return SentenceRows.from_records(records)
