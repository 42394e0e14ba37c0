"""The theme's own parts of every page (header, sidebars), as a reader on a desktop sees them."""
from __future__ import annotations

import pytest

from tests.browser.screens import DESKTOP

pytestmark = pytest.mark.slow

SEARCH_BUTTONS = ".search-button-field, .search-button"


def test_on_a_desktop_a_page_shows_one_search_button_and_no_empty_band_above_it(site, seen):
    for path in ["book/intro.html", "book/01_global_limit.html"]:
        page = seen(path, DESKTOP).page
        shown = page.locator(SEARCH_BUTTONS).evaluate_all(
            "buttons => buttons.filter(b => b.getClientRects().length).length")
        assert shown == 1, f"{path}: {shown} search buttons at {DESKTOP} px"
        band = page.evaluate("(() => { const h = document.querySelector('.bd-header');"
                             " return h ? h.getBoundingClientRect().height : 0; })()")
        assert band == 0, f"{path}: a {band} px band above the page"
