"""Measurements are data: each benchmark writes a record, and the docs' tables are made from
the newest records.

Every benchmark script ends with ``scripts/records.py``'s ``write_record``, which keeps what
was measured, on which commit, when, and how busy the machine was, in
``benchmarks/records/``. ``make bench-tables`` (``scripts/benchmark_tables.py``) writes the
tables of docs/benchmarks.md and docs/grading-quality.md from the newest record of each
question. If the first test fails, a record was added or a table edited by hand without
``make bench-tables``. No Spark runs here.
"""
from __future__ import annotations

import json
import shutil

import pytest

from autograder.grading import REPOSITORY
from scripts import benchmark_tables as tables
from scripts import records


def test_every_table_is_what_the_newest_records_make():
    assert tables.stale() == [], "run make bench-tables"


def test_every_question_recorded_has_a_table_in_a_doc():
    assert set(tables.read_records()) <= set(tables.TABLES)


def test_every_table_has_its_markers_in_its_doc():
    for name, (doc, _) in tables.TABLES.items():
        text = doc.read_text()
        assert tables.BEGIN.format(name=name) in text and tables.END.format(name=name) in text, name


@pytest.mark.parametrize("script", sorted(p.name for p in (REPOSITORY / "scripts").glob("benchmark_*.py")
                                          if p.name != "benchmark_tables.py") + ["benchmark.py"])
def test_every_benchmark_script_writes_a_record(script):
    assert "write_record(" in (REPOSITORY / "scripts" / script).read_text()


def test_every_record_says_what_was_measured_where_and_when():
    for question, kept in tables.read_records().items():
        for path, record in kept:
            assert {"commit", "date", "cores", "load"} <= set(record), path.name
            assert record.get("numbers") or record.get("tasks"), path.name
            assert path.name.startswith(question + "-"), path.name


def test_a_record_keeps_the_commit_the_date_and_the_machine(tmp_path):
    path = records.write_record("grading", {"01_global_limit": {"notebooks": 2, "stock": 60.0}},
                                load=[1.0, 2.0, 3.0], folder=tmp_path)
    record = json.loads(path.read_text())
    assert record["question"] == "grading" and path.name.startswith("grading-")
    assert record["commit"] and record["date"] and record["cores"] >= 1
    assert record["load"] == [1.0, 2.0, 3.0]
    assert record["numbers"] == {"01_global_limit": {"notebooks": 2, "stock": 60.0}}


def _docs_from(folder, *questions):
    """The docs' text as the records in ``folder`` make it, for these questions' tables."""
    chosen = {name: tables.TABLES[name] for name in questions}
    docs = {doc: doc.read_text() for doc, _ in chosen.values()}
    return tables.generated(docs, tables.read_records(folder), chosen)


def test_a_newer_record_of_one_chapter_replaces_that_chapter_s_row_only(tmp_path):
    for path in tables.RECORDS.glob("*.json"):
        shutil.copy(path, tmp_path)
    before = _docs_from(tmp_path, "grading")[tables.BENCHMARKS]
    newer = {"question": "grading", "commit": "abc", "date": "9999-01-01T00:00", "cores": 2,
             "load": [0.5], "numbers": {"01_global_limit": {
                 "notebooks": 10, "load at the start": 0.5, "command --spark server --jobs 2": 100.0,
                 "floor": 80.0, "stock": 500.0, "solution run": 40.0}}}
    (tmp_path / "grading-9999-01-01-0000.json").write_text(json.dumps(newer))
    after = _docs_from(tmp_path, "grading")[tables.BENCHMARKS]

    def row(text, chapter):
        return next(line for line in tables._between(text, "grading").splitlines()
                    if line.startswith(f"| {chapter} |"))

    assert row(after, "01_global_limit") == (
        "| 01_global_limit | 10 | 500 | 100 | 80 | 5.0× | 1.2× | 40 | 6.00 | 50.0 | 300 | 0.50 |")
    assert row(after, "04_transform_with_state") == row(before, "04_transform_with_state")
    # the table says it comes from the newer record (its machine), not which day wrote it
    provenance = tables._between(after, "grading").splitlines()[-1]
    assert "load 0.5 when it began" in provenance and "9999" not in provenance, provenance


def test_a_table_edited_by_hand_is_stale(tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text(tables.BENCHMARKS.read_text().replace("| 01_global_limit | 30 | 871 |",
                                                         "| 01_global_limit | 30 | 870 |"))
    assert tables.stale(tables.RECORDS, {"grading": (doc, tables.grading)}) == [
        "benchmarks.md: table grading"]


def test_a_table_without_its_markers_is_an_error():
    with pytest.raises(ValueError, match="no markers for the table 'grading'"):
        tables.with_table("no tables here", "grading", "| a |")


@pytest.mark.parametrize("value, shown", [(None, "–"), ([2.1, 3.1], "2.10–3.10"), (9, "9"),
                                          (188.94, "188.9"), (4.621, "4.62")])
def test_a_number_is_shown_with_the_precision_it_was_measured_to(value, shown):
    assert tables.number(value) == shown
