"""The order in which the two workers take the test files: from the newest record of the
whole suite, longest first, a file the record does not know first of all."""
from __future__ import annotations

from scripts.records import newest_record
from tests.conftest import longest_first


def test_the_longest_files_go_first_and_an_unknown_one_before_them():
    seconds = {"tests/a.py": 10, "tests/b.py": 300, "tests/c.py": 40}
    assert longest_first(["tests/a.py", "tests/b.py", "tests/new.py", "tests/c.py"], seconds) == [
        "tests/new.py", "tests/b.py", "tests/c.py", "tests/a.py"]


def test_without_a_record_the_files_keep_their_usual_order():
    assert longest_first(["tests/b.py", "tests/a.py"], {}) == ["tests/b.py", "tests/a.py"]


def test_the_schedule_reads_a_record_of_every_file_the_suite_ran():
    record = newest_record("test-suite")
    assert record is not None, "no record of scripts/benchmark_test_suite.py in benchmarks/records"
    by_file = record["numbers"]["by file"]
    assert "tests/browser/test_site.py" in by_file and all(seconds >= 0 for seconds in by_file.values())
