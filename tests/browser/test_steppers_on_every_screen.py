"""Every micro-batch stepper of the site, read in both themes, on a phone and on a desktop.

A stepper is read the way a reader reads it: the slider is moved with the keyboard through
every micro-batch, and each tab of a tabbed stepper is opened at every one of them. What is
measured is what the reader sees: the colour of each text against the colour really
behind it (the first backgrounds up its ancestors that cover it), the place and the ring
of the slider's handle, the length of the slider's track, and where table cells wrap.
"""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

STEPPER = ".micro-batch-stepper"
#: A stepper is drawn once its slider's handle is named (book/_static/control_names.js).
DRAWN = f"{STEPPER} .noUi-handle[aria-label]"
PHONE, DESKTOP = 390, 1400
SCREENS = [pytest.param(width, scheme, id=f"{width}px-{scheme}")
           for width in (PHONE, DESKTOP) for scheme in ("light", "dark")]
#: WCAG 2.1 AA: normal text 4.5:1; the parts of a control a user must see 3:1.
TEXT_CONTRAST, CONTROL_CONTRAST = 4.5, 3.0

#: Colours as the page paints them: a colour over what is behind it, WCAG's luminance and
#: contrast ratio, and the colour behind an element (its own background over its
#: ancestors', until one covers it, over the white canvas).
COLOURS = """
const parse = (text) => { const v = (text.match(/[\\d.]+/g) || [0, 0, 0, 0]).map(Number);
  return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
const over = (top, bottom) => { const a = top[3] + bottom[3] * (1 - top[3]);
  if (a === 0) return [0, 0, 0, 0];
  return [0, 1, 2].map(i => (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / a)
    .concat([a]); };
const luminance = ([r, g, b]) => [r, g, b].map(c => { c /= 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
  .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
const ratio = (one, two) => { const [a, b] = [luminance(one), luminance(two)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
const behind = (el) => { let colour = [0, 0, 0, 0];
  for (let node = el; node && colour[3] < 1; node = node.parentElement) {
    colour = over(colour, parse(getComputedStyle(node).backgroundColor)); }
  return over(colour, [255, 255, 255, 1]); };
"""

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


def open_steppers(visit, path: str, width: int, scheme: str):
    page = visit(path, wait_for=DRAWN, width=width, scheme=scheme).page
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    steppers = page.locator(STEPPER)
    return page, [steppers.nth(index) for index in range(steppers.count())]


# -- 1. every text of every stepper, in both themes and at both widths --------------------
@pytest.mark.parametrize("width, scheme", SCREENS)
def test_every_text_of_every_stepper_reads_against_what_is_really_behind_it(
        site, visit, width, scheme):
    faint = {}
    for path in stepper_pages(site):
        page, steppers = open_steppers(visit, path, width, scheme)
        for number, stepper in enumerate(steppers):
            for position, tab in each_view(page, stepper):
                texts = stepper.evaluate(TEXTS_AND_CONTRAST)
                assert texts, f"{path}: stepper {number} shows no text"
                low = sorted({f"{t['text']!r} {t['ratio']:.2f}:1" for t in texts
                              if t["ratio"] < TEXT_CONTRAST})
                if low:
                    faint[f"{path} stepper {number} at {position}, tab {tab}"] = low
        page.context.close()
    assert faint == {}, f"{width} px, {scheme}: text under {TEXT_CONTRAST}:1 " + "\n".join(
        f"\n{where}: {', '.join(texts[:6])}" for where, texts in faint.items())


# -- 2. the slider: its handle seen with keyboard focus, apart from its label, a track
#       that keeps its length, a readout that is never cut --------------------------------
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
def test_the_sliders_handle_shows_a_ring_when_it_has_keyboard_focus(site, visit, scheme):
    for path in stepper_pages(site):
        page, steppers = open_steppers(visit, path, PHONE, scheme)
        for number, stepper in enumerate(steppers):
            # Tab from the play button, as a keyboard user reaches the slider.
            stepper.get_by_role("button", name="play", exact=True).focus()
            for _ in range(5):
                page.keyboard.press("Tab")
                if page.evaluate("document.activeElement.classList.contains('noUi-handle')"):
                    break
            seen = stepper.locator(".noUi-handle").evaluate(HANDLE_AS_SEEN)
            where = f"{scheme}, {path}, stepper {number}"
            assert seen["focusVisible"], f"{where}: Tab does not reach the slider's handle"
            assert seen["ring"] >= 2, f"{where}: the focused handle has no ring ({seen})"
            assert seen["ringContrast"] >= CONTROL_CONTRAST, f"{where}: faint ring {seen}"
            assert seen["fillContrast"] >= CONTROL_CONTRAST, f"{where}: faint handle {seen}"
        page.context.close()


