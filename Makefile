# Two entry points: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo tutorial test lint lit pytest bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python demo/run_demo.py

tutorial: $(STAMP)
	$(BIN)/python demo/tutorial.py

test: $(STAMP) lint lit pytest

lint: $(STAMP)
	$(BIN)/ruff check irc tests bench demo tools
	$(BIN)/ruff format --check irc tests bench demo
	$(BIN)/mypy
	$(BIN)/lint-imports

lit: $(STAMP)
	$(BIN)/lit -q tests/filecheck

pytest: $(STAMP)
	$(BIN)/pytest -q -n 2

# Differential fuzzing (docs/testing.md): make fuzz N=10000 SEED=0
N ?= 1000
SEED ?= 0
fuzz: $(STAMP)
	$(BIN)/python -m irc.testing.fuzz --count $(N) --seed $(SEED) --jobs 2 --save-failures tests/fuzz_regressions

bench: $(STAMP)
	$(BIN)/python bench/bench_compile.py

clean:
	rm -rf $(VENV) build
