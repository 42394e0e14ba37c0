"""The chapters' pictures on a phone: text a reader can read, and the picture at full size
one tap away.

A picture is an SVG whose words are ``<text>`` (autograder/widgets/pictures.py): the size a reader
sees a word at is its font size in the picture's own units times the scale the page draws
the picture at (its width on the page over the width of its viewBox).
"""
from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest

from tests.browser.screens import PHONE

pytestmark = pytest.mark.slow

#: The smallest text a picture may show, in CSS pixels (body text is 16).
LEGIBLE_PX = 11


def smallest_text_px(svg: str, shown_width: float) -> float:
    """The smallest font of an SVG picture as drawn ``shown_width`` CSS px wide."""
    fonts = [float(size) for size in re.findall(r"font-size:\s*([\d.]+)px", svg)]
    assert fonts, "the picture has no text as text (svg.fonttype must be 'none')"
    view_width = float(re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg).group(1))
    return min(fonts) * shown_width / view_width


def test_on_a_phone_the_text_of_every_picture_is_at_least_11_px(site, seen):
    small = {}
    for path in site.chapters():
        page = seen(path, PHONE).page
        shown = page.eval_on_selector_all(
            "article img", "imgs => imgs.map(i => [i.getAttribute('src'), i.clientWidth])")
        assert shown, f"{path}: no picture"
        for src, width_px in shown:
            svg = (site.root / path).parent.joinpath(src).resolve().read_text()
            smallest = smallest_text_px(svg, width_px)
            if smallest < LEGIBLE_PX:
                small.setdefault(path, []).append(f"{src}: {smallest:.1f} px")
    assert small == {}, f"picture text under {LEGIBLE_PX} px at {PHONE} px wide: {small}"


def test_every_picture_of_a_chapter_opens_at_full_size_with_one_tap(site, seen):
    unlinked = {}
    for path in site.chapters():
        page = seen(path, PHONE).page
        pictures = page.eval_on_selector_all("article .cell_output img", """imgs => imgs.map(
            i => [i.src, i.closest('a') ? i.closest('a').href : null])""")
        assert pictures, f"{path}: no picture"
        for src, href in pictures:
            if href is None or urljoin(page.url, href) != src:
                unlinked.setdefault(path, []).append(src.rsplit("/", 1)[-1])
    assert unlinked == {}, f"pictures with no link to themselves at full size: {unlinked}"
