"""Put the JavaScript that draws widgets on the book's pages into book/_static/widgets/.

A page with a widget (the micro-batch stepper) carries the widget's saved state, and two
scripts turn that state into a slider and tables in the browser: RequireJS and the
``embed-amd.js`` bundle of ``@jupyter-widgets/html-manager``. Jupyter Book would fetch both
from public CDNs each time a reader opens the page; the book serves its own copies instead,
so the pages work offline and load nothing from elsewhere.

The files come from the npm registry, through npm itself (``npm pack`` of pinned versions,
checked against the pinned sha512 digests below), and are not committed: ``make book`` and
``make test`` run this script, which does nothing when the files are already in place.

The bundle is cut in two on its way in (:func:`split_bundle`). It holds the widget
libraries twice, as ipywidgets 8 draws them and as ipywidgets 7 did (``base7``,
``controls7``: 0.8 of its 3.6 MB); the book's widgets are ipywidgets 8 ones, so the older
pair goes to files of its own that RequireJS fetches only if a page ever asks for them.
Its last line, which waits for the page's ``load`` event (every picture and font) before
drawing the widgets, is left out: ``book/_static/widget_render.js`` draws them as soon as
the page's text is parsed.

    python -m scripts.vendor_widgets            # fetch if missing
    python -m scripts.vendor_widgets --force    # fetch again
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "book" / "_static" / "widgets"

#: npm package -> (version, sha512 integrity from the registry, files to copy from it).
#: html-manager 1.x is the one that draws ipywidgets 8 (controls model version 2.0.0).
PACKAGES = {
    "@jupyter-widgets/html-manager": (
        "1.0.15",
        "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
        # the bundle, the Font Awesome fonts its styles name, and its licence notices
        ("dist/embed-amd.js", "dist/*.woff2", "dist/*.woff", "dist/*.ttf", "dist/*.eot",
         "dist/*.svg", "dist/embed.js.LICENSE.txt"),
    ),
    "requirejs": (
        "2.3.8",
        "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw==",
        ("require.js",),  # its licence is in the file's header
    ),
}

#: The AMD modules of embed-amd.js, in its order: those kept in it, and those given files
#: of their own (``<name>.js``, found through the RequireJS paths in widget_assets.js).
KEPT_MODULES = ("@jupyter-widgets/base", "@jupyter-widgets/controls",
                "@jupyter-widgets/html-manager",
                "@jupyter-widgets/html-manager/dist/libembed-amd")
APART_MODULES = {"@jupyter-widgets/base7": "base7.js",
                 "@jupyter-widgets/controls7": "controls7.js"}
#: How the bundle's last line starts: it draws the widgets once the page has loaded.
RENDER_LINE = ('(()=>{"use strict";'
               'window.require(["@jupyter-widgets/html-manager/dist/libembed-amd"]')

#: Written last: its presence means every file above is in place, at these versions.
STAMP = TARGET / "VERSIONS.txt"


def stamp_text() -> str:
    packages = "".join(f"{name}@{version}\n" for name, (version, _, _) in PACKAGES.items())
    return packages + f"embed-amd.js without {', '.join(APART_MODULES)} and its render line\n"


def split_bundle(bundle: Path) -> None:
    """Cut ``embed-amd.js`` into the modules the book's pages use and files for the others.

    Each module of the bundle is one ``define("name", ...)`` (with the comment naming its
    licence file just before it); the bundle ends with the line that renders the widgets.
    A bundle of another shape stops the script rather than be cut wrong.
    """
    text = bundle.read_text()
    starts = [(match.start(), match.group(1)) for match in re.finditer(
        r'^(?:/\*! For license information please see \S+ \*/\n)?define\("([^"]+)"',
        text, re.MULTILINE)]
    render = text.find("\n" + RENDER_LINE)
    names = [name for _, name in starts]
    if render < 0 or text.count(RENDER_LINE) != 1 or sorted(names) != sorted(
            [*KEPT_MODULES, *APART_MODULES]):
        raise SystemExit(f"{bundle.name}: modules {names}, render line found: {render >= 0};"
                         " not the layout this script knows how to cut")
    ends = [start for start, _ in starts[1:]] + [render + 1]
    modules = {name: text[start:end] for (start, name), end in zip(starts, ends)}
    if not text[:starts[0][0]].strip() == "":
        raise SystemExit(f"{bundle.name}: text before its first module")
    for name, file_name in APART_MODULES.items():
        (bundle.parent / file_name).write_text(modules[name])
    bundle.write_text("".join(modules[name] for name in names if name in KEPT_MODULES))


def is_current() -> bool:
    return STAMP.exists() and STAMP.read_text() == stamp_text()


def npm_pack(name: str, version: str, integrity: str, into: Path) -> Path:
    """Download one package tarball with npm and check its digest."""
    done = subprocess.run(
        ["npm", "pack", f"{name}@{version}", "--silent", "--pack-destination", str(into)],
        cwd=into, check=True, capture_output=True, text=True,
    )
    tarball = into / done.stdout.strip().splitlines()[-1]
    algorithm, expected = integrity.split("-", 1)
    digest = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode()
    if digest != expected:
        raise SystemExit(f"{tarball.name}: {algorithm} digest {digest} is not the pinned one")
    return tarball


def unpack(tarball: Path, patterns: tuple[str, ...], into: Path) -> int:
    """Copy the members matching ``patterns`` (paths inside the package) into ``into``."""
    copied = 0
    with tarfile.open(tarball) as archive:
        for member in archive.getmembers():
            if not member.isfile() or not member.name.startswith("package/"):
                continue
            inner = Path(member.name[len("package/"):])
            if any(inner.match(pattern) and len(inner.parts) == len(Path(pattern).parts)
                   for pattern in patterns):
                data = archive.extractfile(member).read()
                (into / inner.name).write_bytes(data)
                copied += 1
    return copied


def vendor(force: bool = False) -> None:
    if is_current() and not force:
        print(f"widget scripts already in {TARGET.relative_to(ROOT)}")
        return
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed to fetch the widget scripts (Node.js 18 or later)")
    staging = Path(tempfile.mkdtemp(prefix="widgets-"))
    try:
        files = staging / "files"
        files.mkdir()
        for name, (version, integrity, patterns) in PACKAGES.items():
            tarball = npm_pack(name, version, integrity, staging)
            if unpack(tarball, patterns, files) == 0:
                raise SystemExit(f"{name}@{version}: none of {patterns} found in the package")
        split_bundle(files / "embed-amd.js")
        (files / STAMP.name).write_text(stamp_text())
        if TARGET.exists():
            shutil.rmtree(TARGET)
        TARGET.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(files, TARGET)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    size = sum(path.stat().st_size for path in TARGET.iterdir())
    print(f"widget scripts in {TARGET.relative_to(ROOT)}: "
          f"{len(list(TARGET.iterdir()))} files, {size / 1e6:.1f} MB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="fetch even if present")
    vendor(parser.parse_args(argv).force)


if __name__ == "__main__":
    sys.exit(main())
