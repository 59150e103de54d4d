"""build_pipeline and `ragloop ask` as a user meets them: their own index, errors, JSON."""

import json

from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.config import load_settings
from ragloop.pipeline import build_pipeline
from ragloop.retrievers.index import build_index


def _corpus(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "pumps.md").write_text("# Pumps\n\nThe P-40 pump moves 40 litres per minute.")
    (corpus / "valves.md").write_text("# Valves\n\nValve V-7 closes when pressure tops 3 bar.")
    return corpus


def test_pipeline_answers_from_the_corpus_the_index_was_built_from(tmp_path, wordllama):
    corpus = _corpus(tmp_path)
    build_index(corpus, wordllama, "wordllama", tmp_path / "idx")
    settings = load_settings(index_dir=tmp_path / "idx", web="off")
    result = build_pipeline(settings, env={}, embeddings=wordllama).run(
        "How fast is the P-40 pump?"
    )
    assert result.citations and result.citations[0]["source"] == "pumps.md"
    assert "40 litres" in result.answer


def test_ask_json_and_errors(tmp_path, monkeypatch):
    corpus = _corpus(tmp_path)
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(tmp_path / "idx"))
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runner = CliRunner()
    ok = runner.invoke(
        app, ["ask", "When does valve V-7 close?", "--corpus", str(corpus), "--json"]
    )
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["citations"][0]["source"] == "valves.md" and data["steps"][0]["node"] == "draft"
    assert (tmp_path / "data" / "traces.sqlite").is_file()  # the turn was recorded
    empty = runner.invoke(app, ["ask", "  "])
    assert empty.exit_code == 2 and "empty" in empty.output
    no_key = runner.invoke(app, ["ask", "q", "--llm", "openai:gpt-4o-mini"])
    # a missing key is a runtime error (1), not a usage error (2)
    assert no_key.exit_code == 1 and "OPENAI_API_KEY" in no_key.output


def test_langgraph_json_points_at_a_compiled_graph(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    root = Path(__file__).parent.parent
    spec = json.loads((root / "langgraph.json").read_text())
    path, attr = spec["graphs"]["ragloop"].split(":")
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(tmp_path / "idx"))
    monkeypatch.setenv("RAGLOOP_CORPUS_DIR", str(root / "tests" / "fixtures" / "corpus"))
    module_spec = importlib.util.spec_from_file_location("lg_server", root / path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    graph = getattr(module, attr)
    graph = graph() if callable(graph) and not hasattr(graph, "get_graph") else graph  # factory
    assert set(graph.get_graph().nodes) >= {"draft", "decide", "retrieve", "judge", "correct"}
