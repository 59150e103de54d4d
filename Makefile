# ragloop — every target explains itself: run `make help`.
PY      ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
BASE_STAMP := $(VENV)/.installed-base
export OPENBLAS_NUM_THREADS ?= 1

.DEFAULT_GOAL := help
.PHONY: help demo demo-experiment serve test test-local-llm lint format bench clean strip-notebooks

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(BIN)/python:
	@command -v $(PY) >/dev/null 2>&1 || { echo "need Python 3.11+ as $(PY) (set PY=...)"; exit 1; }
	$(PY) -m venv $(VENV)

# the package alone: what `make demo` needs (about half the download of the dev tools)
$(BASE_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	@touch $(BASE_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(BASE_STAMP) $(STAMP)

demo: $(BASE_STAMP) ## set up .venv, build the demo index and answer four demo questions offline (the last is not answered by the base)
	$(BIN)/ragloop index --demo --out .ragloop/index
	$(BIN)/ragloop ask "Which KP-PA-24 adapters are covered by the safety notice in Ireland?"
	$(BIN)/ragloop ask "How do I clear DK-04 on the Kestrel Dock?"
	$(BIN)/ragloop ask "What is Kestrel Support's phone number in Belgium?"
	$(BIN)/ragloop ask "Does the Kestrel app work with Apple HomeKit?"

demo-experiment: $(STAMP) ## compare retriever orders x judge modes offline on the demo QA set (.ragloop/experiments/demo)
	$(BIN)/ragloop experiment experiments/demo.toml

serve: $(STAMP) ## serve the graph on LangGraph Server (langgraph dev) at 127.0.0.1:2024, offline
	$(BIN)/ragloop serve --port $(or $(PORT),2024)

test: $(STAMP) ## set up .venv and run the whole test suite (offline)
	$(BIN)/python -m pytest

test-local-llm: $(STAMP) ## opt-in: build/reuse llama-cpp-python[server] (10-35 min once), serve SmolLM2 on 127.0.0.1, run ask/chat/eval on it
	bash tests/local_llm/build_server.sh
	RAGLOOP_LOCAL_LLM=1 $(BIN)/python -m pytest tests/local_llm -x

lint: $(STAMP) ## ruff lint + format check, mypy on src/, the layer contracts (import-linter)
	$(BIN)/lint-imports
	$(BIN)/ruff check src tests bench notebooks
	$(BIN)/ruff format --check src tests bench notebooks
	$(BIN)/mypy src

format: $(STAMP) ## apply ruff formatting and safe fixes
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

strip-notebooks: $(STAMP) ## clear notebook outputs before committing
	$(BIN)/python tests/test_notebooks.py --strip

bench: $(STAMP) ## run every bench and write docs/benchmarks.md (commit, date, machine, figures)
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	$(BIN)/python bench/report.py

clean: ## remove .venv, caches and the demo index
	rm -rf $(VENV) .ragloop .pytest_cache .ruff_cache .mypy_cache .hypothesis build dist src/*.egg-info
