"""Short reprs and HTML summaries of the core objects, for notebooks and the REPL.

:class:`~pikit._tree.sessiontree.Session`, :class:`~pikit._context.projection.Projection`,
:class:`~pikit._context.projection.ProjectedEntry`, :class:`~pikit.compaction._preparation.Preparation` and
:class:`~pikit.compaction._simulate.SimulationResult` delegate ``__repr__`` and ``_repr_html_`` here, so
the classes stay small and this module is imported only when an object is displayed. It uses
the standard library, the palette, the number format and :mod:`pikit._inert`, nothing else.

A repr is one line of a bounded length: session text appears in it through ``repr`` (quotes,
control characters shown as escapes) and cut short. The HTML is a small card of facts; every
piece of session text in it is escaped, quotes included, with control characters, bidi
controls and lone surrogates made visible (:func:`pikit._inert.html_text`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._formatting import fmt_int, plural
from .._inert import html_text as _esc
from .._palette import LINES, SEGMENT_LABELS, SEGMENTS, role_color
from .describe import entry_kind, entry_preview, message_preview, session_title
from .tokens import estimate_tokens

if TYPE_CHECKING:
    from .._tree.sessiontree import Session
    from ..compaction._preparation import Preparation
    from ..compaction._simulate import SimulationResult
    from .projection import ProjectedEntry, Projection

__all__ = [
    "entry_html",
    "entry_repr",
    "preparation_html",
    "preparation_repr",
    "projection_html",
    "projection_repr",
    "segment_tokens",
    "session_html",
    "session_repr",
    "simulation_html",
    "simulation_repr",
]

REPR_TEXT = 48       # characters of session text in a repr
PREVIEW = 90         # characters of a message preview in a card
ENTRY_PREVIEW = 400  # characters of each message in a projected entry's card
TABLE_ROWS = 8       # messages or events listed in a card

_CARD = ("font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; "
         "border: 1px solid var(--jp-border-color2, #ddd); border-radius: 6px; padding: 8px 10px; "
         "max-width: 980px; color: var(--jp-ui-font-color1, #212121);")
_TH = "text-align: left; padding: 1px 12px 1px 0; font-weight: 600; white-space: nowrap; vertical-align: top;"
_TD = "text-align: left; padding: 1px 12px 1px 0; vertical-align: top;"
_NUM = "text-align: right; padding: 1px 12px 1px 0; vertical-align: top; font-variant-numeric: tabular-nums;"
_DIM = "color: var(--jp-ui-font-color2, #666);"


# ------------------------------------------------------------------------------------ helpers
def _cut(text: Any, width: int) -> str:
    one_line = " ".join(str(text).split()) if text is not None else ""
    return one_line if len(one_line) <= width else one_line[:max(width - 1, 0)].rstrip() + "…"


def _rtext(text: Any, width: int = REPR_TEXT) -> str:
    """Session text for a repr: one line, cut, quoted by ``repr`` (controls become escapes)."""
    return repr(_cut(text, width))


def _code(value: Any) -> str:
    return f"<code>{_esc(value)}</code>"


def _card(kind: str, heading: str, rows: Iterable[tuple[str, str]], *parts: str) -> str:
    """A card: ``kind`` in bold, an escaped heading, a two-column table of (label, HTML value)."""
    body = "".join(f'<tr><th style="{_TH}">{_esc(label)}</th><td style="{_TD}">{value}</td></tr>'
                   for label, value in rows)
    return (f'<div class="pikit-repr" style="{_CARD}"><div style="margin-bottom: 4px;"><b>{_esc(kind)}</b> '
            f'{heading}</div><table style="border-collapse: collapse; font-size: inherit;">{body}</table>'
            f'{"".join(parts)}</div>')


def _badge(role: Any) -> str:
    background, text = role_color(str(role))
    return (f'<span style="background: {background}; color: {text}; border-radius: 3px; padding: 0 4px; '
            f'font-size: 0.9em;">{_esc(role)}</span>')


def _bar(parts: Sequence[tuple[str, int]], note: str = "", labels: dict[str, str] | None = None) -> str:
    """A stacked bar of the segments in ``parts`` (palette colours) with its legend."""
    names = {**SEGMENT_LABELS, **(labels or {})}
    total = sum(value for _, value in parts)
    if total <= 0:
        return ""
    cells = "".join(f'<div title="{_esc(names[key])}: {fmt_int(value)}" style="width: '
                    f'{100 * value / total:.3f}%; background: {SEGMENTS[key]};"></div>'
                    for key, value in parts if value > 0)
    legend = " ".join(f'<span style="white-space: nowrap;"><span style="display: inline-block; width: 10px; '
                      f'height: 10px; background: {SEGMENTS[key]}; margin-right: 3px;"></span>'
                      f'{_esc(names[key])} {fmt_int(value)}</span>' for key, value in parts if value > 0)
    return (f'<div style="display: flex; height: 12px; margin: 6px 0 3px; border-radius: 3px; overflow: hidden; '
            f'max-width: 640px;">{cells}</div><div style="{_DIM} font-size: 0.9em;">{legend}'
            f'{" · " + _esc(note) if note else ""}</div>')


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """A small table; ``rows`` hold HTML cells, columns in ``numeric`` align right."""
    head = "".join(f'<th style="{_NUM if i in numeric else _TH}">{_esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td style="{_NUM if i in numeric else _TD}">{cell}</td>'
                                    for i, cell in enumerate(row)) + "</tr>" for row in rows)
    return (f'<table style="border-collapse: collapse; margin-top: 6px; font-size: inherit;">'
            f'<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def _note(text: str) -> str:
    return f'<div style="{_DIM} font-size: 0.9em; margin-top: 4px;">{_esc(text)}</div>'


def _model(model: Any) -> str | None:
    if not isinstance(model, dict) or model.get("modelId") is None:
        return None
    provider = model.get("provider")
    return f"{provider}/{model['modelId']}" if provider else str(model["modelId"])


# ------------------------------------------------------------------------------------ session
def session_repr(session: Session) -> str:
    """``<Session 'title': 157 entries, leaf '0ce8fc25', path>``."""
    where = session.path or "<memory>"
    return (f"<Session {_rtext(session_title(session))}: {plural(len(session.entries), 'entry')}, "
            f"leaf {session.leaf_id!r}, {where}>")


def session_html(session: Session) -> str:
    """A card: title, file, counts, leaf, labels, compactions and problems found while loading."""
    counts: dict[str, int] = {}
    for entry in session.entries:
        counts[entry.type] = counts.get(entry.type, 0) + 1
    problems = session.report.problems
    leaf = session.leaf
    rows = [
        ("file", _code(session.path) if session.path else '<span style="' + _DIM + '">in memory</span>'),
        ("id", _code(session.id)),
        ("entries", f"{fmt_int(len(session.entries))} ({fmt_int(counts.get('message', 0))} messages, "
                    f"{plural(counts.get('compaction', 0), 'compaction')}, "
                    f"{plural(counts.get('branch_summary', 0), 'branch summary')})"),
        ("roots", fmt_int(len(session.roots))),
        ("leaf", f"{_code(session.leaf_id)} {_esc(_cut(entry_preview(leaf), PREVIEW))}" if leaf is not None
         else "none (reset)"),
        ("labels", _esc(", ".join(_cut(v, 30) for v in list(session.labels.values())[:6])) or "none"),
        ("problems", _esc(session.report.summary()) if problems else "none"),
    ]
    return _card("Session", _esc(session_title(session)), rows,
                 _note("session.context() is what the model sees at the leaf; "
                       "pikit.widgets.SessionExplorer(session) browses the tree."))


# ------------------------------------------------------------------------------------ projection
def segment_tokens(projection: Projection) -> list[tuple[str, int]]:
    """Estimated tokens of the system prompt (counted once), summary, kept and new messages."""
    sums = {"system": 0, "summary": 0, "kept": 0, "new": 0}
    for segment, estimate in zip(projection.segments, projection.estimates, strict=True):
        if segment != "system":
            sums[segment] += estimate
    system = projection.system_message
    sums["system"] = estimate_tokens(system) if system is not None else 0
    return list(sums.items())


def _size_text(projection: Projection) -> str:
    size = projection.size
    if size.usage_index is None:
        return f"{fmt_int(size.tokens)} (all estimated: no usable usage)"
    if size.stale:
        return f"{fmt_int(size.tokens)} (all estimated: the last usage predates an edit or a compaction)"
    return (f"{fmt_int(size.tokens)} ({fmt_int(size.usage_tokens)} reported by the provider + "
            f"{fmt_int(size.trailing_tokens)} estimated after it)")


def projection_repr(projection: Projection) -> str:
    """``<Projection at '0ce8fc25': 59 messages, 10,599 tokens, compaction 'f6135720'>``."""
    compaction = f", compaction {projection.compaction.id!r}" if projection.compaction is not None else ""
    return (f"<Projection at {projection.leaf_id!r}: {plural(len(projection.messages), 'message')}, "
            f"{plural(projection.tokens, 'token')}{compaction}>")


def projection_html(projection: Projection) -> str:
    """A card: leaf, model, size and how it was obtained, the segment bar, the last messages."""
    compaction = projection.compaction
    rows = [
        ("model", _esc(_model(projection.model) or "not recorded") + f" · thinking {_esc(projection.thinking_level)}"),
        ("messages", fmt_int(len(projection.messages))),
        ("context size", _esc(_size_text(projection))),
    ]
    if compaction is not None:
        rows.append(("compaction", f"{_code(compaction.id)} summarizes "
                                   f"{plural(len(projection.summarized_ids), 'entry')}"))
    omitted, replaced = len(projection.omitted_ids), len(projection.replaced_ids)
    if omitted or replaced:
        rows.append(("context edits", f"{fmt_int(omitted)} omitted, {fmt_int(replaced)} replaced"))
    start = max(0, len(projection.messages) - TABLE_ROWS)
    table = _table(
        ("#", "role", "source", "est", "text"),
        ((str(i), _badge(m.get("role")), _code(str(projection.sources[i])[:8]), fmt_int(projection.estimates[i]),
          _esc(_cut(message_preview(m), PREVIEW)))
         for i, m in enumerate(projection.messages[start:], start)),
        numeric=(0, 3))
    more = (_note(f"… {plural(start, 'earlier message')} (pikit.frames.messages(projection) lists all)")
            if start else "")
    return _card("Projection", f"at {_code(projection.leaf_id)}", rows,
                 _bar(segment_tokens(projection), "by Pi's estimate"), more, table)


def entry_repr(projected: ProjectedEntry) -> str:
    """``<ProjectedEntry '1d4d5299' message/user kept: 1 message, 13 tokens>``."""
    return (f"<ProjectedEntry {projected.id!r} {entry_kind(projected.entry)} {projected.status}: "
            f"{plural(len(projected.messages), 'message')}, {plural(projected.tokens, 'token')}>")


def entry_html(projected: ProjectedEntry) -> str:
    """A card: kind, status, the edit that changed it, its messages with their estimates."""
    rows = [("kind", _esc(entry_kind(projected.entry))), ("status", _esc(projected.status)),
            ("tokens", fmt_int(projected.tokens) + " (Pi's estimate)")]
    if projected.edit is not None:
        rows.append(("edited by", _code(projected.edit.id)))
    table = _table(("role", "est", "text"),
                   ((_badge(m.get("role")), fmt_int(e), _esc(_cut(message_preview(m), ENTRY_PREVIEW)))
                    for m, e in zip(projected.messages[:TABLE_ROWS], projected.estimates, strict=False)),
                   numeric=(1,)) if projected.messages else _note("contributes no message to the model")
    return _card("ProjectedEntry", _code(projected.id), rows, table)


# ------------------------------------------------------------------------------------ preparation
def preparation_repr(preparation: Preparation) -> str:
    """One line: where the cut falls, what is summarized and kept."""
    prefix = fmt_int(len(preparation.turn_prefix_messages))
    split = f", split turn (prefix {prefix})" if preparation.is_split_turn else ""
    return (f"<Preparation at {preparation.projection.leaf_id!r} keepRecentTokens="
            f"{fmt_int(preparation.keep_recent_tokens)}: summarize "
            f"{plural(len(preparation.messages_to_summarize), 'message')}{split}, keep from "
            f"{preparation.first_kept_entry_id!r} (≈{fmt_int(preparation.kept_tokens)} tokens), "
            f"{fmt_int(preparation.tokens_before)} tokens before>")


def _files(names: list[str]) -> str:
    shown = ", ".join(_cut(n, 60) for n in names[:5])
    more = f" (+{fmt_int(len(names) - 5)} more)" if len(names) > 5 else ""
    return _esc(f"{fmt_int(len(names))}: {shown}{more}" if names else "none")


def preparation_html(preparation: Preparation) -> str:
    """A card: the cut point, the split turn, the summarized and kept sizes, the file lists."""
    summarized = sum(estimate_tokens(m) for m in preparation.messages_to_summarize)
    prefix = sum(estimate_tokens(m) for m in preparation.turn_prefix_messages)
    kept = preparation.kept_tokens
    previous = preparation.previous_summary
    rows = [
        ("keepRecentTokens", fmt_int(preparation.keep_recent_tokens)),
        ("tokens before", fmt_int(preparation.tokens_before)),
        ("first kept entry", f"{_code(preparation.first_kept_entry_id)} (context entry "
                             f"#{fmt_int(preparation.first_kept_index)})"),
        ("split turn", "yes: the turn's beginning (" + plural(len(preparation.turn_prefix_messages), "message")
         + f", ≈{fmt_int(prefix)} tokens) is summarized separately" if preparation.is_split_turn else "no"),
        ("to summarize", f"{plural(len(preparation.messages_to_summarize), 'message')}, ≈{fmt_int(summarized)} tokens"),
        ("kept verbatim", f"{plural(len(preparation.kept_entry_ids), 'entry')}, ≈{fmt_int(kept)} tokens"),
        ("previous summary", _esc(_cut(previous, PREVIEW)) if previous else "none (first compaction)"),
        ("files read", _files(preparation.read_files)),
        ("files modified", _files(preparation.modified_files)),
    ]
    parts = [("summary", summarized + prefix), ("kept", kept)]
    bar = _bar(parts, "by Pi's estimate", {"summary": "summarized", "kept": "kept"})
    return _card("Preparation", f"at {_code(preparation.projection.leaf_id)}", rows, bar)


# ------------------------------------------------------------------------------------ simulation
def simulation_repr(result: SimulationResult) -> str:
    """One line: the settings and what the replay found."""
    s = result.settings
    return (f"<SimulationResult at {result.leaf_id!r} window={fmt_int(result.context_window)} "
            f"reserve={fmt_int(s.reserve_tokens)} keep={fmt_int(s.keep_recent_tokens)}: "
            f"{plural(len(result.events), 'compaction')} in {plural(len(result.trace), 'check')}, "
            f"peak {fmt_int(result.peak_tokens)}, final {fmt_int(result.final_tokens)}>")


def _sparkline(result: SimulationResult, width: int = 640, height: int = 70) -> str:
    """The context size at each check (before any compaction there), with the threshold, as SVG."""
    trace = result.trace
    if not trace:
        return ""
    top = max(max(t[2] for t in trace), result.threshold, 1) * 1.05
    step = width / max(len(trace) - 1, 1)
    points: list[str] = []
    for n, (_, _, before, after) in enumerate(trace):
        x = n * step
        points.append(f"{x:.1f},{height - height * before / top:.1f}")
        if after != before:
            points.append(f"{x:.1f},{height - height * after / top:.1f}")
    y = height - height * result.threshold / top
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="context size at each check" style="display: block; margin-top: 6px;">'
            f'<line x1="0" x2="{width}" y1="{y:.1f}" y2="{y:.1f}" stroke="{LINES["threshold"]}" '
            f'stroke-dasharray="5 3"/><polyline fill="none" stroke="{SEGMENTS["new"]}" stroke-width="1.5" '
            f'points="{" ".join(points)}"/></svg>')


def simulation_html(result: SimulationResult) -> str:
    """A card: settings, totals, the first compactions and a sparkline of the context size."""
    totals = result.totals()
    s = result.settings
    rows = [
        ("settings", f"window {fmt_int(result.context_window)}, reserve {fmt_int(s.reserve_tokens)} → threshold "
                     f"{fmt_int(result.threshold)}; keepRecentTokens {fmt_int(s.keep_recent_tokens)}"),
        ("checks", f"{fmt_int(len(result.trace))} (after each assistant message)"),
        ("compactions", fmt_int(len(result.events)) + (f" ({fmt_int(len(result.skipped))} triggers found nothing "
                                                         "to compact)" if result.skipped else "")),
        ("context size", f"peak {fmt_int(result.peak_tokens)}, final {fmt_int(result.final_tokens)}, removed "
                         f"{fmt_int(totals['tokensRemoved'])} in total"),
    ]
    table = _table(("#", "after entry", "at", "before", "after", "kept from", "split"),
                   ((str(n), _code(str(e.after_entry_id)[:8]), str(e.branch_index), fmt_int(e.tokens_before),
                     fmt_int(e.tokens_after), _code(str(e.first_kept_entry_id)[:8]), "yes" if e.is_split_turn else "")
                    for n, e in enumerate(result.events[:TABLE_ROWS], 1)),
                   numeric=(0, 2, 3, 4)) if result.events else ""
    more = _note(f"… {plural(len(result.events) - TABLE_ROWS, 'more compaction')}") \
        if len(result.events) > TABLE_ROWS else ""
    return _card("SimulationResult", f"at {_code(result.leaf_id)}", rows, _sparkline(result), table, more)
