"""What every browser test reads the site at, and how it measures colours.

* The two widths a page is read at: a phone's (390 CSS pixels, an iPhone 12 to 15) and a
  desktop's; each in the light and the dark theme (``SCREENS``).
* A micro-batch stepper, and when it is drawn (its slider's handle is named by
  ``book/_static/control_names.js``).
* WCAG 2.1 AA's contrast: normal text 4.5:1; the parts of a control a user must see 3:1.
* ``COLOURS``: JavaScript to paste into a page's script: a colour over what is behind it,
  WCAG's luminance and contrast ratio, the colour behind an element (its own background over
  its ancestors', until one covers it, over the white canvas), and a colour's contrast
  against that.
* ``CELL_WORDS``: JavaScript for the words of a table cell as drawn, each with the text node
  it is in and the number of lines it spans (a break after a hyphen ends a word).
"""
import pytest

PHONE, DESKTOP = 390, 1400
SCREENS = [pytest.param(width, scheme, id=f"{width}px-{scheme}")
           for width in (PHONE, DESKTOP) for scheme in ("light", "dark")]

STEPPER = ".micro-batch-stepper"
DRAWN = f"{STEPPER} .noUi-handle[aria-label]"

TEXT_CONTRAST, CONTROL_CONTRAST = 4.5, 3.0

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
const against = (colour, back) => ratio(over(parse(colour), back), back);
"""

CELL_WORDS = """
const cellWords = (cell) => { const words = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/[^\\s-]+-?/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
      words.push({text: word[0], node, lines});
    }
  }
  return words; };
"""
