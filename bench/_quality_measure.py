"""What bench/answer_quality.py measures for one question, and how it summarises the rows.

For an answerable question (a hit = a chunk, or the answer's text, holds the gold passage):
each single retriever's top k and their oracle; the loop's kept contexts (all, and the first
k), the contexts it cites, whether its answer text holds the gold passage and whether it said
"not found"; the same for naive hybrid RAG (hybrid top k, then the same answer step). For an
unanswerable question: whether each said "not found". For every answer: whether a quoted
sentence is boilerplate (found on >= 20% of the corpus's pages, or of its top-level sections
when it is one page), an index/TOC line (dot leaders), or a bare code block without prose.
The loop and naive hybrid are each timed from cold memos (``cold``) for the latency ratios.
Intervals are percentile bootstraps over questions (pooled: resampled within each corpus).
"""

from __future__ import annotations

import random
import re
import time
from collections import defaultdict
from typing import Any

from _pgdocs import passage_hit

from ragloop.documents.chunking import SEPARATOR
from ragloop.nodes.answer import answer_step
from ragloop.nodes.base import search, to_item
from ragloop.nodes.evidence import lexical, stems_of
from ragloop.pipeline import Pipeline
from ragloop.text import split_sentences

try:  # every lexical memo at once (older checkouts clear theirs one by one)
    from ragloop.nodes.evidence import forget
except ImportError:  # measuring an older checkout
    forget = None

try:  # the labelled sentence rows need the sentence features (absent in older checkouts)
    from ragloop.nodes.sentences import flawed
except ImportError:  # measuring an older checkout
    flawed = None

SINGLES = ("dense", "sparse", "hybrid")
_QUOTED = re.compile(r"(.+?) \[(\d+)\](?= |$)", re.DOTALL)
#: a citation the answer added: "[n]" at the end or before the next sentence, not a document's
#: own footnote mark inside a sentence ("... JavaScript [1] ).")
_CITED = re.compile(r"(.+?) \[(\d+)\](?= (?![)\].,;:])|$)", re.DOTALL)
_FENCED = re.compile(r"```.*?```", re.DOTALL)
_LEADERS = re.compile(r"(?:\.\s?){5,}|(?:…\s?){3,}|(?:\. ){3,}\s*\d")
_PROSE_WORD = re.compile(r"(?<![\w.\-/$])[a-z]+(?![\w\-(/]|\.\w)")
_SYMBOL = re.compile(r"[^\w\s.,;:'\u2014\u2013-]")
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "is",
        "are",
        "be",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "if",
        "when",
        "that",
        "this",
        "it",
        "as",
        "on",
        "at",
        "not",
        "no",
        "its",
        "their",
        "which",
        "into",
        "than",
    ]
)


def quoted(answer: str) -> list[str]:
    """The sentences an extractive answer quotes (code it attached after "...:" left out)."""
    text = _FENCED.sub(lambda m: "" if m.start() > 0 else m.group(0), answer)
    return [m.group(1).strip() for m in _CITED.finditer(text)]


def is_toc(sentence: str) -> bool:
    """Dot leaders, or a block that is an index or a table: of its two or more lines, more
    than half are cells split by " | " or a lone word (an index's letter), or a row of single
    characters (an index's "Jump to: A B C ...")."""
    if _LEADERS.search(sentence):
        return True
    rows = [r.strip() for r in sentence.split("\n") if r.strip()]
    cells = [r for r in rows if " | " in r or r.startswith("|") or " " not in r]
    letters = re.findall(r"(?<!\S)\S(?!\S)", sentence)
    return (len(rows) > 1 and 2 * len(cells) > len(rows)) or (
        len(letters) >= 8 and 2 * len(letters) >= len(sentence.split())
    )


