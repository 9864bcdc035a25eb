"""matplotlib charts of context growth, compaction, budgets and estimate calibration.

Every function builds and returns a :class:`matplotlib.figure.Figure` with the object API
(no ``pyplot`` state, never ``show``), so it works headless (Agg) and in notebooks alike:
a figure returned as the last value of a cell is displayed by Jupyter. Session text in
labels is always shortened.

Artists that tests and callers may want to find carry a ``gid``: ``"compactions"`` (the
markers of compaction events), ``"threshold"``, ``"window"``, ``"usage"``,
``"keep_recent"``, ``"outliers"``, ``"split_turn"``, ``"budget:<segment>"`` bars, and the
``"facts_kept"`` and ``"facts_lost"`` bars of an evaluation.

This module imports matplotlib (and, through :mod:`pikit.frames`, pandas); ``import pikit``
imports neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from . import frames
from ._context.projection import Projection
from ._context.tokens import estimate_tokens
from ._formatting import fmt_int, plural
from ._palette import DIFF, LINES, SEGMENT_LABELS, SEGMENTS, TEXT, series_color
from ._session import Session
from ._tree.sessiontree import CURRENT
from .compaction._facts import FACT_KINDS
from .compaction._simulate import SimulationResult

# charts of a whole corpus of sessions
from .corpus._charts import (
    abandoned_branches,
    compaction_after,
    compaction_thresholds,
    summary_recall,
    usage_by_day,
)

__all__ = [
    "abandoned_branches",
    "budget",
    "budget_segments",
    "calibration",
    "compaction_after",
    "compaction_thresholds",
    "compactions",
    "context_growth",
    "evaluation",
    "keep_recent_sweep",
    "strategy_sawtooth",
    "strategy_tradeoff",
    "summary_recall",
    "usage_by_day",
]

LABEL_WIDTH = 40


def _figure(width: float = 10.0, height: float = 4.5) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _short(text: Any, width: int = LABEL_WIDTH) -> str:
    return frames.shorten(text, width)


def _thousands(ax: Axes, axis: str = "y") -> None:
    from matplotlib.ticker import FuncFormatter

    formatter = FuncFormatter(lambda value, _pos: fmt_int(round(value)))
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(formatter)


def _legend_outside(ax: Axes, handles: list[Any] | None = None, labels: list[str] | None = None) -> None:
    """A legend to the right of the axes (constrained layout makes room for it)."""
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [_short(label, 60) for label in labels], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize="small", frameon=False)


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color=LINES["window"])
    ax.set_xticks([])
    ax.set_yticks([])


# ---------------------------------------------------------------------------------- context growth
def _traces(sources: Sequence[Any], leaf: Any) -> list[tuple[str, pd.DataFrame, SimulationResult | None]]:
    """Normalize the sources of :func:`context_growth` to (label, trace frame, result)."""
    out: list[tuple[str, pd.DataFrame, SimulationResult | None]] = []
    for source in sources:
        if isinstance(source, Session):
            out.append(("recorded", frames.context_trace(source, leaf), None))
        elif isinstance(source, SimulationResult):
            out.append((_run_label(source), frames.simulation_trace(source), source))
        elif isinstance(source, pd.DataFrame):
            if "run" in source.columns and source["run"].nunique() > 1:
                for run, part in source.groupby("run", sort=True):
                    first = part.iloc[0]
                    label = _settings_label(int(first["context_window"]), int(first["reserve_tokens"]),
                                            int(first["keep_recent_tokens"]))
                    out.append((f"run {run}: {label}", part, None))
            else:
                out.append(("simulated" if "run" in source.columns else "recorded", source, None))
        elif isinstance(source, Iterable) and not isinstance(source, str | bytes):
            items = list(source)
            out.extend(_traces(items, leaf))
        else:
            raise TypeError(f"context_growth: cannot draw a {type(source).__name__}; give a Session, a "
                            "SimulationResult (or a list of them) or a trace DataFrame")
    return out


def _settings_label(window: int, reserve: int, keep: int) -> str:
    return f"simulated W={fmt_int(window)} R={fmt_int(reserve)} K={fmt_int(keep)}"


def _run_label(result: SimulationResult) -> str:
    s = result.settings
    return _settings_label(result.context_window, s.reserve_tokens, s.keep_recent_tokens)


def _sawtooth(trace: pd.DataFrame) -> tuple[list[int], list[int]]:
    xs: list[int] = []
    ys: list[int] = []
    for x, before, after, compacted in zip(trace["branch_index"], trace["tokens_before"], trace["tokens"],
                                           trace["compacted"], strict=True):
        xs.append(int(x))
        ys.append(int(before))
        if bool(compacted):
            xs.append(int(x))
            ys.append(int(after))
    return xs, ys


def _draw_trace(ax: Axes, label: str, trace: pd.DataFrame, color: Any, show_estimate: bool,
                show_usage: bool, event: str = "compaction") -> int:
    """One source's sawtooth, its estimate and usage, and its compactions; 1 when it had check points."""
    if trace.empty:
        ax.plot([], [], color=color, label=f"{label} (no check points)")
        ax.plot([], [], linestyle="none", marker="v", color=color, gid="compactions")
        return 0
    xs, ys = _sawtooth(trace)
    ax.plot(xs, ys, color=color, linewidth=1.6, label=label, gid="context")
    recorded = "estimate" in trace.columns
    if recorded and show_estimate:
        checks = trace[trace["kind"] == "check"]
        ax.plot(checks["branch_index"].astype(int), checks["estimate"].astype(int), color=color,
                linestyle="--", linewidth=0.9, alpha=0.7, label=f"{label}: estimate only", gid="estimate")
    if recorded and show_usage and "usage_total" in trace.columns:
        usage = trace[trace["usage_total"].notna() & (trace["usage_total"] > 0)]
        if not usage.empty:
            ax.plot(usage["branch_index"].astype(int), usage["usage_total"].astype(int), linestyle="none",
                    marker=".", markersize=5, color=color, alpha=0.6, label=f"{label}: recorded usage",
                    gid="usage")
    events = trace[trace["compacted"].fillna(False).astype(bool)]
    ax.plot(events["branch_index"].astype(int), events["tokens_before"].astype(int), linestyle="none",
            marker="v", markersize=8, color=color, markeredgecolor=TEXT, markeredgewidth=0.6,
            label=f"{label}: {plural(len(events), event)}", gid="compactions")
    return 1


