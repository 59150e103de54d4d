"""The index in Postgres: vectors without pgvector (bytea + numpy), full-text search, rebuilds."""

from __future__ import annotations

import uuid

import numpy as np

from ragloop.retrievers.registry import get_retriever
from ragloop.serve.pgindex import PgIndexStore, index_rows, or_query, pg_retrievers, write_index


def test_dense_matches_faiss_and_sparse_finds_the_words(pg_url, fixture_index):
    name = uuid.uuid4().hex
    store = write_index(pg_url, fixture_index, name)
    assert store.vector_kind in ("pgvector", "bytea")
    emb = fixture_index.faiss.embedding_function
    pg = pg_retrievers(store, emb, k=3)
    faiss = get_retriever("dense", fixture_index, k=3)
    for query in ("interlibrary loan fee", "opening hours on Sunday", "printing in colour"):
        got = [d.id for d, _ in pg["pg_dense"].search(query, 3)]
        want = [d.id for d, _ in faiss.search(query, 3)]
        assert got == want  # exact search: the same ranking as FAISS inner product
        assert pg["pg_sparse"].search(query, 3)  # some chunk has one of the words
        assert pg["pg_hybrid"].search(query, 3)
    store.close()


def test_or_query_quotes_words():
    assert or_query("Don't print; colour!") == "'don' | 't' | 'print' | 'colour'"


def test_sparse_search_requires_a_matching_word(pg_url, fixture_index):
    store = write_index(pg_url, fixture_index, uuid.uuid4().hex)
    assert store.sparse("zzqx qqvw", 5) == []
    assert store.sparse("", 5) == []
    hits = store.sparse("loan", 5)
    assert hits and all("loan" in d.page_content.lower() for d, _ in hits)
    store.close()


def test_rebuild_replaces_the_index_and_readers_see_the_new_version(pg_url, fixture_index):
    name = uuid.uuid4().hex
    store = write_index(pg_url, fixture_index, name)
    docs, vecs = index_rows(fixture_index)
    first = store.version()
    assert store.dense(vecs[0], 1)[0][0].id == docs[0].id
    store.write(docs[:2], vecs[:2])
    assert store.version() == first + 1
    other = PgIndexStore(pg_url, name)  # another replica
    hits = other.dense(vecs[5], 5)
    assert len(hits) == 2 and {d.id for d, _ in hits} == {docs[0].id, docs[1].id}
    assert np.isclose(store.dense(vecs[1], 1)[0][1], 1.0, atol=1e-5)
    store.close()
    other.close()


def test_ragloop_index_writes_to_postgres_when_the_url_is_set(pg_url, tmp_path, monkeypatch):
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from ragloop.cli import app

    corpus = Path(__file__).parent.parent / "fixtures" / "corpus"
    monkeypatch.setenv("RAGLOOP_DATABASE_URL", pg_url)
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    out = CliRunner().invoke(
        app,
        [
            "index",
            str(corpus),
            "--out",
            str(tmp_path / "idx"),
            "--embeddings",
            "wordllama",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)  # progress lines go to stderr
    assert "postgres" in report and "127.0.0.1" in report["postgres"]
    store = PgIndexStore(pg_url)
    assert store.version() >= 1
    with store.connect() as conn:
        (count,) = conn.execute(
            "SELECT chunks FROM ragloop_indexes WHERE name = 'default'"
        ).fetchone()
    store.close()
    assert count == report["chunks"]
