import asyncio
import json

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from ragloop.errors import ConfigError, IndexError_, UnknownNameError
from ragloop.retrievers.hybrid import rrf_fuse
from ragloop.retrievers.index import build_index, load_index, open_index
from ragloop.retrievers.registry import get_retriever, retriever_names
from tests.conftest import CORPUS, FIXTURES


def _doc(i: str) -> Document:
    return Document(id=i, page_content=f"text {i}", metadata={"id": i})


def test_rrf_arithmetic_on_hand_made_rankings():
    fused = rrf_fuse([[_doc("a"), _doc("b"), _doc("c")], [_doc("c"), _doc("a")]])
    scores = {d.id: s for d, s in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert [d.id for d, _ in fused] == ["a", "c", "b"]  # duplicates merged by id


def test_rrf_weights():
    fused = rrf_fuse([[_doc("a")], [_doc("b")]], weights=[1.0, 2.0])
    assert [d.id for d, _ in fused] == ["b", "a"]
    assert fused[0][1] == pytest.approx(2 / 61)
    with pytest.raises(ValueError):
        rrf_fuse([[_doc("a")]], weights=[1.0, 2.0])


def test_registry_lists_known_names(fixture_index):
    assert retriever_names() == ["dense", "hybrid", "sparse"]
    with pytest.raises(UnknownNameError, match="known retrievers: dense, hybrid, sparse"):
        get_retriever("colbert", fixture_index)


def _qa():
    return [json.loads(line) for line in (FIXTURES / "qa.jsonl").read_text().splitlines() if line]


@pytest.mark.parametrize("name", ["dense", "sparse", "hybrid"])
def test_each_retriever_finds_answers_on_fixture_corpus(fixture_index, name):
    retriever = get_retriever(name, fixture_index, k=3)
    assert isinstance(retriever, BaseRetriever)
    rows = _qa()
    hits = 0
    for row in rows:
        docs = retriever.invoke(row["user_input"])
        assert len(docs) <= 3 and (
            docs or name == "sparse"
        )  # BM25 finds nothing without shared words
        assert all(d.metadata["retriever"] == name and "score" in d.metadata for d in docs)
        scores = [d.metadata["score"] for d in docs]
        assert scores == sorted(scores, reverse=True)
        hits += any(d.metadata["source"] in row["reference_doc_ids"] for d in docs)
    assert hits / len(rows) >= 0.6


def test_sparse_wins_on_exact_identifiers(fixture_index):
    rows = [r for r in _qa() if r["style"] == "lexical"]
    sparse = get_retriever("sparse", fixture_index, k=1)
    top = [sparse.invoke(r["user_input"])[0].metadata["source"] for r in rows]
    assert sum(t in r["reference_doc_ids"] for t, r in zip(top, rows, strict=True)) >= len(rows) - 1


def test_async_path_matches_sync(fixture_index):
    retriever = get_retriever("hybrid", fixture_index, k=4)
    sync = [d.id for d in retriever.invoke("late fees for books")]
    async_ = [d.id for d in asyncio.run(retriever.ainvoke("late fees for books"))]
    assert sync == async_


def test_empty_question_is_an_error(fixture_index):
    with pytest.raises(ConfigError, match="empty"):
        get_retriever("dense", fixture_index).invoke("  ")


def test_index_round_trip(fixture_index, wordllama, tmp_path):
    folder = tmp_path / "idx"
    build_index(CORPUS, wordllama, "wordllama", folder, chunk_size=400, chunk_overlap=50)
    loaded = load_index(folder, wordllama, "wordllama", corpus_dir=CORPUS)
    assert [c.id for c in loaded.chunks] == [c.id for c in fixture_index.chunks]
    manifest = loaded.manifest
    assert manifest["chunks"] == len(loaded.chunks) and manifest["embeddings"] == "wordllama"
    q = "how much is a replacement card"
    a = [d.id for d in get_retriever("hybrid", loaded, k=3).invoke(q)]
    b = [d.id for d in get_retriever("hybrid", fixture_index, k=3).invoke(q)]
    assert a == b


def test_stale_index_is_refused_or_rebuilt(wordllama, hash_embeddings, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nThe pump runs at 40 litres per minute.")
    folder = tmp_path / "idx"
    build_index(corpus, wordllama, "wordllama", folder)
    with pytest.raises(IndexError_, match="built with embeddings 'wordllama'"):
        load_index(folder, hash_embeddings, "hash")
    (corpus / "b.md").write_text("# B\n\nA new document.")
    with pytest.raises(IndexError_, match="corpus changed"):
        load_index(folder, wordllama, "wordllama", corpus_dir=corpus)
    with pytest.raises(IndexError_, match="stale"):
        open_index(corpus, folder, wordllama, "wordllama", rebuild="never")
    rebuilt = open_index(corpus, folder, wordllama, "wordllama")
    assert {c.id for c in rebuilt.chunks} == {"a.md#0", "b.md#0"}
    assert load_index(folder, wordllama, "wordllama", corpus_dir=corpus).manifest["chunks"] == 2


def test_missing_index_says_how_to_build(wordllama, tmp_path):
    with pytest.raises(IndexError_, match="ragloop index"):
        load_index(tmp_path / "none", wordllama, "wordllama")
