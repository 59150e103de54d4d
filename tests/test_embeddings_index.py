"""Indexes that know their embeddings (model id + dimension) and a vector cache by content."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from ragloop.embeddings import EmbedPlan, VectorCache, embed_texts
from ragloop.errors import IndexError_
from ragloop.retrievers.dense import NormalizedEmbeddings
from ragloop.retrievers.index import build_index, load_index, open_index
from tests.conftest import CORPUS
from tests.fakes.embeddings import HashEmbeddings


class CountingEmbeddings(HashEmbeddings):
    """HashEmbeddings that count how many texts were embedded as documents."""

    def __init__(self, dim: int = 64):
        super().__init__(dim=dim)
        self.embedded = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return super().embed_documents(texts)


def test_manifest_records_model_id_and_dimension(tmp_path, wordllama):
    idx = build_index(CORPUS, wordllama, "wordllama", tmp_path / "idx", chunk_size=400)
    assert idx.manifest["embeddings_model"] == wordllama.model_id
    assert idx.manifest["embeddings_dim"] == 256 == idx.faiss.index.d


def test_index_of_one_model_refuses_another_naming_the_fix(tmp_path, wordllama):
    from ragloop.embeddings import load_local

    folder = tmp_path / "idx"
    build_index(CORPUS, wordllama, "wordllama", folder, chunk_size=400, chunk_overlap=50)
    minilm = load_local("minilm")
    with pytest.raises(IndexError_) as err:
        load_index(folder, minilm, "minilm")
    msg = str(err.value)
    assert wordllama.model_id in msg and minilm.model_id in msg and "256-d" in msg
    assert "RAGLOOP_EMBEDDINGS=wordllama" in msg and "--force" in msg
    # opening for a query never rebuilds silently with the other model
    with pytest.raises(IndexError_, match="--embeddings minilm --force"):
        open_index(CORPUS, folder, minilm, "minilm", chunk_size=400, chunk_overlap=50)
    assert load_index(folder, wordllama, "wordllama").manifest["embeddings"] == "wordllama"


def test_same_name_other_dimension_is_refused(tmp_path):
    folder = tmp_path / "idx"
    build_index(CORPUS, HashEmbeddings(dim=64), "hash", folder, chunk_size=400)
    with pytest.raises(IndexError_, match="64-d vectors, 'hash' makes 32-d"):
        load_index(folder, HashEmbeddings(dim=32), "hash")


def test_old_index_without_model_id_is_judged_by_its_spec(tmp_path, wordllama):
    import json

    folder = tmp_path / "idx"
    build_index(CORPUS, wordllama, "wordllama", folder, chunk_size=400)
    manifest = json.loads((folder / "manifest.json").read_text())
    for key in ("embeddings_model", "embeddings_dim"):
        manifest.pop(key)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert load_index(folder, wordllama, "wordllama").chunks
    with pytest.raises(IndexError_, match="built with embeddings 'wordllama'"):
        load_index(folder, HashEmbeddings(), "hash")


class Undeclared(Embeddings):
    """Embeddings that declare no dimension (so only a query can reveal it)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0]


def test_query_vector_of_the_wrong_length_is_a_clear_error_not_a_faiss_assert():
    unit = NormalizedEmbeddings(Undeclared(), expected_dim=64)
    with pytest.raises(IndexError_, match="3-d vectors but the index holds 64-d"):
        unit.embed_query("anything")
    assert len(NormalizedEmbeddings(Undeclared(), expected_dim=3).embed_query("x")) == 3


def test_reindexing_unchanged_chunks_embeds_nothing(tmp_path):
    cache = VectorCache(tmp_path / "cache" / "vectors.sqlite")
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    first = CountingEmbeddings()
    plans: list[EmbedPlan] = []
    a = build_index(corpus, first, "hash", tmp_path / "a", chunk_size=400, cache=cache)
    n = len(a.chunks)
    assert first.embedded == n and cache.count() == n

    again = CountingEmbeddings()
    b = build_index(
        corpus, again, "hash", tmp_path / "b", chunk_size=400, cache=cache, on_plan=plans.append
    )
    assert again.embedded == 0 and plans[0].cached == n and plans[0].todo == 0
    assert np.allclose(a.faiss.index.reconstruct_n(0, n), b.faiss.index.reconstruct_n(0, n))

    # one edited file: only its chunks are embedded again
    edited = sorted(p for p in corpus.rglob("*") if p.is_file())[0]
    edited.write_text(edited.read_text(encoding="utf-8") + "\n\nA new closing line.\n")
    third = CountingEmbeddings()
    c = build_index(corpus, third, "hash", tmp_path / "c", chunk_size=400, cache=cache)
    changed = sum(1 for ch in c.chunks if ch.metadata.get("source") == edited.name)
    assert 0 < third.embedded <= max(changed, 1) + 1 and third.embedded < len(c.chunks)


def test_cache_is_per_model_and_ignores_rows_of_another_dimension(tmp_path):
    cache = VectorCache(tmp_path / "v.sqlite")
    cache.put_many("m", ["a", "b"], np.ones((2, 4), dtype=np.float32))
    assert set(cache.get_many("m", 4, ["a", "b", "c"])) == {"a", "b"}
    assert cache.get_many("other", 4, ["a"]) == {}
    assert cache.get_many("m", 8, ["a"]) == {}  # wrong length: not trusted


def test_embed_texts_reports_progress_and_an_estimate_for_embedded_models(wordllama):
    seen: list[tuple[int, int]] = []
    plans: list[EmbedPlan] = []
    texts = [f"text number {i}" for i in range(300)]
    out = embed_texts(wordllama, texts, batch=128, progress=lambda d, t: seen.append((d, t)))
    assert out.shape == (300, 256) and seen[-1] == (300, 300) and len(seen) == 4
    embed_texts(wordllama, texts[:10], on_plan=plans.append)
    assert plans[0].seconds is not None and plans[0].todo == 10
    assert "embedding 10 of 10 chunks (0 cached)" in plans[0].describe()
    embed_texts(HashEmbeddings(), texts[:3], on_plan=plans.append)
    assert plans[1].seconds is None  # unknown speed: no made-up estimate


def test_an_index_chunked_by_other_parser_code_is_rebuilt_not_served(tmp_path, monkeypatch):
    """Upgrading ragloop's parsers or chunker makes older indexes stale (no silent old chunks)."""
    import json

    from ragloop.retrievers import manifest as manifest_module

    emb = CountingEmbeddings()
    folder = tmp_path / "idx"
    built = open_index(CORPUS, folder, emb, "hash", chunk_size=400)
    assert built.manifest["chunker"] == manifest_module.chunker_fingerprint()
    stamp = (folder / "manifest.json").stat().st_mtime_ns
    assert open_index(CORPUS, folder, emb, "hash", chunk_size=400).manifest == built.manifest
    assert (folder / "manifest.json").stat().st_mtime_ns == stamp  # fresh: loaded as it is

    # the same index as an older ragloop would have left it
    data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    data["chunker"] = "an older parser"
    (folder / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexError_, match="another version of ragloop's parsers"):
        load_index(folder, emb, "hash", corpus_dir=CORPUS)
    rebuilt = open_index(CORPUS, folder, emb, "hash", chunk_size=400)
    assert rebuilt.manifest["chunker"] == manifest_module.chunker_fingerprint()
