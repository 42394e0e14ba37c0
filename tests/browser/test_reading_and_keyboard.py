"""What a reader meets on every page: tables that keep their words whole, sideways scrolling
that a phone shows, keyboard focus that can be seen, a search page that reads, and an icon.

* Table cells wrap between words (``overflow-wrap: anywhere`` would shrink columns below one
  word: "mo|de", "numRowsUp|dated"); a word breaks only if it alone is wider than its
  column. A table wider than its block scrolls sideways inside it.
* On a phone a scroll bar is drawn over the content only while a finger moves it, so a
  block that scrolls sideways shows nothing of it. The site draws its own, which stays:
  measured in Chromium as a phone (``is_mobile``, touch) with its scroll bars left on
  (Playwright hides them by default: ``--hide-scrollbars``), every block that scrolls
  sideways (output tables, code, a stepper's panels at every view) shows one.
* Every control reached with Tab draws a focus indicator of at least 3:1 against what is
  around it (WCAG 2.4.7 and 1.4.11), on a phone and a desktop, in both themes.
* A stepper's current tab is marked (3:1) apart from the others.
* The search page: the magnifier beside the query, not on its first letter; the "Ctrl + K"
  hint legible; a found word's mark seen against the page and its text legible on it.
* Every page names the site's icon, and ``/favicon.ico`` is served (for the site's
  entrance, a bare redirect, and whatever else asks for it there).
"""
from __future__ import annotations

from urllib.request import urlopen

import pytest

from tests.browser.screens import (CELL_WORDS, COLOURS, CONTROL_CONTRAST, DESKTOP, DRAWN, PHONE, SCREENS,
                                   STEPPER, TEXT_CONTRAST)
from tests.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.slow



# -- 1. table cells keep their words whole ------------------------------------------------------
#: The words of visible table cells broken across lines although they would fit on one:
#: the word alone is narrower than the room the table has (the box it scrolls in, or the
#: text column), so its column could have been as wide as the word (a break after a
#: hyphen is a fair one).
WORDS_BROKEN_NEEDLESSLY = "() => {" + CELL_WORDS + """
  const probe = document.createElement('span');
  probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
  document.body.appendChild(probe);
  const found = [];
  for (const cell of document.querySelectorAll('article td, article th')) {
    if (!cell.getClientRects().length) continue;
    let box = cell.closest('table').parentElement;
    while (box.tagName !== 'ARTICLE' && getComputedStyle(box).overflowX === 'visible') {
      box = box.parentElement;
    }
    const style = getComputedStyle(cell);
    const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    for (const word of cellWords(cell)) {
      if (word.lines < 2) continue;
      probe.style.font = getComputedStyle(word.node.parentElement).font;
      probe.textContent = word.text;
      if (probe.getBoundingClientRect().width <= room + 0.5) found.push(word.text);
    }
  }
  probe.remove();
  return found;
}"""


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_no_table_cell_breaks_a_word_that_fits_its_column(site, seen, width):
    broken = {}
    for path in site.pages():
        found = seen(path, width).page.evaluate(WORDS_BROKEN_NEEDLESSLY)
        if found:
            broken[path] = found[:12]
    assert broken == {}, f"{width} px: words broken inside, which would fit whole: {broken}"


# -- 2. what scrolls sideways on a phone shows that it does --------------------------------------
@pytest.fixture(scope="module")
def phone_with_scroll_bars(browser):
    """Chromium as a phone (mobile viewport, touch) with its scroll bars drawn: a second
    browser of the same Playwright, without Playwright's ``--hide-scrollbars``."""
    chromium = browser.browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                           ignore_default_args=["--hide-scrollbars"])
    contexts = []

    def open_page(site, path: str):
        steppers = "micro-batch-stepper" in (site.root / path).read_text(encoding="utf-8")
        context = chromium.new_context(viewport={"width": PHONE, "height": 844},
                                       is_mobile=True, has_touch=True, device_scale_factor=2)
        contexts.append(context)
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
            site.base_url) or route.request.url.startswith("data:") else route.abort())
        page = context.new_page()
        page.goto(site.url(path), wait_until="load")
        page.wait_for_load_state("networkidle")
        if steppers:
            page.wait_for_selector(DRAWN, timeout=20_000)
        return page

    yield open_page
    for context in contexts:
        context.close()
    chromium.close()


#: Every block of the article that scrolls sideways now, and how thick a scroll bar it shows
#: (the height its horizontal scroll bar takes from it; 0 when none is drawn).
SIDEWAYS_SCROLLERS = """(root) => [...root.querySelectorAll('*')]
  .filter(el => el.getClientRects().length && el.scrollWidth > el.clientWidth + 1
                && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
  .map(el => { const s = getComputedStyle(el);
    return {what: `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 30)}: `
                  + el.innerText.slice(0, 40).replace(/\\s+/g, ' '),
            bar: el.offsetHeight - el.clientHeight - parseFloat(s.borderTopWidth)
                 - parseFloat(s.borderBottomWidth)}; })"""


