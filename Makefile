# Two commands do all the set-up on a fresh machine with Python 3.11 and Java 17:
#   make book   create .venv, install the pinned packages, execute every chapter, build _build/html
#   make test   the same set-up, then the whole test suite (what CI runs)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test env bench clean release

env: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

book: env
	$(BIN)/jupyter-book build . --warningiserror --keep-going

test: env
	$(BIN)/python -m pytest

# Regenerate the learners' release (exercises/) from the instructor's source (solutions/).
release: env
	$(BIN)/python -m autograder.release

bench: env
	$(BIN)/python scripts/benchmark.py

clean:
	rm -rf _build
