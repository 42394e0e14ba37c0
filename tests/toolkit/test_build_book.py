"""scripts/build_book.py never hides a page's failed first run: it names the page, the cell
(its number, its line in the page, its first lines) and the end of the error, even when
Jupyter Book's second run of the page passes (these pages need a Python kernel, not Spark).
And the pages one worker runs share its driver JVM and nothing else: each gets a fresh
kernel and SparkContext, and a JVM that died is replaced (these two run Spark)."""
from pathlib import Path

import nbformat
import pytest


PAGE = """\
---
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

# A page

```{code-cell} ipython3
rows = [1, 2, 3]
```

Some text between the cells.

```{code-cell} ipython3
:tags: [remove-cell]

total = sum(rows)
assert total == 7, f"the rows add up to {total}"
```

```{code-cell} ipython3
print("never reached")
```
"""


@pytest.fixture(scope="module")
def build_book():
    from scripts import build_book as module

    return module


def test_a_failed_run_names_the_page_the_cell_its_line_and_the_error(build_book, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    name, executed, seconds, report = build_book.execute(page, timeout=120)
    assert name == str(page) and executed is None
    assert report.startswith("!" * 78 + f"\nFIRST RUN FAILED: {page}, after ")
    # the second of the three code cells, whose fence is line 16 of the page
    assert "  code cell 2, line 16 of the page, which begins:" in report
    assert "    | total = sum(rows)" in report
    assert ":tags:" not in report
    assert "AssertionError: the rows add up to 6" in report
    assert "\x1b[" not in report and "nbclient" not in report   # the reader's traceback
    assert "never reached" not in report


def test_a_page_that_runs_reports_nothing(build_book, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE.replace("total == 7", "total == 6"))
    name, executed, seconds, report = build_book.execute(page, timeout=120)
    assert report is None and "never reached" in executed


def test_a_cell_that_never_finished_is_the_failed_one(build_book):
    notebook = build_book.nbformat.v4.new_notebook(cells=[
        build_book.nbformat.v4.new_markdown_cell("text"),
        build_book.nbformat.v4.new_code_cell("import time", execution_count=1),
        build_book.nbformat.v4.new_code_cell("time.sleep(10_000)"),
        build_book.nbformat.v4.new_code_cell("after")])
    assert build_book.failed_cell(notebook) == 2


def test_a_chapters_further_page_is_executed_like_the_chapter(build_book):
    # the table of contents lists it as a section of its chapter
    root = Path(__file__).resolve().parents[2]
    names = [page.name for page in build_book.book_pages(root)]
    assert names.index("04_transform_with_state.md") + 1 == names.index(
        "04_transform_with_state_further.md")
    assert "02_aggregation_planning_further.md" in names


#: The pid of the JVM a page's Spark runs in.
JVM_PID = "course_session()._jvm.java.lang.ProcessHandle.current().pid()"


def spark_page(*lines: str) -> str:
    """A page of one code cell that starts the course's Spark, then runs ``lines`` (a failed
    assert fails the page)."""
    return PAGE.split("# A page")[0] + "# A page\n\n```{code-cell} ipython3\n" + \
        "\n".join(["from autograder import course_session", *lines]) + "\n```\n"


def run_pages(run, folder, pages: dict[str, tuple[str, ...]]) -> list[str]:
    """Write each page into ``folder``, then run them in order with ``run(page)``
    (:func:`execute` or :func:`execute_in_worker`); each must pass. Their executed JSON."""
    executed = []
    for name, lines in pages.items():
        (folder / name).write_text(spark_page(*lines))
        _, notebook, _, report = run(folder / name)
        assert report is None, report
        assert notebook is not None
        executed.append(notebook)
    return executed


@pytest.mark.slow
def test_pages_that_share_a_jvm_share_nothing_else(build_book, tmp_path):
    # Scenario: the first page leaves a setting changed, a view, a streaming query still
    # running and a Python name behind; the next page, run by the same JVM in a new kernel,
    # finds Spark as course_session() makes it and none of them.
    from autograder.toolkit.session import SharedDriver

    driver = SharedDriver(tmp_path)
    try:
        run_pages(lambda page: build_book.execute(page, 300, driver), tmp_path, {
            "first.md": (
                "spark = course_session()",
                "spark.conf.set('spark.sql.shuffle.partitions', '7')",
                "spark.range(3).createOrReplaceTempView('left_behind')",
                "query = spark.readStream.format('rate').load().writeStream.format('noop').start()",
                f"open('jvm.pid', 'w').write(str({JVM_PID}))",
                "left_behind = 1"),
            "next.md": (
                "spark = course_session()",
                f"assert str({JVM_PID}) == open('jvm.pid').read()",
                "assert spark.conf.get('spark.sql.shuffle.partitions') == '2'",
                "assert not spark.catalog.tableExists('left_behind')",
                "assert spark.streams.active == []",
                "assert 'left_behind' not in globals() and 'query' not in globals()")})
    finally:
        driver.close()


def printed(executed: str) -> str:
    """What the cells of an executed page (as JSON) printed, in order."""
    notebook = nbformat.reads(executed, 4)
    return "".join(output.get("text", "") for cell in notebook.cells
                   for output in cell.get("outputs", []))


@pytest.mark.slow
def test_a_page_after_its_workers_jvm_died_gets_a_new_one(build_book, tmp_path):
    # Scenario: a worker of the build runs a page whose JVM dies before the page ends (here
    # the page kills it; the machine's memory might); the worker's next page runs in a new
    # JVM instead of failing on the dead one.
    try:
        executed = run_pages(lambda page: build_book.execute_in_worker(page, 300), tmp_path, {
            "dies.md": (
                "import os, signal, time",
                f"jvm = {JVM_PID}",
                "print('jvm', jvm)",
                "os.kill(jvm, signal.SIGKILL)",
                "while os.path.exists(f'/proc/{jvm}/status') and 'zombie' not in open(f'/proc/{jvm}/status').read():",
                "    time.sleep(0.1)"),
            "next.md": (f"print('jvm', {JVM_PID})",)})
        pids = [printed(notebook).split()[1] for notebook in executed]
        assert pids[0] != pids[1]
    finally:
        for driver in build_book._drivers.values():  # a pool's worker ends with its JVMs
            driver.close()
        build_book._drivers.clear()
