"""The rows of every corpus table for one file, derived from its :class:`~pikit.corpus.scan.FileState`.

Rows are tuples in the declared column order of :mod:`pikit.corpus.schema` (timestamps as
epoch milliseconds). The tree is walked iteratively (chains are thousands deep) and every
walk guards against parent cycles.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..timestamps import parse_ms
from .scan import FileState, Message

__all__ = ["FileInfo", "Rows", "derive"]


@dataclass(frozen=True)
class FileInfo:
    """Where a file is and what it looked like when scanned."""

    file_id: int
    path: str
    project: str
    size: int
    mtime_ms: int


@dataclass
class Rows:
    """One file's rows, per table (tuples in declared order, ``file_id`` first)."""

    sessions: list[tuple[Any, ...]]
    messages: dict[str, list[Any]]
    compactions: list[tuple[Any, ...]]
    branches: list[tuple[Any, ...]]
    summary_calls: list[tuple[Any, ...]]
    problems: list[tuple[Any, ...]]


@dataclass
class _Tree:
    parent: list[int]  # -1: a root (or a parent that is not in the file)
    children: list[int]
    leaf: int  # -1: no entries
    active: list[bool]


def _tree(state: FileState) -> _Tree:
    n = len(state.ids)
    position: dict[Any, int] = {}
    for i, entry_id in enumerate(state.ids):
        if isinstance(entry_id, str):
            position[entry_id] = i  # a later duplicate replaces the earlier one, as in Pi
    parent = [-1] * n
    children = [0] * n
    for i, ref in enumerate(state.parents):
        if isinstance(ref, int) and state.ids[i] is None:
            p = ref  # a version-1 entry: its parent is the entry before it
        else:
            p = position.get(ref, -1) if isinstance(ref, str) else -1
        if p is None or p == i:
            p = -1
        parent[i] = p
        if p >= 0:
            children[p] += 1
    leaf = n - 1
    active = [False] * n
    node, seen = leaf, 0
    while node >= 0 and not active[node] and seen <= n:
        active[node] = True
        node, seen = parent[node], seen + 1
    return _Tree(parent, children, leaf, active)


def _walk_up(tree: _Tree, start: int, stop: Callable[[int], bool]) -> int:
    """The first ancestor-or-self of ``start`` where ``stop`` holds (-1: none); cycle-safe."""
    node, steps, limit = start, 0, len(tree.parent)
    while node >= 0 and steps <= limit:
        if stop(node):
            return node
        node, steps = tree.parent[node], steps + 1
    return -1


@lru_cache(maxsize=256)
def _threshold(cwd: Any, provider: Any, model: Any) -> tuple[int | None, int | None]:
    """The model's context window (if known) and the reserveTokens Pi would use for it."""
    from ..errors import PikitError
    from ..llm.models import lookup_model
    from ..settings import load_settings

    info = lookup_model(f"{provider}/{model}" if provider else str(model))
    window = info.context_window if info.known else None
    try:  # the project's .pi/settings.json where the session's cwd exists here, else the global file
        project = cwd if isinstance(cwd, str) and cwd else "/nonexistent"
        reserve = load_settings(cwd=project).for_model(f"{provider}/{model}").reserve_tokens
    except (PikitError, OSError):
        reserve = None
    return window, reserve


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return int(value) if abs(value) < 2**63 else None


_NO_USAGE = (None,) * 6


def _usage_columns(usage: list[Any] | None) -> Any:
    return _NO_USAGE if usage is None else usage


class _Context:
    def __init__(self, state: FileState, info: FileInfo) -> None:
        header = state.header or {}
        self.state, self.info = state, info
        self.session_id = header.get("id")
        self.tree = _tree(state)
        self.times = [t if isinstance(t, str) else None for t in state.times]  # cast by DuckDB on insert
        started = parse_ms(header.get("timestamp"))
        self.copied_before = started if isinstance(header.get("parentSession"), str) else None
        self.by_entry: dict[int, Message] = {m.entry: m for m in state.messages}

    def copied(self, entry: int) -> bool:
        """Whether an entry predates the file's header: copied here by a fork or a clone."""
        if self.copied_before is None:
            return False
        t = parse_ms(self.times[entry])
        return t is not None and t < self.copied_before

    def last_activity(self) -> Any:
        """The latest entry timestamp (ISO strings of one format compare as text)."""
        standard = [t for t in self.times if t is not None and len(t) == 24 and t[-1] == "Z"]
        if standard:
            return max(standard)
        parsed = [(ms, t) for t in self.times if (ms := parse_ms(t)) is not None]
        return max(parsed)[1] if parsed else None

    def model_before(self, entry: int) -> tuple[str | None, str | None]:
        """Provider and model of the last assistant message on the branch up to ``entry``.

        Without one there (a branch summary written where the leaf went back to the start), the
        last assistant message before it in the file: the model that was in use.
        """
        by_entry = self.by_entry
        source = _walk_up(self.tree, entry, lambda i: i in by_entry and by_entry[i].role == "assistant"
                          and by_entry[i].model is not None)
        if source < 0:
            earlier = [m for m in self.state.messages if m.entry < entry and m.role == "assistant" and m.model]
            return (earlier[-1].provider, earlier[-1].model) if earlier else (None, None)
        return by_entry[source].provider, by_entry[source].model

    def entry_id(self, entry: int) -> Any:
        value = self.state.ids[entry]
        return value if isinstance(value, str) else None


