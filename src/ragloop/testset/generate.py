"""Build a test set: quotas per kind, balanced passages, styles, deduplication, a seed."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from ragloop.errors import ConfigError
from ragloop.testset import offline, related
from ragloop.testset.checks import is_template, quotes
from ragloop.testset.llm import LLMWriter
from ragloop.testset.offline import (
    ABSTRACT,
    KINDS,
    MULTI,
    PARAPHRASED,
    SPECIFIC,
    UNANSWERABLE,
    Draft,
)
from ragloop.testset.passages import Passage, balanced_order, load_passages
from ragloop.testset.personas import Persona, by_persona
from ragloop.testset.styles import MISSPELLED, PERFECT, WEB, apply_style, query_length
from ragloop.testset.unanswerable import NearMisses, unanswerable

#: the default share of each kind (largest remainders decide the rounding). People rarely name
#: the thing they ask about: of the 322 hand-written questions of the four bench corpora
#: (bench/data/*_natural.jsonl) 13% name anything identifier-like, so specific and
#: paraphrased questions come in that proportion (``python bench/testset_ranking.py --fit-mix``
#: refits it); the multi-passage and abstract shares are RAGAS's kinds kept at a fixed share
#: (those sets have one gold page a question and cannot measure them).
DEFAULT_MIX = {SPECIFIC: 0.09, PARAPHRASED: 0.56, MULTI: 0.1, ABSTRACT: 0.05, UNANSWERABLE: 0.2}
#: style cycle per kind: specific questions come in all three styles
STYLE_CYCLE = {
    SPECIFIC: (PERFECT, PERFECT, WEB, PERFECT, MISSPELLED),
    PARAPHRASED: (PERFECT, PERFECT, MISSPELLED),
    MULTI: (PERFECT, PERFECT, MISSPELLED),
    ABSTRACT: (PERFECT,),
    UNANSWERABLE: (PERFECT,),
}
#: questions at least this similar (rapidfuzz ratio, 0-100) count as one
DUPLICATE_AT = 90.0
#: kinds that make up another kind's shortfall, and how many more passes they get
TOP_UP = (SPECIFIC, PARAPHRASED)
TOP_UP_ROUNDS = 3
Progress = Callable[[int, int], None]


@dataclass
class Testset:
    """Generated rows (RAGAS SingleTurnSample columns) and what happened on the way."""

    rows: list[dict[str, Any]]
    corpus: Path
    requested: int
    seed: int
    kinds: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0


def quotas(size: int, mix: dict[str, float]) -> dict[str, int]:
    """How many questions of each kind: shares of ``size``, rounded by largest remainder."""
    unknown = set(mix) - set(KINDS)
    if unknown or not mix or any(v < 0 for v in mix.values()) or sum(mix.values()) <= 0:
        raise ConfigError(f"mix must give non-negative shares of {', '.join(KINDS)}")
    total = sum(mix.values())
    raw = {k: size * v / total for k, v in mix.items()}
    out = {k: int(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: raw[k] - out[k], reverse=True)[: size - sum(out.values())]:
        out[k] += 1
    return out


def _is_duplicate(question: str, seen: list[str]) -> bool:
    found = process.extractOne(question.lower(), seen, scorer=fuzz.ratio, score_cutoff=DUPLICATE_AT)
    return found is not None


def _draft(
    kind: str, p: Passage, near: related.Related, misses: NearMisses, rng: random.Random
) -> Draft | None:
    """One offline draft of ``kind`` from passage ``p`` (None when it gives none)."""
    if kind == SPECIFIC:
        return offline.specific(p, rng)
    if kind == PARAPHRASED:
        return offline.paraphrased(p, rng)
    if kind == MULTI:
        return related.multi(p, near, rng)
    if kind == ABSTRACT:
        return related.abstract(p, near, rng)
    return unanswerable(p, misses, rng)


def _refused(draft: Draft, by_id: dict[str, Passage]) -> str | None:
    """Why a draft's question may not be written (a template, or it quotes its passage)."""
    if is_template(draft.question):
        return "template question form"
    shown = draft.passages or tuple(
        by_id[i] for i in draft.extra.get("neighbour_context_ids", []) if i in by_id
    )
    if quotes(draft.question, [p.text for p in shown]):
        return "question quotes its passage (over 30% of its word 4-grams)"
    return None


