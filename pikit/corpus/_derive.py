"""The rows of every corpus table for one file, derived from its ``FileState``.

Rows are tuples in the declared column order of ``pikit.corpus._schema`` (timestamps as
epoch milliseconds). The tree is walked iteratively (chains are thousands deep) and every
walk guards against parent cycles.
"""

from __future__ import annotations

import json
import operator
import re
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache, reduce
from itertools import compress, filterfalse, repeat
from typing import Any

from .._context.describe import display_title
from .._format.timestamps import parse_ms
from .._inert import shell_quote
from ._discover import store_of
from ._scan import FileState, Message

__all__ = ["FileInfo", "Rows", "compaction_windows", "derive", "models_fingerprint"]


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
    has_child: set[int]
    leaf: int  # -1: no entries
    active: list[bool]
    path: list[int]  # the active branch, leaf first


_PLAIN = frozenset((str, type(None)))


def _parents(state: FileState, plain_ids: bool) -> list[int]:
    """Each entry's parent as a position (-1: none, or not in the file); ``plain_ids``: every id a string or None."""
    ids, refs = state.ids, state.parents
    n = len(ids)
    if plain_ids and set(map(type, refs)) <= _PLAIN:  # the common case
        at = dict(zip(ids, range(n), strict=True))  # a later duplicate replaces the earlier one, as in Pi
        at.pop(None, None)
        parent = list(map(at.get, refs, repeat(-1, n)))
        if any(map(operator.eq, parent, range(n))):
            parent = [-1 if p == i else p for i, p in enumerate(parent)]
        return parent
    position: dict[str, int] = {}
    for i, entry_id in enumerate(ids):
        if isinstance(entry_id, str):
            position[entry_id] = i
    parent = [-1] * n
    for i, ref in enumerate(refs):
        p = position.get(ref, -1) if isinstance(ref, str) else -1
        parent[i] = -1 if p == i else p
    return parent


def _tree(state: FileState, plain_ids: bool) -> _Tree:
    parent = _parents(state, plain_ids)
    n = len(parent)
    has_child = set(parent)
    has_child.discard(-1)
    leaf = n - 1
    active = [False] * n
    path = []
    node = leaf
    while node >= 0 and not active[node]:  # (a cycle ends at a node already on the path)
        active[node] = True
        path.append(node)
        node = parent[node]
    return _Tree(parent, has_child, leaf, active, path)


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
    """The model's context window (if known) and the reserveTokens Pi would use for it (kept: see
    :func:`compaction_windows`, which asks afresh)."""
    from ..compaction._settings import load_settings
    from ..errors import PikitError
    from ..llm._models import lookup_model

    info = lookup_model(f"{provider}/{model}" if provider else str(model))
    window = info.context_window if info is not None else None  # unknown: NULL, never a guess
    try:  # the project's .pi/settings.json where the session's cwd exists here, else the global file
        project = cwd if isinstance(cwd, str) and cwd else "/nonexistent"
        reserve = load_settings(cwd=project).for_model(f"{provider}/{model}").reserve_tokens
    except (PikitError, OSError, ValueError):  # ValueError: a NUL in the cwd, which names no folder
        reserve = None
    return window, reserve


def compaction_windows(keys: Iterable[tuple[Any, Any, Any]]) -> Iterator[tuple[Any, ...]]:
    """For each ``(cwd, provider, model)``: the key, the window, reserveTokens and the threshold, asked afresh
    (after the user's ``models.json`` or settings changed)."""
    _threshold.cache_clear()
    for cwd, provider, model in keys:
        window, reserve = _threshold(cwd, provider, model)
        yield cwd, provider, model, window, reserve, window - reserve if window is not None and reserve is not None \
            else None


def models_fingerprint() -> str:
    """What the compactions' windows were derived from (see ``pikit.llm._models.facts_fingerprint``)."""
    from ..llm._models import facts_fingerprint

    return facts_fingerprint()


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return int(value) if abs(value) < 2**63 else None


_NO_USAGE = (None,) * 6


def _usage_columns(usage: list[Any] | None) -> Any:
    return _NO_USAGE if usage is None else usage


# An ISO timestamp in the one form Pi writes, with no field that rolls over (day ≤ 28, hour ≤ 23):
# two of them compare as text as they do as instants.
_PLAIN_TIME = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z")