def is_bare_code(sentence: str) -> bool:
    """A code block, or a line that is not prose: fewer than three plain lower-case words or
    none of them a function word (a signature); an entry line's description counts."""
    if sentence.lstrip().startswith("```"):
        return True
    body = re.split(r"\s[\u2014\u2013]\s", sentence, maxsplit=1)[-1]
    if len(_SYMBOL.findall(body)) > 0.2 * len(body.replace(" ", "")):
        return True  # an example or a signature: '{"a": [0,1,2]}' -> ...
    words = _PROSE_WORD.findall(body)
    titled = re.findall(r"(?<![\w.\-/$])[A-Za-z][a-z]*(?![\w\-(/]|\.\w)", body)
    return len(words) < 3 or not any(w.lower() in _FUNCTION_WORDS for w in titled)


def squash(text: str) -> str:
    return re.sub(r"\W+", "", text).casefold()


def boilerplate_sentences(pipe: Pipeline, share: float = 0.2) -> set[str]:
    """Squashed sentences found on at least ``share`` of the pages (or top-level sections)."""
    chunks = pipe.deps.retrievers.index.chunks
    sources = {c.metadata.get("source", "") for c in chunks}

    def unit(c: Any) -> str:
        if len(sources) >= 20:
            return str(c.metadata.get("source", ""))
        return str(c.metadata.get("title", "")).split(SEPARATOR)[0].strip()

    where: dict[str, set[str]] = defaultdict(set)
    units = set()
    for c in chunks:
        u = unit(c)
        units.add(u)
        for s in split_sentences(c.page_content):
            if len(s.split()) >= 3:
                where[squash(s)].add(u)
    need = max(2, share * len(units))
    return {s for s, us in where.items() if len(us) >= need}


def flaws(answer: str, boiler: set[str]) -> dict[str, bool]:
    sents = quoted(answer)
    return {
        "boilerplate": any(squash(s) in boiler for s in sents),
        "toc": any(is_toc(s) for s in sents),
        "code": any(is_bare_code(s) for s in sents),
    }


def _hit(items: list[dict[str, Any]], q: Any) -> bool:
    return any(passage_hit(c["text"], q, c.get("source")) for c in items)


def holds_gold(answer: str, q: Any) -> bool:
    return passage_hit(_QUOTED.sub(r"\1", answer), q)


def cold(pipe: Pipeline) -> None:
    """Forget every remembered vector and lexical reading, so a timing starts cold."""
    emb = getattr(pipe.deps.strategies, "embeddings", None)
    if hasattr(emb, "clear"):
        emb.clear()
    if forget is not None:
        forget()
    else:  # an older checkout: these were its only lexical memos
        lexical.cache_clear()
        stems_of.cache_clear()


async def naive(pipe: Pipeline, question: str) -> tuple[str, bool, list[Any], float]:
    """Naive hybrid RAG with the loop's answer step, timed from cold: (answer, said not found,
    its contexts, milliseconds)."""
    cold(pipe)
    started = time.perf_counter()
    docs = await search(pipe.deps.retrievers["hybrid"], question, pipe.context.k)
    items = [{**to_item(d), "grade": 1} for d in docs]
    text, _, not_found = await answer_step(pipe.deps.answerer, question, items, pipe.context)
    return text, not_found, items, (time.perf_counter() - started) * 1000


async def loop(pipe: Pipeline, question: str) -> tuple[Any, float]:
    """The loop's result, timed from cold, and its milliseconds."""
    cold(pipe)
    started = time.perf_counter()
    r = await pipe.arun(question)
    return r, (time.perf_counter() - started) * 1000


def _labelled(sentence: str, source: str, q: Any) -> bool:
    """The sentence holds a gold snippet, or is part of one (a snippet spanning two)."""
    if q is None:
        return False
    if passage_hit(sentence, q, source):
        return True
    key = squash(sentence)
    return (
        len(key) >= 30
        and any(key in squash(s) for s in q.gold_snippets)
        and passage_hit(q.gold_snippets[0], q, source)
    )


#: how deep the labelled rows go into the loop's ranked contexts (the answer reads fewer)
ROW_DEPTH = 12
#: the labelled rows' columns after corpus, qid, kind, unanswerable (then ``FEATURES``, then
#: ``QUESTION_COLUMNS``)
ROW_COLUMNS = ("who", "rank", "grade", "label", "flawed")
#: what the rows record of the question itself (the same on each of its rows)
QUESTION_COLUMNS = ("unknown_names",)


