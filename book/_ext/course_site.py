"""A small Sphinx extension for the course's site: each chapter links its exercise notebook
and offers itself as a notebook.

Chapter ``book/NN_name`` has its learners' notebook in ``exercises/NN_name/NN_name.ipynb``
(the release nbgrader generates). Right under the chapter's title this extension adds a
line with a download link to that notebook (or says the chapter has none yet), a download
link to the chapter itself as a
notebook (converted from its MyST source with jupytext when the build starts, into
``_build/chapter-notebooks/``), and a link to the page that says how to run them locally.
Sphinx copies both notebooks into the site (``_downloads/``) and rebuilds the chapter's
page when one changes, so the links are never stale and need no edit in the chapters.

A chapter links a term to the glossary as Markdown does, ``[words](glossary.md#term-<term>)``,
so that the link also leads somewhere in JupyterLab (jupyterlab-myst resolves no ``{term}``
role across files); :func:`glossary_terms_as_link_targets` lets Sphinx resolve those links,
and a term the glossary does not define fails the build.

It also writes each inline script of a page once (:func:`drop_repeated_scripts`), and puts
the site's icon at its top as ``favicon.ico`` (:func:`copy_favicon_to_the_top`).
"""
from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

#: Chapter pages: ``book/01_global_limit`` and the like.
CHAPTER = re.compile(r"^book/(?P<name>\d\d_[a-z0-9_]+)$")
#: The end of the name of a chapter's further page: sections set apart from the chapter so
#: that it reads in one go, with no exercises of their own (``04_transform_with_state_further``).
FURTHER = "_further"
#: The page that explains how to run the course on one's own machine.
RUNNING_LOCALLY = "book/running_locally"
#: Where the chapters converted to notebooks are written, relative to the book's root.
CHAPTER_NOTEBOOKS = "_build/chapter-notebooks"


def write_chapter_notebooks(app: Sphinx) -> None:
    """Convert every chapter's MyST source to a notebook (outputs are made by running it);
    a notebook is rewritten only when its text changes, so an unchanged chapter stays
    unchanged for Sphinx."""
    import jupytext

    root = Path(app.srcdir)
    folder = root / CHAPTER_NOTEBOOKS
    folder.mkdir(parents=True, exist_ok=True)
    for source in sorted((root / "book").glob("[0-9][0-9]_*.md")):
        text = jupytext.writes(jupytext.read(source), fmt="ipynb")
        target = folder / f"{source.stem}-chapter.ipynb"
        if not target.is_file() or target.read_text() != text:
            target.write_text(text)


def chapter_notebook_for(srcdir: str | Path, docname: str) -> str | None:
    """The chapter itself as a notebook, relative to the book's root, if it was written."""
    match = CHAPTER.match(docname)
    if not match:
        return None
    path = f"{CHAPTER_NOTEBOOKS}/{match['name']}-chapter.ipynb"
    return path if (Path(srcdir) / path).is_file() else None


def exercise_for(srcdir: str | Path, docname: str) -> str | None:
    """The exercise notebook of a chapter, relative to the book's root, if it exists; a
    chapter's further page (``NN_name_further``) has the chapter's."""
    match = CHAPTER.match(docname)
    if not match:
        return None
    name = match["name"].removesuffix(FURTHER)
    path = f"exercises/{name}/{name}.ipynb"
    return path if (Path(srcdir) / path).is_file() else None


def glossary_terms_as_link_targets(app: Sphinx, doctree: nodes.document) -> None:
    """Make each glossary term's id (``term-state-store``) a target Markdown links resolve.

    MyST resolves ``[words](page.md#id)`` against the page's heading anchors only, and warns
    about any other id; the terms a glossary defines are added to them.
    """
    anchors = app.env.metadata[app.env.docname].setdefault("myst_slugs", {})
    for term in doctree.findall(nodes.term):
        for target in term["ids"]:
            anchors.setdefault(target, (term.line or 0, target, term.astext()))