def _messages(ctx: _Context) -> dict[str, list[Any]]:
    """The messages rows as columns (the largest table: built column by column)."""
    info, state, ids, times, active = ctx.info, ctx.state, ctx.state.ids, ctx.times, ctx.tree.active
    messages = state.messages
    n = len(messages)
    entries = [m.entry for m in messages]
    usages = [m.usage or _NO_USAGE for m in messages]
    columns: dict[str, list[Any]] = {
        "file_id": [info.file_id] * n,  # session_id and path come from the files and sessions tables
        "entry_id": [i if (i := ids[e]).__class__ is str else None for e in entries], "entry_index": entries,
        "role": [m.role for m in messages], "provider": [m.provider for m in messages],
        "model": [m.model for m in messages], "timestamp": [times[e] for e in entries],
    }
    for k, name in enumerate(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                              "total_tokens", "cost")):
        columns[name] = [u[k] for u in usages]
    columns["estimate"] = [m.estimate for m in messages]
    columns["on_active_branch"] = [active[e] for e in entries]
    columns["countable"] = [m.countable for m in messages]
    columns["counted"] = [False] * n  # set for the whole corpus after the scan
    columns["usage_key"] = [m.usage_key for m in messages]
    columns["copied"] = [ctx.copied(e) for e in entries] if ctx.copied_before is not None else [False] * n
    return columns


def _after_compaction(ctx: _Context) -> dict[int, int]:
    """Compaction entry → the prompt size of the first assistant message after it on its branch."""
    compaction_entries = {c.entry for c in ctx.state.compactions}
    found: dict[int, int] = {}
    if not compaction_entries:
        return found
    for m in ctx.state.messages:
        if m.role != "assistant" or m.usage is None:
            continue
        node = ctx.tree.parent[m.entry]
        for _ in range(64):
            if node < 0 or (ctx.state.types[node] == "message" and node in ctx.by_entry \
                    and ctx.by_entry[node].role == "assistant"):
                break
            if node in compaction_entries:
                if node not in found:
                    found[node] = _int(m.usage[0] + m.usage[2] + m.usage[3]) or 0
                break
            node = ctx.tree.parent[node]
    return found


def _compactions(ctx: _Context) -> list[tuple[Any, ...]]:
    info, state = ctx.info, ctx.state
    after = _after_compaction(ctx)
    cwd = (state.header or {}).get("cwd")
    rows = []
    for c in state.compactions:
        provider, model = ctx.model_before(c.entry)
        window, reserve = _threshold(cwd, provider, model) if model else (None, None)
        threshold = window - reserve if window is not None and reserve is not None else None
        before = _int(c.tokens_before)
        over = before - threshold if before is not None and threshold is not None else None
        first = c.first_kept
        if isinstance(first, str) and first.startswith("#") and state.ids[c.entry] is None:
            first = None  # a version-1 position: the entry has no id to name
        summary = _usage_columns(c.usage)
        rows.append((info.file_id, ctx.session_id, info.path, ctx.entry_id(c.entry), ctx.times[c.entry], provider,
                     model, before, after.get(c.entry), first if isinstance(first, str) else None, c.summary_chars,
                     window, reserve, threshold, over, summary[4], summary[5], ctx.copied(c.entry)))
    return rows


def _summary_calls(ctx: _Context) -> list[tuple[Any, ...]]:
    rows = []
    for entry, kind, usage in ctx.state.summaries:
        if usage is None:
            continue
        entry_id, when = ctx.entry_id(entry), ctx.state.times[entry]
        key = f"{when}#{entry_id}" if entry_id is not None else f"{ctx.info.path}#{entry}"
        provider, model = ctx.model_before(entry)
        rows.append((ctx.info.file_id, ctx.session_id, ctx.info.path, entry_id, entry, kind, provider, model,
                     ctx.times[entry],
                     *_usage_columns(usage), key))
    return rows


def _add_usage(totals: list[Any], m: Message | None) -> int:
    if m is None or m.role != "assistant":
        return 0
    if m.usage is not None:
        for k in range(6):
            totals[k] += m.usage[k]
    return 1


