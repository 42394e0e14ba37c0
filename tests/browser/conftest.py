"""The built book, served on the loopback interface, and a real browser to read it.

* ``site`` builds the book once per test session (``jupyter-book build`` with
  ``--warningiserror``: a broken internal link or a warning fails the build; unchanged
  chapters come from the execution cache, so a rebuild takes seconds) and serves
  ``_build/html`` from a thread on 127.0.0.1. ``BOOK_HTML=/path/to/html`` tests an already
  built site instead.
* ``browser`` is the system's Chromium (``/usr/bin/chromium``) driven by Playwright; it is
  never downloaded (no ``playwright install``).
* ``visit`` opens a page in a fresh context whose every request that is neither loopback nor
  ``file://`` is refused, and records the console errors, page errors and refused
  requests of the visit.
* ``seen`` opens pages the same way, once per test module and width, for the tests that only
  read them: each page of the site loads twice or three times per run instead of once per
  test.
"""
from __future__ import annotations

import fcntl
import functools
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser.screens import STEPPER  # what a page that draws widgets shows once drawn

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


def is_local(url: str) -> bool:
    """Whether a request stays on this machine (loopback, a file, or inline data)."""
    parsed = urlparse(url)
    if parsed.scheme in ("file", "data", "blob", "about"):
        return True
    return parsed.scheme in ("http", "https", "ws") and parsed.hostname in LOOPBACK_HOSTS


def build_book() -> Path:
    """Fetch the widget scripts if needed and build the book; the HTML folder.

    One build at a time: two test processes (xdist workers) that both need the site would
    otherwise write the same ``_build`` folder at once; the second waits, and then finds
    every chapter in the execution cache (seconds).
    """
    subprocess.run([sys.executable, "-m", "scripts.vendor_widgets"],
                   cwd=ROOT, check=True, capture_output=True)
    (ROOT / "_build").mkdir(exist_ok=True)
    with open(ROOT / "_build" / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([sys.executable, "-m", "scripts.build_book"],
                              cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail("the book does not build:\n" + done.stdout[-4000:] + done.stderr[-4000:])
    return ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def html_dir() -> Path:
    given = os.environ.get("BOOK_HTML")
    return Path(given).resolve() if given else build_book()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # one line per request would drown the output
        pass


@dataclass
class Site:
    """The built book as served over HTTP."""

    root: Path
    base_url: str

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def pages(self) -> list[str]:
        """Every HTML page of the site (relative paths), the search page included."""
        return sorted(
            path.relative_to(self.root).as_posix() for path in self.root.rglob("*.html")
            if not path.relative_to(self.root).parts[0].startswith("_")
        )

    def chapters(self) -> list[str]:
        """The chapter pages: ``book/NN_name.html``."""
        return [page for page in self.pages()
                if page.startswith("book/") and page[5:7].isdigit()]


@pytest.fixture(scope="session")
def site(html_dir: Path):
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(html_dir, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Visit:
    """One page opened in the browser, and what went wrong while it loaded."""

    page: object
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def unexpected_errors(self) -> list[str]:
        """Every error the page logged or raised: none is expected (the two that Jupyter
        Book 1 pages log as built, a constant declared twice and an empty colour mode,
        are gone: see book/_ext/course_site.py and _config.yml)."""
        return self.console_errors + self.page_errors


def _open(browser, site: Site, contexts: list, path: str, wait_for: str | None = None,
          width: int | None = None, scheme: str | None = None) -> Visit:
    """Open ``path`` in a fresh, offline browser context (added to ``contexts``).

    ``width``: the viewport's width in CSS px (390 is a phone's), else Playwright's default;
    ``scheme``: the colour scheme the reader's system prefers ("light" or "dark").
    """
    options: dict = {"viewport": {"width": width, "height": 844}} if width else {}
    if scheme:
        options["color_scheme"] = scheme
    context = browser.new_context(**options)
    contexts.append(context)
    page = context.new_page()
    record = Visit(page)

    def route(request_route):
        if is_local(request_route.request.url):
            request_route.continue_()
        else:
            record.refused.append(request_route.request.url)
            request_route.abort()

    context.route("**/*", route)
    page.on("console", lambda message: message.type == "error"
            and record.console_errors.append(message.text))
    page.on("pageerror", lambda error: record.page_errors.append(str(error)))
    page.on("requestfailed", lambda request: is_local(request.url)
            and record.failed.append(request.url))
    page.on("response", lambda response: response.status >= 400
            and record.failed.append(f"{response.status} {response.url}"))
    page.goto(site.url(path), wait_until="load")
    page.wait_for_load_state("networkidle")
    if wait_for:
        page.wait_for_selector(wait_for, timeout=20_000)
    return record


def _opener(browser, site):
    """Yield a function that opens pages (:func:`_open`); close them all afterwards."""
    contexts: list = []
    yield functools.partial(_open, browser, site, contexts)
    for context in contexts:
        context.close()


@pytest.fixture
def visit(browser, site):
    """``visit(path, wait_for=None, width=None, scheme=None)`` opens a page of the site,
    offline, for this test alone, and returns a :class:`Visit`."""
    yield from _opener(browser, site)


@pytest.fixture(scope="module")
def visit_in_module(browser, site):
    """``visit`` for a module's own fixtures: the pages it opens stay open until the module
    ends (or until the caller closes them sooner)."""
    yield from _opener(browser, site)


WIDGET_OUTPUT = ".cell_output .widget-view, .cell_output script[type*=widget]"


@pytest.fixture(scope="session")
def seen(browser, site):
    """``seen(path, width=None)``: the page as a reader first sees it, its widgets drawn.

    Each page is opened once per test process and width, and shared by every test that
    asks for it, whatever its module: those tests only read the page (no click, key or
    scroll), so the page they read is the one that loaded. A test that acts on a page uses
    ``visit``.
    """
    contexts: list = []
    opened: dict = {}

    def page_as_loaded(path: str, width: int | None = None) -> Visit:
        if (path, width) not in opened:
            record = _open(browser, site, contexts, path, width=width)
            if record.page.locator(WIDGET_OUTPUT).count():
                record.page.wait_for_selector(STEPPER, timeout=20_000)
            opened[path, width] = record
        return opened[path, width]

    yield page_as_loaded
    for context in contexts:
        context.close()
