# Two commands do all the set-up on a fresh machine with Python 3.11 and Java 17:
#   make book   create .venv, install the pinned packages, save Spark's classes for faster JVM
#               starts (scripts/record_class_archive.py), execute every chapter, build _build/html
#   make test   the same set-up, then the whole test suite (what CI runs)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test test-hostile env lock bench clean release widgets axe chromium sandbox bench-book grade bench-grading lab lab-instructor check known-answers mutation mutation-on-spark

env: $(STAMP)

# requirements.lock: every package and its exact version (what requirements.txt resolves to),
# so two fresh clones a month apart install the same set.
$(STAMP): requirements.lock pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/python -m scripts.record_class_archive --force
	touch $(STAMP)

# Execute the chapters two at a time into the execution cache, then build _build/html
# (scripts/build_book.py: a page already in the cache is not run again).
book: env widgets
	$(BIN)/python -m scripts.build_book

# Everything, on two workers (pyproject.toml), the hostile-submission corpus included.
test: env widgets axe chromium sandbox
	$(BIN)/python -m pytest

# The hostile-submission corpus alone, in one process (what its limits were measured on).
test-hostile: env
	$(BIN)/python -m pytest -n 0 -m hostile tests/grading/test_classroom_hostile.py

# Resolve requirements.txt into requirements.lock again (book/maintaining.md). Versions the
# lock already holds are kept while they still fit; LOCK_OPTIONS=--upgrade takes the newest
# that fit, LOCK_OPTIONS="--upgrade-package NAME" one package's.
lock: env
	CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --quiet --allow-unsafe --strip-extras \
	  --no-emit-index-url --no-emit-find-links $(LOCK_OPTIONS) \
	  --output-file requirements.lock requirements.txt

# Regenerate the learners' release (exercises/) from the instructor's source (solutions/).
# nbgrader runs `alembic` from PATH, hence the venv's bin first.
release: env
	mkdir -p .course-work
	for assignment in $$(ls solutions); do \
	  PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/nbgrader generate_assignment $$assignment --force \
	    --CourseDirectory.db_url=sqlite:///$(CURDIR)/.course-work/release.db || exit 1; \
	done

# JupyterLab on 127.0.0.1 from the course's .venv (lab/README.md): a learner's opens in
# exercises/ without nbgrader's instructor tools; an instructor's has them all.
# Options for JupyterLab: make lab LAB_OPTIONS="--port 8890 --no-browser".
lab: env
	$(BIN)/python -m scripts.lab learner $(LAB_OPTIONS)

# Where every task of exercise notebooks stands (done, not started, not right yet):
# make check NOTEBOOK=exercises/01_global_limit/01_global_limit.ipynb, or every notebook.
NOTEBOOK ?= $(wildcard exercises/*/*.ipynb)
check: env
	$(BIN)/python -m autograder.checks.check_notebook $(NOTEBOOK)

# Spark's answers to the worked examples, recorded so a learner's self-check needs no Spark
# run (autograder/checks/answers.py); tests/toolkit/test_known_answers.py says when to run it again.
known-answers: env
	$(BIN)/python -m scripts.record_known_answers

# How many wrong versions of each plain-function task's solution its check's fixed cases
# catch (docs/grading-quality.md, "Fixed cases measured by mutation"): mutmut on each solution,
# judged on Spark's answers recorded in tests/support/fixed_answers.json (no Spark runs);
# writes benchmarks/records/mutation-<date>.json. scripts/record_fixed_answers.py records
# those answers again (it runs Spark). Options: MUTATION_OPTIONS="--task 01_global_limit/predict_state".
mutation: env
	$(BIN)/python -m scripts.mutation_testing $(MUTATION_OPTIONS)

# The same for the tasks Spark runs (queries, processors, readers of a checkpoint): each mutant
# judged with one Spark session, about 10 minutes in all; writes
# benchmarks/records/mutation-on-spark-<date>.json. One task: MUTATION_OPTIONS="--task NAME".
mutation-on-spark: env
	$(BIN)/python -m scripts.mutation_testing --on-spark $(MUTATION_OPTIONS)

lab-instructor: env
	$(BIN)/python -m scripts.lab instructor $(LAB_OPTIONS)

bench: env
	$(BIN)/python -m scripts.benchmark

# Grade a class: make grade ASSIGNMENT=01_global_limit SUBMISSIONS=path/to/submitted
# (ASSIGNMENT=--all for every assignment; see docs/instructor.md).
ASSIGNMENT ?= --all
SUBMISSIONS ?= submitted
grade: env sandbox
	$(BIN)/python -m autograder.classroom grade $(ASSIGNMENT) --submissions $(SUBMISSIONS) $(GRADE_OPTIONS)

# Stock nbgrader vs the grading command vs the Spark work alone (docs/instructor.md).
bench-grading: env
	$(BIN)/python -m scripts.benchmark_grading $(BENCH_OPTIONS)

# The scripts that draw widgets on the book's pages, fetched from the npm registry (not
# committed): the pages load them from the site itself, never from a CDN.
widgets:
	$(PYTHON) -m scripts.vendor_widgets

# The accessibility checker the browser tests inject into every page, from the npm
# registry like the widget scripts (not committed).
axe:
	$(PYTHON) -m scripts.vendor_axe

# The browser tests (tests/browser/) drive the system's Chromium; install it if missing.
chromium:
	@test -x /usr/bin/chromium || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# Debian's bubblewrap, the sandbox every graded notebook runs in (autograder/grading/sandbox.py,
# docs/instructor.md "The sandbox"): installed when missing, which needs root as on CI.
sandbox:
	@command -v bwrap >/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }

# Fresh and warm build times of the book.
bench-book: env widgets
	$(BIN)/python -m scripts.benchmark_book

clean:
	rm -rf _build

# The tables of docs/benchmarks.md and docs/grading-quality.md, made again from the newest
# records in benchmarks/records/ (every benchmark script writes one when it ends).
.PHONY: bench-tables
bench-tables:
	$(PYTHON) -m scripts.benchmark_tables