def _earlier(times: list[Any], than: str, than_ms: int) -> list[bool]:
    """For each timestamp, whether it is an instant before ``than`` (an unparseable one is not)."""
    plain = _PLAIN_TIME.fullmatch
    if plain(than):
        return [t < than if t is not None and plain(t) else _earlier_ms(t, than_ms) for t in times]
    return [_earlier_ms(t, than_ms) for t in times]


def _earlier_ms(text: Any, than_ms: int) -> bool:
    ms = parse_ms(text)
    return ms is not None and ms < than_ms


_ITEM = [operator.itemgetter(k) for k in range(6)]
_PROVIDER_MODEL = operator.attrgetter("provider", "model")
_FIELD = {name: operator.attrgetter(name) for name in Message.__struct_fields__}


def _sum_usage(usages: list[list[Any]]) -> list[Any]:
    """Token totals of these usages, and their cost added in order (from 0.0)."""
    if not usages:
        return [0, 0, 0, 0, 0, 0.0]
    columns = list(zip(*usages, strict=True))
    return [*map(sum, columns[:5]), reduce(operator.add, columns[5], 0.0)]


class _Context:
    def __init__(self, state: FileState, info: FileInfo) -> None:
        header = state.header or {}
        self.state, self.info = state, info
        self.session_id = header.get("id")
        self.plain_ids = set(map(type, state.ids)) <= _PLAIN
        self.tree = _tree(state, self.plain_ids)
        times = state.times  # (cast by DuckDB on insert)
        self.times = times if set(map(type, times)) <= {str} else [t if isinstance(t, str) else None for t in times]
        started = parse_ms(header.get("timestamp")) if isinstance(header.get("parentSession"), str) else None
        # per entry, whether it predates the file's header: copied here by a fork or a clone
        self.copied_at = None if started is None else _earlier(self.times, header["timestamp"], started)
        self.entries = list(map(_FIELD["entry"], state.messages))  # (ascending: messages are kept in file order)
        self.roles = list(map(_FIELD["role"], state.messages))
        self.assistants = list(compress(state.messages, map(operator.eq, self.roles, repeat("assistant"))))

    def message_at(self, entry: int) -> Message | None:
        """The message of this entry, if it is one."""
        at = bisect_left(self.entries, entry)
        return self.state.messages[at] if at < len(self.entries) and self.entries[at] == entry else None

    def copied(self, entry: int) -> bool:
        """Whether an entry predates the file's header: copied here by a fork or a clone."""
        return self.copied_at is not None and self.copied_at[entry]

    def last_activity(self) -> Any:
        """The latest entry timestamp (ISO strings of one format compare as text)."""
        times = self.times
        if times is self.state.times and times and set(map(len, times)) == {24} \
                and all(map(str.endswith, times, repeat("Z"))):
            return max(times)  # (every one of Pi's form: a quick path)
        standard = [t for t in times if t is not None and len(t) == 24 and t[-1] == "Z"]
        if standard:
            return max(standard)
        parsed = [(ms, t) for t in self.times if (ms := parse_ms(t)) is not None]
        return max(parsed)[1] if parsed else None

    def model_before(self, entry: int) -> tuple[str | None, str | None]:
        """Provider and model of the last assistant message on the branch up to ``entry``.

        Without one there (a branch summary written where the leaf went back to the start), the
        last assistant message before it in the file: the model that was in use.
        """
        source = _walk_up(self.tree, entry, lambda i: (m := self.message_at(i)) is not None
                          and m.role == "assistant" and m.model is not None)
        found = self.message_at(source) if source >= 0 else None
        if found is None:
            earlier = [m for m in self.state.messages if m.entry < entry and m.role == "assistant" and m.model]
            return (earlier[-1].provider, earlier[-1].model) if earlier else (None, None)
        return found.provider, found.model

    def entry_id(self, entry: int) -> Any:
        value = self.state.ids[entry]
        return value if isinstance(value, str) else None


