"""A session as one self-contained HTML page, or as Markdown: to hand out, attach to a report, or read without Jupyter.

:func:`render_page` builds the page from the widgets' pure renderers (the widgets' view models:
the budget bar, the context table, the compaction chart) plus a static tree with the active
path expanded and a chart of the context size along the branch. The page loads nothing: its
styles are inline, its charts inline SVG, it holds no script, and its Content-Security-Policy
forbids any request. Every piece of session text is HTML-escaped, as in the widgets.

:func:`render_markdown` writes the branch as the model saw it in Markdown (GitHub reads it),
every piece of session text in a code fence or backslash-escaped, so none of it is read as
Markdown or HTML.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._markdown import render_markdown as render_markdown, write_markdown as write_markdown
    from ._page import PageSettings as PageSettings, render_page as render_page, write_page as write_page

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
