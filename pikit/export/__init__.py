"""A session as one self-contained HTML page: to hand out, attach to a report, or read without Jupyter.

:func:`render_page` builds the page from the widgets' pure renderers (:mod:`pikit.widgets._views`:
the budget bar, the context table, the compaction chart) plus a static tree with the active
path expanded and a chart of the context size along the branch. The page loads nothing: its
styles are inline, its charts inline SVG, it holds no script, and its Content-Security-Policy
forbids any request. Every piece of session text is HTML-escaped, as in the widgets.
"""

from __future__ import annotations

from ._page import PageSettings, render_page, write_page

__all__ = ["PageSettings", "render_page", "write_page"]
