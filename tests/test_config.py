import pytest

from ragloop.config import Context, load_settings
from ragloop.errors import ConfigError


@pytest.mark.default_embeddings
def test_defaults_are_offline():
    s = load_settings()
    assert s.llm == "none" and s.embeddings == "minilm"
    assert s.retrievers == ["hybrid", "dense", "sparse"] and s.max_iterations == 3


def test_env_prefix_and_list_parsing(monkeypatch):
    monkeypatch.setenv("RAGLOOP_RETRIEVERS", "sparse, dense")
    monkeypatch.setenv("RAGLOOP_MAX_ITERATIONS", "5")
    s = load_settings()
    assert s.retrievers == ["sparse", "dense"] and s.max_iterations == 5


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"retrievers": "dense,bogus"}, "known retrievers: dense, hybrid, sparse"),
        ({"llm": "gpt-4o"}, "'none', '<provider>:<model>'"),
        ({"embeddings": "bert"}, "'wordllama' or 'openai:<model>'"),
        ({"max_iterations": -1}, "max_iterations"),
        ({"retrieval": "sometimes"}, "retrieval"),
    ],
)
def test_invalid_values_name_the_setting(kwargs, needle):
    with pytest.raises(ConfigError) as info:
        load_settings(**kwargs)
    assert needle in str(info.value)
    assert "setting '" in str(info.value)


def test_context_from_settings_with_overrides():
    ctx = Context.from_settings(load_settings(k=7), max_iterations=1)
    assert ctx.k == 7 and ctx.max_iterations == 1 and ctx.retrievers[0] == "hybrid"
