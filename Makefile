# stickyroute: `make run` starts the proxy with demo agents on config/proxy.toml; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
CONFIG ?= config/proxy.toml

.PHONY: install run test lint bench eval check clean faults soak fuzz

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,eval]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/stickyroute serve --config $(CONFIG) --demo-agents

test: install lint
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check proxy tests bench
	$(VENV)/bin/mypy

check: install
	$(VENV)/bin/stickyroute check $(CONFIG)

bench: install
	$(PY) bench/run.py

# Reliability (issue #10): every fault scenario of the ledger, the 10-minute soak, 100,000 fuzz inputs.
faults: install
	$(PY) bench/faults.py

soak: install
	$(PY) bench/soak.py

fuzz: install
	$(PY) bench/fuzz.py

eval: install
	$(VENV)/bin/stickyroute replay ../shared/corpus/dev.jsonl --agents ../shared/corpus/agents.toml --strategy all --classifier oracle

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