def _draw_limits(ax: Axes, context_window: int, reserve_tokens: int | None) -> None:
    """The context window, and the compaction threshold when the reserve is known."""
    ax.axhline(context_window, color=LINES["window"], linewidth=1, linestyle=":", gid="window",
               label=f"context window {fmt_int(context_window)}")
    if reserve_tokens is not None:
        threshold = context_window - reserve_tokens
        ax.axhline(threshold, color=LINES["threshold"], linewidth=1.2, linestyle="-.", gid="threshold",
                   label=f"threshold {fmt_int(threshold)} (window − reserve)")


def context_growth(*sources: Any, leaf: Any = CURRENT, context_window: int | None = None,
                   reserve_tokens: int | None = None, title: str | None = None,
                   show_estimate: bool = True, show_usage: bool = True) -> Figure:
    """Context size over the branch, with its compactions (the sawtooth).

    ``sources`` may mix a :class:`~pikit.Session` (the recorded history at
    ``leaf``: Pi's context size at every check point, the all-estimate size dashed, the
    usage recorded on each assistant message as dots, and the compaction entries), one or
    more :class:`~pikit.compaction.SimulationResult` (what-if replays), and trace DataFrames
    from :func:`pikit.frames.context_trace` / :func:`pikit.frames.simulation_trace`.

    Each compaction event is drawn as a ``v`` marker at its size before compaction (one
    ``gid="compactions"`` line per source). The threshold (``context_window -
    reserve_tokens``) is drawn when both are known; a single simulation supplies them.
    """
    if not sources:
        raise TypeError("context_growth needs at least one source (a Session, a SimulationResult or a trace)")
    fig = _figure(12.0, 4.8)
    ax = fig.add_subplot()
    traces = _traces(sources, leaf)
    results = [r for _, _, r in traces if r is not None]
    if context_window is None and results and len({r.context_window for r in results}) == 1:
        context_window = results[0].context_window
    if reserve_tokens is None and results and len({r.settings.reserve_tokens for r in results}) == 1:
        reserve_tokens = results[0].settings.reserve_tokens
    drawn = 0
    for number, (label, trace, _result) in enumerate(traces):
        drawn += _draw_trace(ax, label, trace, series_color(number), show_estimate, show_usage)
    if context_window is not None:
        _draw_limits(ax, context_window, reserve_tokens)
    ax.set_xlabel("position on the branch (entry index)")
    ax.set_ylabel("context size (tokens)")
    ax.set_title(title or "Context size over the branch")
    ax.set_ylim(bottom=0)
    _thousands(ax)
    ax.grid(True, alpha=0.3)
    if drawn or context_window is not None:
        _legend_outside(ax)
    return fig


