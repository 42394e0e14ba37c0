"""How the course's notebooks draw pictures: SVG with its text kept as text.

A PNG is drawn at one size: scaled down on a phone its words blur, zoomed in on a desktop
they turn to blocks. An SVG is redrawn at every size, and with matplotlib's
``svg.fonttype = "none"`` its words stay words (the reader's browser sets them, a search
of the page finds them, a screen magnifier keeps them sharp). The book's browser tests read
each picture's smallest font size back from the SVG and hold it at 11 CSS px or more on a
desktop and on a phone (390 px wide): pictures are drawn at most about 5 inches wide, with
text of 11 points at least, so a phone shows them near their natural size.
"""
from __future__ import annotations


def vector_pictures() -> None:
    """Draw this notebook's matplotlib figures as SVG with real text, from now on."""
    import matplotlib
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["font.size"] = 11  # ticks, labels and legends: legible on a phone
    set_matplotlib_formats("svg")
