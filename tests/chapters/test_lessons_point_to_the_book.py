"""Every section a check's lesson (or a chapter module's docstring) sends a learner back to
is a heading of that chapter's page (or, for "chapter N, further", of the chapter's further
page, ``NN_name_further.md``), and the chapter's name is the page's title: a renamed or
moved section must not leave lessons pointing at nothing."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
CHAPTERS = ROOT / "autograder" / "chapters"

#: The chapter each module teaches; a section it names without a chapter belongs to it.
MODULE_CHAPTER = {
    "global_limit.py": 1,
    "aggregation_planning.py": 2,
    "state_store_save.py": 3,
    "save_model.py": 3,
    "transform_with_state.py": 4,
    "tws_state.py": 4,
    "tws_streams.py": 4,
    "processor_pair.py": 4,
    "checkpoint_files.py": 5,
    "state_store_files.py": 5,
    "stream_join.py": 6,
    "deduplication.py": 7,
    "stream_join_checks.py": 6,
}


def test_every_chapter_module_is_read_here():
    assert sorted(MODULE_CHAPTER) == sorted(path.name for path in CHAPTERS.glob("*.py")
                                            if path.name != "__init__.py")


def page(chapter: int, further: bool = False) -> Path:
    """The chapter's page, or its further page (the sections set apart from the chapter)."""
    (path,) = [path for path in BOOK.glob(f"{chapter:02d}_*.md")
               if path.stem.endswith("_further") == further]
    return path


def headings(chapter: int, further: bool = False) -> set[str]:
    """The page's section headings (``##`` and below), outside its code cells."""
    found, in_code = set(), False
    for line in page(chapter, further).read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"#{2,4} ", line):
            found.add(line.lstrip("#").strip())
    return found


def sections_named(source: str, own_chapter: int) -> set[tuple[int, bool, str]]:
    """``(chapter, further, title)`` of every ``section "title"`` in a module's text
    (docstrings wrap, so a title may run over a line break)."""
    text = re.sub(r"\s+", " ", source).replace("\\'", "'")
    named = set()
    for match in re.finditer(r'(?:chapter (\d)(, further)?[^"]{0,80}?)?section "([^"]+)"', text):
        named.add((int(match.group(1) or own_chapter), bool(match.group(2)), match.group(3)))
    return named


def test_a_lesson_names_its_chapter_as_the_page_does():
    for name, chapter in MODULE_CHAPTER.items():
        found = re.search(r'^CHAPTER = "chapter (\d), (.+)"$',
                          (CHAPTERS / name).read_text(), re.MULTILINE)
        if found:
            assert int(found.group(1)) == chapter, name
            title = page(chapter).read_text().split("\n# ", 1)[1].splitlines()[0]
            assert title.startswith(f"{chapter}. {found.group(2)}"), (name, title)


@pytest.mark.parametrize("module", sorted(MODULE_CHAPTER))
def test_every_section_a_lesson_names_is_a_heading_of_its_chapter(module):
    named = sections_named((CHAPTERS / module).read_text(), MODULE_CHAPTER[module])
    missing = sorted((chapter, further, title) for chapter, further, title in named
                     if title not in headings(chapter, further))
    assert not missing, f"{module} names sections its chapter's page does not have: {missing}"


def test_the_section_finder_sees_every_form_a_module_uses():
    source = ('CHAPTER = "chapter 1, X"\nREVISIT = f\'{CHAPTER}, section "A limit"\'\n'
              '"""... (section "What a\n    window holds") ... (chapter 4, section "Timers")'
              '... (chapter 4, further, section "Fast checks with\n    TwsTester")"""')
    assert sections_named(source, 1) == {(1, False, "A limit"),
                                         (1, False, "What a window holds"),
                                         (4, False, "Timers"),
                                         (4, True, "Fast checks with TwsTester")}


def test_a_section_set_apart_is_a_heading_of_the_further_page_only():
    assert "What the state reader refuses" not in headings(4)
    assert "What the state reader refuses" in headings(4, further=True)


def test_every_section_the_glossary_names_is_a_heading_of_its_chapter():
    text = re.sub(r"\s+", " ", (BOOK / "glossary.md").read_text())
    named = {(int(chapter), title)
             for chapter, title in re.findall(r'chapter (\d), "([^"]+)"', text)}
    assert named, "the glossary names no section"
    missing = sorted((chapter, title) for chapter, title in named
                     if title not in headings(chapter))
    assert not missing, f"the glossary names sections that are not there: {missing}"
