import numpy as np
import pytest

from ragloop.errors import ProviderError
from ragloop.providers import get_chat_model, get_embeddings


def test_wordllama_is_offline_normalised_and_loaded_once():
    a = get_embeddings("wordllama")
    b = get_embeddings("wordllama")
    assert a._model is b._model
    vecs = np.array(a.embed_documents(["reset the robot", "the weather is warm"]))
    assert vecs.shape == (2, 256)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    q = np.array(a.embed_query("how do I reset my robot"))
    assert q @ vecs[0] > q @ vecs[1]


def test_none_llm_is_none():
    assert get_chat_model("none", env={}) is None


def test_openai_requires_key_named_in_error():
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        get_chat_model("openai:gpt-4o-mini", env={})
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        get_embeddings("openai:text-embedding-3-small", env={})


def test_openai_honours_base_url_and_key():
    model = get_chat_model(
        "openai:tiny", env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert model.model_name == "tiny"
    assert str(model.openai_api_base).startswith("http://127.0.0.1:9")


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "anthropic:claude"])
def test_unknown_specs_are_rejected(spec):
    with pytest.raises(ProviderError):
        get_chat_model(spec, env={"OPENAI_API_KEY": "x"})
