"""Frames of the model-visible messages: :func:`messages` and :func:`calibration`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from .._context.counting import Counter, get_counter, message_text
from .._context.describe import message_preview
from .._context.projection import Projection
from .._context.tokens import estimate_chars, message_usage, usage_total
from .._format.message import MessageView, view
from .._session import Session
from .._tree.sessiontree import CURRENT
from ._columns import Column, ColumnSpec, build, select, shorten

__all__ = ["CALIBRATION_COLUMNS", "MESSAGE_COLUMNS", "calibration", "message_segments", "messages"]


def projection_of(source: Session | Projection, leaf: Any) -> Projection:
    """``source`` itself when it is a Projection, else the session's projection at ``leaf``."""
    if isinstance(source, Projection):
        if leaf is not CURRENT:
            raise ValueError("leaf applies to a Session; a Projection is already at its leaf")
        return source
    if isinstance(source, Session):
        return source.context(leaf)
    raise TypeError(f"expected a Session or a Projection, got {type(source).__name__}")


def message_segments(projection: Projection) -> list[str]:
    """For each projected message: ``system``, ``summary``, ``kept`` or ``new``
    (:attr:`pikit.Projection.segments`)."""
    return list(projection.segments)


@dataclass
class MessageRow:
    """One projected message and what the message frames read from it."""

    index: int
    message: Mapping[str, Any]
    source_id: Any
    estimate: int
    tokens: int | None = None
    source_type: Any = None
    status: str | None = None
    segment: str | None = None
    cumulative_estimate: int = 0

    @cached_property
    def view(self) -> MessageView:
        return view(self.message)

    @property
    def role(self) -> str | None:
        return self.view.role

    @cached_property
    def usage(self) -> Mapping[str, Any] | None:
        """The usage an assistant message records (any object)."""
        usage = self.message.get("usage") if self.role == "assistant" else None
        return usage if isinstance(usage, Mapping) else None

    def usage_field(self, key: str) -> Any:
        return self.usage.get(key) if self.usage is not None else None

    @property
    def model(self) -> str | None:
        provider, model = self.message.get("provider"), self.message.get("model")
        if self.role != "assistant" or (provider is None and model is None):
            return None
        return f"{provider}/{model}" if provider is not None else str(model)

    def when(self, role: str, value: Any) -> Any:
        return value if self.role == role else None


def _usage_total(row: MessageRow) -> int | None:
    return usage_total(row.usage) if row.usage is not None else None


def _tool_calls(row: MessageRow) -> int | None:
    if row.role != "assistant" or not isinstance(row.message.get("content"), list):
        return None
    return len(row.view.tool_calls)


def _preview(row: MessageRow) -> str:
    return shorten(message_preview(row.message))


def _col(name: str, dtype: str, description: str, get: Any, group: str = "core") -> Column:
    return Column(name, dtype, description, get, group)


MESSAGE_COLUMNS = (
    _col("index", "Int64", "position in the projected context (0-based)", lambda r: r.index),
    _col("role", "string", "message role", lambda r: r.message.get("role")),
    _col("source_id", "string", "id of the entry that produced the message", lambda r: r.source_id),
    _col("source_type", "string", "type of that entry", lambda r: r.source_type),
    _col("status", "string", "kept / replaced (by a context edit) / summary (the head compaction)",
         lambda r: r.status),
    _col("segment", "string", "system / summary / kept (kept range of the head compaction) / new (after it)",
         lambda r: r.segment),
    _col("estimate", "Int64", "Pi's token estimate (ceil(UTF-16 chars / 4))", lambda r: r.estimate),
    _col("cumulative_estimate", "Int64", "running sum of the estimates up to and including this message",
         lambda r: r.cumulative_estimate),
    _col("tokens", "Int64", "real token count of the message text (tiktoken); <NA> without a counter",
         lambda r: r.tokens, "tokens"),
    _col("chars", "Int64", "UTF-16 code units behind the estimate (images count 4800)",
         lambda r: estimate_chars(r.message)),
    _col("usage_input", "Int64", "recorded usage.input (assistant messages)", lambda r: r.usage_field("input"),
         "usage"),
    _col("usage_output", "Int64", "recorded usage.output", lambda r: r.usage_field("output"), "usage"),
    _col("usage_cache_read", "Int64", "recorded usage.cacheRead", lambda r: r.usage_field("cacheRead"), "usage"),
    _col("usage_cache_write", "Int64", "recorded usage.cacheWrite", lambda r: r.usage_field("cacheWrite"), "usage"),
    _col("usage_total", "Int64", "usage size: totalTokens, or the sum of the parts when that is 0", _usage_total,
         "usage"),
    _col("usage_usable", "boolean", "whether Pi's context size rule may use this usage",
         lambda r: r.when("assistant", message_usage(r.message) is not None), "usage"),
    _col("stop_reason", "string", "assistant stopReason", lambda r: r.when("assistant", r.message.get("stopReason")),
         "usage"),
    _col("model", "string", "provider/model of an assistant message", lambda r: r.model, "usage"),
    _col("tool_calls", "Int64", "number of tool calls in an assistant message", _tool_calls, "tools"),
    _col("tool_name", "string", "toolName of a tool result", lambda r: r.when("toolResult", r.message.get("toolName")),
         "tools"),
    _col("is_error", "boolean", "isError of a tool result", lambda r: r.when("toolResult", r.message.get("isError")),
         "tools"),
    _col("timestamp", "datetime64[ms, UTC]", "the message's own timestamp", lambda r: r.message.get("timestamp")),
    _col("preview", "string", "one-line gist of the message, shortened", _preview, "text"),
)
"""Columns of :func:`messages`; groups: core, tokens, usage, tools, text."""


