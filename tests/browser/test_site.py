"""The book's site, read in a real browser with no internet.

Each test opens pages of the built book in Chromium, served from 127.0.0.1; every request
that would leave the machine is refused and recorded (see conftest.py). The tests that only
read a page share it as it loaded (``seen``: each page once per width); those that click,
press keys or search open their own (``visit``).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlparse
from urllib.request import urlopen

import pytest

from tests.browser.screens import DESKTOP, PHONE, STEPPER

pytestmark = pytest.mark.slow

#: The course's repository (the exercise notebooks a chapter may have are in exercises/).
REPOSITORY = Path(__file__).resolve().parents[2]
VISIBLE_STEP = ".stepper-step:visible"


#: Errors that Jupyter Book 1's pages logged as built: a script declaring sphinx-thebe's
#: constant twice, and pydata-sphinx-theme given an empty colour mode. Named so that a
#: failure says at once which came back; any other error fails the test as well.
KNOWN_THEME_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",
                      "Got invalid theme mode")


def test_every_page_loads_offline_without_console_errors(site, seen):
    problems = {}
    for path in site.pages():
        loaded = seen(path)
        found = loaded.unexpected_errors() + [f"refused {url}" for url in loaded.refused] + [
            f"failed {url}" for url in loaded.failed]
        if found:
            problems[path] = found
    came_back = sorted({known for found in problems.values() for line in found
                        for known in KNOWN_THEME_ERRORS if known in line})
    assert came_back == [], f"the theme's errors are back: {came_back}"
    assert problems == {}


def test_each_inline_script_of_a_page_comes_once(site):
    """The source of the first error: an inline script written twice into the page."""
    for path in site.pages():
        text = (site.root / path).read_text()
        inline = re.findall(r"<script>(.+?)</script>", text, flags=re.S)
        repeated = sorted({body for body in inline if inline.count(body) > 1})
        assert repeated == [], f"{path}: inline scripts written twice: {repeated}"


def test_each_chapter_shows_its_executed_outputs_and_nothing_from_stderr(site, seen):
    assert site.chapters(), "the site has no chapter page (book/NN_name.html)"
    for path in site.chapters():
        page = seen(path).page
        outputs = page.locator("article .cell_output")
        assert outputs.count() > 0, f"{path}: no cell output"
        assert any(text.strip() for text in outputs.all_inner_texts()), f"{path}: outputs empty"
        assert page.locator("article .output.stderr").count() == 0, f"{path}: stderr shown"
        assert page.locator("article .output.traceback").count() == 0, f"{path}: traceback"


def test_each_chapter_has_pictures_and_every_picture_loads(site, seen):
    for path in site.chapters():
        page = seen(path).page
        pictures = page.locator("article img, article svg:not(.svg-inline--fa)")
        assert pictures.count() > 0, f"{path}: no picture (img or svg)"
        broken = page.eval_on_selector_all(
            "article img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0))"
                           ".map(i => i.src)")
        assert broken == [], f"{path}: pictures that did not load"


#: The smallest text a picture may show on a desktop, in CSS pixels (body text is 16).
LEGIBLE_PX = 11


def test_every_picture_is_drawn_in_vector_with_text_legible_on_a_desktop(site, seen):
    # An SVG whose words are <text> stays sharp at any zoom; its smallest font, in the
    # picture's own units, times the scale the page shows it at is what a reader sees.
    small = {}
    for path in site.chapters():
        page = seen(path, 1400).page
        shown = page.eval_on_selector_all(
            "article img", "imgs => imgs.map(i => [i.getAttribute('src'), i.clientWidth])")
        assert shown, f"{path}: no picture"
        for src, width_px in shown:
            assert src.endswith(".svg"), f"{path}: {src} is a bitmap, not a vector picture"
            svg = (site.root / path).parent.joinpath(src).resolve().read_text()
            fonts = [float(size) for size in re.findall(r"font-size:\s*([\d.]+)px", svg)]
            assert fonts, f"{path}: {src} has no text as text (svg.fonttype must be 'none')"
            view_width = float(re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg).group(1))
            smallest = min(fonts) * width_px / view_width
            if smallest < LEGIBLE_PX:
                small.setdefault(path, []).append(f"{src}: {smallest:.1f} px")
    assert small == {}, f"picture text under {LEGIBLE_PX} px at 1400 px wide: {small}"


def test_every_picture_of_a_chapter_says_in_words_what_it_shows(site, seen):
    # A screen reader reads the alt text; a file name or a bare title tells its listener nothing.
    unsaid = {}
    for path in site.chapters():
        page = seen(path).page
        alts = page.eval_on_selector_all("article img", "imgs => imgs.map(i => i.alt || '')")
        poor = [alt for alt in alts
                if len(alt.split()) < 8 or re.search(r"\.(png|svg|jpe?g)\b", alt)]
        if poor:
            unsaid[path] = poor
    assert unsaid == {}


def test_each_chapter_links_its_exercise_notebook_and_itself_as_a_notebook(site, seen):
    # A chapter whose exercises are not written yet (no exercises/<chapter>/) says so; a
    # chapter's further page links the chapter's exercises.
    for path in site.chapters():
        name = path.removeprefix("book/").removesuffix(".html")
        exercises = name.removesuffix("_further")
        page = seen(path).page
        links = page.locator(".exercise-download a.download")
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        if (REPOSITORY / "exercises" / exercises / f"{exercises}.ipynb").is_file():
            assert len(hrefs) == 2, f"{path}: not two download links (exercises, chapter)"
            assert hrefs[0].endswith(f"/{exercises}.ipynb")
        else:
            assert len(hrefs) == 1, f"{path}: not one download link (the chapter)"
            assert "no graded exercises yet" in page.locator(".exercise-download").inner_text()
        chapter = hrefs[-1]
        assert chapter.endswith(f"/{name}-chapter.ipynb")
        notebooks = []
        for href in hrefs:
            with urlopen(urljoin(page.url, href)) as response:
                notebooks.append(json.load(response))
        assert all(nb["nbformat"] == 4 and nb["cells"] for nb in notebooks)
        title = page.locator("h1").first.inner_text().strip().rstrip("#").strip()
        first_markdown = next(c for c in notebooks[-1]["cells"] if c["cell_type"] == "markdown")
        assert title in "".join(first_markdown["source"]), f"{path}: the chapter notebook is not the chapter"
        how_to = page.locator(".exercise-download a.reference.internal:not(.download)")
        assert how_to.get_attribute("href").endswith("running_locally.html")


def test_each_chapter_has_a_stepper_that_starts_at_micro_batch_0(site, seen):
    # a chapter's further page (sections set apart from it) has the chapter's steppers
    for path in [path for path in site.chapters() if not path.endswith("_further.html")]:
        page = seen(path).page
        steppers = page.locator(STEPPER)
        assert steppers.count() > 0, f"{path}: no micro-batch stepper"
        for index in range(steppers.count()):
            shown = steppers.nth(index).locator(VISIBLE_STEP)
            assert shown.count() >= 1, f"{path}: stepper {index} shows no micro-batch"
            assert shown.first.get_attribute("data-batch-id") == "0", path


def test_the_stepper_shows_the_micro_batch_the_slider_points_at(visit):
    page = visit("book/stepper_demo.html", wait_for=STEPPER).page
    single = page.locator(STEPPER).first
    step = single.locator(VISIBLE_STEP)
    assert step.get_attribute("data-batch-id") == "0"
    assert "micro-batch 0" in step.inner_text()

    handle = single.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(
        "el => el.querySelector('.stepper-step[data-batch-id=\"1\"]')"
        " && el.querySelector('.stepper-step[data-batch-id=\"1\"]').offsetParent !== null",
        arg=single.element_handle(), timeout=5_000)
    step = single.locator(VISIBLE_STEP)
    assert step.get_attribute("data-batch-id") == "1"
    text = step.inner_text()
    # micro-batch 1 of limit(3): two rows in, one out, the counter at 3.
    assert "input (2 rows)" in text and "output (1 row)" in text
    assert "{value: 3}" in text
    assert single.locator(".widget-readout").inner_text().strip() == "1"


def test_the_stepper_tabs_share_one_slider(visit):
    page = visit("book/stepper_demo.html", wait_for=STEPPER).page
    tabs = page.locator(STEPPER).nth(1)
    handle = tabs.locator(".noUi-handle").first
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    page.wait_for_function(
        "el => el.querySelector('.widget-readout').innerText.trim() === '3'",
        arg=tabs.element_handle(), timeout=5_000)
    shown = tabs.locator(VISIBLE_STEP)
    assert shown.get_attribute("data-batch-id") == "3"
    assert "watermark: 15 s" in shown.inner_text()  # seconds after the stream's start
    assert "output (1 row)" in shown.inner_text()  # append: the closed window comes out

    tabs.get_by_role("tab", name="update").click()
    shown = tabs.locator(VISIBLE_STEP)
    assert shown.get_attribute("data-batch-id") == "3"
    assert "output (0 rows)" in shown.inner_text()  # update wrote it back in batch 0


def test_the_play_button_moves_the_slider(visit):
    page = visit("book/stepper_demo.html", wait_for=STEPPER).page
    single = page.locator(STEPPER).first
    single.locator(".widget-play button").first.click()
    page.wait_for_function(
        "el => el.querySelector('.widget-readout').innerText.trim() !== '0'",
        arg=single.element_handle(), timeout=10_000)


def test_the_steppers_controls_say_what_they_do(site, seen):
    for path in site.pages():
        page = seen(path).page
        steppers = page.locator(STEPPER)
        if not steppers.count():
            continue
        page.wait_for_selector(f"{STEPPER} .noUi-handle[aria-label]", timeout=20_000)
        for index in range(steppers.count()):
            stepper = steppers.nth(index)
            for name in ["play", "stop", "repeat"]:
                assert stepper.get_by_role("button", name=name, exact=True).count() == 1, \
                    f"{path}: stepper {index} has no button named {name!r}"
            assert stepper.get_by_role("slider", name="micro-batch").count() == 1, path


#: The contrast of an element's text with the colour behind it (WCAG's ratio, 1 to 21).
TEXT_CONTRAST = """el => {
  const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 4).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((c) => { c /= 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  let back = el;
  while (back && (rgb(getComputedStyle(back).backgroundColor)[3] ?? 1) === 0) {
    back = back.parentElement;
  }
  const [a, b] = [lum(rgb(getComputedStyle(el).color)),
                  lum(rgb(getComputedStyle(back || document.body).backgroundColor))];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_steppers_text_reads_in_the_pages_theme(visit, scheme):
    page = visit("book/03_state_store_save.html", wait_for=STEPPER, scheme=scheme).page
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    step = page.locator(STEPPER).first.locator(VISIBLE_STEP)
    # The watermark's inline code, a table cell and the heading, against what is behind them.
    for element in [step.locator("code").first, step.locator("td").first,
                    step.locator("strong").first]:
        contrast = element.evaluate(TEXT_CONTRAST)
        assert contrast >= 4.5, f"{scheme}: {element.inner_text()!r} at {contrast:.2f}:1"


def test_search_finds_a_term(visit):
    page = visit("search.html?q=watermark").page
    page.wait_for_selector("#search-results li", timeout=20_000)
    found = page.locator("#search-results li a").evaluate_all("links => links.map(a => a.href)")
    assert any("stepper_demo" in href for href in found), found


def test_navigation_reaches_every_page_of_the_table_of_contents(site, seen):
    page = seen("book/running_locally.html").page
    sidebar = page.locator("nav.bd-links a.reference.internal").evaluate_all(
        "links => links.map(a => a.href)")
    linked = {urlparse(href).path.lstrip("/") for href in sidebar}
    expected = {p for p in site.pages() if p.startswith("book/")} - {"book/intro.html"}
    assert expected <= linked, f"not in the navigation: {sorted(expected - linked)}"
    assert page.locator(".prev-next-area a").count() >= 1


def test_internal_links_all_resolve(site):
    broken = {}
    for path in site.pages():
        html = (site.root / path).read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"#]+)[^"]*"', html):
            if urlparse(href).scheme:  # absolute links leave the site: not checked here
                continue
            target = urlparse(urljoin(site.url(path), href)).path.lstrip("/")
            if not (site.root / target).exists():
                broken.setdefault(path, []).append(href)
    assert broken == {}


# -- the menu buttons, on a phone and on a desktop -------------------------------------------------
PRIMARY_DRAWER, SECONDARY_DRAWER = "#pst-primary-sidebar-modal", "#pst-secondary-sidebar-modal"


def is_open(page, drawer: str) -> bool:
    return page.evaluate(f"document.querySelector('{drawer}').open")


@pytest.mark.parametrize("button, drawer", [(".primary-toggle", PRIMARY_DRAWER),
                                            (".secondary-toggle", SECONDARY_DRAWER)],
                         ids=["chapter list", "page contents"])
def test_on_a_phone_each_menu_button_opens_its_drawer_and_escape_closes_it(visit, button, drawer):
    page = visit("book/02_aggregation_planning.html", width=PHONE).page
    page.locator(f"{button}:visible").click()
    page.wait_for_function(f"document.querySelector('{drawer}').open", timeout=5_000)
    assert page.locator(f"{drawer} a").count() > 0, "the drawer opened empty"
    page.keyboard.press("Escape")
    page.wait_for_function(f"!document.querySelector('{drawer}').open", timeout=5_000)


def test_on_a_desktop_the_chapter_list_button_folds_the_sidebar_away_and_back(visit):
    page = visit("book/02_aggregation_planning.html", width=DESKTOP).page
    sidebar = page.locator("#pst-primary-sidebar")
    assert sidebar.is_visible()
    page.locator(".primary-toggle:visible").click()
    page.wait_for_function(
        "document.querySelector('#pst-primary-sidebar').classList.contains('pst-sidebar-hidden')",
        timeout=5_000)
    assert not is_open(page, PRIMARY_DRAWER)
    page.locator(".primary-toggle:visible").click()
    page.wait_for_function(
        "!document.querySelector('#pst-primary-sidebar').classList.contains('pst-sidebar-hidden')",
        timeout=5_000)


def test_no_page_is_wider_than_a_phone(site, seen):
    too_wide = {}
    for path in site.pages():
        page = seen(path, PHONE).page
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE:
            too_wide[path] = width
    assert too_wide == {}, f"pages that scroll sideways at {PHONE} px: {too_wide}"


def test_each_cells_printed_lines_come_in_one_block(site, seen):
    split = {}
    for path in site.chapters():
        page = seen(path).page
        count = page.evaluate("""() => Array.from(document.querySelectorAll('.cell_output'))
            .filter(out => out.querySelectorAll(':scope > .output.stream').length > 1).length""")
        if count:
            split[path] = count
    assert split == {}, f"cells whose printed lines are cut into several blocks: {split}"


# -- outputs are read whole, on a phone and on a desktop ------------------------------------------
#: Every block of a cell's output that could cut its content at its right edge: the output
#: boxes, printed text, tables, and whatever inside them hides or scrolls what overflows.
#: A table wider than the column is the exception: it keeps its words whole and scrolls
#: inside its output block, which shows its scroll bar (test_reading_and_keyboard.py).
CUT_OUTPUT_BLOCKS = """() => Array.from(document.querySelectorAll('article .cell_output *'))
  .filter(el => el.matches('.output, pre, table')
                || !['visible'].includes(getComputedStyle(el).overflowX))
  .filter(el => !(el.matches('.output.text_html') && el.querySelector('table')
                  && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)))
  .filter(el => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
  .map(el => `${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth}>${el.clientWidth}: `
             + el.innerText.slice(0, 50).replace(/\\s+/g, ' '))"""


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_no_output_block_is_cut_at_its_right_edge(site, seen, width):
    cut = {}
    for path in site.pages():
        page = seen(path, width).page  # its widgets drawn (seen waits for them)
        found = page.evaluate(CUT_OUTPUT_BLOCKS)
        if found:
            cut[path] = found
    assert cut == {}, f"output blocks cut at {width} px (scrollWidth > clientWidth): {cut}"


# -- what a reader of a course site expects ---------------------------------------------------------
def test_the_intros_chapter_table_links_each_chapter_by_its_sidebar_title(site, seen):
    page = seen("book/intro.html").page
    table = page.locator("article table a.reference.internal").evaluate_all(
        "links => links.map(a => [a.textContent.trim(), new URL(a.href).pathname])")
    sidebar = page.locator("nav.bd-links a.reference.internal").evaluate_all(
        "links => links.map(a => [a.textContent.trim(), new URL(a.href).pathname])")
    chapters = ["/" + path for path in site.chapters()]
    assert [path for _, path in table] == chapters
    sidebar_titles = {path: title for title, path in sidebar}
    for title, path in table:
        assert title == sidebar_titles[path] and title[0].isdigit(), (title, sidebar_titles[path])


def test_each_chapter_links_its_terms_to_the_glossary(site, seen):
    glossary = seen("book/glossary.html").page
    defined = set(glossary.locator("dl.glossary dt").evaluate_all("dts => dts.map(d => d.id)"))
    assert len(defined) >= 10, defined
    for path in site.chapters():
        page = seen(path).page
        targets = page.locator("article a[href*='glossary.html#']").evaluate_all(
            "links => links.map(a => new URL(a.href).hash.slice(1))")
        assert len(set(targets)) >= 5, f"{path} links only {sorted(set(targets))} to the glossary"
        assert set(targets) <= defined, f"{path}: {sorted(set(targets) - defined)} not defined"


def test_plotting_code_is_folded_away_until_asked_for(site, seen):
    for path in site.chapters():
        page = seen(path).page
        shown = page.locator("article .cell_input:visible").evaluate_all(
            "cells => cells.map(c => c.innerText)")
        long_plots = [code.splitlines()[0] for code in shown
                      if "plt." in code and len(code.splitlines()) > 10]
        assert long_plots == [], f"{path} shows plotting code: {long_plots}"


def test_the_learners_steps_and_the_maintainers_are_on_separate_pages(seen):
    learner = seen("book/running_locally.html").page.locator("article").inner_text()
    maintainer = seen("book/maintaining.html").page.locator("article").inner_text()
    assert "make lab" in learner and "make check" in learner
    assert "make test" not in learner and "make known-answers" not in learner
    assert "make test" in maintainer and "make known-answers" in maintainer