#: Where the slider's parts are drawn, in CSS px.
SLIDER_GEOMETRY = """stepper => {
  const box = (query) => stepper.querySelector(query).getBoundingClientRect();
  const readout = stepper.querySelector('.widget-readout');
  return {labelRight: box('.widget-slider .widget-label').right,
          handleLeft: box('.noUi-handle').left, handleRight: box('.noUi-handle').right,
          readoutLeft: box('.widget-readout').left, track: box('.noUi-target').width,
          readout: readout.innerText.trim(),
          readoutCut: readout.scrollWidth > readout.clientWidth};
}"""


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_handle_stands_clear_of_the_label_at_the_first_step_and_of_the_readout_at_the_last(
        site, visit, width):
    for path in stepper_pages(site):
        page, steppers = open_steppers(visit, path, width, "light")
        for number, stepper in enumerate(steppers):
            where = f"{width} px, {path}, stepper {number}"
            first = stepper.evaluate(SLIDER_GEOMETRY)
            gap = first["handleLeft"] - first["labelRight"]
            assert gap >= 4, f"{where}: the handle is {gap:.0f} px from the 'micro-batch' label"
            *_, last = each_view(page, stepper)
            at_end = stepper.evaluate(SLIDER_GEOMETRY)
            gap = at_end["readoutLeft"] - at_end["handleRight"]
            assert gap >= 4, f"{where}: at {last[0]} the handle is {gap:.0f} px from the " \
                             f"readout {at_end['readout']!r}"
        page.context.close()


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_slider_keeps_its_length_and_its_readout_is_never_cut(site, visit, width):
    for path in stepper_pages(site):
        page, steppers = open_steppers(visit, path, width, "light")
        for number, stepper in enumerate(steppers):
            tracks, cut = set(), []
            for _position, tab in each_view(page, stepper):
                seen = stepper.evaluate(SLIDER_GEOMETRY)
                tracks.add(round(seen["track"]))
                if seen["readoutCut"]:
                    cut.append(seen["readout"])
            where = f"{width} px, {path}, stepper {number}"
            assert len(tracks) == 1, f"{where}: the track's length changes: {sorted(tracks)} px"
            assert cut == [], f"{where}: the readout is cut at {sorted(set(cut))}"
        page.context.close()


# -- 3. stepper tables on a phone: words whole, the table scrolls, not the page ------------
#: The words of the stepper's visible table cells that are broken across two lines (a
#: break after a hyphen is a fair one), and the tables that reach past the first box
#: around them that clips (or past the screen) without that box scrolling sideways, and
#: whether the micro-batch's view as a whole is wider than the stepper.
TABLES_AS_WRAPPED = """stepper => {
  const broken = [], stuck = [];
  for (const cell of stepper.querySelectorAll('td, th')) {
    if (!cell.getClientRects().length) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[^\\s-]+-?/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
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


def test_on_a_phone_stepper_tables_keep_words_whole_and_scroll_inside_their_box(
        site, visit):
    found = {}
    for path in stepper_pages(site):
        page, steppers = open_steppers(visit, path, PHONE, "light")
        for number, stepper in enumerate(steppers):
            for position, tab in each_view(page, stepper):
                seen = stepper.evaluate(TABLES_AS_WRAPPED)
                if seen["broken"] or seen["stuck"] or seen["wider"]:
                    found[f"{path} stepper {number} at {position}, tab {tab}"] = seen
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= PHONE, f"{path}: the page scrolls sideways ({wide} px)"
        page.context.close()
    assert found == {}, "words broken inside (broken), tables wider than the screen with " \
                        "no scroll bar of their own (stuck), or a view wider than its " \
                        f"stepper (wider): {found}"