def _message_rows(projection: Projection, counts: Sequence[int] | None) -> list[MessageRow]:
    segments = projection.segments
    rows: list[MessageRow] = []
    running = 0
    for pe in projection.entries:
        for message in pe.messages:
            index = len(rows)
            estimate = projection.estimates[index]
            running += estimate
            rows.append(MessageRow(index, message, pe.entry.id, estimate,
                                   counts[index] if counts is not None else None, pe.entry.type, pe.status,
                                   segments[index], running))
    return rows


def messages(source: Session | Projection, leaf: Any = CURRENT, counter: Counter | None = None, *,
             columns: ColumnSpec = None) -> pd.DataFrame:
    """One row per model-visible message of a projection (see :data:`MESSAGE_COLUMNS`).

    ``source`` is a :class:`Session` (projected at ``leaf``: :data:`~pikit.CURRENT`
    is the current leaf, None the empty leaf) or a :class:`Projection`. With a ``counter``
    (:func:`pikit.get_counter`), ``tokens`` holds real counts. ``columns`` picks
    column groups or columns (default: all).
    """
    projection = projection_of(source, leaf)
    chosen = select(MESSAGE_COLUMNS, columns)
    counts = counter.count_messages(projection.messages) if counter is not None and any(
        c.name == "tokens" for c in chosen) else None
    df = build(_message_rows(projection, counts), chosen)
    if counter is not None:
        df.attrs["counter"] = counter.name
        df.attrs["counter_notice"] = counter.notice
    return df


# ---------------------------------------------------------------------------------- calibration
_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                  r"\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f]")


def _cjk_share(text: str) -> float:
    letters = sum(1 for ch in text if not ch.isspace())
    return len(_CJK.findall(text)) / letters if letters else 0.0


def _json_like(message: Mapping[str, Any], role: str | None, text: str) -> bool:
    if role == "assistant":
        content = message.get("content")
        call_chars = sum(estimate_chars({"role": "assistant", "content": [b]}) for b in content
                         if isinstance(b, Mapping) and b.get("type") == "toolCall") if isinstance(content, list) else 0
        total = estimate_chars(message)
        return total > 0 and call_chars / total > 0.5
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return False
    punctuation = sum(1 for ch in stripped if ch in '{}[]":,')
    return punctuation / len(stripped) > 0.05


@dataclass
class _Turns:
    """Usage turns of a projection: the messages after one usable usage up to and including the next."""

    of: list[int]
    estimate: dict[int, int]
    tokens: dict[int, int]
    delta: dict[int, int | None]


def _turns(projection: Projection, counts: Sequence[int]) -> _Turns:
    msgs = projection.messages
    turn_of: list[int] = []
    closers: list[int] = []  # message index closing each turn
    for i, message in enumerate(msgs):
        turn_of.append(len(closers))
        if message_usage(message) is not None:
            closers.append(i)
    estimate: dict[int, int] = {}
    tokens: dict[int, int] = {}
    for i, t in enumerate(turn_of):
        estimate[t] = estimate.get(t, 0) + projection.estimates[i]
        tokens[t] = tokens.get(t, 0) + counts[i]
    return _Turns(turn_of, estimate, tokens, _usage_deltas(projection, turn_of, closers))


def _usage_deltas(projection: Projection, turn_of: list[int], closers: list[int]) -> dict[int, int | None]:
    """Growth of the recorded usage per turn, None where the two usages saw different histories."""
    msgs, path = projection.messages, projection.path
    positions = {e.id: i for i, e in reversed(list(enumerate(path)))}
    invalidations = [i for i, e in enumerate(path) if e.type in ("context_edit", "compaction")]
    edit_targets: dict[Any, int] = {}
    for i, e in enumerate(path):
        if e.type == "context_edit":
            edit_targets.setdefault(e.data.get("targetId"), i)
    head = positions.get(projection.compaction.id, -1) if projection.compaction is not None else -1
    sources_of: dict[int, set[Any]] = {}
    for i, t in enumerate(turn_of):
        sources_of.setdefault(t, set()).add(projection.sources[i])
    deltas: dict[int, int | None] = {}
    for t, closer in enumerate(closers):
        end = positions.get(projection.sources[closer], -1)
        usage = usage_total(message_usage(msgs[closer]))
        if t == 0:
            base, valid = 0, head < end
        else:
            previous = closers[t - 1]
            start = positions.get(projection.sources[previous], -1)
            base = usage_total(message_usage(msgs[previous]))
            valid = not any(start < p <= end for p in invalidations)
        if any(edit_targets.get(s, -1) > end for s in sources_of.get(t, ())):
            valid = False
        deltas[t] = usage - base if valid else None
    return deltas


