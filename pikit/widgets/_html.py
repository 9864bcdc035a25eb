"""HTML building blocks shared by the widgets: escaping, numbers, message bodies, the stylesheet.

Every piece of text that comes from a session goes through :func:`esc` before it reaches an
HTML string (``pikit._inert.html_text``: control characters, bidirectional controls and lone
surrogates made visible, then ``html.escape`` with quotes); nothing here inserts session text
any other way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .._format.message import MessageView, TextBlock, ThinkingBlock, ToolCall, view as view_message
from .._formatting import fmt_delta, fmt_int, plural
from .._inert import html_text as esc
from .._palette import css_variables
from ._transcript import call_html, markdown_html

__all__ = [
    "BODY_CHARS",
    "CSS",
    "error_box",
    "esc",
    "fmt_delta",
    "fmt_int",
    "gap",
    "label_pill",
    "message_body",
    "role_badge",
    "style_widget",
]

_LONG_CHARS = 600
_LONG_LINES = 10
#: A body longer than this many characters shows its first ``BODY_CHARS`` and the size of the rest.
BODY_CHARS = 20_000


_ROLE_CLASS = {
    "user": "user", "assistant": "assistant", "toolResult": "tool", "system": "system",
    "compactionSummary": "compaction", "branchSummary": "branch-summary", "custom": "custom",
    "bashExecution": "bash",
}
_ROLE_LABEL = {
    "toolResult": "tool result", "compactionSummary": "summary", "branchSummary": "branch summary",
    "bashExecution": "bash",
}


def role_badge(role: Any) -> str:
    """A coloured badge for a message role."""
    css = _ROLE_CLASS.get(role, "meta") if isinstance(role, str) else "meta"
    label = _ROLE_LABEL.get(role, role) if isinstance(role, str) else str(role)
    return f'<span class="pikit-badge pikit-kind-{css}">{esc(label)}</span>'


def label_pill(label: Any) -> str:
    """A label as a small yellow pill (escaped; the full text in its tooltip)."""
    text = esc(label)
    return f'<span class="pikit-label" title="{text}">{text}</span>'


def _collapsible(text: str, css: str = "pikit-pre") -> str:
    """Preformatted text; long text shows its start and folds the rest into ``<details>``."""
    if len(text) > BODY_CHARS:
        text = text[:BODY_CHARS] + f"\n… ({fmt_int(len(text) - BODY_CHARS)} more characters not shown)"
    lines = text.count("\n") + 1
    if len(text) <= _LONG_CHARS and lines <= _LONG_LINES:
        return f'<div class="{css}">{esc(text)}</div>'
    head = "\n".join(text[:300].split("\n")[:4])
    plural = "s" if lines != 1 else ""
    return (f'<div class="{css} pikit-head">{esc(head)}…</div>'
            f'<details class="pikit-more"><summary>show all ({fmt_int(len(text))} characters, '
            f'{fmt_int(lines)} line{plural})</summary><div class="{css}">{esc(text)}</div></details>')


def _prose(text: str) -> str:
    """An assistant's text: sanitized Markdown when short enough, else folded preformatted text."""
    if len(text) > BODY_CHARS:
        return _collapsible(text)
    return markdown_html(text, _collapsible)


