"""Demo artefacts serve the demo only: another corpus never sees the demo cache or web corpus."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from ragloop.config import load_settings
from ragloop.data import KB_DIR, WEB_DIR
from ragloop.errors import ConfigError
from ragloop.nodes.answer_cache import demo_cache_for, is_demo_index
from ragloop.pipeline import build_pipeline
from ragloop.retrievers.corpus import fingerprint
from ragloop.retrievers.web import web_corpus_folder
from tests.conftest import CORPUS

DEMO_QUESTIONS = (
    "What is the capital of Australia?",  # in the demo answer cache
    "How many centimetres are in one inch?",  # in the demo answer cache
    "Does the Kestrel Care Plus plan cover accidental damage?",  # the demo's web corpus
)


@pytest.fixture(scope="module")
def other_pipeline(tmp_path_factory, wordllama):
    folder = tmp_path_factory.mktemp("other") / "idx"
    settings = load_settings(index_dir=folder, corpus_dir=CORPUS, embeddings="wordllama")
    return build_pipeline(settings, env={}, embeddings=wordllama)


def test_other_corpus_gets_no_demo_cache_and_no_web(other_pipeline):
    pipe = other_pipeline
    assert pipe.deps.web is None
    assert pipe.deps.strategies.cache is None
    assert pipe.sources["web"] == "off" and pipe.sources["answer cache"] == "off"
    assert "answer cache off" in pipe.describe_sources()


@pytest.mark.parametrize("question", DEMO_QUESTIONS)
def test_no_demo_id_reaches_contexts_or_draft(other_pipeline, question):
    result = other_pipeline.run(question)
    assert result.retrieved  # nothing answered it closed-book from the demo cache
    demo_sources = {p.name for p in KB_DIR.iterdir()} | {p.name for p in WEB_DIR.iterdir()}
    corpus_sources = {p.name for p in CORPUS.iterdir()}
    for c in result.contexts:
        assert not c["id"].startswith("web/") and c["origin"] == "kb"
        assert c["source"].split("/")[-1] in corpus_sources - demo_sources
    assert "Canberra" not in result.answer and "2.54" not in result.answer
    assert all(s["detail"] != "answer cache hit" for s in result.steps)


def test_demo_index_is_recognised_by_its_fingerprint(tmp_path, wordllama):
    demo = SimpleNamespace(manifest={"corpus_fingerprint": fingerprint(KB_DIR)})
    other = SimpleNamespace(manifest={"corpus_fingerprint": fingerprint(CORPUS)})
    assert is_demo_index(demo) and not is_demo_index(other)
    assert not is_demo_index(SimpleNamespace(manifest={}))
    copy = tmp_path / "kb"
    shutil.copytree(KB_DIR, copy)  # a copy of the demo is the demo
    assert is_demo_index(SimpleNamespace(manifest={"corpus_fingerprint": fingerprint(copy)}))
    (copy / "extra.md").write_text("# Extra\n\nA page the demo does not have.\n")
    assert not is_demo_index(SimpleNamespace(manifest={"corpus_fingerprint": fingerprint(copy)}))
    assert demo_cache_for(demo, wordllama) is not None
    assert demo_cache_for(other, wordllama) is None


def test_web_corpus_folder_only_when_configured(tmp_path):
    assert web_corpus_folder("auto", None, True, WEB_DIR) == WEB_DIR
    assert web_corpus_folder("auto", None, False, WEB_DIR) is None
    assert web_corpus_folder("auto", tmp_path, False, WEB_DIR) == tmp_path
    with pytest.raises(ConfigError, match="RAGLOOP_WEB_CORPUS_DIR"):
        web_corpus_folder("corpus", None, False, WEB_DIR)
    with pytest.raises(ConfigError, match="not found"):
        web_corpus_folder("auto", tmp_path / "missing", False, WEB_DIR)