async def sentence_rows(
    pipe: Pipeline, question: str, contexts: list[Any], q: Any, who: str = "loop"
) -> list[list]:
    """Labelled feature rows of the sentences of the first ``ROW_DEPTH`` contexts
    (calibration data): ``ROW_COLUMNS``, the features, then ``QUESTION_COLUMNS``. ``who`` is
    "loop" (its ranked
    kept contexts) or "naive" (hybrid's top k); ``rank`` is the context's place, from 1."""
    st = pipe.deps.strategies
    if flawed is None or not hasattr(st, "sentence_table") or not contexts:
        return []
    read = contexts[:ROW_DEPTH]
    quotes, x = await st.sentence_table(question, read)
    unknown = round(float(st.unknown_names(question)), 4) if hasattr(st, "unknown_names") else 0.0
    return [
        [who, qt.n, int(read[qt.n - 1].get("grade", 1)),
         int(_labelled(qt.sentence, read[qt.n - 1].get("source", ""), q)),
         int(flawed(qt, st.boilerplate)), *(round(float(v), 4) for v in row), unknown]
        for qt, row in zip(quotes, x, strict=True)
    ]  # fmt: skip


async def answerable(pipe: Pipeline, q: Any, boiler: set[str]) -> dict[str, Any]:
    k = pipe.context.k
    row: dict[str, Any] = {"kind": q.kind, "unanswerable": False}
    for name in SINGLES:
        docs = await search(pipe.deps.retrievers[name], q.question, k)
        row[name] = _hit([to_item(d) for d in docs], q)
    row["oracle"] = any(row[s] for s in SINGLES)
    r, row["loop_ms"] = await loop(pipe, q.question)
    by_id = {c["id"]: c for c in r.contexts}
    cited = [by_id[c["id"]] for c in r.citations if c["id"] in by_id]
    row.update(
        kept=_hit(r.contexts, q),
        kept5=_hit(r.contexts[:k], q),
        cited=_hit(cited, q),
        loop_gold=holds_gold(r.answer, q),
        loop_nf=bool(getattr(r, "not_found", False)),
        stop=r.stop_reason,
        **{f"loop_{f}": v for f, v in flaws(r.answer, boiler).items()},
    )
    text, nf, items, row["naive_ms"] = await naive(pipe, q.question)
    row.update(naive_gold=holds_gold(text, q), naive_nf=nf, naive_answer=text)
    row.update({f"naive_{f}": v for f, v in flaws(text, boiler).items()})
    row["answer"] = r.answer
    row["sentences"] = [
        *await sentence_rows(pipe, q.question, r.contexts, q),
        *await sentence_rows(pipe, q.question, items, q, "naive"),
    ]
    return row


async def unanswerable(pipe: Pipeline, question: str, boiler: set[str]) -> dict[str, Any]:
    r, loop_ms = await loop(pipe, question)
    text, nf, items, naive_ms = await naive(pipe, question)
    return {
        "loop_ms": loop_ms,
        "naive_ms": naive_ms,
        "naive_answer": text,
        "kind": "unanswerable",
        "unanswerable": True,
        "loop_nf": bool(getattr(r, "not_found", False)),
        "naive_nf": nf,
        "stop": r.stop_reason,
        "answer": r.answer,
        **{f"loop_{f}": v for f, v in flaws(r.answer, boiler).items()},
        "sentences": [
            *await sentence_rows(pipe, question, r.contexts, None),
            *await sentence_rows(pipe, question, items, None, "naive"),
        ],
    }


def bootstrap(groups: list[list[float]], n: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the pooled mean, resampling within each group."""
    rng = random.Random(seed)
    total = sum(len(g) for g in groups)
    if not total:
        return float("nan"), float("nan")
    means = []
    for _ in range(n):
        s = 0.0
        for g in groups:
            if g:
                s += sum(g[rng.randrange(len(g))] for _ in range(len(g)))
        means.append(s / total)
    means.sort()
    return means[int(0.025 * n)], means[int(0.975 * n) - 1]