def _messages(ctx: _Context) -> dict[str, list[Any]]:
    """The messages rows as columns (the largest table: built column by column, in C where it can be)."""
    info, state, ids, times, active = ctx.info, ctx.state, ctx.state.ids, ctx.times, ctx.tree.active
    messages, entries = state.messages, ctx.entries
    n = len(messages)
    usages = [u or _NO_USAGE for u in map(_FIELD["usage"], messages)]
    columns: dict[str, list[Any]] = {
        "file_id": [info.file_id] * n,  # session_id and path come from the files and sessions tables
        "entry_id": list(map(ids.__getitem__, entries)) if ctx.plain_ids
        else [i if (i := ids[e]).__class__ is str else None for e in entries],
        "entry_index": entries, "role": ctx.roles, "provider": list(map(_FIELD["provider"], messages)),
        "model": list(map(_FIELD["model"], messages)), "timestamp": list(map(times.__getitem__, entries)),
    }
    for k, name in enumerate(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                              "total_tokens", "cost")):
        columns[name] = list(map(_ITEM[k], usages))
    columns["estimate"] = list(map(_FIELD["estimate"], messages))
    columns["on_active_branch"] = list(map(active.__getitem__, entries))
    columns["countable"] = list(map(_FIELD["countable"], messages))
    columns["counted"] = columns["countable"]  # until the scan settles which copy of a message counts
    copied = ctx.copied_at
    columns["copied"] = list(map(copied.__getitem__, entries)) if copied is not None else [False] * n
    return columns


def _after_compaction(ctx: _Context) -> dict[int, int]:
    """Compaction entry → the prompt size of the first assistant message after it on its branch."""
    compaction_entries = {c.entry for c in ctx.state.compactions}
    found: dict[int, int] = {}
    if not compaction_entries:
        return found
    types, parent = ctx.state.types, ctx.tree.parent
    assistants = {m.entry for m in ctx.assistants if types[m.entry] == "message"}  # where a walk up stops
    for m in ctx.assistants:
        if m.usage is None:
            continue
        node = parent[m.entry]
        for _ in range(64):
            if node < 0 or node in assistants:
                break
            if node in compaction_entries:
                if node not in found:
                    found[node] = _int(m.usage[0] + m.usage[2] + m.usage[3]) or 0
                break
            node = parent[node]
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


def _branches(ctx: _Context) -> list[tuple[Any, ...]]:
    """Every tip: the active one with its whole path, an abandoned one with the part off the active path."""
    tree, info, parent = ctx.tree, ctx.info, ctx.tree.parent
    n = len(parent)
    tips = list(filterfalse(tree.has_child.__contains__, range(n)))
    if tree.leaf >= 0 and tree.leaf in tree.has_child:
        tips.append(tree.leaf)
    calls, path = ctx.assistants, tree.path
    usages = list(map(_FIELD["usage"], calls))
    on_path = list(compress(usages, map(tree.active.__getitem__, map(_FIELD["entry"], calls))))
    active_totals = _sum_usage(list(filter(None, on_path)))
    usage_of = dict(zip(map(_FIELD["entry"], calls), usages, strict=True))
    depth = dict(zip(reversed(path), range(1, len(path) + 1), strict=True))  # from the root, on the active path
    rows = []
    for tip in tips:
        if tip == tree.leaf:
            length = own = len(path)
            fork, totals, assistants = -1, active_totals, len(on_path)
        else:
            own, found, assistants = 0, [], 0
            node, steps = tip, 0
            while node >= 0 and steps <= n and node not in depth:
                own += 1
                if node in usage_of:
                    assistants += 1
                    if (usage := usage_of[node]) is not None:
                        found.append(usage)
                node, steps = parent[node], steps + 1
            fork = node if node in depth else -1
            length = own + (depth[fork] if fork >= 0 else 0)
            totals = _sum_usage(found)
        rows.append((info.file_id, ctx.session_id, info.path, ctx.entry_id(tip), tip == tree.leaf, tip != tree.leaf,
                     length, own, ctx.entry_id(fork) if fork >= 0 else None, ctx.times[tip], assistants, *totals))
    return rows


def _provider_models(assistants: list[Message]) -> list[tuple[str | None, str | None]]:
    """The (provider, model) pairs of these messages, in the order they first appear."""
    providers = dict.fromkeys(map(_FIELD["provider"], assistants))
    models = dict.fromkeys(map(_FIELD["model"], assistants))
    if len(providers) == 1:  # (the usual case: one of the two is the same throughout)
        return [(next(iter(providers)), model) for model in models]
    if len(models) == 1:
        return [(provider, next(iter(models))) for provider in providers]
    return list(dict.fromkeys(map(_PROVIDER_MODEL, assistants)))


