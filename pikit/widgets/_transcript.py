"""A readable transcript: assistant text as sanitized Markdown, tool calls as code.

:func:`markdown_html` renders an assistant's text with mistune (``pikit[markdown]``; imported
on first use). mistune is small, pure Python, has no dependencies and its renderer is one
class, so the few rules below are a few methods and nothing else has to be audited:

- raw HTML in the text is escaped, never passed through (``escape=True``), so ``<script>``,
  ``<img onerror>`` or ``</details>`` are shown as text;
- a link keeps its target only for ``http:``, ``https:`` and ``mailto:``; any other scheme
  (``javascript:``, ``data:``, ``vbscript:``, ``file:``) or a relative target leaves its text
  alone; every link gets ``rel="noopener noreferrer nofollow"``;
- an image is never fetched: it becomes its alt text and its address, as text;
- the text is first made visible (``pikit._inert.visible``: control and bidirectional
  characters shown, lone surrogates replaced).

Without mistune the text is shown preformatted and escaped, as before. :func:`call_html`
draws a tool call from its readable parts (``pikit.widgets._calls.call_parts``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .._format.message import ToolCall
from .._inert import html_text as esc, visible
from ._calls import call_parts

__all__ = ["ALLOWED_SCHEMES", "call_html", "markdown_html"]

#: The link schemes a rendered link may point to.
ALLOWED_SCHEMES = ("http:", "https:", "mailto:")


@functools.cache
def _renderer() -> Callable[[str], str] | None:
    try:
        import mistune
    except ImportError:  # (pikit[markdown] not installed: plain text)
        return None

    class Inert(mistune.HTMLRenderer):
        def link(self, text: str, url: str, title: str | None = None) -> str:
            if not url.strip().lower().startswith(ALLOWED_SCHEMES):
                return text
            return f'<a href="{esc(url)}" rel="noopener noreferrer nofollow">{text}</a>'

        def image(self, text: str, url: str, title: str | None = None) -> str:
            return f'<span class="pikit-dim">[image: {text} {esc(url)}]</span>'

    markdown = mistune.create_markdown(escape=True, renderer=Inert(escape=True),
                                       plugins=["strikethrough", "table"])

    def render(text: str) -> str:
        return str(markdown(text))

    return render


def markdown_html(text: str, fallback: Callable[[str], str]) -> str:
    """``text`` (an assistant's Markdown) as sanitized HTML; ``fallback(text)`` without mistune."""
    render = _renderer()
    if render is None:
        return fallback(text)
    return f'<div class="pikit-md">{render(visible(text))}</div>'


def call_html(call: ToolCall, block: Callable[[str, str], str]) -> str:
    """``call`` as HTML: its name, then each part as ``block(text, language)`` under its label."""
    out = [f'<div class="pikit-call"><span class="pikit-call-name">→ {esc(call.name)}</span>']
    for part in call_parts(call):
        label = f'<div class="pikit-sub">{esc(part.label)}</div>' if part.label else ""
        out.append(f'{label}<div class="pikit-code pikit-lang-{esc(part.language)}">{block(part.text, part.language)}'
                   "</div>")
    out.append("</div>")
    return "".join(out)
