# One-command set-up: `make demo` and `make test` create .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_STAMP := $(VENV)/.stamp-run
DEV_STAMP := $(VENV)/.stamp-dev
PIP_FLAGS := --disable-pip-version-check -q

.PHONY: demo test check lint fmt typecheck collect pytest browser bench bench-quick bench-history bench-site bench-scale bench-scale-offline bench-mcp soak clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[sim]'
	@touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[dev]'
	@touch $@ $(RUN_STAMP)

demo: $(RUN_STAMP)
	$(BIN)/pplx-export demo --out demo-archive

# The type checks and pytest's collection pass (see `pytest` below) run side by side, then the
# tests (COLLECTED=1: the pass is not repeated).
test: $(DEV_STAMP) browser lint
	@$(MAKE) --no-print-directory -j2 typecheck collect
	@$(MAKE) --no-print-directory pytest COLLECTED=1

check: test

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: $(DEV_STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The package (--strict) and the tests (the settings in pyproject.toml) are checked side by side,
# one process per core. Each keeps its own cache: their options differ, so a shared cache would
# be invalidated by the other run every time.
typecheck: $(DEV_STAMP)
	$(BIN)/mypy --strict --cache-dir .mypy_cache/package pplx_archiver & package=$$!; \
	  $(BIN)/mypy --cache-dir .mypy_cache/tests tests; tests=$$?; \
	  wait $$package && exit $$tests

# The browser tests (tests/site) drive Debian's Chromium through Playwright (Playwright's own
# browser download is not used): install the package when it is missing.
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  echo "installing chromium (apt-get)"; \
	  $$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	fi

# The whole suite in one pytest run (pytest-xdist, work-stealing: a worker that runs dry takes
# over the rest of another's share), with coverage of the package measured across the workers
# (pytest-cov; the floor, fail_under, is in pyproject.toml). Tracing slows the traced code down
# about twofold, so the per-test hang guard is raised from 300 s to 900 s. Tests marked `heavy`
# (large CPU-bound runs of the package's own code, such as the 2,000-thread simulated account)
# run untraced in the same run (tests/conftest.py gives them pytest-cov's `no_cover`); the
# lines they reach are reached by traced tests as well.
# Four workers on two cores: much of the suite's time is spent waiting (simulated latency, rate
# limits, backoffs, subprocesses), so the extra workers keep both cores busy.
# `coverage report -m` afterwards lists the lines not covered.
# Bytecode is cached for the run (an environment may set PYTHONDONTWRITEBYTECODE): a test
# module is rewritten for pytest's asserts and compiled once, by the collection pass before
# the run, not once in every worker (measured: a worker's collection under coverage 14 s of
# CPU without the cache, 7.7 s with it), and the archiver's own child processes start from
# compiled modules.
PYTEST_WORKERS ?= 4
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE
collect: $(DEV_STAMP)
	$(PYTEST_ENV) $(BIN)/python -m pytest -q --collect-only -p no:cacheprovider >/dev/null

pytest: $(DEV_STAMP) $(if $(COLLECTED),,collect)
	$(PYTEST_ENV) $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal --cov --cov-report= -o timeout=900
	@echo "coverage (branches included):"
	$(BIN)/python -m coverage report --format=total

bench: $(RUN_STAMP)
	$(BIN)/python scripts/bench.py

bench-quick: $(RUN_STAMP)
	$(BIN)/python scripts/bench.py --quick

bench-history: $(RUN_STAMP)
	$(BIN)/python scripts/bench_history.py --threads 200 --syncs 30

bench-site: $(RUN_STAMP)
	$(BIN)/python scripts/bench_site.py --sim 2000

# What grows with the archive outside the harvest, at two account sizes compared in one run
# (harvest, no-op sync, status/alerts/runs/failed, verify full and sampled): bench/scale.json.
# SCALE_SIZES=2000,10000 for smaller archives; SCALE_WORK=DIR keeps them (reused next time).
SCALE_SIZES ?= 10000,100000
bench-scale: $(RUN_STAMP)
	$(BIN)/python scripts/bench_scale.py --sizes $(SCALE_SIZES) $(if $(SCALE_WORK),--work $(SCALE_WORK) --reuse)

# site, re-render, reindex, relations at two sizes, the site's search data in Chromium,
# search by stages: bench/scale-offline.json (docs/dev/benchmarks.md).
bench-scale-offline: $(DEV_STAMP)
	$(BIN)/python scripts/bench_scale_offline.py

# The MCP server's tool latency (needs the `mcp` extra, part of the dev install).
bench-mcp: $(DEV_STAMP)
	$(BIN)/python scripts/bench_mcp.py

soak: $(DEV_STAMP)
	PPLX_SOAK=1 $(BIN)/python -m pytest -q tests/reliability

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage htmlcov demo-archive build dist test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