def add_exercise_link(app: Sphinx, doctree: nodes.document) -> None:
    """Put the download line under the chapter's title (before Sphinx collects downloads):
    the exercise notebook, when the chapter has one, and the chapter as a notebook."""
    docname = app.env.docname
    exercise = exercise_for(app.srcdir, docname)
    chapter = chapter_notebook_for(app.srcdir, docname)
    _known(app.env)[docname] = _links(app.srcdir, docname)
    if exercise is None and chapter is None:
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    how_to = addnodes.pending_xref(
        "", nodes.inline("", "how to run it locally"),
        refdomain="std", reftype="doc", reftarget="/" + RUNNING_LOCALLY,
        refdoc=docname, refexplicit=True, refwarn=True,
    )
    further = docname.endswith(FURTHER)
    if exercise is not None:
        parts = [nodes.Text("Exercise notebook of the chapter this page goes with (it has none "
                            "of its own): " if further else "Exercise notebook for this chapter: "),
                 _download(exercise, docname)]
        if chapter is not None:
            parts += [nodes.Text("; this page itself as a notebook: " if further
                                 else "; the chapter itself as a notebook: "),
                      _download(chapter, docname)]
    else:
        parts = [nodes.Text("This chapter has no graded exercises yet; the chapter itself as "
                            "a notebook: "), _download(chapter, docname)]
    line = nodes.paragraph(
        "", "", *parts,
        nodes.Text(" (open them in JupyterLab; see "), how_to, nodes.Text(")."),
        classes=["exercise-download"],
    )
    title_at = next((i for i, child in enumerate(section.children)
                     if isinstance(child, nodes.title)), -1)
    section.insert(title_at + 1, line)


def _download(path: str, docname: str) -> addnodes.download_reference:
    return addnodes.download_reference(
        "", "", nodes.literal("", Path(path).name),
        reftarget="/" + path, refdoc=docname, refexplicit=True,
    )


def chapters_whose_exercise_changed(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Re-read a chapter when its exercise notebook or its own notebook appeared or
    disappeared."""
    return [
        docname for docname, links in _known(env).items()
        if docname in env.found_docs and links != _links(app.srcdir, docname)
    ]


def _links(srcdir: str | Path, docname: str) -> tuple[str | None, str | None]:
    return exercise_for(srcdir, docname), chapter_notebook_for(srcdir, docname)


def _known(env) -> dict[str, tuple[str | None, str | None]]:
    if not hasattr(env, "course_exercises"):
        env.course_exercises = {}
    return env.course_exercises


def drop_repeated_scripts(app: Sphinx, pagename: str, templatename: str, context: dict,
                          doctree) -> None:
    """Each inline script of the page once.

    An extension that adds an inline script (``add_js_file(None, body=...)``) once the
    builder exists has it recorded twice in Sphinx 7.4: in the builder's list, named
    ``None``, and in the registry, from which the builder copies it again as ``''`` before
    writing; the two do not compare equal, so the page gets both. sphinx-thebe's
    configuration (``const THEBE_JS_URL = ...``, an error the second time it runs) and
    sphinx-togglebutton's selector come twice that way.
    """
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen = set()
    kept = []
    for script in scripts:
        key = (getattr(script, "filename", script) or "", getattr(script, "priority", None),
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


def copy_favicon_to_the_top(app: Sphinx, exception: Exception | None) -> None:
    """``favicon.ico`` at the site's top, for whatever asks for it there.

    Every page names the site's icon (``html.favicon`` in ``_config.yml``), but the site's
    entrance, ``index.html``, is a bare redirect to the first page (sphinx-external-toc's):
    a browser opening the site's address asked for ``/favicon.ico``, which was missing (the
    site's only failed request). The same icon, as an ``.ico``, is ``_static/favicon.ico``."""
    if exception is not None or app.builder.format != "html":
        return
    icon = Path(app.outdir) / "_static" / "favicon.ico"
    if icon.is_file():
        (Path(app.outdir) / "favicon.ico").write_bytes(icon.read_bytes())


def setup(app: Sphinx) -> dict:
    # Sphinx collects download links on "doctree-read" at priority 500: run before it.
    app.connect("builder-inited", write_chapter_notebooks)
    app.connect("doctree-read", add_exercise_link, priority=400)
    app.connect("doctree-read", glossary_terms_as_link_targets)
    app.connect("env-get-outdated", chapters_whose_exercise_changed)
    # after myst-nb's handler, which adds a page's widget scripts
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    app.connect("build-finished", copy_favicon_to_the_top)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 3}
