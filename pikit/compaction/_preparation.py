"""Compaction preparation: where to cut, what to summarize, what to keep (no model call).

Everything here works on the *projected* entry list of a branch (see
``pikit._context.projection``), so earlier compactions and context edits are honoured.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._context.fileops import FileOps, format_file_lists
from .._context.projection import ProjectedEntry, Projection, entry_messages, project_path
from .._context.serialize import serialize_conversation, to_model_messages
from .._format.entry import Entry
from ..jsjson import js_string, js_truthy

__all__ = ["CompactionTrace", "CutPoint", "CutTrace", "Preparation", "find_cut_point", "prepare_compaction",
           "trace_compaction"]

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


@dataclass(frozen=True)
class CutPoint:
    """Where the kept part begins, as indices into the projected entry list."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _is_cut_point(pe: ProjectedEntry) -> bool:
    return pe.entry.type != "compaction" and not pe.roles.isdisjoint(_CUT_ROLES)


def _starts_turn(pe: ProjectedEntry) -> bool:
    return pe.entry.type != "compaction" and not pe.roles.isdisjoint(_TURN_START_ROLES)


def find_cut_point(entries: Sequence[ProjectedEntry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Find the first kept entry so that about ``keep_recent_tokens`` of recent context stays.

    Walks back from the newest entry summing estimates; at the entry where the sum reaches
    the budget, cuts at the first valid cut point at or after it (never at a tool result).
    Then applies the recovery rule (skip an omitted failed attempt at the very end), pulls
    the cut back over silent metadata entries, and detects a split turn.
    """
    cut_points = [i for i in range(start, end) if _is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start, -1, False)
    total = 0
    exceeded = False
    cut = cut_points[0]
    for i in range(end - 1, start - 1, -1):
        tokens = entries[i].tokens
        if tokens == 0:
            continue
        total += tokens
        if total >= keep_recent_tokens:
            exceeded = True
            cut = next((c for c in cut_points if c >= i), cut_points[-1])
            break
    return _settle_cut(entries, start, end, cut, exceeded, lambda i: _starts_turn(entries[i]))[1]


def _settle_cut(entries: Sequence[ProjectedEntry], start: int, end: int, cut: int, exceeded: bool,
                starts_turn: Callable[[int], bool]) -> tuple[int, CutPoint]:
    """The last steps of finding a cut: the recovery rule, pulling the cut back over silent
    metadata entries, and finding the turn it splits (if any).

    Returns the cut after the recovery rule (before the pull-back) and the final cut point.
    """
    if exceeded and _recovery_suffix(entries[cut + 1:end]):
        cut += 1
    recovered = cut
    while cut > start:
        previous = entries[cut - 1]
        if previous.entry.type == "compaction" or previous.messages:
            break
        cut -= 1
    if starts_turn(cut):
        return recovered, CutPoint(cut, -1, False)
    turn_start = next((i for i in range(cut, start - 1, -1) if starts_turn(i)), -1)
    return recovered, CutPoint(cut, turn_start, turn_start != -1)


def _recovery_suffix(suffix: Sequence[ProjectedEntry]) -> bool:
    """Whether everything after the cut is an omitted failed attempt and its edits."""

    def visible_by_nature(pe: ProjectedEntry) -> bool:
        return pe.entry.type != "context_edit" and bool(entry_messages(pe.entry))

    def omitted(pe: ProjectedEntry) -> bool:
        return visible_by_nature(pe) and not pe.messages

    # Cheapest test first: an ordinary visible entry after the cut fails it at once.
    if not all(pe.entry.type != "compaction" and (not visible_by_nature(pe) or omitted(pe)) for pe in suffix):
        return False
    omitted_ids = {pe.entry.id for pe in suffix if omitted(pe)}
    external_replacement = any(
        pe.entry.type == "context_edit" and pe.entry.data.get("replacement") is not None
        and pe.entry.data.get("targetId") not in omitted_ids
        for pe in suffix
    )
    if external_replacement:
        return False
    return any(pe.entry.type == "message" and pe.entry.role == "assistant" and omitted(pe) for pe in suffix)


class _SweepIndex:
    """Figures of one projection that every preparation of it shares.

    A sweep prepares the same projection for many keepRecentTokens values; with these the
    cut point is two binary searches and the spans are slices instead of walks.
    """

    def __init__(self, proj: Projection) -> None:
        entries = proj.entries
        estimates = proj.estimates
        n = len(entries)
        self.prefix = prefix = [0] * (n + 1)  # prefix[i]: tokens of entries[:i]
        self.tokens = tokens = [0] * n
        self.cut_points: list[int] = []
        self.turn_starts = [False] * n
        self.conversation: list[dict[str, Any]] = []
        self.offsets = offsets = [0] * (n + 1)  # offsets[i]: conversation messages of entries[:i]
        self.head = -1  # the head compaction (the first compaction that projects messages)
        k = 0
        total = 0
        for i, pe in enumerate(entries):
            count = len(pe.messages)
            t = sum(estimates[k:k + count]) if count else 0
            k += count
            tokens[i] = t
            total += t
            prefix[i + 1] = total
            if _is_cut_point(pe):
                self.cut_points.append(i)
            self.turn_starts[i] = _starts_turn(pe)
            if pe.entry.type == "compaction":
                if self.head < 0 and pe.messages:
                    self.head = i
            else:
                self.conversation.extend(m for m in pe.messages if m.get("role") != "system")
            offsets[i + 1] = len(self.conversation)
        # First occurrence (conversation index, path) of every read / written / edited path.
        self.first_ops: tuple[list[tuple[int, str]], list[tuple[int, str]], list[tuple[int, str]]] = ([], [], [])
        seen: tuple[set[Any], set[Any], set[Any]] = (set(), set(), set())
        for j, message in enumerate(self.conversation):
            if message.get("role") not in ("assistant", "toolResult"):
                continue
            ops = FileOps()
            ops.add_message(message)
            for found, first, known in zip((ops.read, ops.written, ops.edited), self.first_ops, seen, strict=True):
                for path in found:
                    if path not in known:
                        known.add(path)
                        first.append((j, path))

    @staticmethod
    def of(proj: Projection) -> _SweepIndex:
        index = proj.__dict__.get("_sweep_index")
        if index is None:
            index = proj.__dict__["_sweep_index"] = _SweepIndex(proj)
        return index

    def cut_point(self, entries: Sequence[ProjectedEntry], start: int, end: int, keep_recent_tokens: int) -> CutTrace:
        """:func:`find_cut_point` on the indexed figures (same answer), with the walk's figures."""
        cuts = self.cut_points
        lo, hi = bisect_left(cuts, start), bisect_left(cuts, end)
        if lo == hi:
            return CutTrace(self, start, end, keep_recent_tokens, -1, -1, -1, CutPoint(start, -1, False))
        prefix, tokens = self.prefix, self.tokens
        # The walk back stops at the last i whose suffix sum prefix[end] - prefix[i] reaches the budget.
        i = bisect_right(prefix, prefix[end] - keep_recent_tokens, start, end + 1) - 1
        i = min(i, end - 1)
        while i >= start and tokens[i] == 0:  # entries estimating 0 are skipped by the walk
            i -= 1
        exceeded = i >= start and prefix[end] - prefix[i] >= keep_recent_tokens
        if exceeded:
            j = bisect_left(cuts, i, lo, hi)
            cut = cuts[j] if j < hi else cuts[hi - 1]
        else:
            cut = cuts[lo]
        recovered, settled = _settle_cut(entries, start, end, cut, exceeded, self.turn_starts.__getitem__)
        return CutTrace(self, start, end, keep_recent_tokens, i if exceeded else -1, cut, recovered, settled)


@dataclass(slots=True)
class CutTrace:
    """How the cut point was found, figure by figure, as the cut-point code computed it.

    The walk covers the context entries ``start`` to ``end - 1`` (after the head compaction),
    newest first. ``reached_index`` is the entry at which the running sum of estimates
    reaches ``keep_recent_tokens`` (-1 when it never does: everything fits), ``nearest_cut_index``
    the valid cut point the walk moves to (the first one at or after the reached entry, or the
    first of all when the sum never reaches the budget; -1 when there is none),
    ``recovered_index`` that cut after the recovery rule (one further when everything after it
    is an omitted failed attempt), and ``cut`` the final cut point, pulled back over silent
    metadata entries, with its turn.
    """

    _index: _SweepIndex = field(repr=False, compare=False)
    start: int
    end: int
    keep_recent_tokens: int
    reached_index: int
    nearest_cut_index: int
    recovered_index: int
    cut: CutPoint

    @property
    def reached(self) -> bool:
        """Whether the running sum reached ``keep_recent_tokens`` inside the walk."""
        return self.reached_index >= 0

    def estimate(self, i: int) -> int:
        """Pi's estimate of context entry ``i`` (the sum of its messages' estimates)."""
        return self._index.tokens[i]

    def running_sum(self, i: int) -> int:
        """The walk's running sum once it has added entry ``i``: entries ``i`` to ``end - 1``."""
        return self._index.prefix[self.end] - self._index.prefix[i]

    @property
    def walked(self) -> range:
        """The entries the walk adds up, newest last (from the reached entry, or ``start``, to the end)."""
        return range(self.reached_index if self.reached else self.start, self.end)

    @property
    def cut_points(self) -> list[int]:
        """The valid cut points of the walked span (indices, ascending)."""
        cuts = self._index.cut_points
        return cuts[bisect_left(cuts, self.start):bisect_left(cuts, self.end)]

    def is_cut_point(self, i: int) -> bool:
        """Whether context entry ``i`` is a valid cut point (never a tool result or a compaction)."""
        cuts = self._index.cut_points
        j = bisect_left(cuts, i)
        return j < len(cuts) and cuts[j] == i

    def starts_turn(self, i: int) -> bool:
        """Whether context entry ``i`` starts a turn (a user, shell, custom or summary message)."""
        return self._index.turn_starts[i]

    @property
    def pulled_back(self) -> int:
        """How many silent metadata entries the cut was pulled back over."""
        return self.recovered_index - self.cut.first_kept_index if self.recovered_index >= 0 else 0


def _conversation_messages(entries: Sequence[ProjectedEntry]) -> list[dict[str, Any]]:
    """Messages of a span for summarizing: compactions contribute nothing, system messages are dropped."""
    return [m for pe in entries if pe.entry.type != "compaction" for m in pe.messages if m.get("role") != "system"]


@dataclass(repr=False)
class Preparation:
    """What a compaction at one leaf would summarize and keep."""

    projection: Projection
    keep_recent_tokens: int
    first_kept_entry_id: Any
    first_kept_index: int
    is_split_turn: bool
    turn_start_index: int
    tokens_before: int
    previous_summary: str | None
    previous_compaction: Entry | None
    messages_to_summarize: list[dict[str, Any]]
    turn_prefix_messages: list[dict[str, Any]]
    file_ops: FileOps = field(repr=False)

    def __repr__(self) -> str:
        """One line: where the cut falls, what is summarized and kept."""
        return _preparation_repr(self)

    def _repr_html_(self) -> str:
        """A card: the cut point, the split turn, the summarized and kept sizes, the file lists."""
        return _preparation_html(self)

    @property
    def read_files(self) -> list[str]:
        """Files only read in the summarized span (and earlier summaries)."""
        return self.file_ops.lists()[0]

    @property
    def modified_files(self) -> list[str]:
        """Files written or edited in the summarized span (and earlier summaries)."""
        return self.file_ops.lists()[1]

    @property
    def file_lists_text(self) -> str:
        """The suffix appended to the summary."""
        return format_file_lists(*self.file_ops.lists())

    @property
    def conversation_text(self) -> str:
        """The summarized messages serialized for the summarizer."""
        return serialize_conversation(to_model_messages(self.messages_to_summarize))

    @property
    def turn_prefix_text(self) -> str:
        """The split turn's beginning serialized for the summarizer."""
        return serialize_conversation(to_model_messages(self.turn_prefix_messages))

    @property
    def kept_entry_ids(self) -> list[Any]:
        """Context entries kept verbatim after the compaction (an entry that sends nothing, a label say, included)."""
        return [pe.entry.id for pe in self.projection.entries[self.first_kept_index:]]

    @property
    def kept_entries(self) -> int:
        """How many kept entries send the model a message: the figure every view calls *kept entries* (the
        messages they send are ``kept messages``; a kept label or setting sends nothing and is not counted)."""
        return sum(1 for pe in self.projection.entries[self.first_kept_index:] if pe.messages)

    @property
    def summarized_entry_ids(self) -> list[Any]:
        """Context entries folded into the summary (including a split turn's beginning)."""
        start = 1 if self.previous_compaction is not None else 0
        return [pe.entry.id for pe in self.projection.entries[start:self.first_kept_index]]

    @property
    def kept_tokens(self) -> int:
        """Estimated tokens of the kept entries."""
        return sum(pe.tokens for pe in self.projection.entries[self.first_kept_index:])


@dataclass(slots=True)
class CompactionTrace:
    """One run of :func:`prepare_compaction`, with the walk that found the cut.

    ``preparation`` is what :func:`prepare_compaction` returns (``None``: nothing to compact,
    and ``reason`` says why); ``cut`` is the walk's :class:`CutTrace` (``None`` when the leaf is
    a compaction, where Pi does not walk at all).
    """

    projection: Projection
    keep_recent_tokens: int
    cut: CutTrace | None
    preparation: Preparation | None
    reason: str | None = None


def prepare_compaction(branch: list[Entry], keep_recent_tokens: int,
                       projection: Projection | None = None) -> Preparation | None:
    """Prepare a compaction of ``branch`` (root first, ending at the leaf).

    Returns ``None`` when there is nothing to compact (the leaf is a compaction, or
    nothing would be summarized). :func:`trace_compaction` returns the same preparation
    with the figures of the walk that found the cut.
    """
    if branch and branch[-1].type == "compaction":  # as trace_compaction decides, without projecting
        return None
    return trace_compaction(branch, keep_recent_tokens, projection).preparation


def trace_compaction(branch: list[Entry], keep_recent_tokens: int,
                     projection: Projection | None = None) -> CompactionTrace:
    """:func:`prepare_compaction`, keeping the walk's figures (running sums, the entry where
    the sum reaches ``keep_recent_tokens``, the move to a valid cut point) and, when there is
    nothing to compact, the reason."""
    proj = projection if projection is not None else project_path(branch)
    if branch and branch[-1].type == "compaction":
        return CompactionTrace(proj, keep_recent_tokens, None, None, "the leaf is a compaction")
    entries = proj.entries
    index = _SweepIndex.of(proj)
    previous_index = index.head
    previous: Entry | None = entries[previous_index].entry if previous_index >= 0 else None
    start = previous_index + 1 if previous is not None else 0
    previous_summary = _summary_of(previous.data) if previous is not None else None
    tokens_before = proj.tokens
    trace = index.cut_point(entries, start, len(entries), keep_recent_tokens)
    cut = trace.cut
    if cut.first_kept_index >= len(entries):
        return CompactionTrace(proj, keep_recent_tokens, trace, None, "no message after the last compaction")
    first_kept = entries[cut.first_kept_index].entry
    if first_kept.id is None:
        return CompactionTrace(proj, keep_recent_tokens, trace, None, "the first kept entry has no id")
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    offsets, conversation = index.offsets, index.conversation
    to_summarize = conversation[offsets[start]:offsets[history_end]]
    prefix = conversation[offsets[cut.turn_start_index]:offsets[cut.first_kept_index]] if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return CompactionTrace(proj, keep_recent_tokens, trace, None,
                               "nothing before the cut: everything fits in keepRecentTokens")
    ops = FileOps()
    if previous is not None and not previous.data.get("fromHook"):
        ops.add_details(previous.data.get("details"))
    # The files of the summarized span: history and split-turn prefix are together the
    # conversation messages before the cut (the span starts at the first one: a head
    # compaction contributes no conversation message).
    end = offsets[cut.first_kept_index]
    for first, target in zip(index.first_ops, (ops.read, ops.written, ops.edited), strict=True):
        for j, path in first:
            if j >= end:
                break
            target[path] = None
    prep = Preparation(proj, keep_recent_tokens, first_kept.id, cut.first_kept_index, cut.is_split_turn,
                       cut.turn_start_index, tokens_before, previous_summary, previous, to_summarize, prefix, ops)
    return CompactionTrace(proj, keep_recent_tokens, trace, prep)


def _summary_of(data: Mapping[str, Any]) -> str | None:
    """The previous compaction's summary as Pi's prompt holds it (``${previousSummary}``): a string as it is,
    another JSON value as JavaScript writes it (``1.5``; ``a,b`` for an array; ``[object Object]``), none where
    JavaScript reads it as false (``0``, ``false``)."""
    summary = data.get("summary")
    if summary is None or isinstance(summary, str):
        return summary
    return js_string(summary) if js_truthy(summary) else None


def _preparation_repr(preparation: Preparation) -> str:
    from .._formatting import fmt_int, plural

    prefix = fmt_int(len(preparation.turn_prefix_messages))
    split = f", split turn (prefix {prefix})" if preparation.is_split_turn else ""
    return (f"<Preparation at {preparation.projection.leaf_id!r} keepRecentTokens="
            f"{fmt_int(preparation.keep_recent_tokens)}: summarize "
            f"{plural(len(preparation.messages_to_summarize), 'message')}{split}, keep from "
            f"{preparation.first_kept_entry_id!r} (≈{fmt_int(preparation.kept_tokens)} tokens), "
            f"{fmt_int(preparation.tokens_before)} tokens before>")


def _files(names: list[str]) -> str:
    from .._card import cut, esc
    from .._formatting import fmt_int

    shown = ", ".join(cut(n, 60) for n in names[:5])
    more = f" (+{fmt_int(len(names) - 5)} more)" if len(names) > 5 else ""
    return esc(f"{fmt_int(len(names))}: {shown}{more}" if names else "none")


def _preparation_html(preparation: Preparation) -> str:
    from .._card import PREVIEW, bar, card, code, cut, esc
    from .._context.tokens import estimate_tokens
    from .._formatting import fmt_int, plural

    summarized = sum(estimate_tokens(m) for m in preparation.messages_to_summarize)
    prefix = sum(estimate_tokens(m) for m in preparation.turn_prefix_messages)
    kept = preparation.kept_tokens
    previous = preparation.previous_summary
    rows = [
        ("keepRecentTokens", fmt_int(preparation.keep_recent_tokens)),
        ("tokens before", fmt_int(preparation.tokens_before)),
        ("first kept entry", f"{code(preparation.first_kept_entry_id)} (context entry "
                             f"#{fmt_int(preparation.first_kept_index)})"),
        ("split turn", "yes: the turn's beginning (" + plural(len(preparation.turn_prefix_messages), "message")
         + f", ≈{fmt_int(prefix)} tokens) is summarized separately" if preparation.is_split_turn else "no"),
        ("to summarize", f"{plural(len(preparation.messages_to_summarize), 'message')}, ≈{fmt_int(summarized)} tokens"),
        ("kept verbatim", f"{plural(preparation.kept_entries, 'entry')}, ≈{fmt_int(kept)} tokens"),
        ("previous summary", esc(cut(previous, PREVIEW)) if previous else "none (first compaction)"),
        ("files read", _files(preparation.read_files)),
        ("files modified", _files(preparation.modified_files)),
    ]
    parts = [("summary", summarized + prefix), ("kept", kept)]
    gauge = bar(parts, "by Pi's estimate", {"summary": "summarized", "kept": "kept"})
    return card("Preparation", f"at {code(preparation.projection.leaf_id)}", rows, gauge)