def _branches(ctx: _Context) -> list[tuple[Any, ...]]:
    """Every tip: the active one with its whole path, an abandoned one with the part off the active path."""
    tree, info, by_entry = ctx.tree, ctx.info, ctx.by_entry
    n = len(tree.parent)
    tips = [i for i in range(n) if tree.children[i] == 0]
    if tree.leaf >= 0 and tree.leaf not in tips:
        tips.append(tree.leaf)
    depth: dict[int, int] = {}  # entries from the root, for the nodes of the active path
    active_path = [i for i in range(n) if tree.active[i]]
    active_totals: list[Any] = [0, 0, 0, 0, 0, 0.0]
    active_assistants = sum(_add_usage(active_totals, by_entry.get(i)) for i in active_path)
    node, steps, path = tree.leaf, 0, []
    while node >= 0 and steps <= n and node not in depth:
        path.append(node)
        depth[node] = -1
        node, steps = tree.parent[node], steps + 1
    for position, node in enumerate(reversed(path)):
        depth[node] = position + 1
    rows = []
    for tip in tips:
        if tip == tree.leaf:
            length = own = len(path)
            fork, totals, assistants = -1, active_totals, active_assistants
        else:
            own, totals, assistants = 0, [0, 0, 0, 0, 0, 0.0], 0
            node, steps = tip, 0
            while node >= 0 and steps <= n and node not in depth:
                own += 1
                assistants += _add_usage(totals, by_entry.get(node))
                node, steps = tree.parent[node], steps + 1
            fork = node if node in depth else -1
            length = own + (depth[fork] if fork >= 0 else 0)
        rows.append((info.file_id, ctx.session_id, info.path, ctx.entry_id(tip), tip == tree.leaf, tip != tree.leaf,
                     length, own, ctx.entry_id(fork) if fork >= 0 else None, ctx.times[tip], assistants, *totals))
    return rows


def _session(ctx: _Context, rows: Rows) -> tuple[Any, ...]:
    state, info = ctx.state, ctx.info
    header = state.header or {}
    counts = {kind if isinstance(kind, str) else "(none)": n for kind, n in Counter(state.types).items()}
    models: dict[str, None] = {}
    providers: dict[str, None] = {}
    own = [0, 0, 0, 0, 0, 0.0]
    copied_cost = 0.0
    roles = Counter(m.role for m in state.messages)
    users, assistants = roles["user"], roles["assistant"]
    for m in state.messages:
        if m.role != "assistant":
            continue
        if m.model is not None:
            models[f"{m.provider}/{m.model}" if m.provider else m.model] = None
        if m.provider is not None:
            providers[m.provider] = None
        if m.usage is None:
            continue
        if ctx.copied(m.entry):
            copied_cost += float(m.usage[5])
        else:
            _add_usage(own, m)
    version = header.get("version")
    damaged = sum(1 for p in state.problems if p[1] == "damaged-line")
    tree = ctx.tree
    leaves = sum(1 for c in tree.children if c == 0)
    abandoned = leaves - (1 if tree.leaf >= 0 and tree.children[tree.leaf] == 0 else 0)
    return (info.file_id, ctx.session_id, info.path, info.project, header.get("cwd"),
            _text(header.get("timestamp")), ctx.last_activity(), header.get("parentSession"),
            _int(version) if _int(version) is not None else 1, state.name, state.first_user, info.size,
            _iso(info.mtime_ms), state.lines, len(state.ids), json.dumps(counts), counts.get("message", 0), users,
            assistants, ", ".join(models), ", ".join(providers),
            ctx.entry_id(tree.leaf) if tree.leaf >= 0 else None, leaves, abandoned, len(state.compactions),
            *_usage_columns(own), copied_cost, damaged)


def _iso(ms: int) -> str:
    import datetime as _dt

    moment = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None if value is None else json.dumps(value)


def derive(state: FileState, info: FileInfo, pending: int = 0) -> Rows:
    """Every table's rows for one file (``pending``: bytes of an unfinished last line)."""
    problems = [(info.file_id, info.path, line, kind, message) for line, kind, message in state.problems]
    if pending:
        problems.append((info.file_id, info.path, state.lines + 1, "unfinished-line",
                         f"{pending:,} bytes without a final newline: a line being written, or torn "
                         "(read when it is complete)"))
    if state.header is None:
        what = state.not_session or "no session header: empty, or not a Pi session file"
        problems.append((info.file_id, info.path, None, "not-a-session", what))
        return Rows([], {}, [], [], [], problems)
    header = state.header
    for key in ("cwd", "parentSession"):
        header[key] = _text(header.get(key))
    ctx = _Context(state, info)
    rows = Rows([], _messages(ctx), _compactions(ctx), _branches(ctx), _summary_calls(ctx), problems)
    rows.sessions.append(_session(ctx, rows))
    return rows
