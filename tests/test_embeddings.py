"""The embedded default model (minilm, for real), the catalogue and the settings that name them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ragloop.config import load_settings
from ragloop.embeddings import CATALOGUE, LOCAL_EMBEDDINGS, load_local, model_id
from ragloop.errors import ConfigError
from ragloop.providers import get_embeddings

#: run in a fresh interpreter: downloads disabled, every socket but loopback refused
OFFLINE_SCRIPT = textwrap.dedent(
    """
    import os, socket, sys
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    refused = []
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else str(address)
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1"):
            refused.append(host)
            raise OSError("network refused by the test: " + host)
        return real_connect(self, address)

    socket.socket.connect = guarded
    socket.create_connection = lambda *a, **k: guarded(socket.socket(), a[0])
    import numpy as np
    from ragloop.providers import get_embeddings

    emb = get_embeddings(sys.argv[1])
    q = np.array(emb.embed_query("How do I stop a query that runs too long?"))
    docs = np.array(emb.embed_documents([
        "statement_timeout aborts any statement that takes more than the given time.",
        "The fox is a small omnivorous mammal of the dog family.",
    ]))
    print(type(emb).__name__, q.shape[0], round(float(q @ docs[0]), 4),
          round(float(q @ docs[1]), 4), len(refused))
    """
)


@pytest.mark.parametrize("name", LOCAL_EMBEDDINGS)
def test_embedded_models_load_and_run_with_the_network_refused(name):
    out = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT, name],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    cls, dim, related, unrelated, refused = out.stdout.split()
    assert int(dim) == CATALOGUE[name].dimension
    assert float(related) > float(unrelated)
    assert refused == "0"  # nothing even tried to leave the machine


def test_minilm_is_the_default_and_matches_its_catalogue_card(monkeypatch):
    monkeypatch.delenv("RAGLOOP_EMBEDDINGS", raising=False)
    assert load_settings().embeddings == "minilm"
    emb = get_embeddings()
    card = CATALOGUE["minilm"]
    assert model_id(emb) == card.model_id and emb.dimension == card.dimension == 384


def test_minilm_vectors_are_unit_and_independent_of_batching():
    emb = load_local("minilm")
    texts = [
        "VACUUM reclaims storage occupied by dead tuples.",
        "short",
        "A much longer passage about write-ahead logging, checkpoints and how the server "
        "recovers after a crash by replaying the log from the last checkpoint record. " * 3,
        "",
    ]
    emb._memo.clear()
    together = emb.embed_array(texts)
    emb._memo.clear()
    alone = np.stack([emb.embed_array([t])[0] for t in texts])
    assert together.shape == (4, 384)
    # padding to the longest text of a batch must not change any text's vector
    assert np.allclose(together, alone, atol=1e-4)
    assert np.allclose(np.linalg.norm(together[:3], axis=1), 1.0, atol=1e-4)
    assert not together[3].any()  # an empty text is the zero vector


def test_minilm_understands_a_question_that_shares_no_words_with_its_answer():
    emb = load_local("minilm")
    q = np.array(emb.embed_query("How can I make the database forget deleted rows for good?"))
    passages = np.array(
        emb.embed_documents(
            [
                "VACUUM reclaims storage occupied by dead tuples.",
                "CREATE ROLE adds a new role to a database cluster.",
                "The to_char function formats a timestamp as text.",
            ]
        )
    )
    assert int(np.argmax(passages @ q)) == 0


def test_minilm_truncates_long_texts_instead_of_failing():
    emb = load_local("minilm")
    long = "checkpoint " * 2000
    assert emb.token_counts([long])[0] > emb.max_seq_length
    vec = np.array(emb.embed_query(long))
    assert vec.shape == (384,) and abs(np.linalg.norm(vec) - 1) < 1e-4


def test_settings_accept_the_catalogue_and_list_it_when_wrong():
    assert load_settings(embeddings="wordllama").embeddings == "wordllama"
    with pytest.raises(ConfigError, match="'minilm', 'wordllama'"):
        load_settings(embeddings="bert")