def strategy_sawtooth(results: Iterable[SimulationResult], *, title: str | None = None) -> Figure:
    """Each strategy's sawtooth on one branch: the context size at every check, one line per strategy.

    ``results`` are the runs of ``compaction.simulate(..., strategy=[...])`` (each labelled by its
    strategy, in :func:`context_growth`'s style: ``v`` markers at each compaction, ``gid="compactions"``).
    The context window is drawn once (``gid="window"``), each strategy's threshold as a thin line of its
    colour (``gid="threshold"``), unless it fires at no size (``none``, ``mask-observations``: the
    window is their threshold). The rolling mask's markers (masks) are the requests it masked at.
    """
    runs = list(results)
    if not runs:
        raise TypeError("strategy_sawtooth needs at least one SimulationResult")
    fig = _figure(12.0, 4.8)
    ax = fig.add_subplot()
    for number, result in enumerate(runs):
        color = series_color(number)
        label = result.strategy or _run_label(result)
        masks = result.masked_observations and not result.events
        _draw_trace(ax, label, frames.simulation_trace(result), color, False, False,
                    "mask" if masks else "compaction")
        if result.threshold < result.context_window:
            ax.axhline(result.threshold, color=color, linewidth=0.9, linestyle="-.", alpha=0.8, gid="threshold",
                       label=f"{label}: threshold {fmt_int(result.threshold)}")
    windows = {r.context_window for r in runs}
    if len(windows) == 1:
        _draw_limits(ax, windows.pop(), None)
    ax.set_xlabel("position on the branch (entry index)")
    ax.set_ylabel("context size (tokens)")
    ax.set_title(title or "Context size over the branch, by compaction strategy")
    ax.set_ylim(bottom=0)
    _thousands(ax)
    ax.grid(True, alpha=0.3)
    _legend_outside(ax)
    return fig


def strategy_tradeoff(df: pd.DataFrame, *, title: str | None = None) -> Figure:
    """The trade-off of compaction strategies: input tokens sent (x) against key recall on common ground (y).

    ``df`` is :func:`pikit.frames.strategy_tradeoff`: one point per row (``gid="tradeoff"``), one
    colour per strategy and one marker per setting of it; the legend names each point (its
    strategy, and its label when that differs) and how many of its requests were over the
    window, so no label is printed over another. A replay with no key recall (no key facts) is
    not drawn. What the chart cannot show: whether the task would still have succeeded; and with
    offline summaries, recall is partly circular (the offline summarizer copies the kinds of
    facts the evaluator extracts).
    """
    fig = _figure(10.0, 5.2)
    ax = fig.add_subplot()
    ax.set_title(title or "Tokens sent against key facts still held, by compaction strategy")
    shown = df[df["key_recall"].notna()] if not df.empty else df
    if shown.empty:
        _empty(ax, "no replay has facts to be scored on")
        return fig
    markers = "osD^vP*Xh<>p"
    for number, strategy in enumerate(dict.fromkeys(shown["strategy"])):
        part = shown[shown["strategy"] == strategy]
        for k, row in enumerate(part.to_dict("records")):
            label = str(row["label"])
            name = strategy if label == strategy else f"{strategy}: {label}"
            over = row.get("overflows")
            if over is not None and not pd.isna(over) and int(over):
                name += f" ({plural(int(over), 'request')} over the window)"
            ax.scatter([float(row["input_tokens"])], [float(row["key_recall"])], s=52, color=series_color(number),
                       marker=markers[k % len(markers)], label=name, gid="tradeoff", zorder=3,
                       edgecolors=TEXT if over else "none", linewidths=0.8)
    ax.set_xlabel("input tokens sent over the branch (every request's context, summed)")
    ax.set_ylabel("key recall on common ground (key facts of\nthe uncompacted context still held)")
    ax.set_ylim(max(0.0, float(shown["key_recall"].min()) - 0.1) - 0.02, 1.02)  # the span the points use
    _thousands(ax, "x")
    ax.grid(True, alpha=0.3)
    _legend_outside(ax)
    return fig


