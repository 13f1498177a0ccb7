# stickyroute: `make run` starts the proxy with demo agents on config/proxy.toml; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
CONFIG ?= config/proxy.toml

CORPUS ?= eval/corpus
RESULTS ?= results

.PHONY: install run test lint docs bench bench-icount bench-state bench-learn learn-cv eval eval-hints eval-tasks eval-packs check clean faults soak fuzz

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,eval]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/stickyroute serve --config $(CONFIG) --demo-agents

test: install lint docs
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check stickyroute tests bench
	$(VENV)/bin/mypy

# the documentation site (docs/, mkdocs.yml): --strict fails on a broken link, a missing page or an orphan
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

check: install
	$(VENV)/bin/stickyroute check $(CONFIG)

# benchmarks and evaluations print and write under $(RESULTS)/ (ignored): they never rewrite tracked files
bench: install
	$(PY) bench/run.py

# instructions per routed request under callgrind (repeatable on a busy machine); TREE=path of another checkout
bench-icount: install
	$(PY) bench/icount.py $(if $(TREE),--tree $(TREE))

bench-state: install
	$(PY) bench/state_bench.py

bench-learn: install
	$(PY) bench/learn_bench.py
# Reliability (issue #10): every fault scenario of the ledger, the 10-minute soak, 100,000 fuzz inputs.
faults: install
	$(PY) bench/faults.py

soak: install
	$(PY) bench/soak.py

fuzz: install
	$(PY) bench/fuzz.py

# cross-validation of `learn`'s thresholds inside the learning halves only (quarter vs quarter)
learn-cv: install
	$(PY) bench/learn_cv.py

# routing accuracy (oracle rows), the learned packs against their targets (learn on one half, report on the
# other), done and detours (task_routes): each table printed and written under $(RESULTS)/eval/
eval: install
	@mkdir -p $(RESULTS)/eval
	$(VENV)/bin/stickyroute replay $(CORPUS)/dev.jsonl --agents $(CORPUS)/agents.toml --strategy all --classifier oracle > $(RESULTS)/eval/multiwoz_oracle.txt && cat $(RESULTS)/eval/multiwoz_oracle.txt
	$(VENV)/bin/stickyroute replay $(CORPUS)/dev_sgd.jsonl --agents $(CORPUS)/agents_sgd.toml --strategy all --classifier oracle > $(RESULTS)/eval/sgd_oracle.txt && cat $(RESULTS)/eval/sgd_oracle.txt
	$(VENV)/bin/stickyroute replay $(CORPUS)/dev_clinc.jsonl --agents $(CORPUS)/agents_clinc.toml --strategy recommended --classifier oracle > $(RESULTS)/eval/clinc_oracle.txt && cat $(RESULTS)/eval/clinc_oracle.txt
	$(PY) eval/learned_packs.py $(CORPUS) > $(RESULTS)/eval/learned_packs.md && cat $(RESULTS)/eval/learned_packs.md
	$(PY) eval/task_routes.py $(CORPUS) > $(RESULTS)/eval/task_routes.md && cat $(RESULTS)/eval/task_routes.md

eval-tasks: install
	@mkdir -p $(RESULTS)/eval
	$(PY) eval/task_routes.py $(CORPUS) > $(RESULTS)/eval/task_routes.md && cat $(RESULTS)/eval/task_routes.md

eval-packs: install
	@mkdir -p $(RESULTS)/eval
	$(PY) eval/learned_packs.py $(CORPUS) > $(RESULTS)/eval/learned_packs.md && cat $(RESULTS)/eval/learned_packs.md

eval-hints: install
	@mkdir -p $(RESULTS)/eval
	$(PY) eval/agent_hints.py $(CORPUS) > $(RESULTS)/eval/agent_hints.md && cat $(RESULTS)/eval/agent_hints.md

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache site
