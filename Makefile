# The two commands: `make book` and `make test`. Each creates the environment when it is missing.
# While working: `make test-fast` (unit tests not marked slow, about a minute), `make test-unit` (every
# unit test), `make lint`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The interpreter .venv is created from: the first of these that tools/check_python.py accepts (the
# versions the lock installs on), else plain python3, which the check then explains. PYTHON=... overrides.
# (A deferred variable: the search runs only when .venv is being made.)
PYTHON ?= $(shell for p in python3.11 python3.12 python3.13 python3; do \
  command -v $$p >/dev/null 2>&1 && $$p tools/check_python.py --quiet 2>/dev/null && { command -v $$p; exit; }; done; \
  command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
CHAPTERS := $(shell grep -l '^kernelspec:' book/*.md)
REFERENCES := $(patsubst book/%.md,tests/references/%.ipynb,$(CHAPTERS))

# Same settings for every command: CPU JAX, no GPU memory grab. (Do not set MPLBACKEND: glued
# figures need the notebook's inline backend.)
export JAX_PLATFORMS := cpu
export XLA_PYTHON_CLIENT_PREALLOCATE := false
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# Python writes the bytecode of the modules it imports, so the next process loads it (.venv is
# installed with --no-compile, see env). Some environments set PYTHONDONTWRITEBYTECODE (this project's
# machine does): every chapter's kernel then compiled jax, scipy, sympy and matplotlib from source
# again, 5.1 s of imports instead of 1.3 s, about half a minute of `make book`. An empty value unsets it.
export PYTHONDONTWRITEBYTECODE :=
# Explorers (localization.book.explorer): chapters executed in batch (nbval, references) show the
# controls only (nbclient's output-widget emulation can hang an execution); the book build draws
# every stop of every explorer into the page ("frames"); `make lab` clears it, so notebooks are live.
export LOCALIZATION_STATIC_WIDGETS := 1
# The book seed (localization.book.seed): every chapter's random keys derive from it. The references
# are written with seed 0; nbval re-executes the chapters with CHECK_SEED, so every check cell must
# pass for a second seed and every compared output must be seed-independent.
LOCALIZATION_SEED ?= 0
export LOCALIZATION_SEED
CHECK_SEED ?= 1

# JAX's persistent compilation cache, one directory for every command (unit tests, nbval, the book
# build, the claims sweep): XLA compilation is most of a chapter's time, and a program compiled by
# one process is loaded by the next that needs it (nbval and the build compile the same programs).
# A cached program is the compiled executable itself, so results are those of a fresh compilation.
# Every compilation is cached (most take 0.05-0.5 s; loading one takes milliseconds). JAX writes an
# entry without a lock (its lock comes with a size limit whose bookkeeping rescans the whole cache
# at every write), so a process may, rarely, find an entry that another is still writing: JAX then
# warns and compiles the program itself. That warning is silenced (in kernels through
# PYTHONWARNINGS, in pytest, whose warnings are errors, through -W), as the result is unchanged.
# Under _build (never committed); `make clean` empties it.
export JAX_COMPILATION_CACHE_DIR := $(CURDIR)/_build/jax-cache
export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS := 0
export JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES := 0
CACHE_WARNING := Error reading persistent compilation cache entry
export PYTHONWARNINGS := ignore:$(CACHE_WARNING):UserWarning
PYTEST := $(PY) -m pytest -W "ignore:$(CACHE_WARNING):UserWarning"
# Chapters the book build executes side by side (python -m localization.book.notebooks execute).
BOOK_JOBS ?= 2

.PHONY: help env build-dir book book-then-site test lint test-fast test-unit test-notebooks test-site lab serve references bench lock clean offline-assets update-offline-assets browser

help:
	@echo "make book   - set up (if needed), execute every chapter, write the site to _build/html"
	@echo "make test   - set up (if needed), run lint, nbval on every chapter (its executions feed the strict book build), every unit test and the browser check"
	@echo ""
	@echo "while working:"
	@echo "make test-fast  - unit tests not marked slow (pytest -m 'not slow'; about a minute on 2 cores)"
	@echo "make test-unit  - every unit test, slow ones too (the first step of make test)"
	@echo "make lint       - ruff check, ruff format --check, and the chapters' code cells (run first by make test)"
	@echo "make test-notebooks - nbval: re-execute every chapter with a second seed and compare its outputs with tests/references"
	@echo "make test-site  - the browser check of the built site (needs make book first; SITE_SCREENSHOTS=1 keeps screenshots for review)"
	@echo ""
	@echo "make lab    - open the chapters as notebooks in JupyterLab (jupytext)"
	@echo "make serve  - serve _build/html on http://127.0.0.1:8000"
	@echo "make references - re-execute chapters into tests/references/*.ipynb (review the diff before committing)"
	@echo "make bench  - library speed benchmarks"
	@echo "make browser - find (or install) the headless browser the site check uses"

# --- environment -------------------------------------------------------------------------------
env: $(STAMP)

# The interpreter is checked first (a clear message instead of a resolver error deep in pip), and
# .venv's own again (a .venv left by another Python). The package itself is built in pip's isolated
# build environment (a current setuptools): the locked setuptools 65.5.0 cannot build on 3.12+.
# --no-compile: pip would byte-compile every module of every package (sympy alone: 20 s with, 4 s
# without, measured here); Python compiles the modules the book imports when it first imports them.
# First the lock's packages in two halves side by side, without dependency resolution (constraints.txt
# is the whole environment, resolved by `make lock`; pip's own packages excepted): installing is mostly
# unpacking, one core per pip, 11 s instead of 19 s here. Then the install that decides: pip resolves
# requirements.txt against the lock, which finds everything in place when the halves succeeded, and
# installs (and reports on) whatever they did not, such as a package only another platform needs. The
# halves are quiet: a failure there is the next line's to install or to explain.
LOCK_HALF = grep -E '^[A-Za-z0-9][A-Za-z0-9._-]*==' constraints.txt | grep -vE '^(pip|setuptools|wheel)==' | awk 'NR % 2 == $(1)'
PIP_INSTALL := $(PY) -m pip install --quiet --disable-pip-version-check --no-compile
$(STAMP): requirements.txt constraints.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "no python3 on PATH: install Python 3.11 (3.11.5 or later), 3.12 or 3.13 (see README)"; exit 1; }
	@test -x $(PY) || { $(PYTHON) tools/check_python.py && $(PYTHON) -m venv $(VENV); }
	@$(PY) tools/check_python.py --quiet || { echo "(.venv was made by another Python: remove it with 'rm -rf .venv' and run make again)"; exit 1; }
	@$(call LOCK_HALF,0) > $(VENV)/lock-half-0.txt; $(call LOCK_HALF,1) > $(VENV)/lock-half-1.txt
	@echo "installing the lock in two halves side by side (then pip checks it against requirements.txt)"
	@{ $(PIP_INSTALL) --no-deps -r $(VENV)/lock-half-0.txt >/dev/null 2>&1 & \
	   $(PIP_INSTALL) --no-deps -r $(VENV)/lock-half-1.txt >/dev/null 2>&1 & wait; }
	$(PIP_INSTALL) -r requirements.txt -c constraints.txt
	$(PIP_INSTALL) --no-deps -e .
	$(PY) -m pip check
	@touch $@

# Offline rendering: the one script the pages need, MathJax (tex-svg.js and its TeX extensions, 2.4 MB),
# is committed under _assets/mathjax, so building needs no Node.js and no network. This checks the
# copies against their manifest; update-offline-assets (a maintainer's step, needs npm) refreshes
# them from the version pinned in offline/package.json.
offline-assets: env
	@$(PY) tools/vendor_assets.py --check

update-offline-assets: env
	@command -v npm >/dev/null || { echo "npm (Node.js) is needed to refresh _assets/mathjax from offline/package.json (make book does not need it)"; exit 1; }
	cd offline && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	$(PY) tools/vendor_assets.py --update

# Headless Chrome/Chromium for the browser check: found under its usual names ($CHROME overrides;
# macOS app bundles too); installed with apt-get only as root on a Debian-like system; otherwise
# the check stops with what to install on each platform.
browser: env
	@exe=$$($(PY) tools/find_browser.py) && echo "browser: $$exe" && "$$exe" --version

# --- the book ----------------------------------------------------------------------------------
# The execution cache and Sphinx's environment do not know the seed: a build for another seed
# than the last one starts from an empty _build (but for the compilation cache: compiled programs
# do not depend on the seed).
# Jupyter Book executes chapters one at a time: localization.book.notebooks first executes them
# BOOK_JOBS at a time, as the build would and with the build's environment, into the build's
# execution cache; the build then reads every chapter from the cache ("Using cached notebook").
BOOK_ENV := LOCALIZATION_STATIC_WIDGETS=frames
EXPLORER_LOG := $(CURDIR)/_build/explorers.jsonl
build-dir:
	@mkdir -p _build; if [ "$$(cat _build/.seed 2>/dev/null)" != "$(LOCALIZATION_SEED)" ]; then \
	  echo "book seed $(LOCALIZATION_SEED): clearing _build (it held seed '$$(cat _build/.seed 2>/dev/null)')"; \
	  find _build -mindepth 1 -maxdepth 1 ! -name jax-cache -exec rm -rf {} + && echo "$(LOCALIZATION_SEED)" > _build/.seed; fi

book: env offline-assets build-dir
	@rm -f $(EXPLORER_LOG)
	$(BOOK_ENV) LOCALIZATION_EXPLORER_LOG=$(EXPLORER_LOG) $(PY) -m localization.book.notebooks execute --jobs $(BOOK_JOBS) $(CHAPTERS)
	$(BOOK_ENV) $(BIN)/jupyter-book build . --builder html -W -n --keep-going
	@$(PY) -m localization.book.explorer $(EXPLORER_LOG)

# --- tests -------------------------------------------------------------------------------------
# Two worker processes (pytest-xdist): most of a test's time is single-threaded XLA compilation.
# (make test runs nbval, then the unit tests, each with two.)
XDIST := -n 2

# Every chapter is executed once: nbval runs it under the second seed, as the build would (the
# explorers' frames drawn), compares its outputs with the references, and stores the execution in
# the build's cache (--book-cache, tests/conftest.py); the strict build of that seed's book then
# renders those executions. The unit tests run beside the build and its browser check: the browser
# check mostly waits on the browser (about half a core), the unit tests use both (their compiled
# programs mostly loaded from the cache the chapters filled).
# (Executing the chapters for the build and again for nbval took 5 minutes more on 2 cores.)
test: env lint browser
	@$(MAKE) --no-print-directory build-dir LOCALIZATION_SEED=$(CHECK_SEED)
	@rm -f $(EXPLORER_LOG)
	LOCALIZATION_SEED=$(CHECK_SEED) $(BOOK_ENV) LOCALIZATION_EXPLORER_LOG=$(EXPLORER_LOG) $(NBVAL) --book-cache _build/.jupyter_cache
	@$(PY) -m localization.book.explorer $(EXPLORER_LOG)
	$(MAKE) --no-print-directory -j2 test-unit book-then-site

# (make test) the strict build of the second seed's book from nbval's executions, then its browser check.
book-then-site:
	$(MAKE) --no-print-directory book LOCALIZATION_SEED=$(CHECK_SEED)
	$(MAKE) --no-print-directory test-site

# Lint (pyflakes, pycodestyle, import order, bugbear, pyupgrade) and formatting, configured in pyproject.toml.
# The chapters' code cells (through jupytext, in one ruff call) get pyflakes and syntax checks: an
# undefined or unused name fails here in seconds rather than after a chapter has run for minutes; and
# they must fit the site's text column (75 characters: tools/code_width.py), so that no code block
# scrolls sideways (tools/lint_chapters.py).
lint: env
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(PY) tools/lint_chapters.py $(CHAPTERS)

# nbval with the second seed: every check passes for it, and every compared output (recorded with
# seed 0) must come out the same, so no compared text can depend on sampling or SGD. (Alone, it shows
# the explorers' controls only, as the references do: LOCALIZATION_STATIC_WIDGETS=1 above.)
# The per-cell timeout of every executor: _config.yml's (localization.book.notebooks.TIMEOUT).
CELL_TIMEOUT := $(shell sed -n 's/^  timeout: *\([0-9]*\).*/\1/p' _config.yml)
NBVAL := $(PYTEST) tests/references -q -p no:cacheprovider --nbval $(XDIST) --dist loadfile --nbval-current-env \
  --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=$(CELL_TIMEOUT)
test-notebooks: env
	LOCALIZATION_SEED=$(CHECK_SEED) $(NBVAL)

test-unit: env
	$(PYTEST) tests -q -p no:cacheprovider --ignore=tests/test_site.py $(XDIST) --durations=20

# The developer's loop: the unit tests not marked `slow` (the marker is registered in pyproject.toml;
# a test is marked slow when it takes more than a few seconds).
test-fast: env
	$(PYTEST) tests -q -p no:cacheprovider --ignore=tests/test_site.py -m "not slow" $(XDIST)

# The browser check of the built site (headless Chromium, network cut off): run after `make book`.
# SITE_SCREENSHOTS=1 also keeps a screenshot of every page at 1280 px under _build/screenshots/.
SITE_SCREENSHOTS ?=
# Two workers, each with its own browser; a page's tests stay on one worker, which visits the page
# once per width (tests/test_site.py: PAGE_PARAMS).
test-site: env browser
	@test -d _build/html || { echo "test-site checks the built site: run 'make book' first (no _build/html)"; exit 1; }
	SITE_SCREENSHOTS=$(SITE_SCREENSHOTS) $(PYTEST) tests/test_site.py -q -p no:cacheprovider $(XDIST) --dist loadgroup

# Regenerate the nbval references from the .md sources (then review `git diff tests/references`).
# CHAPTERS=book/data.md limits it to some chapters.
references: env
	$(PY) -m localization.book.notebooks references --jobs $(BOOK_JOBS) $(CHAPTERS)

# Chapters open as notebooks: jupytext's JupyterLab extension makes MyST .md files open as notebooks.
# As root (a container), JupyterLab refuses to start without --allow-root: it is passed then only.
# LAB_ARGS adds options (e.g. LAB_ARGS="--no-browser --port=8890").
LAB_ARGS ?=
ALLOW_ROOT = $(if $(filter 0,$(shell id -u)),--allow-root)
lab: env
	@mkdir -p $(VENV)/share/jupyter/lab/settings
	@echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' \
	  > $(VENV)/share/jupyter/lab/settings/overrides.json
	LOCALIZATION_STATIC_WIDGETS= $(BIN)/jupyter lab book/ $(ALLOW_ROOT) $(LAB_ARGS)

serve:
	@test -d _build/html || { echo "run 'make book' first"; exit 1; }
	$(PY) -m http.server --directory _build/html --bind 127.0.0.1 8000

bench: env
	$(PY) benchmarks/bench.py

# Re-resolve the full lock from requirements.txt (a maintainer's step, not part of set-up).
lock:
	rm -rf /tmp/lock-venv && $(PYTHON) -m venv /tmp/lock-venv
	/tmp/lock-venv/bin/pip install --quiet -r requirements.txt
	{ echo "# Full lock of the Python environment (pip constraints). Regenerate with \`make lock\`."; \
	  /tmp/lock-venv/bin/pip freeze --all; } > constraints.txt

clean:
	rm -rf _build
