"""A session at a leaf as Markdown: the branch as the model saw it, optionally the whole tree.

:func:`render_markdown` writes, in order: a title and a line of figures (the context size and
how it was measured, the model), the current system prompt folded in ``<details>``, a marked
block for the head compaction (what it replaced and kept), then every message the model gets
at the leaf, each under a numbered heading with its role, entry, zone (``kept`` before the
compaction, ``new`` after it) and token figures (Pi's estimate; the usage the provider
reported, and which message the context size starts from). Tool calls are code blocks named
by their tool (``pikit.widgets._calls``: a ``bash`` command, an ``edit`` as a diff, a
``write`` as code with its path). With ``tree=True`` the whole tree follows, in Pi's ``/tree``
order, each entry off the branch marked ``abandoned branch``.

Session text is shown, never interpreted: see ``pikit.export._mdtext`` for the rule.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from typing import Any

from .._context.describe import entry_preview, leaf_text
from .._format.message import ImageBlock, MessageView, TextBlock, ThinkingBlock, ToolCall, view
from .._formatting import fmt_int, plural
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..widgets._calls import call_parts
from ..widgets._views import ContextHeader, context_header, context_page, context_rows
from ..widgets._views.context import RowView
from ._mdtext import fence, inline, prose

__all__ = ["render_markdown"]

_ROLES = {"toolResult": "tool result", "compactionSummary": "compaction summary", "branchSummary": "branch summary",
          "bashExecution": "bash"}


def _folded(summary: str, body: str) -> str:
    """A ``<details>`` block; ``summary`` is pikit's own text (escaped all the same)."""
    return f"<details><summary>{html.escape(summary)}</summary>\n\n{body}\n</details>\n"


def _calls(call: ToolCall) -> str:
    out = [f"**tool call** {inline(call.name or '(no name)')}" + (f" · id {inline(call.id)}" if call.id else "")
           + "\n"]
    for part in call_parts(call):
        if part.label:
            out.append(f"{inline(part.label)}:\n")
        out.append(fence(part.text, part.language))
    return "\n".join(out)


def _assistant(m: MessageView) -> list[str]:
    parts: list[str] = []
    for block in m.blocks:
        if type(block) is TextBlock and block.text.strip():
            parts.append(prose(block.text))
        elif type(block) is ThinkingBlock and block.thinking:
            parts.append(_folded(f"thinking ({fmt_int(len(block.thinking))} characters)", prose(block.thinking)))
        elif type(block) is ToolCall:
            parts.append(_calls(block))
        elif type(block) is ImageBlock:
            parts.append("\\[an image\\]\n")
    if m.stopped_early:
        detail = f": {m.error_message}" if m.error_message else ""
        parts.append(f"*stopped: {inline(str(m.stop_reason) + detail)}*\n")
    return parts


def _user_like(m: MessageView) -> list[str]:
    parts: list[str] = []
    if m.role == "toolResult":
        parts.append(f"**result of** {inline(m.tool_name or 'a tool')}" + (" (error)" if m.is_error else "") + "\n")
    elif m.role == "custom":
        parts.append(f"custom message {inline(m.custom_type or '')}\n")
    parts.append(prose(m.text()) if m.role == "user" else fence(m.text()))
    if m.images:
        parts.append(f"\\[{plural(m.images, 'image')}\\]\n")
    return parts


def _system(m: MessageView) -> list[str]:
    parts = [prose(m.text())] if m.text() else []
    for section in m.sections:
        state = "deleted" if section.text is None else f"{fmt_int(len(section.text))} characters"
        parts.append(f"section {inline(section.name)}: {state}\n")
        if section.text:
            parts.append(prose(section.text))
    for tools, sign in ((m.tools_added, "added"), (m.tools_removed, "removed")):
        if tools:
            parts.append(f"tools {sign}: {', '.join(inline(t.name) for t in tools)}\n")
    return parts


def _body(message: Mapping[str, Any]) -> str:
    m = view(message)
    if m.role == "assistant":
        parts = _assistant(m)
    elif m.role == "system":
        parts = _system(m)
    elif m.role == "bashExecution" and m.bash is not None:
        parts = [fence(m.bash.command, "bash"), f"exit {inline(m.bash.exit_code)}\n", fence(m.bash.output)]
    elif m.summary is not None:
        parts = [prose(m.summary)]
    elif m.role in ("user", "toolResult", "custom"):
        parts = _user_like(m)
    else:
        import json

        parts = [fence(json.dumps(dict(message), ensure_ascii=False, indent=2, default=str), "json")]
    return "\n".join(parts) if parts else "*(empty)*\n"


def _figures(row: RowView) -> str:
    figures = [f"{fmt_int(row.estimate)} tokens (Pi's estimate)"]
    if row.usage is not None:
        figures.append(f"usage {fmt_int(row.usage)}" + (": the context size starts here" if row.usage_anchor else ""))
    return "*" + " · ".join(figures) + "*\n"


