"""What a reader downloads to open pages of the built site, and when their stepper appears.

    .venv/bin/python -m scripts.page_weight [--html _build/html] [--runs 2] PAGE...

Serves the built site on 127.0.0.1 (no compression, like the browser tests' server), opens
each page in the system's Chromium with every other host refused, and prints the bytes
received (the network layer's ``encodedDataLength``, summed over the page and everything
it loaded), the largest files, when the browser first painted text (first contentful
paint, ms after the request) and the milliseconds from the page's text being parsed
(DOMContentLoaded) to its first micro-batch stepper being drawn.

    .venv/bin/python -m scripts.page_weight book/04_transform_with_state.html book/intro.html
"""
from __future__ import annotations

import argparse
import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]
#: Records, in the page, when its text was parsed and when its first stepper was drawn.
TIMES = """
window.__times = {};
document.addEventListener("DOMContentLoaded", () => {
  window.__times.parsed = performance.now();
  const drawn = () => {
    if (!window.__times.stepper && document.querySelector(".micro-batch-stepper")) {
      window.__times.stepper = performance.now();
    }
  };
  new MutationObserver(drawn).observe(document.body, {childList: true, subtree: true});
  drawn();
});
"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def network_log(context, page) -> tuple[dict[str, int], dict[str, str]]:
    """Two dicts the browser fills as ``page`` loads, by request id: the bytes received for
    each request (the network layer's ``encodedDataLength``) and its URL."""
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    sizes: dict[str, int] = {}
    urls: dict[str, str] = {}
    cdp.on("Network.requestWillBeSent",
           lambda event: urls.__setitem__(event["requestId"], event["request"]["url"]))
    cdp.on("Network.loadingFinished",
           lambda event: sizes.__setitem__(event["requestId"], event["encodedDataLength"]))
    return sizes, urls


def measure(browser, base: str, path: str) -> tuple[int, list, float | None, float]:
    """Bytes received, (bytes, file) per response, ms from parsed to the first stepper,
    ms to the first contentful paint."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        context.route("**/*", lambda route: route.continue_()
                      if route.request.url.startswith((base, "data:")) else route.abort())
        sizes, urls = network_log(context, page)
        page.add_init_script(TIMES)
        page.goto(base + path, wait_until="load")
        page.wait_for_load_state("networkidle")
        if page.locator("script[type*=widget-view]").count():
            page.wait_for_selector(".micro-batch-stepper", timeout=20_000)
            page.wait_for_load_state("networkidle")
        times = page.evaluate("window.__times")
        after = (times["stepper"] - times["parsed"]) if "stepper" in times else None
        painted = page.evaluate("performance.getEntriesByName('first-contentful-paint')"
                                ".map(entry => entry.startTime)[0] || -1")
        files = sorted(((size, urls.get(key, "?").removeprefix(base).split("?")[0])
                        for key, size in sizes.items()), reverse=True)
        return sum(sizes.values()), files, after, painted
    finally:
        context.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", help="pages of the site, e.g. book/intro.html")
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--runs", type=int, default=2, help="times each page is opened")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_Quiet, directory=str(args.html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for path in args.pages:
                for run in range(args.runs):
                    total, files, after, painted = measure(browser, base, path)
                    drawn = ("no stepper" if after is None
                             else f"stepper {after:.0f} ms after DOMContentLoaded")
                    print(f"{path} (run {run + 1}): {total / 1e6:.2f} MB in {len(files)} "
                          f"responses; text painted at {painted:.0f} ms; {drawn}")
                    if run == 0:
                        for size, name in files[:4]:
                            print(f"    {size / 1e3:8.0f} kB  {name}")
            browser.close()
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
