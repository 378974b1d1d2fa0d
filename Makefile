# Two commands on a fresh clone: `make demo` and `make test`. Each installs what it needs first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK   := requirements.lock
PIP    := $(PY) -m pip --disable-pip-version-check
# What `make lock` resolves for: CI's interpreter and machine.
LOCK_TARGET := --python-version 3.11 --python-platform x86_64-unknown-linux-gnu

.PHONY: install lock demo test test-fast bench lab lint clean

install: $(STAMP)

# Every package at the version and hash the lock pins (the core and every extra: the demo,
# the lab and the tests all run from one environment), then evalkit itself without resolving
# anything; the check fails when pyproject.toml asks for something the lock lacks.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --require-hashes -r $(LOCK)
	$(PY) -m evalkit.provenance.lockfile pyproject.toml $(LOCK)
	rm -rf evalkit.egg-info  # stale metadata of an older checkout would shadow pyproject.toml
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	# the commit-msg hook (.githooks/commit-msg) in a git checkout; an installed wheel has none
	if git rev-parse --git-dir >/dev/null 2>&1; then git config core.hooksPath .githooks; fi
	touch $(STAMP)

# Regenerate the lock from pyproject.toml: every extra and the build system's requirements,
# exact versions, the sha256 of every file of each. Needs the package index; commit the result.
lock:
	test -x $(VENV)/bin/uv || { $(PYTHON) -m venv $(VENV) && $(PIP) install --quiet 'uv>=0.5'; }
	$(PY) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires'], sep='\n')" \
	  | $(VENV)/bin/uv pip compile --quiet pyproject.toml - --all-extras --generate-hashes \
	    $(LOCK_TARGET) --custom-compile-command 'make lock' -o $(LOCK)

demo: install
	$(VENV)/bin/evalkit demo

# Parallel test workers (pytest-xdist). The suite mostly waits (subprocesses, a browser,
# kernels, clusters), so more workers than cores still pays; TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= 4
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# pytest exits 5 when it collected no test: that is a failure here, never a green run.
test: install
	# commit messages after .ci/commits-checked-since: a subject <= 72 characters and a body
	$(PY) .ci/commit_message.py --since-file .ci/commits-checked-since
	$(VENV)/bin/ruff check evalkit tests benchmarks
	$(VENV)/bin/ruff format --check evalkit tests benchmarks
	$(VENV)/bin/mypy
	# the layer contract of pyproject.toml ([tool.importlinter])
	$(VENV)/bin/lint-imports --no-logo
	$(PYTEST); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

# The edit loop: every test but the slow statistics, the notebooks and the browser (make test
# runs them all). Same exit-5 rule.
test-fast: install
	$(PYTEST) -q -m "not slow and not notebook and not browser"; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

bench: install
	$(PY) benchmarks/run.py

# JupyterLab on the notebooks, on loopback only. Jupyter refuses to run as root without
# --allow-root, and a container's user is root: added then, and only then.
LAB_PORT ?= 8888
LAB_ARGS ?=
lab: install
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
	  $$(if [ "$$(id -u)" = 0 ]; then echo --allow-root; fi) $(LAB_ARGS) notebooks/

lint: install
	$(VENV)/bin/ruff check evalkit tests benchmarks
	# the layer contract of pyproject.toml ([tool.importlinter])
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/ruff format --check evalkit tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) reports/* build *.egg-info
