"""Every micro-batch stepper of the site, read in both themes, on a phone and on a desktop.

A stepper is read the way a reader reads it: the slider is moved with the keyboard through
every micro-batch, and each tab of a tabbed stepper is opened at every one of them. What is
measured is what the reader sees: the colour of each text against the colour really
behind it (the first backgrounds up its ancestors that cover it), the place and the ring
of the slider's handle, its size and colours before it is touched, the length and colour
of the slider's track, and where table cells wrap. What each view says is read too, on a
desktop: its heading names the micro-batch as the slider's readout does, shows a watermark
only where the query has one, and writes times as its tables do.

Each screen (a width and a theme) is read once for the whole module: :func:`read_on` opens
every stepper page at it, walks every stepper through every view and measures all of the
above at each one, what the view says included, in one call to the browser per view. The
tests below then each judge one property on what was measured, as the reader would have
seen it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from tests.browser.screens import (CELL_WORDS, COLOURS, CONTROL_CONTRAST, DESKTOP, DRAWN, PHONE, SCREENS,
                                   STEPPER, TEXT_CONTRAST)

pytestmark = pytest.mark.slow


#: Each visible element of the stepper that holds text of its own, with its contrast.
TEXTS_AND_CONTRAST = "stepper => {" + COLOURS + """
  const found = [];
  for (const el of stepper.querySelectorAll('*')) {
    const own = [...el.childNodes].filter(n => n.nodeType === Node.TEXT_NODE)
      .map(n => n.textContent).join('').trim();
    const style = getComputedStyle(el);
    if (!own || !el.getClientRects().length || style.visibility === 'hidden') continue;
    const back = behind(el);
    found.push({text: own.slice(0, 40), ratio: ratio(over(parse(style.color), back), back)});
  }
  return found;
}"""


def stepper_pages(site) -> list[str]:
    """Every page of the site that shows a stepper (its saved widgets name the class)."""
    pages = [path for path in site.pages()
             if "micro-batch-stepper" in (site.root / path).read_text(encoding="utf-8")]
    assert pages, "no page of the site shows a micro-batch stepper"
    return pages


def positions(stepper) -> int:
    """How many places the stepper's slider has."""
    handle = stepper.locator(".noUi-handle")
    return int(float(handle.get_attribute("aria-valuemax"))) + 1


def each_view(page, stepper):
    """Move the stepper's slider with the keyboard from its first micro-batch to its last
    and open each of its tabs there; yield ``(position, tab title)`` at each view."""
    handle = stepper.locator(".noUi-handle")
    tabs = stepper.locator(".lm-TabBar-tab")
    for position in range(positions(stepper)):
        if position:
            handle.focus()
            page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "([h, n]) => Number(h.getAttribute('aria-valuenow')) === n",
                arg=[handle.element_handle(), position], timeout=5_000)
        if not tabs.count():
            yield position, None
        for index in range(tabs.count()):
            tabs.nth(index).click()
            yield position, tabs.nth(index).inner_text()


@dataclass
class View:
    """What one view of a stepper (a micro-batch, a tab) showed."""

    position: int
    tab: str | None
    texts: list[dict]    # TEXTS_AND_CONTRAST
    geometry: dict       # SLIDER_GEOMETRY
    tables: dict         # TABLES_AS_WRAPPED
    said: dict           # VIEW_AS_READ


@dataclass
class SteppersPage:
    """One stepper page read at one screen: each stepper's views, in the order a reader
    walks them, what its handle showed when reached with Tab (phone width only), and how
    wide the page was once each stepper had been walked to its end."""

    path: str
    views: list[list[View]] = field(default_factory=list)
    focused_handles: list[dict] = field(default_factory=list)
    scroll_widths: list[int] = field(default_factory=list)
    resting_sliders: list[dict] = field(default_factory=list)


@pytest.fixture(scope="module")
def read_on(visit_in_module, site):
    """``read_on(width, scheme)``: every stepper page read at that screen (a list of
    :class:`SteppersPage`), each page opened and walked once per module and screen."""
    read: dict = {}

    def pages_at(width: int, scheme: str) -> list[SteppersPage]:
        if (width, scheme) not in read:
            read[width, scheme] = [
                _walk(visit_in_module(path, wait_for=DRAWN, width=width, scheme=scheme).page,
                      path, width, scheme)
                for path in stepper_pages(site)]
        return read[width, scheme]

    return pages_at


def _walk(page, path: str, width: int, scheme: str) -> SteppersPage:
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    seen = SteppersPage(path)
    steppers = page.locator(STEPPER)
    for number in range(steppers.count()):
        stepper = steppers.nth(number)
        seen.resting_sliders.append(stepper.evaluate(SLIDER_AT_REST))
        if width == PHONE:
            seen.focused_handles.append(_handle_reached_with_tab(page, stepper))
        seen.views.append([View(position, tab, **stepper.evaluate(ONE_VIEW))
                           for position, tab in each_view(page, stepper)])
        seen.scroll_widths.append(page.evaluate("document.documentElement.scrollWidth"))
    page.context.close()
    return seen