def test_on_a_phone_every_block_that_scrolls_sideways_shows_its_scroll_bar(
        site, phone_with_scroll_bars):
    hidden = {}
    for path in site.pages():
        if "<article" not in (site.root / path).read_text(encoding="utf-8"):
            continue                      # the site's entrance, a redirect to its first page
        page = phone_with_scroll_bars(site, path)
        unseen = [found["what"] for found in page.evaluate(
            SIDEWAYS_SCROLLERS, page.locator("article").first.element_handle())
            if found["bar"] < 4]
        if unseen:
            hidden[path] = unseen
        page.context.close()
    assert hidden == {}, f"blocks that scroll sideways on a phone with no scroll bar: {hidden}"


#: Each visible table of a stepper: whether it fits in the box that clips it (its border
#: too), and if not, whether that box scrolls and shows its scroll bar.
STEPPER_TABLES = """stepper => {
  const found = [];
  for (const table of stepper.querySelectorAll('.stepper-step table')) {
    if (!table.getClientRects().length) continue;
    let box = table.parentElement;
    while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    const s = getComputedStyle(box);
    const inner = box.getBoundingClientRect().left + box.clientLeft + box.clientWidth;
    const fits = table.getBoundingClientRect().right <= inner + 0.5 && box.scrollWidth <= box.clientWidth;
    const bar = box.offsetHeight - box.clientHeight - parseFloat(s.borderTopWidth)
                - parseFloat(s.borderBottomWidth);
    if (!fits && bar < 4) found.push(table.innerText.slice(0, 40).replace(/\\s+/g, ' '));
  }
  return found;
}"""


def test_on_a_phone_every_steppers_tables_fit_or_show_a_scroll_bar_at_every_view(
        site, phone_with_scroll_bars):
    from tests.browser.test_steppers_on_every_screen import each_view, stepper_pages

    cut = {}
    for path in stepper_pages(site):
        page = phone_with_scroll_bars(site, path)
        steppers = page.locator(STEPPER)
        for number in range(steppers.count()):
            stepper = steppers.nth(number)
            for position, tab in each_view(page, stepper):
                found = stepper.evaluate(STEPPER_TABLES)
                if found:
                    cut[f"{path} stepper {number} at {position}, tab {tab}"] = found
        page.context.close()
    assert cut == {}, f"stepper tables wider than their panel, with no scroll bar shown: {cut}"


# -- 3. keyboard focus is seen -------------------------------------------------------------------
#: The focused element and its focus indicator: the thickest ring (outline, or a box
#: shadow's spread) drawn by it or by an ancestor that holds it (:focus-within, as the
#: search field's form), with its contrast against what is around the element.
FOCUS_AS_SEEN = "() => {" + COLOURS + """
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const rect = el.getBoundingClientRect();
  const seen = {what: `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 40)} `
                      + (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 30),
                visible: rect.width > 0 && rect.height > 0 && getComputedStyle(el).visibility !== 'hidden',
                ring: 0, contrast: 0};
  const consider = (node, width, colour) => {
    // a slider's handle sits on its track: the ring lies on the slider's background
    const around = behind((node.closest('.widget-slider') || node).parentElement || node);
    const contrast = against(colour, around);
    if (width >= 2 && contrast > seen.contrast) { seen.ring = width; seen.contrast = contrast; }
  };
  for (let node = el, depth = 0; node && depth < 3; node = node.parentElement, depth++) {
    if (depth && !node.matches(':focus-within')) break;
    const s = getComputedStyle(node);
    if (s.outlineStyle !== 'none') consider(node, parseFloat(s.outlineWidth), s.outlineColor);
    for (const part of (s.boxShadow === 'none' ? [] : s.boxShadow.split(/,(?![^(]*\\))/))) {
      if (/inset/.test(part)) continue;
      const colour = (part.match(/rgba?\\([^)]*\\)/) || [''])[0];
      const sizes = part.replace(colour, '').trim().split(/\\s+/).map(parseFloat);
      if (colour && sizes.length > 3) consider(node, sizes[3], colour);
    }
  }
  seen.contrast = Math.round(seen.contrast * 100) / 100;
  return seen;
}"""
#: Pages that hold every kind of control: the theme's header and sidebars, a chapter's
#: links and folded cells, steppers with and without tabs, the search page.
FOCUS_PAGES = ["book/01_global_limit.html", "book/stepper_demo.html", "search.html?q=watermark"]


