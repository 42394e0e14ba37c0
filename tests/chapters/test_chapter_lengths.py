"""A chapter a reader finishes: each numbered chapter's page stays within its length (in
lines of its MyST source, as ``wc -l`` counts them). Material that does not fit goes to the
chapter's further page (``NN_name_further.md``), which has no limit, is linked from the
chapter and listed under it in the table of contents."""
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"

#: The most lines each chapter may have: what a reader finishes in one go, a little room above
#: each chapter's size; more where the reader needs a cell for each rule (the reason beside it).
LIMITS = {
    "01_global_limit.md": 500,
    "02_aggregation_planning.md": 680,   # a cell each for avg, distinct, update mode, watermark: its tasks and summary
    "03_state_store_save.md": 800,
    "04_transform_with_state.md": 880,   # the state reader its exercises use, both watermarks: a cell each
    "05_state_store.md": 990,   # each recovery and schema rule is shown by a cell a reader runs
    "06_stream_stream_join.md": 750,
    "07_deduplication_and_chains.md": 720,   # three deduplications and two chains, each by a cell
}


def chapters() -> list[Path]:
    return sorted(path for path in BOOK.glob("[0-9][0-9]_*.md")
                  if not path.stem.endswith("_further"))


def test_every_chapter_has_a_limit():
    assert [path.name for path in chapters()] == sorted(LIMITS)


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_a_chapter_stays_within_its_length(name):
    lines = (BOOK / name).read_text().count("\n")
    assert lines <= LIMITS[name], (
        f"{name} has {lines} lines, more than {LIMITS[name]}: move a section to its further "
        f"page ({name.removesuffix('.md')}_further.md)")


def test_each_further_page_is_linked_from_its_chapter_and_listed_under_it():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    sections = {entry["file"]: [section["file"] for section in entry.get("sections", [])]
                for entry in toc["chapters"]}
    further_pages = sorted(BOOK.glob("[0-9][0-9]_*_further.md"))
    assert further_pages
    for further in further_pages:
        chapter = further.stem.removesuffix("_further")
        assert f"book/{further.stem}" in sections[f"book/{chapter}"], further.name
        assert further.stem in (BOOK / f"{chapter}.md").read_text(), (
            f"{chapter}.md does not link {further.name}")
