"""One question's judge, answer and score embed each text once; stored vectors are reused."""

from __future__ import annotations

import asyncio

from ragloop.nodes.memo import MemoEmbeddings, index_vectors
from ragloop.retrievers.dense import embedding_text
from tests.fakes.embeddings import HashEmbeddings


class Counting(HashEmbeddings):
    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts):
        self.texts += list(texts)
        return super().embed_documents(texts)


def test_each_text_is_embedded_once():
    inner = Counting()
    memo = MemoEmbeddings(inner)
    first = memo.embed_documents(["a b", "c d", "a b"])
    again = asyncio.run(memo.aembed_documents(["c d", "a b"]))
    assert inner.texts == ["a b", "c d"] and again == [first[1], first[0]]
    memo.clear()
    memo.embed_documents(["a b"])
    assert inner.texts == ["a b", "c d", "a b"]


def test_memo_is_bounded():
    memo = MemoEmbeddings(Counting(), size=2)
    memo.embed_documents(["x", "y", "z"])
    assert len(memo._docs) == 2


def test_chunk_vectors_come_from_the_index(fixture_index):
    inner = Counting()
    memo = MemoEmbeddings(inner, index_vectors(fixture_index))
    chunk = fixture_index.chunks[3]
    got = memo.embed_documents([embedding_text(chunk), "not in the index"])
    assert inner.texts == ["not in the index"]  # the chunk's vector was read back
    stored = fixture_index.faiss.index.reconstruct(
        {v: k for k, v in fixture_index.faiss.index_to_docstore_id.items()}[str(chunk.id)]
    )
    assert got[0] == [float(x) for x in stored]


def test_scoring_an_extractive_answer_embeds_no_new_text():
    # before: the score node split "sentence. [1] sentence. [2]" into "[1] sentence." and
    # the like, texts the answer step never embedded, so every run embedded them again
    from ragloop.config import Context
    from ragloop.nodes.base import Deps
    from ragloop.nodes.offline import OfflineStrategies
    from ragloop.pipeline import Pipeline
    from tests.fakes.retrieval import ListRetriever

    inner = Counting()
    strategies = OfflineStrategies(inner)
    deps = Deps(strategies=strategies, retrievers={"dense": ListRetriever("dense", n=3)})
    pipe = Pipeline(deps, Context(retrievers=("dense",), retrieval="always", max_iterations=0))
    result = asyncio.run(pipe.arun("Which dense text explains the widget count?"))
    assert "[1]" in result.answer or "[2]" in result.answer
    quoted = [t for t in inner.texts if "[" in t]
    assert quoted == []  # no text with a citation marker was embedded
    answer_sentences = [t for t in inner.texts if t.startswith("dense text")]
    assert len(answer_sentences) == len(set(answer_sentences))  # each embedded once
