"""Frames of compaction: the :func:`compactions` on a branch, the :func:`context_trace` of its size,
and :func:`sweep_keep_recent` (what each keepRecentTokens value would cut)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from .._context.projection import Projection, entry_messages, project_path, replay_system
from .._context.tokens import estimate_chars, estimate_tokens, message_usage, usage_total
from .._format.entry import Entry
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._preparation import prepare_compaction
from ._columns import Column, ColumnSpec, build, hashable, mapping, select, table, to_int
from ._entries import branch_at

__all__ = ["COMPACTION_COLUMNS", "CONTEXT_TRACE_COLUMNS", "SWEEP_COLUMNS", "compactions", "context_trace",
           "sweep_keep_recent"]


def _file_list(details: Any, key: str) -> list[Any]:
    values = details.get(key) if isinstance(details, Mapping) else None
    return values if isinstance(values, list) else []


@dataclass
class _CompactionRow:
    """A compaction entry on a branch, the compaction before it, and the branch itself."""

    entry: Entry
    index: int
    branch: list[Entry]
    previous: Entry | None

    @property
    def data(self) -> Mapping[str, Any]:
        return self.entry.data

    @cached_property
    def after(self) -> Projection:
        return project_path(self.branch[:self.index + 1])

    @property
    def recorded(self) -> int | None:
        return to_int(self.data.get("tokensBefore"))

    @property
    def first_kept_found(self) -> bool:
        first_kept = self.data.get("firstKeptEntryId")
        return any(e.id == first_kept for e in self.branch[:self.index])

    @property
    def summary_message(self) -> dict[str, Any]:
        return {"role": "compactionSummary", "summary": self.data.get("summary")}

    def files(self, key: str) -> list[Any]:
        return _file_list(self.data.get("details"), key)

    def new_files(self, key: str) -> int:
        before = set(map(str, _file_list(self.previous.data.get("details"), key))) if self.previous else set()
        return sum(1 for f in self.files(key) if str(f) not in before)

    @property
    def tokens_removed(self) -> int | None:
        recorded = self.recorded
        return recorded - self.after.tokens if recorded is not None else None


def _usage(value: Any) -> int | None:
    usage = mapping(value)
    return usage_total(usage) if usage is not None else None


COMPACTION_COLUMNS = (
    Column("id", "string", "compaction entry id", lambda r: r.entry.id),
    Column("parent_id", "string", "the leaf it was appended to", lambda r: r.entry.parent_id),
    Column("timestamp", "datetime64[ms, UTC]", "entry timestamp", lambda r: r.entry.time_ms),
    Column("branch_index", "Int64", "position of the compaction on the branch", lambda r: r.index),
    Column("previous_id", "string", "the compaction before it on the branch (lineage), if any",
           lambda r: r.previous.id if r.previous is not None else None),
    Column("first_kept_entry_id", "string", "firstKeptEntryId: where the kept part begins",
           lambda r: r.data.get("firstKeptEntryId")),
    Column("first_kept_found", "boolean", "whether firstKeptEntryId is an entry before it on the branch",
           lambda r: r.first_kept_found),
    Column("tokens_before", "Int64", "tokensBefore as recorded in the entry", lambda r: r.recorded, "tokens"),
    Column("tokens_before_projected", "Int64", "context size of the branch just before it, recomputed by pikit",
           lambda r: project_path(r.branch[:r.index]).tokens, "tokens"),
    Column("tokens_after", "Int64", "context size of the branch right after it (Pi does not record this)",
           lambda r: r.after.tokens, "tokens"),
    Column("tokens_removed", "Int64", "tokens_before - tokens_after", lambda r: r.tokens_removed, "tokens"),
    Column("summarized_entries", "Int64", "branch entries the summary replaced",
           lambda r: len(r.after.summarized_ids), "tokens"),
    Column("kept_entries", "Int64", "branch entries kept verbatim (from firstKeptEntryId up to it)",
           lambda r: len(r.after.entries) - 1 if r.after.compaction is r.entry else 0, "tokens"),
    Column("summary_chars", "Int64", "summary length in UTF-16 code units",
           lambda r: estimate_chars(r.summary_message)),
    Column("summary_tokens", "Int64", "Pi's estimate of the summary message",
           lambda r: estimate_tokens(r.summary_message)),
    Column("read_files", "Int64", "number of files in details.readFiles", lambda r: len(r.files("readFiles")),
           "files"),
    Column("modified_files", "Int64", "number of files in details.modifiedFiles",
           lambda r: len(r.files("modifiedFiles")), "files"),
    Column("new_read_files", "Int64", "read files not listed by the previous compaction",
           lambda r: r.new_files("readFiles"), "files"),
    Column("new_modified_files", "Int64", "modified files not listed by the previous compaction",
           lambda r: r.new_files("modifiedFiles"), "files"),
    Column("from_hook", "boolean", "whether a user hook wrote the summary", lambda r: bool(r.data.get("fromHook"))),
    Column("has_system_message", "boolean", "whether the entry carries the replayed system message",
           lambda r: bool(r.data.get("systemMessage"))),
    Column("usage_total", "Int64", "tokens the summarizer call(s) used, when recorded",
           lambda r: _usage(r.data.get("usage"))),
)
"""Columns of :func:`compactions`; groups: core, tokens, files."""


def compactions(session: Session, leaf: Any = CURRENT, *, columns: ColumnSpec = None) -> pd.DataFrame:
    """Every compaction on the branch at ``leaf``, oldest first (see :data:`COMPACTION_COLUMNS`).

    ``tokens_after`` is the context size of the branch projected up to and including the
    compaction; ``tokens_before_projected`` the same up to the entry before it.
    """
    branch = branch_at(session, leaf)
    rows: list[_CompactionRow] = []
    for index, entry in enumerate(branch):
        if entry.type == "compaction":
            rows.append(_CompactionRow(entry, index, branch, rows[-1].entry if rows else None))
    return build(rows, select(COMPACTION_COLUMNS, columns))


# ---------------------------------------------------------------------------------- context trace
CONTEXT_TRACE_COLUMNS = table("""
    branch_index   Int64    position of the entry on the branch
    entry_id       string   the entry
    kind           string   check (an assistant message: where Pi tests the threshold) or compaction
    tokens_before  Int64    context size before a compaction at this point (= tokens for checks)
    tokens         Int64    context size by Pi's rule after this entry
    estimate       Int64    context size by estimates only (replayed system prompt + other messages)
    usage_total    Int64    usage recorded on this assistant message, if any
    size_source    string   how tokens was obtained: usage, estimate (no usage) or stale (edit/compaction)
    compacted      boolean  whether the context was compacted here