def _handle_reached_with_tab(page, stepper) -> dict:
    """Tab from the play button, as a keyboard user reaches the slider; the handle as seen
    then (HANDLE_AS_SEEN)."""
    stepper.get_by_role("button", name="play", exact=True).focus()
    for _ in range(5):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('noUi-handle')"):
            break
    return stepper.locator(".noUi-handle").evaluate(HANDLE_AS_SEEN)


# -- 1. every text of every stepper, in both themes and at both widths --------------------
@pytest.mark.parametrize("width, scheme", SCREENS)
def test_every_text_of_every_stepper_reads_against_what_is_really_behind_it(
        read_on, width, scheme):
    faint = {}
    for page in read_on(width, scheme):
        for number, views in enumerate(page.views):
            for view in views:
                assert view.texts, f"{page.path}: stepper {number} shows no text"
                low = sorted({f"{t['text']!r} {t['ratio']:.2f}:1" for t in view.texts
                              if t["ratio"] < TEXT_CONTRAST})
                if low:
                    faint[f"{page.path} stepper {number} at {view.position}, tab {view.tab}"] = low
    assert faint == {}, f"{width} px, {scheme}: text under {TEXT_CONTRAST}:1 " + "\n".join(
        f"\n{where}: {', '.join(texts[:6])}" for where, texts in faint.items())


