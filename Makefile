# stickyroute: `make run` starts the proxy with demo agents on config/proxy.toml; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CONFIG ?= config/proxy.toml
SERVE_ARGS ?=

# Two installs into one venv, each with its own stamp: the runtime alone (`make run`, `make check`)
# and the runtime with the test, dev and eval tools (everything else). Both hold one lock
# ($(VENV).lock, flock) and look at their stamp again once they have it, so targets started
# together (`make run` and `make test` on a fresh clone) install one after the other, never at once.
RUNTIME_STAMP := $(VENV)/.stamp-runtime
TOOLS_STAMP := $(VENV)/.stamp-tools
LOCK := $(VENV).lock
TOOLS := .[test,dev,eval]
define install_into_venv
	flock $(LOCK) sh -c 'if [ ! "$(1)" -nt pyproject.toml ]; then \
	  { [ -x "$(PY)" ] || $(PYTHON) -m venv "$(VENV)"; } && \
	  "$(PY)" -m pip install --quiet --upgrade pip && \
	  "$(PY)" -m pip install --quiet -e "$(2)" && touch "$(1)"; fi'
endef

CORPUS ?= eval/corpus
RESULTS ?= results

.PHONY: install install-runtime run test lint docs bench bench-icount bench-state bench-learn learn-cv eval eval-hints eval-tasks eval-packs check clean faults soak fuzz reference

$(RUNTIME_STAMP): pyproject.toml
	$(call install_into_venv,$(RUNTIME_STAMP),.)

$(TOOLS_STAMP): pyproject.toml
	$(call install_into_venv,$(TOOLS_STAMP),$(TOOLS))

# the runtime and every tool (tests, lint, eval)
install: $(TOOLS_STAMP)

# the runtime only: what `pip install stickyroute` gives
install-runtime: $(RUNTIME_STAMP)

run: install-runtime
	$(VENV)/bin/stickyroute serve --config $(CONFIG) --demo-agents $(SERVE_ARGS)

test: install lint docs
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check stickyroute tests bench
	$(VENV)/bin/mypy

# the documentation site (docs/, mkdocs.yml): --strict fails on a broken link, a missing page or an orphan
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

check: install-runtime
	$(VENV)/bin/stickyroute check $(CONFIG)

# docs/configuration.md and docs/cli.md from the config model and the command line (tests fail when stale)
reference: install-runtime
	$(PY) -m stickyroute.cli.reference write

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
	rm -rf $(VENV) $(LOCK) *.egg-info .pytest_cache dist build site