""")


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
        if hashable(entry.id):
            self.first_position.setdefault(entry.id, position)
        if entry.type in ("context_edit", "compaction"):
            self.invalidation = position
            if entry.type == "context_edit":
                target = entry.data.get("targetId")
                if hashable(target):
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


def context_trace(session: Session, leaf: Any = CURRENT) -> pd.DataFrame:
    """The recorded context size along the branch (see :data:`CONTEXT_TRACE_COLUMNS`).

    One row per check point (each assistant message, where Pi tests the threshold) and per
    compaction entry (``tokens_before`` → ``tokens``): the real history's sawtooth, in the
    same shape as :func:`simulation_trace` so both can be drawn together.
    """
    tracker = _SizeTracker()
    rows: list[dict[str, Any]] = []
    for index, entry in enumerate(branch_at(session, leaf)):
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
                         "usage_total": _usage(usage),
                         "size_source": tracker.source, "compacted": False})
    return build(rows, CONTEXT_TRACE_COLUMNS)


# ---------------------------------------------------------------------------------- sweeps
SWEEP_COLUMNS = table("""
    keep_recent_tokens    Int64    the keepRecentTokens value tried
    compactable           boolean  whether there is anything to compact with this value
    first_kept_entry_id   string   firstKeptEntryId: where the kept part begins
    first_kept_index      Int64    its position in the projected entry list
    is_split_turn         boolean  whether the cut falls inside a turn
    turn_start_entry_id   string   start of the split turn
    summarized_messages   Int64    messages to summarize (history)
    turn_prefix_messages  Int64    messages of the split turn's beginning
    summarized_entries    Int64    context entries folded into the summary
    kept_entries          Int64    context entries kept verbatim
    summarized_tokens     Int64    estimate of the summarized and turn-prefix messages
    kept_tokens           Int64    estimate of the kept entries
    tokens_before         Int64    context size before the compaction (the same for every value)
    read_files            Int64    files in the summary's <read-files>
    modified_files        Int64    files in the summary's <modified-files>
""")


def sweep_keep_recent(session: Session, leaf: Any = CURRENT, values: Iterable[int] = ()) -> pd.DataFrame:
    """Compaction preparation at ``leaf`` for each keepRecentTokens value (see :data:`SWEEP_COLUMNS`).

    No model is called; the branch is projected once and every value reuses that
    projection (and its cached estimates for the token sums).
    """
    projection = session.context(leaf)
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
    return build(rows, SWEEP_COLUMNS)