# -- 2. the slider: its handle seen with keyboard focus and at rest, a finger's target,
#       apart from its label, a track seen, long and of one length, a readout never cut -
#: The handle with keyboard focus: its fill and its ring against the slider's background
#: (the track is a thin line through the handle; the ring lies around it, on the page).
HANDLE_AS_SEEN = "handle => {" + COLOURS + """
  const style = getComputedStyle(handle);
  const back = behind(handle.closest('.widget-slider'));
  const ring = style.outlineStyle === 'none' ? 0 : parseFloat(style.outlineWidth);
  return {focusVisible: handle.matches(':focus-visible'), ring: ring,
          ringContrast: ring ? ratio(over(parse(style.outlineColor), back), back) : 1,
          fillContrast: ratio(over(parse(style.backgroundColor), back), back)};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_sliders_handle_shows_a_ring_when_it_has_keyboard_focus(read_on, scheme):
    for page in read_on(PHONE, scheme):
        for number, seen in enumerate(page.focused_handles):
            where = f"{scheme}, {page.path}, stepper {number}"
            assert seen["focusVisible"], f"{where}: Tab does not reach the slider's handle"
            assert seen["ring"] >= 2, f"{where}: the focused handle has no ring ({seen})"
            assert seen["ringContrast"] >= CONTROL_CONTRAST, f"{where}: faint ring {seen}"
            assert seen["fillContrast"] >= CONTROL_CONTRAST, f"{where}: faint handle {seen}"


#: Where the slider's parts are drawn, in CSS px.
SLIDER_GEOMETRY = """stepper => {
  const box = (query) => { const r = stepper.querySelector(query).getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const readout = stepper.querySelector('.widget-readout');
  return {label: box('.widget-slider .widget-label'), handle: box('.noUi-handle'),
          readoutBox: box('.widget-readout'), track: box('.noUi-target').right - box('.noUi-target').left,
          readout: readout.innerText.trim(),
          readoutCut: readout.scrollWidth > readout.clientWidth};
}"""


def clearance(one: dict, other: dict) -> float:
    """How far apart two boxes are (``left``, ``right``, ``top``, ``bottom``): the gap
    between them across or down the page, whichever is larger (negative: they overlap)."""
    across = max(other["left"] - one["right"], one["left"] - other["right"])
    down = max(other["top"] - one["bottom"], one["top"] - other["bottom"])
    return max(across, down)


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_handle_stands_clear_of_the_label_at_the_first_step_and_of_the_readout_at_the_last(
        read_on, width):
    # On a phone the track has a line of its own, under the label and the readout.
    for page in read_on(width, "light"):
        for number, views in enumerate(page.views):
            where = f"{width} px, {page.path}, stepper {number}"
            first, last = views[0].geometry, views[-1].geometry
            gap = clearance(first["handle"], first["label"])
            assert gap >= 4, f"{where}: the handle is {gap:.0f} px from the 'micro-batch' label"
            gap = clearance(last["handle"], last["readoutBox"])
            assert gap >= 4, f"{where}: at {views[-1].position} the handle is {gap:.0f} px " \
                             f"from the readout {last['readout']!r}"


#: The slider as a reader first sees it, before any key or click: the handle's size, its
#: fill and its border against the slider's background, the track's colour against it, and
#: the track's length and the stepper's width.
SLIDER_AT_REST = "stepper => {" + COLOURS + """
  const slider = stepper.querySelector('.widget-slider');
  const handle = slider.querySelector('.noUi-handle');
  const track = slider.querySelector('.noUi-target');
  const connects = slider.querySelector('.noUi-connects');
  const back = behind(slider);
  const style = getComputedStyle(handle);
  const box = handle.getBoundingClientRect();
  const colour = (el) => ratio(over(parse(getComputedStyle(el).backgroundColor), back), back);
  return {width: box.width, height: box.height,
          fill: ratio(over(parse(style.backgroundColor), back), back),
          border: parseFloat(style.borderTopWidth) >= 1
                  ? ratio(over(parse(style.borderTopColor), back), back) : 1,
          track: Math.max(colour(connects), colour(track)),
          length: track.getBoundingClientRect().width,
          stepper: stepper.getBoundingClientRect().width,
          positions: Number(handle.getAttribute('aria-valuemax')) + 1};
}"""
#: A touch target's least size (WCAG 2.5.8, 24 CSS px).
TARGET = 24


@pytest.mark.parametrize("width, scheme", SCREENS)
def test_the_sliders_handle_and_track_are_seen_and_the_handle_is_a_fingers_target(
        read_on, width, scheme):
    for page in read_on(width, scheme):
        for number, seen in enumerate(page.resting_sliders):
            where = f"{width} px, {scheme}, {page.path}, stepper {number}: {seen}"
            assert min(seen["width"], seen["height"]) >= TARGET, f"a small handle at {where}"
            assert max(seen["fill"], seen["border"]) >= CONTROL_CONTRAST, f"faint handle at {where}"
            assert seen["track"] >= CONTROL_CONTRAST, f"faint track at {where}"
            # each position a finger's width apart; on a phone the track spans the stepper
            assert seen["length"] / max(seen["positions"] - 1, 1) >= TARGET, f"short track at {where}"
            if width == PHONE:
                assert seen["length"] >= 0.8 * seen["stepper"], f"short track at {where}"


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_slider_keeps_its_length_and_its_readout_is_never_cut(read_on, width):
    for page in read_on(width, "light"):
        for number, views in enumerate(page.views):
            tracks = {round(view.geometry["track"]) for view in views}
            cut = sorted({view.geometry["readout"] for view in views
                          if view.geometry["readoutCut"]})
            where = f"{width} px, {page.path}, stepper {number}"
            assert len(tracks) == 1, f"{where}: the track's length changes: {sorted(tracks)} px"
            assert cut == [], f"{where}: the readout is cut at {cut}"


# -- 3. stepper tables on a phone: words whole, the table scrolls, not the page ------------
#: The words of the stepper's visible table cells that are broken across two lines (a
#: break after a hyphen is a fair one), and the tables that reach past the first box
#: around them that clips (or past the screen) without that box scrolling sideways, and
#: whether the micro-batch's view as a whole is wider than the stepper.
TABLES_AS_WRAPPED = "stepper => {" + CELL_WORDS + """
  const broken = [], stuck = [];
  for (const cell of stepper.querySelectorAll('td, th')) {
    if (!cell.getClientRects().length) continue;
    for (const word of cellWords(cell)) if (word.lines > 1) broken.push(word.text);
  }
  for (const table of stepper.querySelectorAll('table')) {
    if (!table.getClientRects().length) continue;
    let box = table.parentElement;
    while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    const scrolls = box && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
    const edge = box ? box.getBoundingClientRect().right : window.innerWidth;
    if (!scrolls && table.getBoundingClientRect().right > edge + 0.5) {
      stuck.push(table.innerText.slice(0, 30));
    }
  }
  const step = [...stepper.querySelectorAll('.stepper-step')].find(s => s.getClientRects().length);
  const wider = step.getBoundingClientRect().right > stepper.getBoundingClientRect().right + 0.5;
  return {broken, stuck, wider};
}"""


def test_on_a_phone_stepper_tables_keep_words_whole_and_scroll_inside_their_box(read_on):
    found = {}
    for page in read_on(PHONE, "light"):
        for number, views in enumerate(page.views):
            for view in views:
                seen = view.tables
                if seen["broken"] or seen["stuck"] or seen["wider"]:
                    found[f"{page.path} stepper {number} at {view.position}, tab {view.tab}"] = seen
        wide = max(page.scroll_widths, default=0)
        assert wide <= PHONE, f"{page.path}: the page scrolls sideways ({wide} px)"
    assert found == {}, "words broken inside (broken), tables wider than the screen with " \
                        "no scroll bar of their own (stuck), or a view wider than its " \
                        f"stepper (wider): {found}"


# -- 4. what each view says: the micro-batch the slider chose, a watermark only where the
#       query has one, and times written alike in the heading and in the tables ---------
#: The view a reader sees (its heading and its tables' cells) and the slider's readout.
VIEW_AS_READ = """stepper => {
  const step = [...stepper.querySelectorAll('.stepper-step')].find(s => s.getClientRects().length);
  const tables = [...step.querySelectorAll('table')].map(table =>
    [...table.rows].map(row => [...row.cells].map(cell => cell.innerText.trim())));
  return {readout: stepper.querySelector('.widget-readout').innerText.trim(),
          head: step.firstElementChild.innerText.trim(), tables};
}"""


#: Everything measured at one view, in one call to the browser.
ONE_VIEW = f"""stepper => ({{texts: ({TEXTS_AND_CONTRAST})(stepper),
                             geometry: ({SLIDER_GEOMETRY})(stepper),
                             tables: ({TABLES_AS_WRAPPED})(stepper),
                             said: ({VIEW_AS_READ})(stepper)}})"""


@pytest.fixture(scope="module")
def views_as_read(read_on) -> dict[str, list[list[dict]]]:
    """Every view of every stepper of the site, as read on a desktop in the light theme: by
    page, one list per stepper (and per tab) of VIEW_AS_READ's findings, each with its place."""
    read: dict[str, list[list[dict]]] = {}
    for page in read_on(DESKTOP, "light"):
        read[page.path] = []
        for number, views in enumerate(page.views):
            by_tab: dict = {}
            for view in views:
                where = f"{page.path} stepper {number} at {view.position}, tab {view.tab}"
                by_tab.setdefault(view.tab, []).append({**view.said, "where": where})
            read[page.path] += list(by_tab.values())
    return read


