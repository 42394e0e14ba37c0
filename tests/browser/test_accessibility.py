"""Every page of the book, audited by axe-core in the browser, on a phone and on a desktop.

axe-core (fetched by ``make test``, see scripts/vendor_axe.py) checks a page against the
WCAG rules a machine can check: names of buttons and links, colour contrast, landmarks,
headings, the labels of form controls (the stepper's slider is one). A finding it rates
serious or critical fails the page, with the rule, what it asks and where it was found.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.screens import STEPPER

pytestmark = pytest.mark.slow

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
#: A phone in dark mode and a desktop in light mode: both widths and both themes.
READERS = [pytest.param(390, "dark", id="phone-dark"),
           pytest.param(1400, "light", id="desktop-light")]
SEVERE = {"serious", "critical"}


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: `make test` fetches it (python -m scripts.vendor_axe)")
    return AXE.read_text()


def audit(page, axe_source: str) -> list[dict]:
    """axe's violations on the page as it is drawn now (WCAG 2.x A and AA rules)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(content=axe_source)
    return page.evaluate("""async () => (await axe.run(document, {
        runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},
        resultTypes: ['violations'],
    })).violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                              where: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))""")


def severe_findings(page, axe_source: str) -> list[str]:
    """The serious and critical findings that are there on two audits a second apart.

    The theme turns the page from "auto" to the reader's scheme in a script, and on a busy
    machine an audit can catch a page still being drawn. A finding of the page itself is
    there on both audits; one of a page half drawn is not.
    """
    def once() -> set[str]:
        return {f"{v['impact']} {v['id']}: {v['help']} at {v['where']}"
                for v in audit(page, axe_source) if v["impact"] in SEVERE}

    first = once()
    if not first:
        return []
    page.wait_for_timeout(1_000)
    return sorted(first & once())


@pytest.mark.parametrize("width, scheme", READERS)
def test_no_page_has_a_serious_accessibility_violation(site, visit, axe_source, width, scheme):
    found = {}
    for path in site.pages():
        page = visit(path, width=width, scheme=scheme).page
        # the theme's script has turned "auto" into the reader's scheme
        page.wait_for_function(f"document.documentElement.dataset.theme === '{scheme}'")
        page.evaluate("document.fonts.ready.then(() => true)")
        if page.locator(STEPPER).count():
            # audit the steppers as drawn, with their controls named
            page.wait_for_selector(f"{STEPPER} .noUi-handle[aria-label]", timeout=20_000)
        severe = severe_findings(page, axe_source)
        if severe:
            found[path] = severe
        page.context.close()
    assert found == {}, f"{width} px, {scheme}: " + "\n".join(
        f"{path}:\n  " + "\n  ".join(lines) for path, lines in found.items())
