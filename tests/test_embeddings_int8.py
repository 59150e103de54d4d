"""The int8-computing MiniLM model: derived once from the packaged file, kept, and faithful."""

from __future__ import annotations

import numpy as np
import pytest

from ragloop.embeddings import minilm
from ragloop.embeddings.minilm import MODEL_DIR_ENV, MiniLMEmbeddings

TEXTS = [
    "VACUUM reclaims storage occupied by dead tuples.",
    "How do I stop a query that runs too long?",
    "statement_timeout aborts any statement that takes more than the given time.",
    "A longer passage about write-ahead logging, checkpoints and crash recovery. " * 4,
]


def _vectors(session, tokenizer, texts):
    out = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}
        v = session.run(None, feed)[0].mean(axis=1)[0]
        out.append(v / np.linalg.norm(v))
    return np.stack(out)


def test_the_int8_model_is_derived_once_and_then_reused(tmp_path, monkeypatch):
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path / "models"))
    source = minilm.packaged_file(*minilm.MODEL_FILE)
    first = minilm.derived_model(source)
    assert first == tmp_path / "models" / minilm.derived_name() and first.is_file()
    stamp = first.stat().st_mtime_ns

    def refuse(*args):
        raise AssertionError("the kept model was derived again")

    monkeypatch.setattr(minilm, "_quantise", refuse)
    assert minilm.derived_model(source) == first
    assert first.stat().st_mtime_ns == stamp
    # nothing but the model and its lock file is left in the folder (no temp files)
    assert sorted(p.name for p in first.parent.iterdir()) == sorted(
        [first.name, f".{first.name}.lock"]
    )


def test_an_unwritable_model_folder_derives_the_model_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv(MODEL_DIR_ENV, str(blocker / "models"))
    model = minilm.derived_model(minilm.packaged_file(*minilm.MODEL_FILE))
    assert isinstance(model, bytes) and len(model) > 10_000_000
    assert blocker.read_text(encoding="utf-8").startswith("a file")  # left as it was
    session = minilm._session(model)
    assert session.get_outputs()[0].shape[-1] == 384


def test_a_damaged_kept_model_is_derived_again(tmp_path, monkeypatch):
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    target = tmp_path / minilm.derived_name()
    target.write_bytes(b"not an onnx model")
    session, tokenizer = minilm._load(1, 64)
    assert target.stat().st_size > 10_000_000
    assert _vectors(session, tokenizer, ["checkpoint"]).shape == (1, 384)


def test_the_int8_model_agrees_with_the_packaged_float_model(tmp_path, monkeypatch):
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    session, tokenizer = minilm._load(1, 256)
    packaged = minilm._session(minilm.packaged_file(*minilm.MODEL_FILE))
    int8 = _vectors(session, tokenizer, TEXTS)
    float32 = _vectors(packaged, tokenizer, TEXTS)
    agreement = np.sum(int8 * float32, axis=1)
    assert agreement.min() > 0.97, agreement
    # and the ranking a question induces is the same
    assert np.argmax(int8[2:] @ int8[1]) == np.argmax(float32[2:] @ float32[1]) == 0


@pytest.mark.parametrize(("threads", "batch_size"), [(1, 1), (2, 1), (2, 3)])
def test_parallel_calls_and_batches_give_the_same_vectors(threads, batch_size):
    reference = MiniLMEmbeddings(threads=1, batch_size=1)
    reference._memo.clear()
    expected = reference.embed_array(TEXTS * 3)
    emb = MiniLMEmbeddings(threads=threads, batch_size=batch_size)
    emb._memo.clear()
    got = emb._encode(TEXTS * 3)
    got /= np.linalg.norm(got, axis=1, keepdims=True)
    assert np.allclose(got, expected, atol=1e-4)


def test_the_answer_cache_threshold_is_calibrated_for_minilm():
    """A knowledge-base question must not be answered by a trivia entry that shares a word."""
    from ragloop.data import ANSWER_CACHE_PATH
    from ragloop.embeddings import load_local
    from ragloop.nodes.answer_cache import AnswerCache, threshold_for

    emb = load_local("minilm")
    assert threshold_for(emb) > threshold_for(load_local("wordllama"))
    cache = AnswerCache.from_jsonl(ANSWER_CACHE_PATH, emb, threshold_for(emb))
    assert cache.lookup("What is the default Auto-Empty Frequency?") is None
    # a general question still finds its cached twin
    hit = cache.lookup("How quickly does light move through a vacuum?")
    assert hit is not None and "light" in hit[0].lower()


def test_a_forked_child_embeds_in_parallel_without_waiting_forever():
    """The parallel calls' thread pool must not be inherited over fork (it would hang)."""
    import multiprocessing

    emb = MiniLMEmbeddings(threads=2)
    emb._memo.clear()
    parent = emb.embed_array(TEXTS)  # the parent's pool exists now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_embed_in_child, (TEXTS,)).get(timeout=120)
    assert np.allclose(parent, child, atol=1e-4)


def _embed_in_child(texts):
    emb = MiniLMEmbeddings(threads=2)
    emb._memo.clear()
    return emb.embed_array(texts)
