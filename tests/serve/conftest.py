"""A throwaway PostgreSQL cluster for the serve tests (skipped only when Postgres is missing)."""

from __future__ import annotations

import pytest

from ragloop.config import load_settings
from ragloop.pipeline import build_pipeline
from ragloop.retrievers.index import build_index


@pytest.fixture(scope="session")
def pg_url():
    """A libpq URL of a fresh local cluster, stopped and removed after the session."""
    pytest.importorskip("psycopg", reason="psycopg missing: pip install 'ragloop[server]'")
    from ragloop.serve.cluster import LocalCluster, find_pg_bin

    if find_pg_bin() is None:
        pytest.skip("PostgreSQL server binaries missing: apt-get install postgresql")
    cluster = LocalCluster().start()
    yield cluster.url
    cluster.stop()


@pytest.fixture(scope="session")
def small_pipe(tmp_path_factory, wordllama):
    """An offline pipeline over two tiny documents (pumps, valves)."""
    tmp = tmp_path_factory.mktemp("serve")
    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "pumps.md").write_text("# Pumps\n\nThe P-40 pump moves 40 litres per minute.")
    (corpus / "valves.md").write_text("# Valves\n\nValve V-7 closes when pressure tops 3 bar.")
    build_index(corpus, wordllama, "wordllama", tmp / "idx")
    settings = load_settings(index_dir=tmp / "idx", web="off")
    return build_pipeline(settings, env={}, embeddings=wordllama)
