"""Sparse retrieval: BM25 through bm25s, with tokens that keep identifiers like KX-217 whole."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from pydantic import ConfigDict

from ragloop.documents.chunking import SEPARATOR
from ragloop.retrievers.base import ScoredRetriever
from ragloop.text import tokenize

with warnings.catch_warnings():
    # bm25s imports tqdm.auto, which in a Jupyter kernel without ipywidgets warns "IProgress
    # not found" at import; ragloop shows no bm25s bars, so the warning is noise
    warnings.filterwarnings("ignore", message="IProgress not found")
    import bm25s

# bm25s sets its own logger to DEBUG when imported, so once anything configures logging
# (a notebook, a server, Python's last-resort handler) "DEBUG:bm25s:Building index from
# tokens" is printed on every index build; its warnings still pass
logging.getLogger("bm25s").setLevel(logging.WARNING)


def bm25_tokens(text: str) -> list[str]:
    """Content words plus the parts of hyphenated/dotted identifiers, so both forms match."""
    out: list[str] = []
    for tok in tokenize(text, drop_stopwords=True):
        out.append(tok)
        if any(c in tok for c in "-./"):
            out += [p for p in tok.replace("/", "-").replace(".", "-").split("-") if p]
    return out


def build_bm25(chunks: list[Document]) -> bm25s.BM25:
    """Index chunk texts with BM25 (Lucene variant, bm25s defaults)."""
    model = bm25s.BM25()
    model.index([bm25_tokens(c.page_content) or ["\x00empty"] for c in chunks], show_progress=False)
    return model


def chunk_counts(model: bm25s.BM25) -> tuple[dict[str, int], int]:
    """(token -> number of chunks holding it, number of chunks) of a bm25s index.

    bm25s keeps its scores as a token-major sparse matrix, so a token's chunk count is the
    length of its column.
    """
    scores = model.scores
    counts = np.diff(np.asarray(scores["indptr"]))
    out = {t: int(counts[i]) for t, i in model.vocab_dict.items() if 0 <= i < len(counts)}
    return out, int(scores["num_docs"])


def page_titles(chunks: list[Document]) -> set[str]:
    """The top heading of every chunk's heading path: the titles of the corpus's pages."""
    return {str(c.metadata.get("title") or "").split(SEPARATOR)[0].strip() for c in chunks}


def save_bm25(model: bm25s.BM25, chunks: list[Document], folder: Path) -> None:
    """Write the bm25s index and the chunks it ranks (JSON Lines) under ``folder``."""
    model.save(str(folder), show_progress=False)
    with (folder / "chunks.jsonl").open("w", encoding="utf-8") as fh:
        for c in chunks:
            fh.write(json.dumps({"text": c.page_content, "metadata": c.metadata}) + "\n")


def load_bm25(folder: Path) -> tuple[bm25s.BM25, list[Document]]:
    """Read what ``save_bm25`` wrote."""
    model = bm25s.BM25.load(str(folder), show_progress=False)
    chunks = []
    with (folder / "chunks.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            meta = rec["metadata"]
            chunks.append(Document(id=meta["id"], page_content=rec["text"], metadata=meta))
    return model, chunks


class SparseRetriever(ScoredRetriever):
    """BM25 keyword retrieval; the better choice when exact identifiers matter."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model: Any
    chunks: list[Document]
    name: str = "sparse"

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        k = min(k or self.k, len(self.chunks))
        tokens = bm25_tokens(query)
        if not tokens or k == 0:
            return []
        # rank only the chunks that share a term with the query: bm25s' own top-k runs
        # argpartition over every score, which is slow when most scores tie at zero
        scores = np.asarray(self.model.get_scores(tokens))
        hits = np.flatnonzero(scores > 0)
        if hits.size > k:
            hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
        order = hits[np.argsort(-scores[hits], kind="stable")]
        return [(self.chunks[int(i)], float(scores[i])) for i in order]
