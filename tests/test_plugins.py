"""Plug-ins by name: a vector store, a custom retriever, embeddings and a chat model, each
selected by its registered name through settings, the CLI and a per-run (server) context."""

from __future__ import annotations

import asyncio
import json
from importlib.metadata import EntryPoint

import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore
from typer.testing import CliRunner

from ragloop import register_chat_model, register_embeddings, register_retriever
from ragloop.config import Context, load_settings
from ragloop.errors import ConfigError, ProviderError, UnknownNameError
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.base import Deps, search, to_item
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline, build_pipeline
from ragloop.plugins import CHAT_MODELS, EMBEDDINGS
from ragloop.plugins.registry import Registry
from ragloop.retrievers.adapters import stable_chunk_id
from ragloop.retrievers.registry import RETRIEVERS, LazyRetrievers, get_retriever
from tests.conftest import CORPUS

VALVE = "Valve V-7 closes automatically when the pressure passes 6 bar."


class NoIdRetriever(BaseRetriever):
    """Like Qdrant: two chunks of one file, both with ``id=None``."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(page_content=VALVE, metadata={"source": "valves.md", "start_index": 0}),
            Document(
                page_content="Valve V-7 reopens by hand only.",
                metadata={"source": "valves.md", "start_index": 120},
            ),
        ]


def _store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [
            Document(page_content=VALVE, metadata={"source": "valves.md", "title": "Valves"}),
            Document(page_content="Pumps run at night.", metadata={"source": "pumps.md"}),
        ]
    )
    return store


@pytest.fixture
def registered():
    """Register test plug-ins under fresh names and forget them afterwards."""
    names: list[tuple[Registry, str]] = []

    def add(registry: Registry, name: str) -> str:
        names.append((registry, name))
        return name

    yield add
    for registry, name in names:
        registry.unregister(name)


def _pipeline(fixture_index, wordllama, **ctx) -> Pipeline:
    offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
    deps = Deps(strategies=offline, retrievers=LazyRetrievers(fixture_index, k=3))
    return Pipeline(deps, Context(retrieval="always", max_iterations=0, **ctx))


def test_vector_store_by_name_in_settings_and_server_context(registered, fixture_index, wordllama):
    register_retriever(registered(RETRIEVERS, "memstore"), _store())
    settings = load_settings(retrievers="memstore,dense")
    assert settings.retrievers == ["memstore", "dense"]
    pipe = _pipeline(fixture_index, wordllama)
    # a server run hands its context as JSON: a list, replacing the default order
    result = pipe.run("When does valve V-7 close?", retrievers=["memstore"])
    assert result.contexts, result.path()
    assert {c["retriever"] for c in result.contexts} == {"memstore"}
    assert any(c["text"] == VALVE for c in result.contexts)
    # the graph accepts a plain dict context too (what LangGraph Server passes)
    state = asyncio.run(
        pipe.graph.ainvoke(
            {"question": "When does valve V-7 close?"},
            context={"retrievers": ["memstore"], "retrieval": "always", "max_iterations": 0},
        )
    )
    assert state["retriever"] == "memstore"


def test_raw_vector_store_is_adapted_not_called_with_k():
    # VectorStore.asearch(query, search_type) would take k as the search type and fail
    docs = asyncio.run(search(_store(), "valve pressure", 1))
    assert len(docs) == 1 and docs[0].metadata["score"] is not None


def test_custom_retriever_without_ids_keeps_both_chunks(registered, tmp_path, monkeypatch):
    register_retriever(registered(RETRIEVERS, "noid"), NoIdRetriever())
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_RETRIEVAL", "always")
    out = CliRunner().invoke(
        app_(),
        [
            "ask",
            "When does valve V-7 close?",
            "--retriever",
            "noid",
            "--corpus",
            str(CORPUS),
            "--index",
            str(tmp_path / "idx"),
            "--max-iterations",
            "0",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    noid = [c for c in data["contexts"] if c["retriever"] == "noid"]
    ids = [c["id"] for c in noid]
    assert len(ids) == 2 and len(set(ids)) == 2, data["contexts"]
    assert all(i.startswith("valves.md#") for i in ids)
    assert set(data["score_reasons"]) == set(data["scores"])


def test_stable_ids_from_source_and_position_else_text():
    a = Document(page_content="one", metadata={"source": "f.md", "start_index": 0})
    b = Document(page_content="one", metadata={"source": "f.md", "start_index": 50})
    assert stable_chunk_id(a) != stable_chunk_id(b)
    assert stable_chunk_id(a) == stable_chunk_id(Document(page_content="x", metadata=a.metadata))
    # no position: the text decides, so two chunks of one file differ and repeats agree
    c = Document(page_content="first chunk", metadata={"source": "f.md"})
    d = Document(page_content="second chunk", metadata={"source": "f.md"})
    assert to_item(c)["id"] != to_item(d)["id"]
    assert (
        to_item(c)["id"] == to_item(Document(page_content="first chunk", metadata=c.metadata))["id"]
    )
    assert to_item(Document(id="kept", page_content="t"))["id"] == "kept"


def test_unknown_names_list_the_known_ones(registered, fixture_index):
    register_retriever(registered(RETRIEVERS, "memstore"), _store())
    with pytest.raises(ConfigError) as info:
        load_settings(retrievers="colbert")
    assert "known retrievers: dense, hybrid, memstore, sparse" in str(info.value)
    with pytest.raises(UnknownNameError, match="known retrievers: .*memstore"):
        get_retriever("colbert", fixture_index)
    with pytest.raises(ConfigError, match="registered: none yet|registered: "):
        load_settings(llm="mystery")
    with pytest.raises(ConfigError, match="embeddings"):
        load_settings(embeddings="mystery")


def test_unknown_retriever_in_a_run_context_is_an_error(fixture_index, wordllama):
    pipe = _pipeline(fixture_index, wordllama)
    with pytest.raises(UnknownNameError, match="unknown retriever 'colbert'; known retrievers"):
        pipe.run("When does valve V-7 close?", retrievers=("colbert",))


def test_factory_and_wrong_type(registered, fixture_index):
    @register_retriever(registered(RETRIEVERS, "fromfactory"))
    def _factory(index, k=5):
        return NoIdRetriever()

    built = get_retriever("fromfactory", fixture_index, k=1)
    assert len(built.invoke("valve")) == 1
    register_retriever(registered(RETRIEVERS, "notone"), 42)
    with pytest.raises(ProviderError, match="not usable|BaseRetriever"):
        get_retriever("notone", fixture_index)


def test_entry_points_add_plugins_and_broken_ones_say_which(monkeypatch):
    registry = Registry("retriever", "ragloop.retrievers")
    good = EntryPoint("from-ep", "tests.test_plugins:NoIdRetriever", "ragloop.retrievers")
    bad = EntryPoint("broken-ep", "tests.no_such_module:thing", "ragloop.retrievers")
    monkeypatch.setattr(
        "ragloop.plugins.registry.entry_points", lambda group: [good, bad] if group else []
    )
    assert registry.names() == ["broken-ep", "from-ep"]
    assert registry.get("from-ep") is NoIdRetriever
    with pytest.raises(ProviderError, match="plug-in 'broken-ep'.*failed to load"):
        registry.get("broken-ep")


def test_embeddings_by_name(registered, tmp_path):
    from ragloop.providers import get_embeddings

    fake = DeterministicFakeEmbedding(size=16)
    register_embeddings(registered(EMBEDDINGS, "fake16"), fake)
    assert load_settings(embeddings="fake16").embeddings == "fake16"
    assert get_embeddings("fake16") is fake

    @register_embeddings(registered(EMBEDDINGS, "fake8"))
    def _make():
        return DeterministicFakeEmbedding(size=8)

    assert len(get_embeddings("fake8").embed_query("x")) == 8
    register_embeddings(registered(EMBEDDINGS, "wrong"), lambda: "not embeddings")
    with pytest.raises(ProviderError, match="not a LangChain Embeddings"):
        get_embeddings("wrong")


DRAFT = {"answer": "Paris is the capital of France.", "noncommittal": False}
QUESTIONS = {
    "questions": [{"question": "What is the capital of France?", "noncommittal": False}] * 3
}


def _scripted() -> GenericFakeChatModel:
    return GenericFakeChatModel(
        messages=iter([json.dumps({**DRAFT, "needs_retrieval": False}), json.dumps(QUESTIONS)])
    )


def test_chat_model_by_name_through_settings_and_cli(registered, tmp_path, monkeypatch):
    from ragloop.providers import get_chat_model

    register_chat_model(registered(CHAT_MODELS, "scripted"), _scripted)
    assert isinstance(get_chat_model("scripted", timeout=5, max_tokens=9), GenericFakeChatModel)
    settings = load_settings(
        llm="scripted", retrieval="never", index_dir=tmp_path / "idx", data_dir=tmp_path / "d"
    )
    pipe = build_pipeline(settings, corpus_dir=CORPUS)
    result = pipe.run("What is the capital of France?")
    assert result.answer == DRAFT["answer"] and result.llm_calls == 2
    assert result.scores["answer_relevancy"] > 0.9  # embeddings of the same question

    monkeypatch.setenv("RAGLOOP_RETRIEVAL", "never")
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "d"))
    out = CliRunner().invoke(
        app_(),
        ["ask", "-", "--llm", "scripted", "--corpus", str(CORPUS), "--index", str(tmp_path / "i")],
        input="What is the capital of France?\n",
    )
    assert out.exit_code == 0, out.output
    assert DRAFT["answer"] in out.output and "LLM calls: 2" in out.output


def test_knobs_reach_chatopenai_and_registered_models():
    from ragloop.plugins.models import with_knobs
    from ragloop.providers import get_chat_model

    model = get_chat_model(
        "openai:gpt-4o-mini", env={"OPENAI_API_KEY": "x"}, timeout=7, max_tokens=33, max_retries=1
    )
    assert (model.request_timeout, model.max_tokens, model.max_retries) == (7, 33, 1)
    # a model without such fields is returned untouched
    fake = _scripted()
    assert with_knobs(fake, timeout=1, max_tokens=2) is fake
    with pytest.raises(ProviderError, match="langchain-anthropic"):
        get_chat_model("anthropic:claude-x", env={})


def app_():
    from ragloop.cli import app

    return app


def test_experiment_spec_takes_registered_retrievers(registered, tmp_path):
    from ragloop.experiments.spec import load_spec
    from tests.test_cli_conventions import _two_config_spec

    register_retriever(registered(RETRIEVERS, "memstore"), _store())
    path = _two_config_spec(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('["dense", "sparse"]', '["memstore", "dense"]'), "utf-8")
    spec = load_spec(path)
    assert [c.settings.retrievers for c in spec.configurations] == [["memstore"], ["dense"]]
    path.write_text(text.replace('["dense", "sparse"]', '["colbert"]'), "utf-8")
    with pytest.raises(ConfigError, match="known retrievers: dense, hybrid, memstore, sparse"):
        load_spec(path)
