"""How a :class:`~pikit.compaction.SimulationResult` shows itself: one line, and a card in a notebook.

(Each function takes the result as it is passed, untyped here: its module imports this one.)
"""

from __future__ import annotations

from typing import Any

from .._formatting import plural

__all__ = ["simulation_html", "simulation_repr"]


def simulation_repr(result: Any) -> str:
    """One line: the settings and what the replay found."""
    from .._formatting import fmt_int

    s = result.settings
    return (f"<SimulationResult at {result.leaf_id!r} window={fmt_int(result.context_window)} "
            f"reserve={fmt_int(s.reserve_tokens)} keep={fmt_int(s.keep_recent_tokens)}: "
            f"{plural(len(result.events), 'compaction')} in {plural(len(result.trace), 'check')}, "
            f"peak {fmt_int(result.peak_tokens)}, final {fmt_int(result.final_tokens)}>")


def _sparkline(result: Any, width: int = 640, height: int = 70) -> str:
    """The context size at each check (before any compaction there), with the threshold, as SVG."""
    from .._palette import LINES, SEGMENTS

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


def simulation_html(result: Any) -> str:
    """A card: settings, totals, the first compactions and a sparkline of the context size."""
    from .._card import TABLE_ROWS, card, code, note, table
    from .._formatting import fmt_int

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
    listing = table(("#", "after entry", "at", "before", "after", "kept from", "split"),
                   ((str(n), code(str(e.after_entry_id)[:8]), str(e.branch_index), fmt_int(e.tokens_before),
                     fmt_int(e.tokens_after), code(str(e.first_kept_entry_id)[:8]), "yes" if e.is_split_turn else "")
                    for n, e in enumerate(result.events[:TABLE_ROWS], 1)),
                   numeric=(0, 2, 3, 4)) if result.events else ""
    more = note(f"… {plural(len(result.events) - TABLE_ROWS, 'more compaction')}") \
        if len(result.events) > TABLE_ROWS else ""
    return card("SimulationResult", f"at {code(result.leaf_id)}", rows, _sparkline(result), listing, more)
