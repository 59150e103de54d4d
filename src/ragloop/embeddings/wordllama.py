"""WordLlama: averaged word vectors, the fast embedded option (weights inside its wheel)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ragloop.embeddings.base import LocalEmbeddings
from ragloop.embeddings.catalogue import CATALOGUE
from ragloop.errors import ProviderError

_LOCK = threading.Lock()
_MODEL: Any = None


def load_wordllama() -> Any:
    """Load WordLlama once per process from the weights inside the installed wheel."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            root = logging.getLogger()
            handlers, level = list(root.handlers), root.level
            import wordllama
            from wordllama import WordLlama

            # wordllama calls logging.basicConfig at import; give the root logger back
            root.handlers[:] = handlers
            root.setLevel(level)

            # the wheel ships weights/ and tokenizers/ beside the package module; the default
            # loader looks under ~/.cache, so point cache_dir at the package and never download
            package_dir = Path(wordllama.__file__).parent
            try:
                _MODEL = WordLlama.load(cache_dir=package_dir, disable_download=True)
            except FileNotFoundError as exc:
                raise ProviderError(
                    f"WordLlama weights not found in {package_dir}: reinstall the 'wordllama' "
                    f"package ({exc})"
                ) from None
        return _MODEL


class WordLlamaEmbeddings(LocalEmbeddings):
    """Offline LangChain embeddings from WordLlama (256 dims, L2-normalised)."""

    spec = "wordllama"
    model_id = CATALOGUE["wordllama"].model_id
    dimension = CATALOGUE["wordllama"].dimension

    def __init__(self) -> None:
        super().__init__()
        self._model = load_wordllama()

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.embed(texts, norm=True), dtype=np.float32)
