# Two commands on a fresh clone: `make demo` and `make test`. Each installs what it needs first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test bench lab lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

demo: install
	$(VENV)/bin/evalkit demo

# pytest exits 5 when it collected no test: that is a failure here, never a green run.
test: install
	$(VENV)/bin/ruff check evalkit tests benchmarks
	$(VENV)/bin/mypy
	# the layer contract of pyproject.toml ([tool.importlinter])
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

bench: install
	$(PY) benchmarks/run.py

lab: install
	$(VENV)/bin/jupyter lab notebooks/

lint: install
	$(VENV)/bin/ruff check evalkit tests benchmarks
	$(VENV)/bin/mypy
	# the layer contract of pyproject.toml ([tool.importlinter])
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/ruff format --check evalkit tests benchmarks

clean:
	rm -rf $(VENV) reports/* build *.egg-info
