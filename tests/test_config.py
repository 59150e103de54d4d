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


def test_a_malformed_database_url_is_a_settings_error_naming_it(monkeypatch):
    """A settings error exits 2 like every other; before, a bad URL failed later with exit 1."""
    import pytest

    from ragloop.config import load_settings
    from ragloop.errors import ConfigError

    monkeypatch.setenv("RAGLOOP_DATABASE_URL", "notaurl")
    with pytest.raises(ConfigError, match="database_url.*PostgreSQL URL"):
        load_settings()
    monkeypatch.setenv("RAGLOOP_DATABASE_URL", "postgresql://u:p@127.0.0.1:5432/db")
    assert load_settings().database_url == "postgresql://u:p@127.0.0.1:5432/db"
