# The front door: `make run` starts the whole system, `make test` passes the suite.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
FERRETDB := .tools/bin/ferretdb
PROTO_SRC := $(wildcard protos/vance/v1/*.proto)

.PHONY: setup run test lint fmt protos protos-check bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(FERRETDB): tools/ferretdb/install.sh $(wildcard tools/ferretdb/*.patch)
	@bash tools/ferretdb/install.sh

setup: $(STAMP) $(FERRETDB)
	@test -f vance/v1/common_pb2.py || $(MAKE) protos

run: setup
	$(PY) -m vance.cli run

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

protos: $(STAMP)
	$(PY) -m vance.protogen

protos-check: $(STAMP)
	$(PY) -m vance.protogen --check

lint: $(STAMP) protos-check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup
	$(PY) -m bench

clean:
	rm -rf $(VENV) .tools .vance build *.egg-info