def _row(draft: Draft, question: str, style: str, persona: Persona | None) -> dict[str, Any]:
    return {
        "user_input": question,
        "reference": draft.reference,
        "reference_contexts": [p.text for p in draft.passages],
        "reference_context_ids": [p.id for p in draft.passages],
        "reference_doc_ids": sorted({p.source for p in draft.passages}),
        "synthesizer_name": draft.synthesizer,
        "kind": KINDS[draft.synthesizer],
        "query_style": style,
        "query_length": query_length(question),
        "subject": draft.subject,
        **({"persona_name": persona.name} if persona else {}),
        **draft.extra,
    }


def corpus_vocabulary(passages: list[Passage]) -> str:
    """Every passage's text, lower-cased, with whitespace collapsed (for absent-term checks)."""
    return " ".join(" ".join(p.text.lower().split()) for p in passages)


def generate(
    corpus_or_index: str | Path,
    size: int,
    *,
    seed: int = 0,
    llm: Any = None,
    mix: dict[str, float] | None = None,
    progress: Progress | None = None,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    personas: list[Persona] | None = None,
) -> Testset:
    """A test set of ``size`` questions from a corpus folder (or the corpus of an index).

    Offline (``llm`` None) the questions come from the parsed structure (see
    ``ragloop.testset.offline``). With a chat model (or an ``openai:<model>`` spec) each
    question is written by one structured call, and its reference is kept only when the
    faithfulness judge finds it supported by its passages. ``personas`` (RAGAS's name and
    role description) choose the passages each asks about, and with an LLM the way the
    question is put. The same seed and corpus give the same rows.
    """
    if not isinstance(size, int) or size < 1:
        raise ConfigError(f"--size must be a whole number >= 1 (got {size!r})")
    passages, corpus = load_passages(corpus_or_index, chunk_size, chunk_overlap)
    writer = None
    if llm is not None:
        writer = LLMWriter.of(llm, passages)
    out = Testset([], corpus, size, seed)
    vocab = corpus_vocabulary(passages)
    near = related.Related(passages, offline.word_counts(passages))
    misses = NearMisses.of(vocab, (p.subject for p in passages))
    by_id = {p.id: p for p in passages}
    seen: list[str] = []

    def fill(kind: str, quota: int, rng: random.Random) -> int:
        """Up to ``quota`` rows of ``kind``, one pass over the passages; how many were made."""
        styles, made = STYLE_CYCLE[kind], 0
        order = balanced_order(list(passages), rng)
        for passage, persona in by_persona(order, personas or [], near.idf):
            if made >= quota:
                break
            draft = _draft(kind, passage, near, misses, rng)
            if draft is not None and writer is not None:
                draft = writer.rewrite(draft, vocab, out.dropped, persona)
            if draft is None:
                continue
            refused = _refused(draft, by_id)
            if refused:
                out.dropped[refused] += 1
                continue
            style = styles[made % len(styles)]
            question = apply_style(draft.question, style, rng)
            if question == draft.question:  # the style found nothing to change
                style = PERFECT
            if _is_duplicate(question, seen):
                out.dropped["near-duplicate question"] += 1
                continue
            seen.append(question.lower())
            out.rows.append(_row(draft, question, style, persona))
            made += 1
            if progress is not None:
                progress(len(out.rows), size)
        out.kinds[KINDS[kind]] += made
        return made

    for kind, quota in quotas(size, mix or DEFAULT_MIX).items():
        made = fill(kind, quota, random.Random(f"{seed}:{kind}"))
        if made < quota:
            out.notes.append(_shortfall(kind, made, quota, writer is not None))
    for again in range(1, TOP_UP_ROUNDS + 1):  # a kind's shortfall: more passes of the others
        for kind in (k for k in TOP_UP if (mix or DEFAULT_MIX).get(k)):
            if len(out.rows) < size:
                made = fill(kind, size - len(out.rows), random.Random(f"{seed}:{kind}:{again}"))
                if made:
                    out.notes.append(f"{KINDS[kind]}: {made} more to make up the shortfall")
    for n, row in enumerate(out.rows):
        row["id"] = f"ts-{n + 1:04d}"
    if writer is not None:
        out.llm_calls = writer.judge.calls
    return out


def _shortfall(kind: str, made: int, quota: int, with_llm: bool) -> str:
    name = KINDS[kind]
    if made == 0 and kind == UNANSWERABLE and not with_llm:
        return (
            f"{name}: skipped (0 of {quota}): the corpus names no version, platform or "
            "counterpart-named thing to build a near miss from"
        )
    if made == 0 and kind == PARAPHRASED:
        return f"{name}: skipped (0 of {quota}): no section heading could be withheld from its text"
    return f"{name}: {made} of {quota} (the corpus gave no more distinct questions of this kind)"
