"""Put axe-core, the accessibility checker the browser tests run, into tests/browser/vendor/.

The site's tests inject ``axe.min.js`` into every page of the built book and fail on any
serious or critical finding (tests/browser/test_accessibility.py). The file comes from the
npm registry the same way as the widget scripts (``npm pack`` of a pinned version, checked
against its pinned sha512 digest; see scripts/vendor_widgets.py) and is not committed:
``make test`` runs this script, which does nothing when the file is already in place.

    python -m scripts.vendor_axe            # fetch if missing
    python -m scripts.vendor_axe --force    # fetch again
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from scripts.vendor_widgets import npm_pack, unpack

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "browser" / "vendor"
NAME, VERSION = "axe-core", "4.14.1"
INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFoo"
             "JpZe37OgudVGtQ==")
#: Written last: its presence means axe.min.js is in place, at this version.
STAMP = TARGET / "VERSION.txt"


def vendor(force: bool = False) -> None:
    if STAMP.exists() and STAMP.read_text() == f"{NAME}@{VERSION}\n" and not force:
        print(f"{NAME} already in {TARGET.relative_to(ROOT)}")
        return
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed to fetch axe-core for the browser tests (Node.js 18+)")
    staging = Path(tempfile.mkdtemp(prefix="axe-"))
    try:
        tarball = npm_pack(NAME, VERSION, INTEGRITY, staging)
        TARGET.mkdir(parents=True, exist_ok=True)
        if unpack(tarball, ("axe.min.js", "LICENSE"), TARGET) != 2:
            raise SystemExit(f"{NAME}@{VERSION}: axe.min.js or LICENSE missing from the package")
        STAMP.write_text(f"{NAME}@{VERSION}\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"{NAME}@{VERSION} in {TARGET.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="fetch even if present")
    vendor(parser.parse_args(argv).force)


if __name__ == "__main__":
    sys.exit(main())