def _session(ctx: _Context, rows: Rows) -> tuple[Any, ...]:
    state, info = ctx.state, ctx.info
    header = state.header or {}
    counts = {kind if isinstance(kind, str) else "(none)": n for kind, n in Counter(state.types).items()}
    assistants = ctx.assistants
    pairs = _provider_models(assistants)
    models = dict.fromkeys(f"{provider}/{model}" if provider else model
                           for provider, model in pairs if model is not None)
    providers = dict.fromkeys(provider for provider, _ in pairs if provider is not None)
    copied = ctx.copied_at
    if copied is None:
        own, copied_cost = _sum_usage(list(filter(None, map(_FIELD["usage"], assistants)))), 0.0
    else:
        used = [(m.entry, u) for m in assistants if (u := m.usage) is not None]
        own = _sum_usage([u for e, u in used if not copied[e]])
        copied_cost = reduce(operator.add, (float(u[5]) for e, u in used if copied[e]), 0.0)
    users = ctx.roles.count("user")
    version = header.get("version")
    damaged = sum(1 for p in state.problems if p[1] == "damaged-line")
    tree = ctx.tree
    leaves = len(tree.parent) - len(tree.has_child)
    abandoned = leaves - (1 if tree.leaf >= 0 and tree.leaf not in tree.has_child else 0)
    store = store_of(info.path)
    name = state.name or state.title
    cwd = header.get("cwd")
    return (info.file_id, ctx.session_id, info.path, _resume(info.path, store), store, cwd or info.project,
            info.project, cwd, _text(header.get("timestamp")), ctx.last_activity(), header.get("parentSession"),
            _int(version) if _int(version) is not None else 1, name,
            display_title(name, info.path, state.first_user, session_id=ctx.session_id), state.first_user, info.size,
            _iso(info.mtime_ms), state.lines, len(state.ids), json.dumps(counts), counts.get("message", 0), users,
            len(assistants), ", ".join(models), ", ".join(providers),
            ctx.entry_id(tree.leaf) if tree.leaf >= 0 else None, leaves, abandoned, len(state.compactions),
            *_usage_columns(own), copied_cost, damaged, None)  # (migrated_to: set once the corpus is counted)


def _resume(path: str, store: str | None) -> str | None:
    """The command that resumes a session (omp's with omp, whose first line Pi does not read); None for a URL."""
    if "://" in path:
        return None
    return f"{'omp' if store == 'omp' else 'pi'} --session {shell_quote(path)}"


# The entry types of Pi's format (spec: session-format.md); an entry of another type is kept in the tree, unread.
PI_ENTRY_TYPES = frozenset(("message", "model_change", "thinking_level_change", "usage", "compaction",
                            "branch_summary", "context_edit", "custom", "custom_message", "label", "session_info"))


def _unread(state: FileState, info: FileInfo) -> list[tuple[Any, ...]]:
    """One problem per entry type that is not Pi's (another agent's: omp's ``ttsr_injection``, …), with its count."""
    counts = Counter(t for t in state.types if t.__class__ is str and t not in PI_ENTRY_TYPES)
    return [(info.file_id, info.path, None, "unread-type",
             f"{n:,} {'entry' if n == 1 else 'entries'} of type {json.dumps(kind)}: not a type of Pi's format, "
             "kept in the tree unread") for kind, n in sorted(counts.items())]


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}Z"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None if value is None else json.dumps(value)


def derive(state: FileState, info: FileInfo, pending: int = 0) -> Rows:
    """Every table's rows for one file (``pending``: bytes of an unfinished last line).

    Of a state read for usage alone (``state.usage_only``): the messages rows of its assistant
    messages, its summary calls and problems, and its sessions row as far as a usage report
    reads it (ids, paths, header, usage); its other rows wait for the file's full read.
    """
    problems = [(info.file_id, info.path, line, kind, message) for line, kind, message in state.problems]
    if pending:
        problems.append((info.file_id, info.path, state.lines + 1, "unfinished-line",
                         f"{pending:,} bytes without a final newline: a line being written, or torn "
                         "(read when it is complete)"))
    if state.header is None:
        what = state.not_session or "no session header: empty, or not a Pi session file"
        problems.append((info.file_id, info.path, None, "not-a-session", what))
        return Rows([], {}, [], [], [], problems)
    problems.extend(_unread(state, info))
    header = state.header
    for key in ("cwd", "parentSession"):
        header[key] = _text(header.get(key))
    ctx = _Context(state, info)
    if state.usage_only:  # (what a usage report reads: the rest comes with the file's full read)
        rows = Rows([], _messages(ctx), [], [], _summary_calls(ctx), problems)
    else:
        rows = Rows([], _messages(ctx), _compactions(ctx), _branches(ctx), _summary_calls(ctx), problems)
    rows.sessions.append(_session(ctx, rows))
    return rows