def micro_batch_views(views: list[dict]) -> list[dict]:
    """The views that show a micro-batch (not a tab's note that its run ran none there)."""
    return [view for view in views if view["head"].startswith("micro-batch ")]


def test_a_views_heading_names_its_micro_batch_as_the_slider_does(views_as_read):
    # The readout is the micro-batch's id, or, where tabs number their micro-batches
    # differently, the input it read ("input 2") or the no-data run after it ("input 2,
    # no-data"): the heading says the same words beside its own micro-batch id.
    unlike = [f"{view['where']}: readout {view['readout']!r}, heading {view['head']!r}"
              for steppers in views_as_read.values() for views in steppers
              for view in micro_batch_views(views)
              if not (view["head"].startswith(f"micro-batch {view['readout']} ")
                      or view["head"] == f"micro-batch {view['readout']}"
                      if view["readout"].isdigit() else f"({view['readout']}" in view["head"])]
    assert unlike == [], "\n".join(unlike)


def test_a_watermark_is_shown_only_where_the_query_has_one(views_as_read):
    for steppers in views_as_read.values():
        for views in steppers:
            shown = [("watermark:" in view["head"], view["where"])
                     for view in micro_batch_views(views)]
            # a query with a watermark shows it at every micro-batch, from "none yet" on
            assert len({said for said, _ in shown}) <= 1, shown
            for view in views:
                assert not re.search(r"watermark: none(?! yet)", view["head"]), view
    # chapter 5's stores count words with no event time: no watermark; chapter 3's windows
    # have one at every micro-batch
    for path, said in [("book/05_state_store.html", False),
                       ("book/03_state_store_save.html", True)]:
        heads = [view["head"] for views in views_as_read[path] for view in micro_batch_views(views)]
        assert heads and all(("watermark:" in head) == said for head in heads), (path, heads)


def test_times_read_alike_in_a_views_heading_and_in_its_tables(views_as_read):
    for steppers in views_as_read.values():
        for views in steppers:
            for view in views:
                cells = [cell for table in view["tables"] for row in table for cell in row]
                # a raw count of epoch milliseconds is no time a reader can place
                assert not [cell for cell in cells if re.search(r"\d{10,}", cell)], view
                # a watermark column says what the heading says the watermark is
                for table in view["tables"]:
                    if "watermark" in table[0]:
                        column = table[0].index("watermark")
                        for row in table[1:]:
                            assert f"watermark: {row[column]}" in view["head"] or (
                                f"initial {row[column]})" in view["head"]), view
    # chapter 4's processor writes its watermark and timers in epoch milliseconds
    late = [view for views in views_as_read["book/04_transform_with_state.html"]
            for view in views if view["head"].startswith("micro-batch 2 ")]
    assert late and "watermark: -5 s" in late[0]["head"], late
    assert ["ann", "3", "[5 s]"] in late[0]["tables"][1], late[0]["tables"]
