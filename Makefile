# Every target is self-contained: it creates .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The suite starts hundreds of interpreters (the CLI, the pipeline's scripts, the
# service): each would compile agentform again without its bytecode cache.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-fast lint bench schemas cassettes docs clean screenshots

$(STAMP): pyproject.toml src/agentform/__init__.py  # the version is written there
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	bash examples/quickstart/demo.sh

# worksteal: a worker that runs out takes tests queued on the other (a few tests take
# minutes; with the default `load` a worker could sit idle behind them).
# Two workers a core: many tests wait (servers starting, requests held past a
# timeout, subprocesses, the browser), and a second worker uses the core meanwhile.
# Measured on 2 idle cores: test-fast 144 s with 2 workers, 113 s with 4, 126 s with 6.
# Each worker pays its start-up and collection, about 5 s of CPU (bench/suite_cpu.py).
WORKERS := $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 1) )))
TEST := $(BIN)/pytest -n $(WORKERS) --dist worksteal

test: $(STAMP)
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || echo "note: the console's browser tests (tests/browser) are skipped: chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
	$(TEST)

# The fast tier also runs a quarter of each property test's examples (the profile
# `fast`, tests/conftest.py), and loads no schemathesis: its one module is slow.
test-fast: $(STAMP)  # while working: everything but the slow and pipeline tiers
	$(TEST) -m "not slow and not pipeline" --hypothesis-profile=fast -p no:schemathesis

# The console guide's screenshots (docs/guide/images/console-*.png), taken by the browser tests.
screenshots: $(STAMP)
	AGENTFORM_SCREENSHOTS=docs/guide/images AGENTFORM_BROWSER_REQUIRED=1 $(BIN)/pytest -q -p no:randomly tests/browser -k every_page

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/service_lists.py
	$(BIN)/python bench/batches.py
	$(BIN)/python bench/service_auth.py
	$(BIN)/python bench/plan_scale.py
	$(BIN)/python bench/apply_scale.py
	$(BIN)/python bench/order.py
	$(BIN)/python bench/deliveries.py
	$(BIN)/python bench/delivery_workers.py
	$(BIN)/python bench/workspace_tests.py
	$(BIN)/python bench/policies.py
	$(BIN)/python bench/stuck_executions.py
	$(BIN)/python bench/environments.py

cassettes: $(STAMP)
	$(BIN)/python tests/cassettes/record.py

schemas: $(STAMP)
	$(BIN)/agentform schema --out schemas
	$(BIN)/python -m agentform.service.openapi_export schemas/agent-service.openapi.json

docs: $(STAMP)
	$(BIN)/python -m agentform.cli.reference docs/reference

clean:
	rm -rf $(VENV) .agentform examples/*/.agentform