def _row(row: RowView) -> str:
    r = row.row
    pe = r.entry
    marks = [m for m in (r.zone if r.zone in ("kept", "new") else "",
                         f"label {inline(row.label)}" if row.label else "",
                         f"{pe.status} by edit {inline(pe.edit.id)}" if pe.edit is not None else "") if m]
    tail = "".join(f" · {m}" for m in marks)
    if r.message is None:
        return (f"### – · {inline(pe.entry.role or pe.entry.type)} · entry {inline(pe.entry.id)}{tail}\n\n"
                f"*sends nothing*\n\n{fence(entry_preview(pe.entry))}")
    role = r.message.get("role")
    name = _ROLES.get(role, role) if isinstance(role, str) else str(role)
    head = f"### {fmt_int(r.index + 1)} · {inline(name)} · {inline(r.source)}{tail}\n\n{_figures(row)}\n"
    if role == "system":
        return head + _folded("system prompt (folded)", _body(r.message))
    if role == "compactionSummary":
        head += "> **Compaction summary**: what the model reads in place of the entries the compaction replaced.\n\n"
    return head + _body(r.message)


def _compaction(h: ContextHeader) -> str:
    c = h.compaction
    if c is None:
        return "*No compaction on this branch: the model sees every message from the start.*\n"
    kept = (f"kept entries {inline(c.kept_first)} to {inline(c.kept_last)}" if c.kept_entries
            else "kept nothing before it")
    return (f"> **Compaction** {inline(c.id)} replaced {fmt_int(c.summarized)} earlier entries with a summary of "
            f"{fmt_int(c.summary_tokens)} tokens (tokensBefore {inline(c.tokens_before)}); {kept} "
            f"({fmt_int(c.kept_entries)} entries, {fmt_int(c.kept_tokens)} tokens); after it "
            f"{fmt_int(c.new_entries)} new entries, {fmt_int(c.new_tokens)} tokens.\n")


def _head(session: Session, h: ContextHeader) -> str:
    where = inline(os.path.basename(session.path)) if session.path else "a session held in memory"
    leaf = inline(h.leaf) if h.leaf is not None else inline(leaf_text(None))
    lines = [f"# {inline(session.title)}\n",
             f"{where} · leaf {leaf} · {fmt_int(h.messages)} messages from {fmt_int(h.entries)} entries · "
             f"context size **{fmt_int(h.tokens)}** tokens ({h.rule}) · model "
             f"{inline(h.model or 'not recorded')}, thinking {inline(h.thinking)}\n"]
    lines.append(_compaction(h))
    return "\n".join(lines)


def _tree(session: Session, leaf: Any) -> str:
    rows = session.flatten(leaf, mode="all")
    abandoned = sum(1 for row in rows if not row.on_active_path)
    out = [f"## The whole tree\n\n{plural(len(rows), 'entry')} in Pi's /tree order; "
           f"{plural(abandoned, 'entry')} off the branch, marked **abandoned branch**.\n"]
    for row in rows:
        entry = row.entry
        kind = (entry.role or "message") if entry.type == "message" else entry.type
        marks = ["**leaf**" if row.is_leaf else "on the branch" if row.on_active_path else "**abandoned branch**"]
        if row.label:
            marks.append(f"label {inline(row.label)}")
        if row.indent:
            marks.append(f"depth {fmt_int(row.indent)}")
        out.append(f"### {inline(row.id)} · {inline(kind)} · {' · '.join(marks)}\n")
        message = entry.message if entry.type == "message" else None
        out.append(_body(message) if isinstance(message, Mapping) else fence(entry_preview(entry)))
    return "\n".join(out)


def render_markdown(session: Session, leaf: Any = CURRENT, *, tree: bool = False) -> str:
    """``session`` at ``leaf`` (default: the session's leaf) as Markdown (see the module's docstring)."""
    leaf_id = session.resolve_leaf(leaf)
    projection = session.context(leaf_id)
    leaf_entry = session.entry(leaf_id) if leaf_id is not None else None
    kind = (leaf_entry.role or leaf_entry.type) if leaf_entry is not None else None
    header = context_header(projection, labels=session.labels, kind=kind)
    rows = context_rows(projection)
    page = context_page(projection, rows, 0, max(len(rows), 1), labels=session.labels)
    parts = [_head(session, header), "## What the model sees at the leaf\n"]
    parts.extend(_row(row) for row in page.rows)
    if not page.rows:
        parts.append("*No messages: the model would get an empty context.*\n")
    if tree:
        parts.append(_tree(session, leaf_id))
    return "\n".join(parts)


def write_markdown(session: Session, output: str | os.PathLike[str], leaf: Any = CURRENT, *, tree: bool = False,
                   overwrite: bool = False) -> str:
    """Write :func:`render_markdown` to ``output`` (a new file unless ``overwrite``; never the session file)."""
    from .._format.write import write_new

    text = render_markdown(session, leaf, tree=tree).rstrip("\n").encode("utf-8")
    return write_new(output, [text], source=session.path, overwrite=overwrite)
