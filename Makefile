# PaperTalk: the README's commands.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
LLAMA_CPP_VERSION := $(shell sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON

.PHONY: install run test lint bench bench-ui clean screenshot

$(STAMP): pyproject.toml Makefile constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# CPU torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# llama.cpp built for AVX2, not for this machine's every feature: a virtual machine may
	# advertise AMX and then trap its instructions. Never from pip's cache, which may hold a
	# build made with other flags (the cache does not key on them).
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-cache-dir \
		-c constraints.txt "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)"
	# Every other package at the version the README's figures were measured with.
	$(BIN)/pip install --quiet -c constraints.txt -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/papertalk ingest --if-empty
	$(BIN)/papertalk serve

test: install
	$(BIN)/ruff check rag ui tests bench data
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check rag ui tests bench data
	$(BIN)/ruff format --check rag ui tests bench data
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: install
	$(BIN)/python bench/retrieval.py

bench-ui: install  # 20 concurrent gradio_client sessions against one `papertalk serve`
	$(BIN)/python bench/ui_load.py --sessions 20 --questions 5 --llm extractive

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

screenshot: install  # docs/screenshot.png: the page as `make run` serves it (default LLM), a real question
	UPDATE_SCREENSHOT=1 $(BIN)/python -m pytest -q tests/test_ui_browser.py -k readme_screenshot