def _diff_lines(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        css = "pikit-plus" if line.startswith("+") else "pikit-minus" if line.startswith("-") else ""
        lines.append(f'<span class="{css}">{esc(line)}</span>' if css else esc(line))
    return "\n".join(lines)


def _code(text: str, language: str) -> str:
    """A tool call's part as code (a diff's lines coloured), long ones folded."""
    if language != "diff" or len(text) > _LONG_CHARS * 10:
        return _collapsible(text)
    return f'<div class="pikit-pre">{_diff_lines(text)}</div>'


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _assistant(m: MessageView) -> list[str]:
    parts: list[str] = []
    for block in m.blocks:
        if isinstance(block, TextBlock) and block.text.strip():
            parts.append(_prose(block.text))
        elif isinstance(block, ThinkingBlock) and block.thinking:
            parts.append('<details class="pikit-thinking"><summary>thinking '
                         f"({fmt_int(len(block.thinking))} characters)</summary>"
                         f'<div class="pikit-pre">{esc(block.thinking)}</div></details>')
        elif isinstance(block, ToolCall):
            parts.append(call_html(block, _code))
    if m.stopped_early:
        detail = f": {m.error_message}" if m.error_message else ""
        parts.append(f'<div class="pikit-warn">stopped: {esc(m.stop_reason)}{esc(detail)}</div>')
    return parts


def _user_like(m: MessageView) -> list[str]:
    parts: list[str] = []
    if m.role == "toolResult":
        state = " (error)" if m.is_error else ""
        parts.append(f'<div class="pikit-sub">{esc(m.tool_name or "tool")}{state}</div>')
    if m.role == "custom":
        parts.append(f'<div class="pikit-sub">&lt;{esc(m.custom_type)}&gt;</div>')
    parts.append(_collapsible(m.text()))
    if m.images:
        parts.append(f'<div class="pikit-sub">[{plural(m.images, "image")}]</div>')
    return parts


def _system(m: MessageView) -> list[str]:
    text = m.text()
    parts = [_collapsible(text)] if text else []
    for section in m.sections:
        label = "deleted" if section.text is None else f"{fmt_int(len(section.text))} characters"
        parts.append(f'<div class="pikit-sub">section {esc(section.name)}: {esc(label)}</div>')
    for tools, sign in ((m.tools_added, "+"), (m.tools_removed, "−")):
        if tools:
            parts.append(f'<div class="pikit-sub">tools {sign} {esc(", ".join(t.name for t in tools))}</div>')
    return parts


def _bash(m: MessageView) -> list[str]:
    assert m.bash is not None
    return [f'<div class="pikit-sub">$ {esc(m.bash.command)} (exit {esc(m.bash.exit_code)})</div>',
            _collapsible(m.bash.output)]


_BODIES: dict[str | None, Callable[[MessageView], list[str]]] = {
    "assistant": _assistant, "user": _user_like, "custom": _user_like, "toolResult": _user_like,
    "system": _system, "bashExecution": _bash,
    "branchSummary": lambda m: [_collapsible(m.summary or "")],
    "compactionSummary": lambda m: [_collapsible(m.summary or "")],
}


def message_body(message: Mapping[str, Any]) -> str:
    """The content of one model message as escaped HTML (long parts collapsible)."""
    m = view_message(message)
    body = _BODIES.get(m.role)
    parts = body(m) if body is not None else [_collapsible(_json(dict(message)))]
    return "".join(parts) or '<span class="pikit-dim">(empty)</span>'


def error_box(title: str, exc: BaseException | str) -> str:
    """A red box naming an error (escaped), for showing failures inside a widget."""
    detail = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return (f'<div class="pikit-error" role="alert"><b>{esc(title)}</b>'
            f'<div class="pikit-pre">{esc(detail)}</div></div>')


# The stylesheet takes its colours from the palette (as CSS variables) and JupyterLab's theme
# variables (with fallbacks), so light and dark themes work.
CSS = css_variables(".pikit-root, .pikit-tree") + """
.pikit-root { font-family: var(--jp-ui-font-family, system-ui, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, #222); }
.pikit-root .pikit-title { font-weight: 600; font-size: 1.1em; margin: 2px 0 4px; }
.pikit-dim { color: var(--jp-ui-font-color2, #777); }
.pikit-sub { color: var(--jp-ui-font-color2, #666); font-size: 0.92em; margin: 1px 0; }
.pikit-warn { color: var(--jp-warn-color0, #b45309); font-size: 0.92em; }
.pikit-pre { white-space: pre-wrap; word-break: break-word; font-family: var(--jp-code-font-family, monospace);
  font-size: 0.92em; line-height: 1.35; }
.pikit-head { color: var(--jp-ui-font-color1, #333); }
details.pikit-more > summary, details.pikit-thinking > summary, details.pikit-block > summary {
  cursor: pointer; color: var(--jp-brand-color1, #1565c0); font-size: 0.9em; }
.pikit-clamp { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
.pikit-call { color: var(--jp-ui-font-color1, #333); margin: 4px 0; }
.pikit-call-name { font-family: var(--jp-code-font-family, monospace); font-weight: 600; }
.pikit-code { background: var(--jp-layout-color2, #f6f8fa); border-radius: 3px; padding: 2px 6px; margin: 2px 0; }
.pikit-md > :first-child { margin-top: 0; } .pikit-md > :last-child { margin-bottom: 0; }
.pikit-md pre { background: var(--jp-layout-color2, #f6f8fa); padding: 4px 6px; border-radius: 3px;
  white-space: pre-wrap; word-break: break-word; }
.pikit-md code { font-family: var(--jp-code-font-family, monospace); font-size: 0.92em; }
.pikit-md table { border-collapse: collapse; } .pikit-md td, .pikit-md th { border: 1px solid #ddd; padding: 1px 4px; }
.pikit-anchor { color: var(--jp-ui-font-color3, #999); text-decoration: none; font-size: 0.85em; }
.pikit-anchor:hover { color: var(--jp-brand-color1, #1565c0); }
.pikit-error { border: 1px solid #d32f2f; background: rgba(211, 47, 47, 0.10); color: var(--jp-ui-font-color1, #222);
  border-radius: 4px; padding: 6px 8px; margin: 4px 0; }
.pikit-error b { color: #d32f2f; }
.pikit-ok { border: 1px solid #2e7d32; background: rgba(46, 125, 50, 0.12); color: var(--jp-ui-font-color1, #222);
  border-radius: 4px; padding: 6px 8px; margin: 4px 0; }
.pikit-badge { display: inline-block; padding: 0 5px; border-radius: 3px; font-size: 0.85em; line-height: 1.5;
  white-space: nowrap; border: 1px solid transparent; }
.pikit-kind-user { background: var(--pikit-role-user); color: var(--pikit-role-user-text); }
.pikit-kind-assistant { background: var(--pikit-role-assistant); color: var(--pikit-role-assistant-text); }
.pikit-kind-tool { background: var(--pikit-role-tool-result); color: var(--pikit-role-tool-result-text); }
.pikit-kind-tool-error { background: var(--pikit-role-tool-error); color: var(--pikit-role-tool-error-text); }
.pikit-kind-system { background: var(--pikit-role-system); color: var(--pikit-role-system-text); }
.pikit-kind-compaction { background: var(--pikit-role-compaction-summary);
  color: var(--pikit-role-compaction-summary-text);
  border-color: var(--pikit-segment-summary); }
.pikit-kind-branch-summary { background: var(--pikit-role-branch-summary);
  color: var(--pikit-role-branch-summary-text); }
.pikit-kind-custom { background: var(--pikit-role-custom); color: var(--pikit-role-custom-text); }
.pikit-kind-bash { background: var(--pikit-role-bash-execution); color: var(--pikit-role-bash-execution-text); }
.pikit-kind-meta { background: transparent; color: var(--jp-ui-font-color2, #777);
  border-color: var(--jp-border-color2, #ddd); }
.pikit-label { display: inline-block; padding: 0 5px; border-radius: 8px; font-size: 0.82em;
  background: #fff3cd; color: #7a5b00; border: 1px solid #f0d98c; white-space: nowrap; max-width: 100%;
  overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; box-sizing: border-box; }
.pikit-id { font-family: var(--jp-code-font-family, monospace); font-size: 0.88em;
  color: var(--jp-ui-font-color2, #666); }
.pikit-stats { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 2px 0 6px; }
.pikit-stats b { font-variant-numeric: tabular-nums; }
table.pikit-table { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.pikit-table th { text-align: left; font-weight: 600; font-size: 0.88em; color: var(--jp-ui-font-color2, #555);
  border-bottom: 1px solid var(--jp-border-color1, #bbb); padding: 3px 4px; position: sticky; top: 0;
  background: var(--jp-layout-color1, #fff); z-index: 1; }
table.pikit-table td { vertical-align: top; padding: 3px 4px; border-bottom: 1px solid var(--jp-border-color3, #eee);
  overflow: hidden; }
table.pikit-table td.pikit-num, table.pikit-table th.pikit-num { text-align: right;
  font-variant-numeric: tabular-nums; white-space: nowrap; }
.pikit-figures > span { display: block; line-height: 1.35; }
.pikit-figures .pikit-est { font-weight: 600; }
.pikit-figures .pikit-real, .pikit-figures .pikit-usage { color: var(--jp-ui-font-color2, #666); font-size: 0.9em; }
.pikit-figures .pikit-usage-anchor { color: var(--jp-ui-font-color1, #222); font-weight: 600; }
.pikit-unit { color: var(--jp-ui-font-color3, #999); font-size: 0.85em; font-weight: 400; }
.pikit-scroll { max-height: 560px; overflow-y: auto; border: 1px solid var(--jp-border-color2, #ddd);
  border-radius: 4px; }
tr.pikit-zone-summary td { background: rgba(156, 39, 176, 0.06); }
tr.pikit-zone-kept td:first-child { box-shadow: inset 3px 0 0 var(--pikit-segment-kept); }
tr.pikit-zone-new td:first-child { box-shadow: inset 3px 0 0 var(--pikit-segment-new); }
tr.pikit-status-omitted td { color: var(--jp-ui-font-color3, #999); }
tr.pikit-status-omitted .pikit-pre { text-decoration: line-through; }
.pikit-marker { display: inline-block; font-size: 0.8em; padding: 0 4px; border-radius: 3px; margin-left: 3px;
  white-space: nowrap; }
.pikit-marker-omitted { background: #eeeeee; color: #616161; }
.pikit-marker-replaced { background: #fff3e0; color: #e65100; }
.pikit-marker-summary, .pikit-marker-previous-summary { background: var(--pikit-role-compaction-summary);
  color: var(--pikit-role-compaction-summary-text); }
.pikit-marker-summarized { background: transparent; color: var(--pikit-diff-summarized);
  border: 1px solid var(--pikit-diff-summarized); }
.pikit-block { border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; padding: 4px 8px; margin: 4px 0;
  background: var(--jp-layout-color1, #fff); }
.pikit-block.pikit-compaction-block { border-color: var(--pikit-segment-summary);
  background: rgba(142, 36, 170, 0.04); }
tr.pikit-diff-added td { background: rgba(46, 125, 50, 0.08); }
tr.pikit-diff-removed td { background: rgba(198, 40, 40, 0.07); }
tr.pikit-diff-changed td { background: rgba(245, 124, 0, 0.08); }
tr.pikit-diff-same td { color: var(--jp-ui-font-color2, #666); }
tr.pikit-diff-fold td { text-align: center; color: var(--jp-ui-font-color2, #777); font-style: italic;
  background: var(--jp-layout-color2, #f5f5f5); }
.pikit-sym { font-family: var(--jp-code-font-family, monospace); font-weight: 700; }
.pikit-plus { color: var(--pikit-diff-added); } .pikit-minus { color: var(--pikit-diff-removed); }
.pikit-tilde { color: var(--pikit-diff-changed); }
.pikit-budget { position: relative; margin: 6px 0 2px; }
.pikit-budget-track { position: relative; display: flex; height: 22px; border-radius: 4px; overflow: hidden;
  background: var(--jp-layout-color2, #eee); border: 1px solid var(--jp-border-color2, #ccc); }
.pikit-budget-seg { height: 100%; min-width: 0; }
.pikit-budget-system { background: var(--pikit-segment-system); }
.pikit-budget-summary { background: var(--pikit-segment-summary); }
.pikit-budget-kept { background: var(--pikit-segment-kept); }
.pikit-budget-new { background: var(--pikit-segment-new); }
.pikit-budget-unitemized { background: repeating-linear-gradient(135deg, var(--pikit-segment-unitemized) 0 4px,
  transparent 4px 8px); }
.pikit-budget-line { position: absolute; top: -3px; height: 28px; width: 0;
  border-left: 2px dashed var(--pikit-line-threshold); }
/* Neutral lines follow the theme's ink (dark themes), with the palette's colours as fallbacks. */
.pikit-budget-line.pikit-budget-size {
  border-left: 2px solid var(--jp-ui-font-color1, var(--pikit-line-context-size)); }
.pikit-budget-line.pikit-budget-window {
  border-left: 2px solid var(--jp-ui-font-color2, var(--pikit-line-window)); }
.pikit-budget-keep { position: absolute; height: 8px; border: 2px solid var(--pikit-line-keep-recent); border-top: none;
  margin-top: 2px; box-sizing: border-box; }
.pikit-budget-marks { position: relative; height: 16px; font-size: 0.8em; line-height: 16px;
  color: var(--pikit-line-threshold); }
.pikit-budget-marks span { position: absolute; top: 0; white-space: nowrap; }
.pikit-budget-marks span.pikit-mark-left { transform: translateX(-100%); padding-right: 2px; margin-left: 1px; }
.pikit-budget-marks span.pikit-mark-right { padding-left: 2px; margin-left: -4px; }
.pikit-budget-axis { position: relative; height: 16px; font-size: 0.8em; color: var(--jp-ui-font-color2, #666); }
.pikit-budget-axis span { position: absolute; white-space: nowrap; }
.pikit-swatch-line { width: 0; border-left: 2px dashed var(--pikit-line-threshold); border-radius: 0; }
.pikit-swatch-keep { height: 6px; border: 2px solid var(--pikit-line-keep-recent); border-top: none; border-radius: 0; }
.pikit-legend { display: flex; flex-wrap: wrap; gap: 2px 12px; font-size: 0.9em; margin-top: 2px; }
.pikit-swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px;
  vertical-align: -1px; }
.pikit-cut { display: flex; height: 16px; border-radius: 3px; overflow: hidden; margin: 4px 0;
  border: 1px solid var(--jp-border-color2, #ccc); }
.pikit-cut-previous { background: var(--pikit-segment-summary); }
.pikit-cut-summarized { background: var(--pikit-line-tokens-before); }
.pikit-cut-prefix { background: var(--pikit-series-4); } .pikit-cut-kept { background: var(--pikit-segment-kept); }
.pikit-explorer-pane { min-width: 0; }
.pikit-gap { gap: 8px; }
.pikit-status { font-size: 0.9em; color: var(--jp-ui-font-color2, #555); margin: 2px 0; }
.pikit-chart svg text { fill: var(--jp-ui-font-color1, #333); font-family: var(--jp-ui-font-family, sans-serif); }
"""


def gap(box: Any) -> Any:
    """Give a Box widget a gap between its children (ipywidgets' Layout has no ``gap``)."""
    box.add_class("pikit-gap")
    return box


def style_widget() -> Any:
    """A zero-size ``HTML`` widget carrying the stylesheet (included by each top-level widget)."""
    import ipywidgets as widgets

    style = widgets.HTML(value=f"<style>{CSS}</style>", layout=widgets.Layout(display="none"))
    style.add_class("pikit-style")
    return style