class CalibrationRow(MessageRow):
    """A message with its real count, text measures and usage turn."""

    turns: _Turns
    tolerance: float
    min_tokens: int

    @cached_property
    def measured(self) -> tuple[str, int]:
        return message_text(self.message)

    @property
    def turn(self) -> int:
        return self.turns.of[self.index]

    @property
    def ratio(self) -> float | None:
        return self.estimate / self.tokens if self.tokens else None

    @cached_property
    def cjk_share(self) -> float:
        return _cjk_share(self.measured[0])

    @cached_property
    def json_like(self) -> bool:
        return _json_like(self.message, self.role, self.measured[0])

    @property
    def outlier(self) -> bool:
        ratio = self.ratio
        return ratio is not None and max(self.estimate, self.tokens or 0) >= self.min_tokens and (
            ratio > self.tolerance or ratio < 1 / self.tolerance)

    @property
    def outlier_reason(self) -> str | None:
        if not self.outlier:
            return None
        text = self.measured[0]
        non_ascii = sum(1 for ch in text if ord(ch) > 127) / len(text) if text else 0.0
        return "cjk" if self.cjk_share >= 0.2 else "json" if self.json_like else \
            "non-ascii" if non_ascii >= 0.2 else "other"


CALIBRATION_COLUMNS = (
    _col("index", "Int64", "position in the projected context", lambda r: r.index),
    _col("source_id", "string", "entry that produced the message", lambda r: r.source_id),
    _col("role", "string", "message role", lambda r: r.message.get("role")),
    _col("turn", "Int64", "usage turn: the messages after one usable usage up to and including the next",
         lambda r: r.turn),
    _col("chars", "Int64", "UTF-16 code units behind the estimate", lambda r: estimate_chars(r.message)),
    _col("estimate", "Int64", "Pi's estimate, ceil(chars / 4)", lambda r: r.estimate),
    _col("tokens", "Int64", "real token count (the counter's encoding)", lambda r: r.tokens),
    _col("ratio", "Float64", "estimate / tokens (<NA> when tokens is 0); 1 means the heuristic is exact",
         lambda r: r.ratio),
    _col("cjk_share", "Float64", "share of the text's characters that are CJK", lambda r: r.cjk_share, "text"),
    _col("json_like", "boolean", "whether the text is mostly JSON (tool-call arguments, JSON output)",
         lambda r: r.json_like, "text"),
    _col("images", "Int64", "image blocks (both measures count them as 1200 tokens)", lambda r: r.measured[1]),
    _col("outlier", "boolean", "whether the estimate is off by more than the tolerance factor", lambda r: r.outlier),
    _col("outlier_reason", "string", "cjk, json, non-ascii or other (only for outliers)",
         lambda r: r.outlier_reason),
    _col("usage_total", "Int64", "usage recorded on this message (assistant)", _usage_total, "turns"),
    _col("turn_estimate", "Int64", "sum of the estimates of the turn", lambda r: r.turns.estimate[r.turn], "turns"),
    _col("turn_tokens", "Int64", "sum of the real counts of the turn", lambda r: r.turns.tokens[r.turn], "turns"),
    _col("turn_usage_delta", "Int64", "growth of the recorded usage over the turn (<NA> when not comparable)",
         lambda r: r.turns.delta.get(r.turn), "turns"),
    _col("preview", "string", "one-line gist, shortened", _preview, "text"),
)
"""Columns of :func:`calibration`; groups: core, text, turns."""


def calibration(session: Session | Projection, leaf: Any = CURRENT, counter: Counter | None = None, *,
                tolerance: float = 1.5, min_tokens: int = 20, columns: ColumnSpec = None) -> pd.DataFrame:
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
    projection = projection_of(session, leaf)
    counts = counter.count_messages(projection.messages)
    turns = _turns(projection, counts)
    rows = []
    for i, (message, source) in enumerate(zip(projection.messages, projection.sources, strict=True)):
        row = CalibrationRow(i, message, source, projection.estimates[i], counts[i])
        row.turns, row.tolerance, row.min_tokens = turns, tolerance, min_tokens
        rows.append(row)
    df = build(rows, select(CALIBRATION_COLUMNS, columns))
    df.attrs["counter"] = counter.name
    df.attrs["counter_notice"] = counter.notice
    df.attrs["tolerance"] = tolerance
    return df
