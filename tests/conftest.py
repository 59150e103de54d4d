"""Shared fixtures: the 10-document corpus, deterministic and real offline embeddings."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from tests.fakes.embeddings import HashEmbeddings
from tests.fakes.fixtures import openai_server  # noqa: F401 - a fixture for every test module

FIXTURES = Path(__file__).parent / "fixtures"
#: the real-model tier (a llama.cpp server, built once in 10-35 min) runs only through
#: `make test-local-llm`, which sets RAGLOOP_LOCAL_LLM=1; `make test` never collects it
collect_ignore = [] if os.environ.get("RAGLOOP_LOCAL_LLM") == "1" else ["local_llm"]
CORPUS = FIXTURES / "corpus"

logging.getLogger("bm25s").setLevel(logging.WARNING)
logging.getLogger("faiss").setLevel(logging.WARNING)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "default_embeddings: run with the default embedded model (minilm), not WordLlama"
    )


@pytest.fixture(autouse=True)
def _fast_embeddings(request, monkeypatch):
    """Tests not about the embedding model run on WordLlama (~50x faster than the default).

    A test marked ``default_embeddings`` sees the real default; tests/test_embeddings*.py
    load and run the default model themselves.
    """
    if request.node.get_closest_marker("default_embeddings") is None:
        monkeypatch.setenv("RAGLOOP_EMBEDDINGS", "wordllama")


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    """A data and index folder of the test's own, no web search and no LLM or key from the
    environment (the chat tests' settings)."""
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    for name in ("RAGLOOP_LLM", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "data"


@pytest.fixture
def hash_embeddings() -> HashEmbeddings:
    return HashEmbeddings()


@pytest.fixture(scope="session")
def wordllama():
    from ragloop.providers import get_embeddings

    return get_embeddings("wordllama")


@pytest.fixture(scope="session")
def fixture_index(tmp_path_factory, wordllama):
    """The fixture corpus indexed with WordLlama (FAISS and bm25s for real)."""
    from ragloop.retrievers.index import build_index

    out = tmp_path_factory.mktemp("index") / "idx"
    return build_index(CORPUS, wordllama, "wordllama", out, chunk_size=400, chunk_overlap=50)
