"""matplotlib charts of a corpus: where compactions fire, what they leave, abandoned branches, usage.

Each function takes the corpus (or the table it draws) and returns a
:class:`matplotlib.figure.Figure` (object API, no ``pyplot`` state); :mod:`pikit.charts`
re-exports them. Artists tests may look for carry a ``gid``: ``"threshold"``,
``"compactions:<model>"``, ``"tokens_after"``, ``"abandoned"``, ``"usage:<model>"``, ``"recall:<model>"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .._formatting import fmt_int
from .._palette import LINES, series_color
from ..compaction._factkinds import FACT_KINDS

if TYPE_CHECKING:
    from ._corpus import Corpus

__all__ = ["abandoned_branches", "compaction_after", "compaction_thresholds", "summary_recall", "usage_by_day"]


def _table(source: Corpus | pd.DataFrame, name: str) -> pd.DataFrame:
    return source if isinstance(source, pd.DataFrame) else source.table(name)


def _thousands(axis: Any) -> None:
    axis.set_major_formatter(FuncFormatter(lambda value, _pos: fmt_int(round(value))))


def _figure(width: float = 10.0, height: float = 4.5) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def compaction_thresholds(source: Corpus | pd.DataFrame) -> Figure:
    """Where compactions fire: tokensBefore of every compaction against its threshold, per model.

    One point per compaction (x: the threshold ``contextWindow − reserveTokens`` for its model,
    y: ``tokensBefore``); the diagonal is "fired exactly at the threshold". Points above it
    exceeded the threshold by ``over_threshold``; compactions whose model or settings are not
    known are left out (the title says how many).
    """
    table = _table(source, "compactions")
    known = table[table.threshold.notna() & table.tokens_before.notna() & ~table.copied]
    fig = _figure()
    ax = fig.add_subplot()
    for number, (model, group) in enumerate(known.groupby("model", sort=True)):
        ax.scatter(group.threshold.astype(float), group.tokens_before.astype(float), s=28, alpha=0.8,
                   color=series_color(number), label=f"{model} ({len(group)})", gid=f"compactions:{model}")
    if len(known):
        low = float(min(known.threshold.min(), known.tokens_before.min())) * 0.95
        high = float(max(known.threshold.max(), known.tokens_before.max())) * 1.05
        ax.plot([low, high], [low, high], color=LINES["threshold"], linestyle="--", linewidth=1,
                label="tokensBefore = threshold", gid="threshold")
        ax.legend(loc="upper left", fontsize="small")
    _thousands(ax.xaxis)
    _thousands(ax.yaxis)
    ax.set_xlabel("threshold: context window − reserveTokens (tokens)")
    ax.set_ylabel("tokensBefore (tokens)")
    unknown = int((table.threshold.isna() & ~table.copied).sum())
    ax.set_title(f"Where {len(known)} compactions fired" + (f" ({unknown} without known settings)" if unknown else ""))
    return fig


def compaction_after(source: Corpus | pd.DataFrame) -> Figure:
    """What each compaction left: tokensAfter (the next call's prompt) against tokensBefore, per compaction."""
    table = _table(source, "compactions")
    data = table[table.tokens_after.notna() & table.tokens_before.notna() & ~table.copied]
    data = data.sort_values("tokens_before", ascending=False).reset_index(drop=True)
    fig = _figure()
    ax = fig.add_subplot()
    x = range(len(data))
    ax.bar(x, data.tokens_before.astype(float), color=LINES["tokens_before"], label="tokensBefore", gid="tokens_before")
    ax.bar(x, data.tokens_after.astype(float), color=LINES["tokens_after"], label="tokensAfter", gid="tokens_after")
    _thousands(ax.yaxis)
    ax.set_xticks([])
    ax.set_xlabel(f"{len(data)} compactions, largest context first")
    ax.set_ylabel("tokens")
    if len(data):
        share = float((data.tokens_after / data.tokens_before).median())
        ax.set_title(f"What compactions left: median {share:.0%} of the context")
    ax.legend(loc="upper right", fontsize="small")
    return fig


def abandoned_branches(source: Corpus | pd.DataFrame, top: int = 20) -> Figure:
    """Abandoned branches and what they cost: the costliest ``top`` ones, with their length."""
    table = _table(source, "branches")
    data = table[table.abandoned].sort_values("cost", ascending=False).head(top)
    fig = _figure(10.0, max(3.0, 0.3 * len(data) + 1.5))
    ax = fig.add_subplot()
    labels = [f"{str(s)[:8]} · {leaf}" for s, leaf in zip(data.session_id, data.leaf_id, strict=True)]
    ax.barh(range(len(data)), data.cost.astype(float), color=series_color(3), gid="abandoned")
    ax.set_yticks(range(len(data)), labels, fontsize="small")
    ax.invert_yaxis()
    for i, (cost, own) in enumerate(zip(data.cost, data.own_entries, strict=True)):
        ax.annotate(f" ${float(cost):.2f} · {fmt_int(own)} entries", (float(cost), i), va="center", fontsize="small")
    total = float(table[table.abandoned].cost.sum())
    every = float(table[table.is_active].cost.sum()) + total
    share = f" ({total / every:.0%} of all spending)" if every else ""
    ax.set_title(f"{int(table.abandoned.sum())} abandoned branches cost ${total:,.2f}{share}")
    ax.set_xlabel("cost of the branch's own entries ($)")
    return fig


def usage_by_day(source: Corpus | pd.DataFrame, *, timezone: str | None = None) -> Figure:
    """Usage by day and by model: stacked total tokens per day, one colour per model.

    ``source``: a corpus (counted usage, the no-double-counting rule applied) or its
    ``messages`` table (only ``counted`` rows are drawn).
    """
    if isinstance(source, pd.DataFrame):
        messages = source[source.counted]
        zone = timezone or "UTC"
        days = messages.timestamp.dt.tz_convert(zone).dt.strftime("%Y-%m-%d")
        model = messages.provider.fillna("").str.cat(messages.model.fillna("unknown"), sep="/").str.lstrip("/")
        data = messages.assign(day=days, key=model).groupby(["day", "key"]).total_tokens.sum().unstack(fill_value=0)
    else:
        zone = source.timezone(timezone)
        data = source.sql(
            "SELECT strftime(timezone($tz, timestamp), '%Y-%m-%d') AS day, "
            "coalesce(provider || '/', '') || coalesce(model, 'unknown') AS key, sum(total_tokens) AS total_tokens "
            "FROM messages WHERE counted GROUP BY ALL ORDER BY ALL", {"tz": zone}
        ).pivot(index="day", columns="key", values="total_tokens").fillna(0)
    fig = _figure()
    ax = fig.add_subplot()
    bottom = pd.Series(0.0, index=data.index)
    for number, model in enumerate(data.columns):
        values = data[model].astype(float)
        ax.bar(list(data.index), values, bottom=bottom, color=series_color(number), label=model,
               gid=f"usage:{model}")
        bottom = bottom + values
    _thousands(ax.yaxis)
    ax.set_ylabel("tokens (input + output + cache)")
    ax.set_title(f"Usage by day and model ({zone})")
    ax.legend(loc="upper left", fontsize="small")
    ax.tick_params(axis="x", labelrotation=30)
    return fig


def summary_recall(source: Corpus | pd.DataFrame) -> Figure:
    """What recorded summaries kept, per model: the mean recall of their compactions, overall and per kind of fact.

    ``source``: a corpus (its compactions not copied from another file) or an ``evaluations``
    table. One group of bars per kind (``overall`` first), one bar per model; a kind no
    compaction of a model had is left out for it.
    """
    if isinstance(source, pd.DataFrame):
        table = source
    else:
        table = source.sql("SELECT e.* FROM evaluations e JOIN compactions c USING (path, entry_id) WHERE NOT c.copied")
    columns = ["recall", *(f"recall_{kind}" for kind in FACT_KINDS)]
    labels = ["overall", *FACT_KINDS]
    data = table.assign(model=table.model.fillna("unknown"))
    means = data.groupby("model", sort=True)[columns].mean()
    counts = data.groupby("model", sort=True).size()
    fig = _figure(11.0, 4.5)
    ax = fig.add_subplot()
    width = 0.8 / max(len(means), 1)
    for number, (model, row) in enumerate(means.iterrows()):
        x = [i + (number - (len(means) - 1) / 2) * width for i in range(len(columns))]
        values = [float(v) if pd.notna(v) else float("nan") for v in row]
        ax.bar(x, values, width=width, color=series_color(number), label=f"{model} ({int(counts[model])})",
               gid=f"recall:{model}")
    ax.set_xticks(range(len(columns)), labels, fontsize="small")
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:.0%}"))
    ax.set_ylabel("facts of the replaced span kept (mean per compaction)")
    ax.set_title(f"What {len(data)} recorded summaries kept, per model")
    if len(means):
        ax.legend(loc="upper right", fontsize="small")
    return fig
