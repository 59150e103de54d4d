"""A throwaway PostgreSQL cluster for the serve tests (skipped only when Postgres is missing)."""

from __future__ import annotations

import pytest

from ragloop.config import load_settings
from ragloop.pipeline import build_pipeline
from ragloop.retrievers.index import build_index
from tests.conftest import CORPUS


def write_tiny_corpus(folder):
    """Two one-paragraph documents (pumps, valves) in ``folder``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pumps.md").write_text("# Pumps\n\nThe P-40 pump moves 40 litres per minute.")
    (folder / "valves.md").write_text("# Valves\n\nValve V-7 closes when pressure tops 3 bar.")
    return folder


def offline_server_env(tmp, **extra):
    """Environment of a test server: the fixture corpus, files under ``tmp``, no way out."""
    return {
        "RAGLOOP_CORPUS_DIR": str(CORPUS),
        "RAGLOOP_INDEX_DIR": str(tmp / "idx"),
        "RAGLOOP_DATA_DIR": str(tmp / "data"),
        "RAGLOOP_WEB": "off",
        "RAGLOOP_EMBEDDINGS": "wordllama",
        # any outside connection would fail at once instead of leaving the test offline by luck
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        **extra,
    }


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
    corpus = write_tiny_corpus(tmp / "corpus")
    build_index(corpus, wordllama, "wordllama", tmp / "idx")
    settings = load_settings(index_dir=tmp / "idx", web="off")
    return build_pipeline(settings, env={}, embeddings=wordllama)
