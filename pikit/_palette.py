"""One set of colours for every picture pikit draws: matplotlib charts, widgets, exported pages.

A context is drawn as the same segments everywhere (system prompt, compaction summary, kept
messages, new messages), each with one colour; the lines drawn across it (the compaction
threshold, the context window, Pi's context size, the keepRecentTokens span) and the bars of a
compaction (tokens before and after) keep one colour too, as do message roles and diff marks.
Charts take the hex values; HTML takes them as CSS custom properties (:func:`css_variables`)
so a stylesheet says ``var(--pikit-segment-kept)`` instead of repeating a value.

Colours are plain ``#rrggbb`` strings; this module imports nothing.
"""

from __future__ import annotations

__all__ = [
    "BACKGROUND",
    "DIFF",
    "LINES",
    "ROLES",
    "ROLE_TEXT",
    "SEGMENTS",
    "SEGMENT_LABELS",
    "SERIES",
    "TEXT",
    "css_variables",
    "role_color",
    "series_color",
]

#: The parts of a context, oldest first, as drawn in budget bars and their legends.
SEGMENTS: dict[str, str] = {
    "system": "#f9a825",       # the (replayed) system prompt: amber, like the system role badge
    "summary": "#8e24aa",      # the compaction summary: purple, like compaction entries
    "kept": "#43a047",         # messages a compaction kept: green
    "new": "#1e88e5",          # messages after the compaction: blue
    "unitemized": "#b0bec5",   # reported usage no message accounts for: grey (drawn hatched)
}

#: Legend text of each segment.
SEGMENT_LABELS: dict[str, str] = {
    "system": "system prompt",
    "summary": "compaction summary",
    "kept": "kept messages",
    "new": "new messages",
    "unitemized": "not itemized",
}

#: Lines and bars drawn over or beside the segments.
LINES: dict[str, str] = {
    "threshold": "#d32f2f",      # contextWindow − reserveTokens: Pi compacts above it
    "window": "#616161",         # the context window
    "context_size": "#212121",   # Pi's context size (recorded usage + estimates after it)
    "keep_recent": "#2e7d32",    # the last keepRecentTokens a compaction keeps
    "tokens_before": "#90a4ae",  # a compaction's tokensBefore
    "tokens_after": "#1e88e5",   # the context right after it (same blue as new messages)
    "estimate": "#757575",       # Pi's all-estimate size, drawn dashed
    "usage": "#424242",          # usage the provider reported
    "grid": "#9e9e9e",
}

#: Message roles: the badge background and its text colour.
ROLES: dict[str, str] = {
    "user": "#e3f2fd",
    "assistant": "#ede7f6",
    "toolResult": "#eceff1",
    "toolError": "#fdecea",
    "system": "#fff8e1",
    "compactionSummary": "#f3e5f5",
    "branchSummary": "#e0f2f1",
    "custom": "#fce4ec",
    "bashExecution": "#efebe9",
}
ROLE_TEXT: dict[str, str] = {
    "user": "#0d47a1",
    "assistant": "#4527a0",
    "toolResult": "#37474f",
    "toolError": "#b71c1c",
    "system": "#8d6e00",
    "compactionSummary": "#6a1b9a",
    "branchSummary": "#00695c",
    "custom": "#ad1457",
    "bashExecution": "#4e342e",
}

#: Marks of a before/after comparison.
DIFF: dict[str, str] = {
    "added": "#2e7d32",
    "removed": "#c62828",
    "changed": "#ef6c00",
    "summarized": "#8e24aa",
}

#: One colour per run or series when several are drawn together (cycled).
SERIES: tuple[str, ...] = ("#1e88e5", "#e53935", "#43a047", "#8e24aa", "#fb8c00", "#6d4c41", "#d81b60",
                           "#00acc1")

TEXT = "#212121"
BACKGROUND = "#ffffff"


def series_color(number: int) -> str:
    """The colour of the ``number``-th series (0-based, cycling through :data:`SERIES`)."""
    return SERIES[number % len(SERIES)]


def role_color(role: str) -> tuple[str, str]:
    """(background, text) of a message role's badge; unknown roles get neutral grey."""
    return ROLES.get(role, "#f5f5f5"), ROLE_TEXT.get(role, "#616161")


def _css_name(key: str) -> str:
    return "".join("-" + c.lower() if c.isupper() else c for c in key).replace("_", "-")


def css_variables(selector: str = ":root") -> str:
    """Every colour as a CSS custom property in one rule, e.g. ``--pikit-segment-kept``.

    Names: ``--pikit-segment-<name>``, ``--pikit-line-<name>`` (underscores become dashes),
    ``--pikit-role-<role>`` and ``--pikit-role-<role>-text`` (camelCase becomes dashes:
    ``tool-result``), ``--pikit-diff-<mark>``, ``--pikit-series-<n>``.
    """
    props: list[str] = []
    props += [f"--pikit-segment-{_css_name(k)}: {v};" for k, v in SEGMENTS.items()]
    props += [f"--pikit-line-{_css_name(k)}: {v};" for k, v in LINES.items()]
    props += [f"--pikit-role-{_css_name(k)}: {v};" for k, v in ROLES.items()]
    props += [f"--pikit-role-{_css_name(k)}-text: {v};" for k, v in ROLE_TEXT.items()]
    props += [f"--pikit-diff-{_css_name(k)}: {v};" for k, v in DIFF.items()]
    props += [f"--pikit-series-{n}: {v};" for n, v in enumerate(SERIES)]
    return f"{selector} {{ " + " ".join(props) + " }"
