"""pandas DataFrames over sessions, projections, compactions and what-if replays.

Every frame's columns are declared as data: a module-level tuple of :class:`Column`
(name, dtype, description) per frame, collected in :data:`FRAMES`. The builders return
exactly those columns, in that order, with those dtypes (nullable pandas dtypes, so a
missing value is ``<NA>`` rather than a silently changed type), which lets documentation
and tests enumerate them::

    >>> from pikit import frames
    >>> frames.column_table("messages")          # name / dtype / description
    >>> df = frames.messages(session)             # one row per model-visible message

This module imports pandas at the top; ``import pikit`` never imports it (pandas is an
optional dependency: ``pip install 'pikit[frames]'``).

A ``leaf`` argument of ``None`` means the session's current leaf (``session.leaf_id``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .counting import Counter, get_counter, message_text
from .describe import entry_kind, entry_preview, message_preview
from .entry import Entry
from .preparation import prepare_compaction
from .projection import Projection, entry_messages, project_path, replay_system
from .session import Session
from .simulate import SimulationResult, threshold_table
from .tokens import estimate_chars, estimate_tokens, message_usage, usage_total

__all__ = [
    "BRANCH_COLUMNS",
    "CALIBRATION_COLUMNS",
    "COMPACTION_COLUMNS",
    "CONTEXT_TRACE_COLUMNS",
    "ENTRY_COLUMNS",
    "FRAMES",
    "MESSAGE_COLUMNS",
    "SIMULATION_EVENT_COLUMNS",
    "SIMULATION_TOTALS_COLUMNS",
    "SIMULATION_TRACE_COLUMNS",
    "SWEEP_COLUMNS",
    "Column",
    "branches",
    "calibration",
    "column_table",
    "compactions",
    "context_trace",
    "entries",
    "message_segments",
    "messages",
    "shorten",
    "simulation_events",
    "simulation_totals",
    "simulation_trace",
    "sweep_keep_recent",
]

PREVIEW_WIDTH = 80


@dataclass(frozen=True)
class Column:
    """One declared DataFrame column.

    ``dtype`` is a pandas dtype name: ``"string"``, ``"Int64"``, ``"Float64"``,
    ``"boolean"`` (all nullable), ``"datetime64[ms, UTC]"`` or ``"object"`` (lists).
    """

    name: str
    dtype: str
    description: str


def _cols(*specs: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*spec) for spec in specs)


_RUN_COLUMNS = (
    ("run", "Int64", "position of the replay in the list of results given (0 for a single result)"),
    ("context_window", "Int64", "context window of the replay, in tokens"),
    ("reserve_tokens", "Int64", "reserveTokens of the replay"),
    ("keep_recent_tokens", "Int64", "keepRecentTokens of the replay"),
    ("threshold", "Int64", "context_window - reserve_tokens: Pi compacts when the context is larger"),
)

ENTRY_COLUMNS = _cols(
    ("id", "string", "entry id"),
    ("parent_id", "string", "parent entry id (<NA> for a root)"),
    ("type", "string", "entry type (message, compaction, label, ...)"),
    ("role", "string", "message role for a message entry, else <NA>"),
    ("kind", "string", "type, or message/role for messages"),
    ("timestamp", "datetime64[ms, UTC]", "entry timestamp (<NaT> when it does not parse)"),
    ("line", "Int64", "line number in the file (the header is line 1)"),
    ("depth", "Int64", "number of ancestors (0 for a root; <NA> for an entry without a usable id)"),
    ("on_active_branch", "boolean", "whether the entry is on the path root → leaf"),
    ("is_leaf", "boolean", "whether the entry is the leaf"),
    ("label", "string", "the entry's resolved label, if any"),
    ("children", "Int64", "number of child entries"),
    ("estimate", "Int64", "Pi's token estimate of the messages the entry projects to (edits not applied)"),
    ("bytes", "Int64", "size of the entry's JSON line in bytes"),
    ("preview", "string", "one-line gist of the entry, shortened"),
)

MESSAGE_COLUMNS = _cols(
    ("index", "Int64", "position in the projected context (0-based)"),
    ("role", "string", "message role"),
    ("source_id", "string", "id of the entry that produced the message"),
    ("source_type", "string", "type of that entry"),
    ("status", "string", "kept / replaced (by a context edit) / summary (the head compaction)"),
    ("segment", "string", "system / summary / kept (kept range of the head compaction) / new (after it)"),
    ("estimate", "Int64", "Pi's token estimate (ceil(UTF-16 chars / 4))"),
    ("cumulative_estimate", "Int64", "running sum of the estimates up to and including this message"),
    ("tokens", "Int64", "real token count of the message text (tiktoken); <NA> without a counter"),
    ("chars", "Int64", "UTF-16 code units behind the estimate (images count 4800)"),
    ("usage_input", "Int64", "recorded usage.input (assistant messages)"),
    ("usage_output", "Int64", "recorded usage.output"),
    ("usage_cache_read", "Int64", "recorded usage.cacheRead"),
    ("usage_cache_write", "Int64", "recorded usage.cacheWrite"),
    ("usage_total", "Int64", "usage size: totalTokens, or the sum of the parts when that is 0"),
    ("usage_usable", "boolean", "whether Pi's context size rule may use this usage"),
    ("stop_reason", "string", "assistant stopReason"),
    ("model", "string", "provider/model of an assistant message"),
    ("tool_calls", "Int64", "number of tool calls in an assistant message"),
    ("tool_name", "string", "toolName of a tool result"),
    ("is_error", "boolean", "isError of a tool result"),
    ("timestamp", "datetime64[ms, UTC]", "the message's own timestamp"),
    ("preview", "string", "one-line gist of the message, shortened"),
)

COMPACTION_COLUMNS = _cols(
    ("id", "string", "compaction entry id"),
    ("parent_id", "string", "the leaf it was appended to"),
    ("timestamp", "datetime64[ms, UTC]", "entry timestamp"),
    ("branch_index", "Int64", "position of the compaction on the branch"),
    ("previous_id", "string", "the compaction before it on the branch (lineage), if any"),
    ("first_kept_entry_id", "string", "firstKeptEntryId: where the kept part begins"),
    ("first_kept_found", "boolean", "whether firstKeptEntryId is an entry before it on the branch"),
    ("tokens_before", "Int64", "tokensBefore as recorded in the entry"),
    ("tokens_before_projected", "Int64", "context size of the branch just before it, recomputed by pikit"),
    ("tokens_after", "Int64", "context size of the branch right after it (Pi does not record this)"),
    ("tokens_removed", "Int64", "tokens_before - tokens_after"),
    ("summarized_entries", "Int64", "branch entries the summary replaced"),
    ("kept_entries", "Int64", "branch entries kept verbatim (from firstKeptEntryId up to it)"),
    ("summary_chars", "Int64", "summary length in UTF-16 code units"),
    ("summary_tokens", "Int64", "Pi's estimate of the summary message"),
    ("read_files", "Int64", "number of files in details.readFiles"),
    ("modified_files", "Int64", "number of files in details.modifiedFiles"),
    ("new_read_files", "Int64", "read files not listed by the previous compaction"),
    ("new_modified_files", "Int64", "modified files not listed by the previous compaction"),
    ("from_hook", "boolean", "whether a user hook wrote the summary"),
    ("has_system_message", "boolean", "whether the entry carries the replayed system message"),
    ("usage_total", "Int64", "tokens the summarizer call(s) used, when recorded"),
)

BRANCH_COLUMNS = _cols(
    ("leaf_id", "string", "the tip of the branch (an entry without children), or the current leaf"),
    ("is_active", "boolean", "whether this is the session's current leaf"),
    ("is_tip", "boolean", "whether the entry has no children"),
    ("length", "Int64", "entries on the path root → leaf"),
    ("fork_id", "string", "common ancestor with the current leaf (<NA> for the active branch)"),
    ("own_entries", "Int64", "entries after the fork point (the whole path for the active branch)"),
    ("label", "string", "label of the leaf, else of the nearest labelled entry after the fork point"),
    ("has_branch_summary", "boolean", "whether a branch_summary entry is on the path"),
    ("compactions", "Int64", "compaction entries on the path"),
    ("tokens", "Int64", "context size at the leaf (Pi's rule)"),
    ("last_timestamp", "datetime64[ms, UTC]", "timestamp of the leaf entry"),
    ("last_user", "string", "the last user message on the path, shortened"),
)

CONTEXT_TRACE_COLUMNS = _cols(
    ("branch_index", "Int64", "position of the entry on the branch"),
    ("entry_id", "string", "the entry"),
    ("kind", "string", "check (an assistant message: where Pi tests the threshold) or compaction"),
    ("tokens_before", "Int64", "context size before a compaction at this point (= tokens for checks)"),
    ("tokens", "Int64", "context size by Pi's rule after this entry"),
    ("estimate", "Int64", "context size by estimates only (replayed system prompt + other messages)"),
    ("usage_total", "Int64", "usage recorded on this assistant message, if any"),
    ("size_source", "string", "how tokens was obtained: usage, estimate (no usage) or stale (edit/compaction)"),
    ("compacted", "boolean", "whether the context was compacted here"),
)

SIMULATION_EVENT_COLUMNS = _cols(
    *_RUN_COLUMNS,
    ("after_entry_id", "string", "the assistant message after which the threshold was crossed"),
    ("branch_index", "Int64", "its position on the original branch"),
    ("tokens_before", "Int64", "simulated context size when the check fired"),
    ("tokens_after", "Int64", "simulated context size after the compaction"),
    ("tokens_removed", "Int64", "tokens_before - tokens_after"),
    ("first_kept_entry_id", "string", "where the simulated compaction cut"),
    ("is_split_turn", "boolean", "whether the cut split a turn"),
    ("summarized_messages", "Int64", "messages folded into the summary (turn prefix included)"),
    ("summary_tokens", "Int64", "Pi's estimate of the summary written"),
)

SIMULATION_TRACE_COLUMNS = _cols(
    *_RUN_COLUMNS,
    ("branch_index", "Int64", "position of the check point (an assistant message) on the branch"),
    ("entry_id", "string", "the assistant message"),
    ("tokens_before", "Int64", "simulated context size at the check"),
    ("tokens", "Int64", "simulated context size after any compaction there"),
    ("compacted", "boolean", "whether the replay compacted here"),
)

SIMULATION_TOTALS_COLUMNS = _cols(
    *_RUN_COLUMNS,
    ("compactions", "Int64", "compactions the replay performed"),
    ("skipped", "Int64", "checks that fired but found nothing to compact"),
    ("checks", "Int64", "check points (assistant messages) replayed"),
    ("peak_tokens", "Int64", "largest simulated context size at a check"),
    ("final_tokens", "Int64", "simulated context size at the end of the branch"),
    ("tokens_removed", "Int64", "sum of tokens_before - tokens_after over the compactions"),
    ("first_trigger_entry_id", "string", "the assistant message where the first compaction fired"),
    ("first_trigger_index", "Int64", "its position on the branch"),
)

CALIBRATION_COLUMNS = _cols(
    ("index", "Int64", "position in the projected context"),
    ("source_id", "string", "entry that produced the message"),
    ("role", "string", "message role"),
    ("turn", "Int64", "usage turn: the messages after one usable usage up to and including the next"),
    ("chars", "Int64", "UTF-16 code units behind the estimate"),
    ("estimate", "Int64", "Pi's estimate, ceil(chars / 4)"),
    ("tokens", "Int64", "real token count (the counter's encoding)"),
    ("ratio", "Float64", "estimate / tokens (<NA> when tokens is 0); 1 means the heuristic is exact"),
    ("cjk_share", "Float64", "share of the text's characters that are CJK"),
    ("json_like", "boolean", "whether the text is mostly JSON (tool-call arguments, JSON output)"),
    ("images", "Int64", "image blocks (both measures count them as 1200 tokens)"),
    ("outlier", "boolean", "whether the estimate is off by more than the tolerance factor"),
    ("outlier_reason", "string", "cjk, json, non-ascii or other (only for outliers)"),
    ("usage_total", "Int64", "usage recorded on this message (assistant)"),
    ("turn_estimate", "Int64", "sum of the estimates of the turn"),
    ("turn_tokens", "Int64", "sum of the real counts of the turn"),
    ("turn_usage_delta", "Int64", "growth of the recorded usage over the turn (<NA> when not comparable)"),
    ("preview", "string", "one-line gist, shortened"),
)

SWEEP_COLUMNS = _cols(
    ("keep_recent_tokens", "Int64", "the keepRecentTokens value tried"),
    ("compactable", "boolean", "whether there is anything to compact with this value"),
    ("first_kept_entry_id", "string", "firstKeptEntryId: where the kept part begins"),
    ("first_kept_index", "Int64", "its position in the projected entry list"),
    ("is_split_turn", "boolean", "whether the cut falls inside a turn"),
    ("turn_start_entry_id", "string", "start of the split turn"),
    ("summarized_messages", "Int64", "messages to summarize (history)"),
    ("turn_prefix_messages", "Int64", "messages of the split turn's beginning"),
    ("summarized_entries", "Int64", "context entries folded into the summary"),
    ("kept_entries", "Int64", "context entries kept verbatim"),
    ("summarized_tokens", "Int64", "estimate of the summarized and turn-prefix messages"),
    ("kept_tokens", "Int64", "estimate of the kept entries"),
    ("tokens_before", "Int64", "context size before the compaction (the same for every value)"),
    ("read_files", "Int64", "files in the summary's <read-files>"),
    ("modified_files", "Int64", "files in the summary's <modified-files>"),
)

FRAMES: dict[str, tuple[Column, ...]] = {
    "entries": ENTRY_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "compactions": COMPACTION_COLUMNS,
    "branches": BRANCH_COLUMNS,
    "context_trace": CONTEXT_TRACE_COLUMNS,
    "simulation_events": SIMULATION_EVENT_COLUMNS,
    "simulation_trace": SIMULATION_TRACE_COLUMNS,
    "simulation_totals": SIMULATION_TOTALS_COLUMNS,
    "calibration": CALIBRATION_COLUMNS,
    "sweep_keep_recent": SWEEP_COLUMNS,
}
"""Frame name (the builder function's name) → its declared columns."""


def column_table(frame: str) -> pd.DataFrame:
    """The declared columns of ``frame`` as a DataFrame (name, dtype, description)."""
    if frame not in FRAMES:
        raise KeyError(f"unknown frame {frame!r}; known frames: {', '.join(FRAMES)}")
    return pd.DataFrame([{"name": c.name, "dtype": c.dtype, "description": c.description}
                         for c in FRAMES[frame]])


# ---------------------------------------------------------------------------------- helpers
def shorten(text: Any, width: int = PREVIEW_WIDTH) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``width`` characters with ``…``."""
    one_line = " ".join(str(text).split()) if text is not None else ""
    if width < 2 or len(one_line) <= width:
        return one_line[:max(width, 0)] if width < 2 else one_line
    return one_line[:width - 1].rstrip() + "…"


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    if isinstance(value, float) and math.isinf(value):
        return None
    return int(value)


def _series(values: list[Any], dtype: str) -> pd.Series:
    if dtype.startswith("datetime64"):
        ms = pd.array([_int(v) for v in values], dtype="Int64")
        return pd.Series(pd.to_datetime(pd.Series(ms), unit="ms", utc=True)).astype(dtype)
    if dtype == "object":
        return pd.Series(values, dtype=object)
    if dtype == "string":
        values = [None if v is None else str(v) for v in values]
    elif dtype == "Int64":
        values = [_int(v) for v in values]
    elif dtype == "Float64":
        values = [None if v is None or (isinstance(v, float) and v != v) else float(v) for v in values]
    elif dtype == "boolean":
        values = [None if v is None else bool(v) for v in values]
    return pd.Series(pd.array(values, dtype=dtype))


def _frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> pd.DataFrame:
    """A DataFrame with exactly the declared columns (missing keys become NA)."""
    data = {c.name: _series([row.get(c.name) for row in rows], c.dtype) for c in columns}
    return pd.DataFrame(data, columns=[c.name for c in columns])


def _leaf(session: Session, leaf: Any) -> Any:
    return session.leaf_id if leaf is None else leaf


def _branch(session: Session, leaf: Any) -> list[Entry]:
    leaf_id = _leaf(session, leaf)
    return session.branch(leaf_id) if leaf_id is not None else []


def _depths(session: Session) -> dict[Any, int]:
    """Number of ancestors of every reachable id, computed without recursion."""
    by_id = session.by_id
    depth: dict[Any, int] = {}
    for start in by_id:
        if start in depth:
            continue
        chain: list[Any] = []
        on_chain: set[Any] = set()
        current: Any = start
        base = -1
        while True:
            if current in depth:
                base = depth[current]
                break
            if current in on_chain:  # a parent cycle: treat the repeated node as a root
                base = -1
                break
            chain.append(current)
            on_chain.add(current)
            parent = by_id[current].parent_id
            if parent is None or parent == current or not _hashable(parent) or parent not in by_id:
                break
            current = parent
        for node in reversed(chain):
            base += 1
            depth[node] = base
    return depth


def _child_counts(session: Session) -> dict[Any, int]:
    """Number of children of each entry id, as the tree counts them (orphans are roots)."""
    by_id = session.by_id
    counts: dict[Any, int] = {}
    for entry in session.entries:
        entry_id, parent = entry.id, entry.parent_id
        if not _hashable(entry_id) or entry_id not in by_id:
            continue
        if _hashable(parent) and parent != entry_id and parent in by_id:
            counts[parent] = counts.get(parent, 0) + 1
    return counts


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _entry_estimate(entry: Entry) -> int:
    return sum(estimate_tokens(m) for m in entry_messages(entry))


def _model_name(message: Mapping[str, Any]) -> str | None:
    provider, model = message.get("provider"), message.get("model")
    if provider is None and model is None:
        return None
    return f"{provider}/{model}" if provider is not None else str(model)


# ---------------------------------------------------------------------------------- entries
def entries(session: Session, leaf: Any = None) -> pd.DataFrame:
    """One row per entry in file order (see :data:`ENTRY_COLUMNS`).

    ``on_active_branch`` and ``is_leaf`` refer to ``leaf`` (default: the current leaf).
    """
    depths = _depths(session)
    child_counts = _child_counts(session)
    active = {e.id for e in _branch(session, leaf)}
    leaf_id = _leaf(session, leaf)
    rows: list[dict[str, Any]] = []
    for entry in session.entries:
        known = _hashable(entry.id) and entry.id in session.by_id
        rows.append({
            "id": entry.id, "parent_id": entry.parent_id, "type": entry.type, "role": entry.role,
            "kind": entry_kind(entry), "timestamp": entry.time_ms, "line": entry.line,
            "depth": depths.get(entry.id) if known else None,
            "on_active_branch": entry.id in active if known else False,
            "is_leaf": known and entry.id == leaf_id,
            "label": session.labels.get(entry.id) if known else None,
            "children": child_counts.get(entry.id, 0) if known else 0,
            "estimate": _entry_estimate(entry), "bytes": len(entry.raw),
            "preview": shorten(entry_preview(entry)),
        })
    return _frame(rows, ENTRY_COLUMNS)


# ---------------------------------------------------------------------------------- messages
def _projection(source: Session | Projection, leaf: Any) -> Projection:
    if isinstance(source, Projection):
        if leaf is not None:
            raise ValueError("leaf applies to a Session; a Projection is already at its leaf")
        return source
    if isinstance(source, Session):
        return source.context(_leaf(source, leaf))
    raise TypeError(f"expected a Session or a Projection, got {type(source).__name__}")


def message_segments(projection: Projection) -> list[str]:
    """For each projected message: ``system``, ``summary``, ``kept`` or ``new``
    (:attr:`pikit.projection.Projection.segments`)."""
    return list(projection.segments)


def messages(source: Session | Projection, leaf: Any = None, counter: Counter | None = None) -> pd.DataFrame:
    """One row per model-visible message of a projection (see :data:`MESSAGE_COLUMNS`).

    ``source`` is a :class:`Session` (projected at ``leaf``) or a :class:`Projection`.
    With a ``counter`` (:func:`pikit.counting.get_counter`), ``tokens`` holds real counts.
    """
    projection = _projection(source, leaf)
    segments = message_segments(projection)
    counts = counter.count_messages(projection.messages) if counter is not None else None
    rows: list[dict[str, Any]] = []
    index = 0
    running = 0
    for pe in projection.entries:
        for message in pe.messages:
            estimate = projection.estimates[index]
            running += estimate
            role = message.get("role")
            usage = message.get("usage") if role == "assistant" else None
            usage = usage if isinstance(usage, Mapping) else None
            content = message.get("content")
            rows.append({
                "index": index, "role": role, "source_id": pe.entry.id, "source_type": pe.entry.type,
                "status": pe.status, "segment": segments[index], "estimate": estimate,
                "cumulative_estimate": running, "tokens": counts[index] if counts is not None else None,
                "chars": estimate_chars(message),
                "usage_input": usage.get("input") if usage else None,
                "usage_output": usage.get("output") if usage else None,
                "usage_cache_read": usage.get("cacheRead") if usage else None,
                "usage_cache_write": usage.get("cacheWrite") if usage else None,
                "usage_total": usage_total(usage) if usage else None,
                "usage_usable": message_usage(message) is not None if role == "assistant" else None,
                "stop_reason": message.get("stopReason") if role == "assistant" else None,
                "model": _model_name(message) if role == "assistant" else None,
                "tool_calls": sum(1 for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall")
                if role == "assistant" and isinstance(content, list) else None,
                "tool_name": message.get("toolName") if role == "toolResult" else None,
                "is_error": message.get("isError") if role == "toolResult" else None,
                "timestamp": _int(message.get("timestamp")),
                "preview": shorten(message_preview(message)),
            })
            index += 1
    df = _frame(rows, MESSAGE_COLUMNS)
    if counter is not None:
        df.attrs["counter"] = counter.name
        df.attrs["counter_notice"] = counter.notice
    return df


# ---------------------------------------------------------------------------------- compactions
def _file_list(details: Any, key: str) -> list[Any]:
    values = details.get(key) if isinstance(details, Mapping) else None
    return values if isinstance(values, list) else []


def compactions(session: Session, leaf: Any = None) -> pd.DataFrame:
    """Every compaction on the branch at ``leaf``, oldest first (see :data:`COMPACTION_COLUMNS`).

    ``tokens_after`` is the context size of the branch projected up to and including the
    compaction; ``tokens_before_projected`` the same up to the entry before it.
    """
    branch = _branch(session, leaf)
    rows: list[dict[str, Any]] = []
    previous: Entry | None = None
    for index, entry in enumerate(branch):
        if entry.type != "compaction":
            continue
        data = entry.data
        before_path = branch[:index]
        after = project_path(branch[:index + 1])
        first_kept = data.get("firstKeptEntryId")
        kept = len(after.entries) - 1 if after.compaction is entry else 0
        summary = data.get("summary")
        details = data.get("details")
        read, modified = _file_list(details, "readFiles"), _file_list(details, "modifiedFiles")
        prev_details = previous.data.get("details") if previous is not None else None
        prev_read = set(map(str, _file_list(prev_details, "readFiles")))
        prev_modified = set(map(str, _file_list(prev_details, "modifiedFiles")))
        usage = data.get("usage")
        tokens_after = after.tokens
        recorded = _int(data.get("tokensBefore"))
        rows.append({
            "id": entry.id, "parent_id": entry.parent_id, "timestamp": entry.time_ms, "branch_index": index,
            "previous_id": previous.id if previous is not None else None,
            "first_kept_entry_id": first_kept,
            "first_kept_found": any(e.id == first_kept for e in before_path),
            "tokens_before": recorded,
            "tokens_before_projected": project_path(before_path).tokens,
            "tokens_after": tokens_after,
            "tokens_removed": recorded - tokens_after if recorded is not None else None,
            "summarized_entries": len(after.summarized_ids),
            "kept_entries": kept,
            "summary_chars": estimate_chars({"role": "compactionSummary", "summary": summary}),
            "summary_tokens": estimate_tokens({"role": "compactionSummary", "summary": summary}),
            "read_files": len(read), "modified_files": len(modified),
            "new_read_files": sum(1 for f in read if str(f) not in prev_read),
            "new_modified_files": sum(1 for f in modified if str(f) not in prev_modified),
            "from_hook": bool(data.get("fromHook")),
            "has_system_message": bool(data.get("systemMessage")),
            "usage_total": usage_total(usage) if isinstance(usage, Mapping) else None,
        })
        previous = entry
    return _frame(rows, COMPACTION_COLUMNS)


# ---------------------------------------------------------------------------------- branches
def _last_user(path: Sequence[Entry]) -> str | None:
    for entry in reversed(path):
        if entry.type == "message" and entry.role == "user":
            return shorten(message_preview(entry.message or {}))
    return None


def branches(session: Session) -> pd.DataFrame:
    """One row per branch tip (an entry without children) plus the current leaf if it is not a tip.

    See :data:`BRANCH_COLUMNS`. The fork point is the common ancestor with the current leaf.
    """
    leaf_id = session.leaf_id
    active_path = _branch(session, None)
    active_index = {e.id: i for i, e in enumerate(active_path)}
    child_counts = _child_counts(session)
    tips = [e.id for e in session.entries if _hashable(e.id) and session.by_id.get(e.id) is e
            and not child_counts.get(e.id)]
    if leaf_id is not None and leaf_id in session.by_id and leaf_id not in tips:
        tips.append(leaf_id)
    rows: list[dict[str, Any]] = []
    for tip in tips:
        path = session.branch(tip)
        is_active = tip == leaf_id
        fork_index = -1
        fork_id = None
        if not is_active and active_path:
            for i in range(len(path) - 1, -1, -1):
                if path[i].id in active_index:
                    fork_index, fork_id = i, path[i].id
                    break
        own = path if is_active else path[fork_index + 1:]
        label = next((session.labels[e.id] for e in reversed(own) if e.id in session.labels), None)
        rows.append({
            "leaf_id": tip, "is_active": is_active, "is_tip": not child_counts.get(tip), "length": len(path),
            "fork_id": fork_id, "own_entries": len(own), "label": label,
            "has_branch_summary": any(e.type == "branch_summary" for e in path),
            "compactions": sum(1 for e in path if e.type == "compaction"),
            "tokens": project_path(path, tip).tokens,
            "last_timestamp": session.by_id[tip].time_ms, "last_user": _last_user(path),
        })
    return _frame(rows, BRANCH_COLUMNS)


# ---------------------------------------------------------------------------------- context trace
class _SizeTracker:
    """The context size of a growing branch, by Pi's rule, updated entry by entry.

    Appending an ordinary entry only appends its messages; a ``context_edit``, a
    ``compaction`` or an entry that an earlier edit targets makes it project the prefix
    again. The result equals ``project_path(prefix).tokens`` at every step.
    """

    def __init__(self) -> None:
        self.path: list[Entry] = []
        self.first_position: dict[Any, int] = {}
        self.edit_targets: set[Any] = set()
        self.invalidation = -1
        self.system_messages: list[Mapping[str, Any]] = []
        self.system_estimate = 0
        self.other_estimate = 0
        self.usage_value: int | None = None
        self.usage_position = -1
        self.trailing = 0

    def add(self, entry: Entry) -> None:
        position = len(self.path)
        self.path.append(entry)
        if _hashable(entry.id):
            self.first_position.setdefault(entry.id, position)
        if entry.type in ("context_edit", "compaction"):
            self.invalidation = position
            if entry.type == "context_edit":
                target = entry.data.get("targetId")
                if _hashable(target):
                    self.edit_targets.add(target)
            self._rebuild()
            return
        if entry.id in self.edit_targets:
            self._rebuild()
            return
        for message in entry_messages(entry):
            self._append(message, entry.id)

    def _append(self, message: Mapping[str, Any], source: Any) -> None:
        estimate = estimate_tokens(message)
        if message.get("role") == "system":
            self.system_messages.append(message)
            system = replay_system(self.system_messages)
            self.system_estimate = estimate_tokens(system) if system is not None else 0
        else:
            self.other_estimate += estimate
        usage = message_usage(message)
        if usage is not None:
            self.usage_value = usage_total(usage)
            self.usage_position = self.first_position.get(source, -1)
            self.trailing = 0
        else:
            self.trailing += estimate

    def _rebuild(self) -> None:
        projection = project_path(self.path)
        self.system_messages = [m for m in projection.messages if m.get("role") == "system"]
        system = projection.system_message
        self.system_estimate = estimate_tokens(system) if system is not None else 0
        self.other_estimate = sum(e for m, e in zip(projection.messages, projection.estimates, strict=True)
                                  if m.get("role") != "system")
        self.usage_value, self.usage_position, self.trailing = None, -1, 0
        for i in range(len(projection.messages) - 1, -1, -1):
            usage = message_usage(projection.messages[i])
            if usage is not None:
                self.usage_value = usage_total(usage)
                self.usage_position = self.first_position.get(projection.sources[i], -1)
                self.trailing = sum(projection.estimates[i + 1:])
                break

    @property
    def estimate(self) -> int:
        return self.system_estimate + self.other_estimate

    @property
    def source(self) -> str:
        if self.usage_value is None:
            return "estimate"
        return "usage" if self.usage_position > self.invalidation else "stale"

    @property
    def tokens(self) -> int:
        if self.usage_value is not None and self.usage_position > self.invalidation:
            return self.usage_value + self.trailing
        return self.estimate


def context_trace(session: Session, leaf: Any = None) -> pd.DataFrame:
    """The recorded context size along the branch (see :data:`CONTEXT_TRACE_COLUMNS`).

    One row per check point (each assistant message, where Pi tests the threshold) and per
    compaction entry (``tokens_before`` → ``tokens``): the real history's sawtooth, in the
    same shape as :func:`simulation_trace` so both can be drawn together.
    """
    tracker = _SizeTracker()
    rows: list[dict[str, Any]] = []
    for index, entry in enumerate(_branch(session, leaf)):
        before = tracker.tokens
        tracker.add(entry)
        if entry.type == "compaction":
            rows.append({"branch_index": index, "entry_id": entry.id, "kind": "compaction", "tokens_before": before,
                         "tokens": tracker.tokens, "estimate": tracker.estimate, "size_source": tracker.source,
                         "compacted": True})
        elif entry.type == "message" and entry.role == "assistant":
            message = entry.message or {}
            usage = message.get("usage")
            rows.append({"branch_index": index, "entry_id": entry.id, "kind": "check",
                         "tokens_before": tracker.tokens, "tokens": tracker.tokens, "estimate": tracker.estimate,
                         "usage_total": usage_total(usage) if isinstance(usage, Mapping) else None,
                         "size_source": tracker.source, "compacted": False})
    return _frame(rows, CONTEXT_TRACE_COLUMNS)


# ---------------------------------------------------------------------------------- simulations
def _results(results: SimulationResult | Iterable[SimulationResult]) -> list[SimulationResult]:
    if isinstance(results, SimulationResult):
        return [results]
    out = list(results)
    for r in out:
        if not isinstance(r, SimulationResult):
            raise TypeError(f"expected SimulationResult objects, got {type(r).__name__}")
    return out


def _run_info(run: int, result: SimulationResult) -> dict[str, Any]:
    return {"run": run, "context_window": result.context_window, "reserve_tokens": result.settings.reserve_tokens,
            "keep_recent_tokens": result.settings.keep_recent_tokens, "threshold": result.threshold}


def simulation_events(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """The simulated compactions of one or several replays (see :data:`SIMULATION_EVENT_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for run, result in enumerate(_results(results)):
        info = _run_info(run, result)
        for record in result.event_records():
            rows.append({**info, **record, "tokens_removed": record["tokens_before"] - record["tokens_after"]})
    return _frame(rows, SIMULATION_EVENT_COLUMNS)


def simulation_trace(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """The check points of one or several replays (see :data:`SIMULATION_TRACE_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for run, result in enumerate(_results(results)):
        info = _run_info(run, result)
        for record in result.trace_records():
            rows.append({**info, "branch_index": record["branch_index"], "entry_id": record["entry_id"],
                         "tokens_before": record["tokens_before_check"], "tokens": record["tokens"],
                         "compacted": record["compacted"]})
    return _frame(rows, SIMULATION_TRACE_COLUMNS)


def simulation_totals(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """One row per replay: settings, threshold, compactions, peak (see :data:`SIMULATION_TOTALS_COLUMNS`)."""
    items = _results(results)
    rows: list[dict[str, Any]] = []
    for run, (result, row) in enumerate(zip(items, threshold_table(items), strict=True)):
        rows.append({**_run_info(run, result), "compactions": row["compactions"], "skipped": row["skipped"],
                     "checks": row["checks"], "peak_tokens": row["peakTokens"], "final_tokens": row["finalTokens"],
                     "tokens_removed": row["tokensRemoved"], "first_trigger_entry_id": row["firstTriggerEntryId"],
                     "first_trigger_index": row["firstTriggerIndex"]})
    return _frame(rows, SIMULATION_TOTALS_COLUMNS)


# ---------------------------------------------------------------------------------- calibration
_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                  r"\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f]")


def _cjk_share(text: str) -> float:
    letters = sum(1 for ch in text if not ch.isspace())
    return len(_CJK.findall(text)) / letters if letters else 0.0


def _json_like(message: Mapping[str, Any], text: str) -> bool:
    role = message.get("role")
    if role == "assistant":
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        call_chars = sum(estimate_chars({"role": "assistant", "content": [b]}) for b in blocks
                         if isinstance(b, Mapping) and b.get("type") == "toolCall")
        total = estimate_chars(message)
        return total > 0 and call_chars / total > 0.5
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return False
    punctuation = sum(1 for ch in stripped if ch in '{}[]":,')
    return punctuation / len(stripped) > 0.05


def _turn_positions(projection: Projection) -> dict[Any, int]:
    return {e.id: i for i, e in reversed(list(enumerate(projection.path)))}


def calibration(session: Session | Projection, leaf: Any = None, counter: Counter | None = None, *,
                tolerance: float = 1.5, min_tokens: int = 20) -> pd.DataFrame:
    """Pi's estimate against a real tokenizer and the recorded usage (see :data:`CALIBRATION_COLUMNS`).

    Per message: chars, estimate, real count (``counter``, default :func:`get_counter`),
    their ratio, and ``outlier`` when the ratio is beyond ``tolerance`` either way (for
    messages where either measure is at least ``min_tokens``), with a likely reason: CJK
    text (the estimate is far too low), JSON (too low), other non-ASCII text, or other.

    Per turn (the messages after one usable usage up to and including the next): the sums
    of estimates and counts, and how much the recorded usage grew over it. The growth is
    ``<NA>`` when the two usages were not measured on the same history (a compaction or a
    context edit lies between them, or a later edit changed one of the turn's messages).
    """
    counter = counter if counter is not None else get_counter()
    projection = _projection(session, leaf)
    msgs = projection.messages
    counts = counter.count_messages(msgs)
    positions = _turn_positions(projection)
    path = projection.path
    invalidations = [i for i, e in enumerate(path) if e.type in ("context_edit", "compaction")]
    edit_targets: dict[Any, int] = {}
    for i, e in enumerate(path):
        if e.type == "context_edit":
            edit_targets.setdefault(e.data.get("targetId"), i)
    head_position = positions.get(projection.compaction.id, -1) if projection.compaction is not None else -1

    turn_of: list[int] = []
    closers: list[int] = []  # message index closing each turn
    turn = 0
    for i, message in enumerate(msgs):
        turn_of.append(turn)
        if message_usage(message) is not None:
            closers.append(i)
            turn += 1
    turn_estimate: dict[int, int] = {}
    turn_tokens: dict[int, int] = {}
    for i, t in enumerate(turn_of):
        turn_estimate[t] = turn_estimate.get(t, 0) + projection.estimates[i]
        turn_tokens[t] = turn_tokens.get(t, 0) + counts[i]
    deltas: dict[int, int | None] = {}
    for t, closer in enumerate(closers):
        end = positions.get(projection.sources[closer], -1)
        usage = usage_total(message_usage(msgs[closer]))
        if t == 0:
            start, base = head_position, 0
            valid = head_position < end
        else:
            previous = closers[t - 1]
            start = positions.get(projection.sources[previous], -1)
            base = usage_total(message_usage(msgs[previous]))
            valid = not any(start < p <= end for p in invalidations)
        turn_sources = {projection.sources[i] for i, tt in enumerate(turn_of) if tt == t}
        if any(edit_targets.get(s, -1) > end for s in turn_sources):
            valid = False
        deltas[t] = usage - base if valid else None

    rows: list[dict[str, Any]] = []
    for i, message in enumerate(msgs):
        text, images = message_text(message)
        estimate, tokens = projection.estimates[i], counts[i]
        ratio = estimate / tokens if tokens else None
        cjk = _cjk_share(text)
        json_like = _json_like(message, text)
        outlier = ratio is not None and max(estimate, tokens) >= min_tokens and (
            ratio > tolerance or ratio < 1 / tolerance)
        reason = None
        if outlier:
            non_ascii = sum(1 for ch in text if ord(ch) > 127) / len(text) if text else 0.0
            reason = "cjk" if cjk >= 0.2 else "json" if json_like else "non-ascii" if non_ascii >= 0.2 else "other"
        recorded = message.get("usage") if message.get("role") == "assistant" else None
        t = turn_of[i]
        rows.append({
            "index": i, "source_id": projection.sources[i], "role": message.get("role"), "turn": t,
            "chars": estimate_chars(message), "estimate": estimate, "tokens": tokens, "ratio": ratio,
            "cjk_share": cjk, "json_like": json_like, "images": images, "outlier": outlier,
            "outlier_reason": reason,
            "usage_total": usage_total(recorded) if isinstance(recorded, Mapping) else None,
            "turn_estimate": turn_estimate[t], "turn_tokens": turn_tokens[t], "turn_usage_delta": deltas.get(t),
            "preview": shorten(message_preview(message)),
        })
    df = _frame(rows, CALIBRATION_COLUMNS)
    df.attrs["counter"] = counter.name
    df.attrs["counter_notice"] = counter.notice
    df.attrs["tolerance"] = tolerance
    return df


# ---------------------------------------------------------------------------------- sweeps
def sweep_keep_recent(session: Session, leaf: Any = None, values: Iterable[int] = ()) -> pd.DataFrame:
    """Compaction preparation at ``leaf`` for each keepRecentTokens value (see :data:`SWEEP_COLUMNS`).

    No model is called; the branch is projected once and every value reuses that
    projection (and its cached estimates for the token sums).
    """
    projection = session.context(_leaf(session, leaf))
    branch = projection.path
    # Per projected entry: all of its estimates (kept part) and those a summary would take in
    # (no compaction entry, no system message); prefix sums make each value O(1) here.
    kept_prefix = [0]
    summarizable_prefix = [0]
    position = 0
    for pe in projection.entries:
        own = projection.estimates[position:position + len(pe.messages)]
        position += len(pe.messages)
        kept_prefix.append(kept_prefix[-1] + sum(own))
        summarizable = 0 if pe.entry.type == "compaction" else sum(
            e for m, e in zip(pe.messages, own, strict=True) if m.get("role") != "system")
        summarizable_prefix.append(summarizable_prefix[-1] + summarizable)
    head = next((i for i, pe in enumerate(projection.entries) if pe.entry.type == "compaction" and pe.messages), -1)
    start = head + 1
    total_entries = len(projection.entries)
    rows: list[dict[str, Any]] = []
    for value in values:
        prep = prepare_compaction(branch, int(value), projection)
        if prep is None:
            rows.append({"keep_recent_tokens": value, "compactable": False, "tokens_before": projection.tokens})
            continue
        cut = prep.first_kept_index
        read, modified = prep.file_ops.lists()
        rows.append({
            "keep_recent_tokens": value, "compactable": True, "first_kept_entry_id": prep.first_kept_entry_id,
            "first_kept_index": cut, "is_split_turn": prep.is_split_turn,
            "turn_start_entry_id": projection.entries[prep.turn_start_index].entry.id if prep.is_split_turn else None,
            "summarized_messages": len(prep.messages_to_summarize),
            "turn_prefix_messages": len(prep.turn_prefix_messages),
            "summarized_entries": cut - start, "kept_entries": total_entries - cut,
            "summarized_tokens": summarizable_prefix[cut] - summarizable_prefix[start],
            "kept_tokens": kept_prefix[total_entries] - kept_prefix[cut],
            "tokens_before": prep.tokens_before, "read_files": len(read), "modified_files": len(modified),
        })
    return _frame(rows, SWEEP_COLUMNS)
