"""What a reader downloads to open a page, and how soon a chapter's stepper is drawn.

Page weight is the sum of the bytes Chromium received for the page and everything it
loaded (the network layer's ``encodedDataLength``: headers and bodies as they travelled;
the test server sends no compression, so this is the files' own size). Jupyter Book 1 as
it comes puts the theme's Font Awesome script (1.5 MB) on every page and the ipywidgets
bundle (3.6 MB) on a page with a widget: 2.47 MB for the opening page, 6.35 MB for chapter
1, 6.49 MB for chapter 4. The bounds below, on what the site adds to a page's own HTML and
pictures, sit between those and what the site adds (docs/benchmarks.md has the numbers).

A stepper drawn only once the page's ``load`` event has fired, that is once every picture
and font has arrived, shows seconds after the text of a chapter with many pictures. The
test holds every picture back for several seconds: a stepper that waits for them cannot
be drawn in time.
"""
from __future__ import annotations

import functools
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from urllib.parse import urlparse

import pytest

from scripts import page_weight
from tests.browser.screens import STEPPER

pytestmark = pytest.mark.slow



def is_local(url: str) -> bool:
    """Whether a request stays on this machine (the others are refused, as in conftest)."""
    parsed = urlparse(url)
    return parsed.scheme in ("data", "blob", "about") or parsed.hostname == "127.0.0.1"

#: What the site adds to a page, at most, in bytes: everything the reader downloads but the
#: page's own HTML and pictures (which grow with what a chapter says). The site adds about
#: 0.94 MB without a widget and 3.91 MB with one; Jupyter Book 1 as it comes, 2.4 and 6.23 MB.
PLAIN_PAGE_MAX = 1_300_000
WIDGET_PAGE_MAX = 4_300_000
#: Seconds every picture is held back, and how soon after the page's text is parsed
#: (DOMContentLoaded) its first stepper must be drawn: generous for a busy two-core
#: machine (0.6-0.8 s measured), far below the hold.
PICTURE_HOLD = 10.0
STEPPER_WITHIN = 4.0
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def transferred_bytes(browser, url: str) -> tuple[int, list[str]]:
    """Open ``url`` in a fresh context; the bytes that came over the network for everything
    but the page itself and its pictures, and the URLs of everything it loaded."""
    context = browser.new_context()
    try:
        page = context.new_page()
        context.route("**/*", lambda route: route.continue_() if is_local(route.request.url)
                      else route.abort())
        sizes, urls = MEASURING.network_log(context, page)
        page.goto(url, wait_until="load")
        page.wait_for_load_state("networkidle")
        if page.locator("script[type*=widget-view]").count():
            page.wait_for_selector(STEPPER, timeout=20_000)
        page.wait_for_load_state("networkidle")
        def own(loaded: str) -> bool:  # the page itself, or one of its pictures
            return loaded.split("?")[0] == url or "/_images/" in loaded

        added = sum(size for key, size in sizes.items() if not own(urls.get(key, "")))
        return added, [urls.get(key, "?") for key in sizes]
    finally:
        context.close()


def _book_pages(site, with_widgets: bool) -> list[str]:
    pages = [path for path in site.pages() if path.startswith("book/")
             and (WIDGET_VIEW in (site.root / path).read_text()) == with_widgets]
    assert pages, f"no page {'with' if with_widgets else 'without'} a widget"
    return pages


def test_a_page_without_widgets_loads_no_widget_script_and_weighs_little(site, browser):
    for path in _book_pages(site, with_widgets=False):
        added, urls = transferred_bytes(browser, site.url(path))
        assert added <= PLAIN_PAGE_MAX, f"{path}: the site adds {added / 1e6:.2f} MB"
        heavy = [url for url in urls if "fontawesome.js" in url or "/widgets/" in url]
        assert heavy == [], f"{path} loads {heavy}"


def test_a_page_with_a_stepper_loads_the_widget_manager_without_its_ipywidgets_7_copy(
        site, browser):
    for path in _book_pages(site, with_widgets=True):
        added, urls = transferred_bytes(browser, site.url(path))
        assert added <= WIDGET_PAGE_MAX, f"{path}: the site adds {added / 1e6:.2f} MB"
        assert any(url.split("?")[0].endswith("/widgets/embed-amd.js") for url in urls), (
            f"{path} did not load the widget manager")
        extra = [url for url in urls if "fontawesome.js" in url
                 or url.split("?")[0].endswith(("/base7.js", "/controls7.js"))]
        assert extra == [], f"{path} loads {extra}"


def test_the_themes_icons_are_drawn_without_its_font_awesome_script(site, seen):
    """The header's buttons (menu, search, colour mode) show their icons from the theme's
    font: each icon has a glyph, and the font is loaded."""
    page = seen("book/01_global_limit.html").page
    icons = page.locator(".bd-header-article i[class*=fa-], .article-header-buttons "
                         "i[class*=fa-], .search-button__button i[class*=fa-]")
    drawn = icons.evaluate_all("""icons => icons
        .filter(i => i.getClientRects().length)
        .map(i => ({glyph: getComputedStyle(i, '::before').content,
                    font: getComputedStyle(i).fontFamily,
                    width: i.getBoundingClientRect().width}))""")
    assert drawn, "no icon found in the page's header"
    for icon in drawn:
        assert icon["glyph"] not in ("none", "normal", ""), icon
        assert "Font Awesome" in icon["font"] and icon["width"] > 4, icon
    assert page.evaluate("document.fonts.check('900 16px \"Font Awesome 6 Free\"')")


class _SlowPictures(SimpleHTTPRequestHandler):
    """Serves the site, each picture after a pause (each request has its own thread)."""

    def do_GET(self) -> None:
        if "/_images/" in self.path:
            time.sleep(PICTURE_HOLD)
        super().do_GET()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def slow_pictures_site(site):
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_SlowPictures, directory=str(site.root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


MEASURING = page_weight
TIMES = MEASURING.TIMES


@pytest.mark.parametrize("path", ["book/04_transform_with_state.html",
                                  "book/03_state_store_save.html"])
def test_a_chapters_stepper_is_drawn_soon_after_its_text_without_waiting_for_pictures(
        browser, slow_pictures_site, path):
    context = browser.new_context()
    try:
        page = context.new_page()
        context.route("**/*", lambda route: route.continue_() if is_local(route.request.url)
                      else route.abort())
        page.add_init_script(TIMES)
        page.goto(f"{slow_pictures_site}/{path}", wait_until="domcontentloaded")
        page.wait_for_selector(STEPPER, timeout=20_000)
        times = page.evaluate("window.__times")
        seconds = (times["stepper"] - times["parsed"]) / 1000
        assert seconds <= STEPPER_WITHIN, (
            f"{path}: the first stepper was drawn {seconds:.1f} s after the page's text")
        assert page.locator("img[src*='_images/']").count(), f"{path} has no picture to hold"
    finally:
        context.close()