# ---------------------------------------------------------------------------------- compactions
def compactions(df: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Bars of tokens before / after each compaction.

    ``df`` is :func:`pikit.frames.compactions` (labels: the compaction ids) or
    :func:`pikit.frames.simulation_events` (labels: the entry after which it fired).
    Two bar containers, one bar per compaction in each.
    """
    fig = _figure(max(6.0, min(14.0, 2.0 + 0.9 * len(df))), 4.5)
    ax = fig.add_subplot()
    ax.set_title(title or "Tokens before and after each compaction")
    if df.empty:
        _empty(ax, "no compactions on this branch")
        return fig
    id_column = "id" if "id" in df.columns else "after_entry_id" if "after_entry_id" in df.columns else None
    ids = [_short(v, 12) for v in df[id_column]] if id_column is not None else [""] * len(df)
    if "run" in df.columns and df["run"].nunique() > 1:
        labels = [f"run {run}: {i}" for run, i in zip(df["run"], ids, strict=True)]
    else:
        labels = [f"#{n + 1} {i}".strip() for n, i in enumerate(ids)]
    positions = list(range(len(df)))
    width = 0.38
    before = [int(v) if pd.notna(v) else 0 for v in df["tokens_before"]]
    after = [int(v) if pd.notna(v) else 0 for v in df["tokens_after"]]
    bars_before = ax.bar([p - width / 2 for p in positions], before, width, label="tokens before",
                         color=LINES["tokens_before"], gid="tokens_before")
    bars_after = ax.bar([p + width / 2 for p in positions], after, width, label="tokens after",
                        color=LINES["tokens_after"], gid="tokens_after")
    ax.bar_label(bars_before, labels=[fmt_int(v) for v in before], fontsize="x-small", padding=2)
    ax.bar_label(bars_after, labels=[fmt_int(v) for v in after], fontsize="x-small", padding=2)
    ax.set_xticks(positions, labels, rotation=30 if len(df) > 6 else 0, ha="right" if len(df) > 6 else "center")
    ax.set_ylabel("context size (tokens)")
    _thousands(ax)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


# ---------------------------------------------------------------------------------- calibration
def calibration(df: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Pi's estimate against real counts per message, and per turn against the recorded usage.

    ``df`` is :func:`pikit.frames.calibration`. Left: one point per message (real count
    across, estimate up), the diagonal where the heuristic is exact, outliers circled in
    red (``gid="outliers"``). Right: per usage turn, the summed estimate, the summed
    real count and the growth of the recorded usage (where comparable).
    """
    fig = _figure(12.0, 4.8)
    left, right = fig.subplots(1, 2, width_ratios=(1, 1.4))
    counter = df.attrs.get("counter", "real count")
    fig.suptitle(title or f"Estimate calibration: chars/4 vs {counter} vs recorded usage")
    if df.empty:
        _empty(left, "no messages")
        _empty(right, "no turns")
        return fig
    tokens = df["tokens"].astype("float64")
    estimate = df["estimate"].astype("float64")
    outlier = df["outlier"].fillna(False).astype(bool)
    left.scatter(tokens[~outlier], estimate[~outlier], s=14, alpha=0.6, color=series_color(0), label="message",
                 gid="messages")
    left.scatter(tokens[outlier], estimate[outlier], s=36, facecolors="none", edgecolors=DIFF["removed"],
                 linewidths=1.2, label=f"outlier ({int(outlier.sum())})", gid="outliers")
    top = float(max(tokens.max(), estimate.max(), 1.0))
    left.plot([0, top], [0, top], color=TEXT, linewidth=0.8, linestyle=":", label="estimate = count", gid="diagonal")
    left.set_xlabel(f"real tokens ({counter})")
    left.set_ylabel("Pi's estimate (ceil(chars / 4))")
    left.set_title("Per message", fontsize="medium")
    left.grid(True, alpha=0.3)
    left.legend(fontsize="x-small")

    turns = df.groupby("turn", sort=True).first()
    if "turn_usage_delta" in turns.columns:
        turns = turns[["turn_estimate", "turn_tokens", "turn_usage_delta"]]
    xs = [int(t) for t in turns.index]
    width = 0.28
    right.bar([x - width for x in xs], turns["turn_estimate"].astype("float64"), width, label="estimate",
              color=series_color(0), gid="turn_estimate")
    right.bar(xs, turns["turn_tokens"].astype("float64"), width, label=f"real ({counter})", color=series_color(4),
              gid="turn_tokens")
    delta = turns["turn_usage_delta"].astype("float64") if "turn_usage_delta" in turns.columns else None
    if delta is not None and delta.notna().any():
        right.bar([x + width for x in xs], delta.fillna(0.0), width, label="recorded usage growth",
                  color=LINES["usage"], gid="turn_usage")
    from matplotlib.ticker import MaxNLocator

    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_xlabel("usage turn (messages up to the next recorded usage)")
    right.set_ylabel("tokens")
    right.set_title("Per turn", fontsize="medium")
    _thousands(right)
    right.grid(True, axis="y", alpha=0.3)
    right.legend(fontsize="x-small")
    return fig


# ---------------------------------------------------------------------------------- budget
def budget_segments(projection: Projection) -> dict[str, int]:
    """Estimated tokens of the system prompt, the summary, the kept and the new messages.

    The system prompt counts once (the replayed current system message), as in Pi's
    estimate of a stale context; every other message counts by its estimate.
    """
    out = {"system": 0, "summary": 0, "kept": 0, "new": 0}
    system = projection.system_message
    out["system"] = estimate_tokens(system) if system is not None else 0
    for segment, estimate in zip(frames.message_segments(projection), projection.estimates, strict=True):
        if segment != "system":
            out[segment] += estimate
    return out


def budget(projection: Projection, context_window: int, reserve_tokens: int, keep_recent_tokens: int, *,
           title: str | None = None) -> Figure:
    """A stacked bar of the context against the window.

    Segments: system prompt, compaction summary, kept messages (the head compaction's kept
    range) and new messages (after it), by Pi's estimate (``gid="budget:<segment>"``);
    the threshold ``context_window - reserve_tokens`` (``gid="threshold"``), the window
    (``gid="window"``), Pi's context size of the projection (``gid="context_size"``) and
    the span a compaction now would keep, the last ``keep_recent_tokens`` (``gid="keep_recent"``).
    """
    segments = budget_segments(projection)
    total = sum(segments.values())
    fig = _figure(12.0, 3.2)
    ax = fig.add_subplot()
    left = 0
    for key, value in segments.items():
        bars = ax.barh([0], [value], left=left, height=0.5, color=SEGMENTS[key],
                       label=f"{SEGMENT_LABELS[key]}: {fmt_int(value)}", gid=f"budget:{key}")
        if value >= 0.06 * max(context_window, total, 1):
            ax.bar_label(bars, labels=[fmt_int(value)], label_type="center", color="white", fontsize="small")
        left += value
    threshold = context_window - reserve_tokens
    ax.axvline(context_window, color=LINES["window"], linewidth=1.5, gid="window",
               label=f"context window {fmt_int(context_window)}")
    ax.axvline(threshold, color=LINES["threshold"], linewidth=1.5, linestyle="--", gid="threshold",
               label=f"threshold {fmt_int(threshold)} (reserve {fmt_int(reserve_tokens)})")
    tokens = projection.tokens
    ax.axvline(tokens, color=LINES["context_size"], linewidth=1.2, linestyle=":", ymin=0.2, ymax=0.8,
               gid="context_size", label=f"context size by Pi's rule {fmt_int(tokens)}")
    keep_start = max(total - keep_recent_tokens, 0)
    ax.barh([0.45], [total - keep_start], left=keep_start, height=0.12, color="none",
            edgecolor=LINES["keep_recent"], hatch="///", gid="keep_recent",
            label=f"keepRecentTokens {fmt_int(keep_recent_tokens)} (last part kept)")
    ax.set_ylim(-0.6, 0.9)
    ax.set_yticks([])
    ax.set_xlim(0, max(context_window, total, tokens) * 1.04)
    ax.set_xlabel("tokens (Pi's estimate)")
    _thousands(ax, "x")
    state = "over the threshold: Pi would compact" if projection.tokens > threshold else "under the threshold"
    ax.set_title(title or f"Context budget: {fmt_int(total)} estimated tokens, {state}")
    _legend_outside(ax)
    return fig


# ---------------------------------------------------------------------------------- sweep
def keep_recent_sweep(df: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Kept and summarized tokens, and summarized messages, against keepRecentTokens.

    ``df`` is :func:`pikit.frames.sweep_keep_recent`. Values with nothing to compact are
    left out; split-turn cuts are marked with ``x`` (``gid="split_turn"``).
    """
    fig = _figure(11.0, 4.5)
    ax = fig.add_subplot()
    ax.set_title(title or "What a compaction would keep, by keepRecentTokens")
    data = df[df["compactable"].fillna(False).astype(bool)] if not df.empty else df
    if data.empty:
        _empty(ax, "nothing to compact for any of these values")
        return fig
    x = data["keep_recent_tokens"].astype(int)
    kept = data["kept_tokens"].astype(int)
    ax.plot(x, kept, marker="o", markersize=3, color=SEGMENTS["kept"], label="kept tokens", gid="kept_tokens")
    ax.plot(x, data["summarized_tokens"].astype(int), marker="o", markersize=3, color=SEGMENTS["summary"],
            label="summarized tokens", gid="summarized_tokens")
    ax.plot(x, x, color=TEXT, linestyle=":", linewidth=0.8, label="keepRecentTokens", gid="diagonal")
    split = data[data["is_split_turn"].fillna(False).astype(bool)]
    ax.plot(split["keep_recent_tokens"].astype(int), split["kept_tokens"].astype(int), linestyle="none", marker="x",
            markersize=8, color=LINES["threshold"], label=f"split turn ({len(split)})", gid="split_turn")
    ax.set_xlabel("keepRecentTokens")
    ax.set_ylabel("tokens (Pi's estimate)")
    _thousands(ax)
    _thousands(ax, "x")
    ax.grid(True, alpha=0.3)
    right = ax.twinx()
    right.step(x, data["summarized_messages"].astype(int) + data["turn_prefix_messages"].astype(int), where="post",
               color=LINES["tokens_before"], label="messages summarized", gid="summarized_messages")
    right.set_ylabel("messages summarized")
    right.set_ylim(bottom=0)
    handles, labels = ax.get_legend_handles_labels()
    more_handles, more_labels = right.get_legend_handles_labels()
    right.legend(handles + more_handles, labels + more_labels, loc="upper left", bbox_to_anchor=(1.08, 1.0),
                 fontsize="small", frameon=False)
    return fig


# ---------------------------------------------------------------------------------- evaluation
def evaluation(df: pd.DataFrame, *, title: str | None = None) -> Figure:
    """What compactions kept and lost: per kind of fact, the facts kept and lost as stacked bars,
    each labelled with its recall.

    ``df`` is :func:`pikit.frames.evaluation_facts` (one row per fact). The kinds come in
    :data:`~pikit.compaction.FACT_KINDS` order; with several compactions in ``df``,
    each has its own bars, labelled with its id. Two bar containers: ``gid="facts_kept"`` and
    ``gid="facts_lost"``, one bar per (compaction, kind).
    """
    groups: list[tuple[str, int, int]] = []
    ids = list(dict.fromkeys(df["compaction_id"])) if not df.empty else []
    if ids:
        for compaction_id in ids:
            rows = df[df["compaction_id"] == compaction_id]
            for kind in FACT_KINDS:
                flags = rows.loc[rows["kind"] == kind, "kept"].fillna(False).astype(bool)
                if len(flags):
                    label = kind if len(ids) == 1 else f"{_short(compaction_id, 10)} · {kind}"
                    groups.append((label, int(flags.sum()), int(len(flags) - flags.sum())))
    fig = _figure(10.0, max(2.6, min(12.0, 1.2 + 0.34 * len(groups))))
    ax = fig.add_subplot()
    kept_total = sum(g[1] for g in groups)
    total = kept_total + sum(g[2] for g in groups)
    by = "the compaction" if len(ids) <= 1 else f"{len(ids)} compactions"
    ax.set_title(title or f"Facts kept and lost by {by}" + (
        f": {fmt_int(kept_total)} of {fmt_int(total)} kept ({kept_total / total:.0%})" if total else ""))
    if not groups:
        _empty(ax, "no fact in the replaced span")
        return fig
    positions = list(range(len(groups)))[::-1]  # the first kind on top
    kept = [g[1] for g in groups]
    lost = [g[2] for g in groups]
    ax.barh(positions, kept, color=SEGMENTS["kept"], label="kept", gid="facts_kept")
    bars_lost = ax.barh(positions, lost, left=kept, color=LINES["threshold"], label="lost", gid="facts_lost")
    ax.bar_label(bars_lost, labels=[f"{k / (k + n):.0%} kept" for k, n in zip(kept, lost, strict=True)],
                 fontsize="x-small", padding=3)
    ax.set_yticks(positions, [g[0] for g in groups], fontsize="small")
    ax.set_xlabel("facts")
    ax.set_xlim(0, max(k + n for k, n in zip(kept, lost, strict=True)) * 1.15)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    _thousands(ax, "x")
    ax.grid(True, axis="x", alpha=0.3)
    _legend_outside(ax)
    return fig