@pytest.mark.parametrize("width, scheme", SCREENS)
def test_every_control_reached_with_tab_shows_a_focus_ring(visit, width, scheme):
    unseen = {}
    for path in FOCUS_PAGES:
        page = visit(path, width=width, scheme=scheme).page
        if page.locator(STEPPER).count():
            page.wait_for_selector(DRAWN, timeout=20_000)
        first = None
        for _ in range(400):
            page.keyboard.press("Tab")
            seen = page.evaluate(FOCUS_AS_SEEN)
            if seen is None or seen["what"] == first:
                break                     # round the page (or out of it): every stop seen
            first = first or seen["what"]
            if seen["visible"] and (seen["ring"] < 2 or seen["contrast"] < CONTROL_CONTRAST):
                unseen.setdefault(path, []).append(
                    f"{seen['what']} (ring {seen['ring']} px, {seen['contrast']}:1)")
        page.context.close()
    assert unseen == {}, f"{width} px, {scheme}: focus not seen on " + "\n".join(
        f"\n{path}: " + "; ".join(sorted(set(found))) for path, found in unseen.items())


# -- 4. a stepper's current tab is marked --------------------------------------------------------
CURRENT_TAB = "tabs => {" + COLOURS + """
  const current = tabs.querySelector('.lm-TabBar-tab.lm-mod-current');
  const bar = getComputedStyle(current, '::before');
  const around = behind(current.parentElement);
  const marked = bar.content !== 'none' && parseFloat(bar.width) >= current.clientWidth / 2
                 && parseFloat(bar.height) >= 2 ? against(bar.backgroundColor, around) : 1;
  const others = [...tabs.querySelectorAll('.lm-TabBar-tab:not(.lm-mod-current)')]
    .map(tab => getComputedStyle(tab).fontWeight);
  return {marked, bold: getComputedStyle(current).fontWeight, others};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_steppers_current_tab_is_marked_apart_from_the_others(visit, scheme):
    page = visit("book/stepper_demo.html", wait_for=DRAWN, scheme=scheme).page
    tabbed = page.locator(f"{STEPPER}:has(.lm-TabBar-tab)").first
    for title in ["update", "append"]:
        tabbed.get_by_role("tab", name=title).click()
        seen = tabbed.evaluate(CURRENT_TAB)
        assert seen["marked"] >= CONTROL_CONTRAST, f"{scheme}, {title}: current tab's bar {seen}"
        assert int(seen["bold"]) >= 600 and all(int(w) < 600 for w in seen["others"]), seen


# -- 5. the search page --------------------------------------------------------------------------
SEARCH_FIELD = "() => {" + COLOURS + """
  const form = document.querySelector('.bd-search-container form.bd-search');
  const icon = form.querySelector('.fa-magnifying-glass').getBoundingClientRect();
  const input = form.querySelector('input');
  const text = input.getBoundingClientRect().left + input.clientLeft
               + parseFloat(getComputedStyle(input).paddingLeft);
  const hint = [...form.querySelectorAll('.search-button__kbd-shortcut, .search-button__kbd-shortcut kbd')]
    .filter(el => el.getClientRects().length)
    .map(el => against(getComputedStyle(el).color, behind(el)));
  // a mark is seen by its fill, or by a line under it, against the page around it
  const marks = [...document.querySelectorAll('#search-results span.highlighted')].slice(0, 5)
    .map(mark => { const s = getComputedStyle(mark), page = behind(mark.parentElement);
      return {text: against(s.color, behind(mark)),
              mark: Math.max(against(s.backgroundColor, page),
                             parseFloat(s.borderBottomWidth) >= 2 && s.borderBottomStyle !== 'none'
                             ? against(s.borderBottomColor, page) : 1)}; });
  return {iconRight: icon.right, textLeft: text, hint, marks};
}"""


@pytest.mark.parametrize("width, scheme", SCREENS)
def test_the_search_page_reads(visit, width, scheme):
    page = visit("search.html?q=watermark", width=width, scheme=scheme).page
    page.wait_for_selector("#search-results li", timeout=20_000)
    seen = page.evaluate(SEARCH_FIELD)
    assert seen["iconRight"] <= seen["textLeft"], f"the magnifier covers the query: {seen}"
    assert all(ratio >= TEXT_CONTRAST for ratio in seen["hint"]), f"faint Ctrl + K hint: {seen}"
    assert seen["marks"], "no word of the results is marked"
    for mark in seen["marks"]:
        assert mark["text"] >= TEXT_CONTRAST, f"a found word's text on its mark: {mark}"
        assert mark["mark"] >= CONTROL_CONTRAST, f"a found word's mark on the page: {mark}"


# -- 6. the site's icon --------------------------------------------------------------------------
def test_every_page_names_the_icon_and_favicon_ico_is_served(site, visit):
    # The site's entrance (index.html) is a bare redirect to the first page: a browser that
    # opens the site's address asks for /favicon.ico there, as it does for any page that
    # names no icon.
    nameless = [path for path in site.pages()
                if 'rel="icon"' not in (site.root / path).read_text(encoding="utf-8")]
    assert nameless == ["index.html"], f"pages that name no icon: {nameless}"
    with urlopen(site.url("favicon.ico")) as response:
        assert response.status == 200 and response.read(4) == b"\x00\x00\x01\x00"
    opened = visit("index.html")           # the site's address: on to the book's first page
    opened.page.wait_for_url("**/book/intro.html", timeout=10_000)
    assert opened.failed == [] and opened.unexpected_errors() == []
