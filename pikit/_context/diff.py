"""Context diffs: what changes in the model's context between two projections.

Two projections (two leaves of one session, or the same branch before and after a
compaction) are aligned message by message. A message is identified by its *source entry*,
its role and its position among that entry's messages, so a message that both contexts
take from the same entry lines up even when an edit changed its content, while a
compaction's summary block (taken from the compaction entry) and the messages it summarized
(taken from the older entries) show up as added and removed.

Only what the model would see differently counts as a change: a removed and an added message
with the same content (the same role and fields, the timestamp aside) are one ``same`` row
taken from two sources, such as the system prompt a compaction replays. Rows a compaction
accounts for carry a ``note``: ``summarized`` (a message the summary replaced) and
``summary`` (the compaction's summary block).

The alignment is a longest-common-subsequence match (:class:`difflib.SequenceMatcher`) of
those identities, after trimming the common prefix and suffix, which is what two leaves of
one tree usually share. Removed and added messages are then paired by a key of their whole
content, so long branches of similar messages cost time in proportion to their length.

>>> from pikit._context.diff import diff_contexts
>>> d = diff_contexts(session.context(main_leaf), session.context(other_leaf))
>>> d.totals.tokens_delta, [r.status for r in d.rows][:3]

Pure Python; imports nothing beyond the core.
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._card import rtext
from .._formatting import fmt_delta, fmt_int
from .projected import Projection
from .projection import project_at

if TYPE_CHECKING:
    from .._tree.sessiontree import SessionTree

__all__ = [
    "DiffRow",
    "DiffStatus",
    "DiffTotals",
    "ProjectionDiff",
    "diff_compaction",
    "diff_contexts",
    "diff_leaves",
    "message_keys",
]

DiffStatus = Literal["added", "removed", "changed", "same"]
"""``added`` (only in b), ``removed`` (only in a), ``changed`` (same source, new content), ``same``."""

MessageKey = tuple[Hashable, Any, int]


@dataclass(frozen=True)
class DiffRow:
    """One aligned row: a message of ``a``, of ``b``, or of both.

    ``index_a``/``index_b`` are positions in the projections' ``messages`` (``None`` on the
    side the message is missing from); estimates are Pi's token estimates (0 when missing).
    """

    status: DiffStatus
    index_a: int | None
    index_b: int | None
    source_a: Any
    source_b: Any
    role_a: str | None
    role_b: str | None
    estimate_a: int
    estimate_b: int
    message_a: Mapping[str, Any] | None
    message_b: Mapping[str, Any] | None
    note: str = ""
    """What a compaction made of the row: ``summary``, ``previous summary``, ``summarized`` or ``""``."""

    @property
    def delta(self) -> int:
        """Estimated tokens gained (positive) or lost (negative) from a to b."""
        return self.estimate_b - self.estimate_a

    @property
    def source(self) -> Any:
        """The source entry id (b's when the row has both sides)."""
        return self.source_b if self.index_b is not None else self.source_a

    @property
    def role(self) -> str | None:
        """The message role (b's when the row has both sides)."""
        return self.role_b if self.index_b is not None else self.role_a

    @property
    def message(self) -> Mapping[str, Any] | None:
        """The message (b's when the row has both sides)."""
        return self.message_b if self.index_b is not None else self.message_a

    def __repr__(self) -> str:
        """``<DiffRow added user from '1d4d5299' +13 tokens (summary)>``."""
        note = f" ({self.note})" if self.note else ""
        return (f"<DiffRow {self.status} {self.role!s:.20} from {rtext(self.source, 20)} "
                f"{fmt_delta(self.delta)} tokens{note}>")

    def to_record(self) -> dict[str, Any]:
        """A flat dict (a DataFrame row), without the message bodies."""
        return {"status": self.status, "index_a": self.index_a, "index_b": self.index_b,
                "source_a": self.source_a, "source_b": self.source_b, "role_a": self.role_a,
                "role_b": self.role_b, "estimate_a": self.estimate_a, "estimate_b": self.estimate_b,
                "delta": self.delta, "note": self.note}


@dataclass(frozen=True)
class DiffTotals:
    """Counts and token figures of a diff.

    ``tokens_a``/``tokens_b`` are the projections' context sizes by Pi's rule (provider
    usage where usable); ``estimate_a``/``estimate_b`` are the sums of the message estimates.
    """

    added: int
    removed: int
    changed: int
    same: int
    added_tokens: int
    removed_tokens: int
    changed_delta: int
    estimate_a: int
    estimate_b: int
    tokens_a: int
    tokens_b: int

    def __repr__(self) -> str:
        """``<DiffTotals +2 (+40) −5 (−300) ~0 (+0) =6, 574 → 300 tokens>``."""
        return (f"<DiffTotals +{self.added} ({fmt_delta(self.added_tokens)}) −{self.removed} "
                f"({fmt_delta(-self.removed_tokens)}) ~{self.changed} ({fmt_delta(self.changed_delta)}) ={self.same}, "
                f"{fmt_int(self.tokens_a)} → {fmt_int(self.tokens_b)} tokens>")

    @property
    def estimate_delta(self) -> int:
        """``estimate_b - estimate_a``."""
        return self.estimate_b - self.estimate_a

    @property
    def tokens_delta(self) -> int:
        """``tokens_b - tokens_a`` (context size by Pi's rule)."""
        return self.tokens_b - self.tokens_a


@dataclass(frozen=True)
class ProjectionDiff:
    """The aligned rows of two projections and their totals."""

    a: Projection
    b: Projection
    rows: list[DiffRow]
    totals: DiffTotals

    def __iter__(self) -> Iterator[DiffRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def changes(self) -> list[DiffRow]:
        """The rows that are not ``same``."""
        return [r for r in self.rows if r.status != "same"]

    @property
    def identical(self) -> bool:
        """Whether both projections send the same messages."""
        return all(r.status == "same" for r in self.rows)

    def records(self) -> list[dict[str, Any]]:
        """Rows as DataFrame-ready dicts."""
        return [r.to_record() for r in self.rows]

    def __repr__(self) -> str:
        """``<ProjectionDiff '1527c10e' → 'ddc79522': +2 −5 ~0 =6, 574 → 300 tokens (−274)>``."""
        t = self.totals
        return (f"<ProjectionDiff {self.a.leaf_id!r} → {self.b.leaf_id!r}: +{t.added} −{t.removed} ~{t.changed} "
                f"={t.same}, {fmt_int(t.tokens_a)} → {fmt_int(t.tokens_b)} tokens ({fmt_delta(t.tokens_delta)})>")

    def _repr_html_(self) -> str:
        """A card: the totals, then the first ``TABLE_ROWS`` changed messages."""
        return _diff_html(self)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _hashable(value: Any) -> Hashable:
    return value if type(value) in _PLAIN else repr(value)


def message_keys(sources: Sequence[Any], messages: Sequence[Mapping[str, Any]]) -> list[MessageKey]:
    """The identity of each message: (source entry id, role, position among that entry's messages)."""
    keys: list[MessageKey] = []
    previous: Any = object()
    ordinal = 0
    for source, message in zip(sources, messages, strict=True):
        ordinal = ordinal + 1 if source == previous else 0
        previous = source
        keys.append((_hashable(source), _hashable(message.get("role")), ordinal))
    return keys


def _equal(x: Any, y: Any) -> bool:
    """``x == y``, also for values nested deeper than Python's comparison recurses."""
    try:
        return x is y or bool(x == y)
    except RecursionError:
        pass
    pairs = [(x, y)]
    while pairs:
        a, b = pairs.pop()
        if a is b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            if len(a) != len(b) or any(k not in b for k in a):
                return False
            pairs.extend((v, b[k]) for k, v in a.items())
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pairs.extend(zip(a, b, strict=True))
        elif isinstance(a, (Mapping, list)) or isinstance(b, (Mapping, list)) or a != b:
            return False
    return True


def _same(x: Mapping[str, Any], y: Mapping[str, Any]) -> bool:
    return _equal(x, y)


def _same_content(x: Mapping[str, Any], y: Mapping[str, Any]) -> bool:
    """Equal but for the timestamp (which the model never sees)."""
    if _same(x, y):
        return True
    if len(x) - ("timestamp" in x) != len(y) - ("timestamp" in y):
        return False
    return all(k == "timestamp" or (k in y and _equal(y[k], v)) for k, v in x.items())


_MAPPING, _LIST, _OPAQUE = object(), object(), object()  # the markers of a content key


def _content_key(message: Mapping[str, Any], estimate: int) -> Hashable:
    """The estimate and the whole content of ``message`` but its timestamp, as one flat tuple.

    A mapping is a marker, its size and its sorted keys, then its values; a list a marker and
    its length, then its items; any other hashable value stands for itself. Two messages of
    JSON values therefore have equal keys exactly when they have the same content
    (``_same_content``): ``1``, ``1.0`` and ``True`` compare equal in both. A value with no
    hash (or a mapping with keys that are not strings) stands for one opaque marker, which
    only makes a key less precise: candidates are still checked with ``_same_content``. The
    walk is iterative and the tuple flat, so no nesting depth reaches the recursion limit.
    """
    key: list[Any] = [estimate]
    stack: list[Any] = [{k: v for k, v in message.items() if k != "timestamp"}]
    while stack:
        value = stack.pop()
        if type(value) in _PLAIN:
            key.append(value)
        elif isinstance(value, list):
            key += (_LIST, len(value))
            stack.extend(reversed(value))
        elif isinstance(value, Mapping) and all(isinstance(name, str) for name in value):
            names = sorted(value)
            key += (_MAPPING, len(names), *names)
            stack.extend(value[name] for name in reversed(names))
        else:
            key.append(value if _has_hash(value) else _OPAQUE)
    return tuple(key)


def _has_hash(value: Any) -> bool:
    try:
        hash(value)
    except (TypeError, RecursionError):
        return False
    return True


def _match_content(rows: list[DiffRow]) -> list[DiffRow]:
    """Pair removed and added rows that carry the same content into ``same`` rows (at b's place)."""
    removed: dict[Hashable, list[int]] = {}
    for k, row in enumerate(rows):
        if row.status == "removed" and row.message_a is not None:
            removed.setdefault(_content_key(row.message_a, row.estimate_a), []).append(k)
    if not removed:
        return rows
    pairs: dict[int, int] = {}  # added row -> removed row
    for k, row in enumerate(rows):
        if row.status != "added" or row.message_b is None:
            continue
        candidates = removed.get(_content_key(row.message_b, row.estimate_b), [])
        for position, other in enumerate(candidates):
            message = rows[other].message_a
            if message is not None and _same_content(message, row.message_b):
                pairs[k] = candidates.pop(position)
                break
    if not pairs:
        return rows
    gone = set(pairs.values())
    out = []
    for k, row in enumerate(rows):
        if k in gone:
            continue
        if k in pairs:
            old = rows[pairs[k]]
            row = DiffRow("same", old.index_a, row.index_b, old.source_a, row.source_b, old.role_a, row.role_b,
                          old.estimate_a, row.estimate_b, old.message_a, row.message_b)
        out.append(row)
    return out


def _notes(rows: list[DiffRow], a: Projection, b: Projection) -> list[DiffRow]:
    """Label the rows a compaction accounts for: its summary, the summary it replaced, what it summarized."""
    if a.compaction is b.compaction or all(row.status in ("same", "changed") for row in rows):
        return rows
    summarized = set(b.summarized_ids) | set(a.summarized_ids)
    new_head = b.compaction.id if b.compaction is not None else _NONE
    old_head = a.compaction.id if a.compaction is not None else _NONE
    out = []
    for row in rows:
        note = ""
        if row.status == "added" and row.source == new_head:
            note = "summary"
        elif row.status == "removed" and row.source == old_head:
            note = "previous summary"
        elif row.status in ("removed", "added") and row.source in summarized:
            note = "summarized"
        out.append(DiffRow(row.status, row.index_a, row.index_b, row.source_a, row.source_b, row.role_a, row.role_b,
                           row.estimate_a, row.estimate_b, row.message_a, row.message_b, note) if note else row)
    return out


_NONE = object()


def diff_contexts(a: Projection, b: Projection) -> ProjectionDiff:
    """Align the messages of ``a`` and ``b`` (see the module docstring) and total the changes."""
    ma, mb = a.messages, b.messages
    ea, eb = a.estimates, b.estimates
    ka, kb = message_keys(a.sources, ma), message_keys(b.sources, mb)
    rows: list[DiffRow] = []

    def pair(i: int, j: int) -> None:
        status: DiffStatus = "same" if _same(ma[i], mb[j]) else "changed"
        rows.append(DiffRow(status, i, j, a.sources[i], b.sources[j], ma[i].get("role"), mb[j].get("role"),
                            ea[i], eb[j], ma[i], mb[j]))

    def removed(i: int) -> None:
        rows.append(DiffRow("removed", i, None, a.sources[i], None, ma[i].get("role"), None, ea[i], 0, ma[i], None))

    def added(j: int) -> None:
        rows.append(DiffRow("added", None, j, None, b.sources[j], None, mb[j].get("role"), 0, eb[j], None, mb[j]))

    # Common prefix and suffix first: two leaves of one tree share their start.
    n, m = len(ka), len(kb)
    prefix = 0
    while prefix < n and prefix < m and ka[prefix] == kb[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and suffix < m - prefix and ka[n - 1 - suffix] == kb[m - 1 - suffix]:
        suffix += 1
    for i in range(prefix):
        pair(i, i)
    middle_a, middle_b = ka[prefix:n - suffix], kb[prefix:m - suffix]
    if middle_a and middle_b:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for offset in range(i2 - i1):
                    pair(prefix + i1 + offset, prefix + j1 + offset)
                continue
            for i in range(i1, i2):
                removed(prefix + i)
            for j in range(j1, j2):
                added(prefix + j)
    else:
        for i in range(len(middle_a)):
            removed(prefix + i)
        for j in range(len(middle_b)):
            added(prefix + j)
    for offset in range(suffix):
        pair(n - suffix + offset, m - suffix + offset)
    rows = _notes(_match_content(rows), a, b)
    return ProjectionDiff(a, b, rows, _totals(rows, a, b))


def _totals(rows: Sequence[DiffRow], a: Projection, b: Projection) -> DiffTotals:
    counts = {"added": 0, "removed": 0, "changed": 0, "same": 0}
    added_tokens = removed_tokens = changed_delta = 0
    for row in rows:
        counts[row.status] += 1
        if row.status == "added":
            added_tokens += row.estimate_b
        elif row.status == "removed":
            removed_tokens += row.estimate_a
        elif row.status == "changed":
            changed_delta += row.delta
    return DiffTotals(counts["added"], counts["removed"], counts["changed"], counts["same"], added_tokens,
                      removed_tokens, changed_delta, sum(a.estimates), sum(b.estimates), a.tokens, b.tokens)


def diff_leaves(session: SessionTree, a: Any, b: Any) -> ProjectionDiff:
    """The diff of the contexts at two leaves of ``session`` (``None`` is the empty reset leaf)."""
    return diff_contexts(project_at(session, a), project_at(session, b))


def diff_compaction(session: SessionTree, compaction_id: Any) -> ProjectionDiff:
    """The context just before a compaction (at its parent) against the context it leaves.

    The summary block appears as added, the summarized messages as removed, the kept range
    as same.
    """
    entry = session.entry(compaction_id)
    if entry.type != "compaction":
        raise ValueError(f"entry {entry.id!r} is a {entry.type}, not a compaction")
    parent = entry.parent_id if entry.parent_id in session else None
    return diff_contexts(project_at(session, parent), project_at(session, compaction_id))


_SYMBOL = {"added": "+", "removed": "\u2212", "changed": "~", "same": "="}


def _diff_html(diff: ProjectionDiff) -> str:
    from .._card import PREVIEW, TABLE_ROWS, badge, card, code, cut, esc, note, table
    from .._formatting import plural
    from .describe import message_preview

    t = diff.totals
    rows = [
        ("context size", f"{fmt_int(t.tokens_a)} → {fmt_int(t.tokens_b)} ({esc(fmt_delta(t.tokens_delta))}, "
                         "Pi's rule)"),
        ("estimates", f"{fmt_int(t.estimate_a)} → {fmt_int(t.estimate_b)} ({esc(fmt_delta(t.estimate_delta))})"),
        ("added", f"{fmt_int(t.added)} ({esc(fmt_delta(t.added_tokens))})"),
        ("removed", f"{fmt_int(t.removed)} ({esc(fmt_delta(-t.removed_tokens))})"),
        ("changed", f"{fmt_int(t.changed)} ({esc(fmt_delta(t.changed_delta))})"),
        ("same", fmt_int(t.same)),
    ]
    changes = diff.changes()
    shown = changes[:TABLE_ROWS]
    listing = table(
        ("", "role", "source", "est a", "est b", "Δ", "text"),
        ((_SYMBOL[r.status], badge(r.role) + (f" {esc(r.note)}" if r.note else ""), code(str(r.source)[:8]),
          fmt_int(r.estimate_a) if r.index_a is not None else "",
          fmt_int(r.estimate_b) if r.index_b is not None else "",
          esc(fmt_delta(r.delta)), esc(cut(message_preview(r.message or {}), PREVIEW)))
         for r in shown),
        numeric=(3, 4, 5)) if changes else note("both contexts send the same messages")
    more = (note(f"… {plural(len(changes) - len(shown), 'more changed message')} (the rows attribute lists all)")
            if len(changes) > len(shown) else "")
    heading = f"{code(diff.a.leaf_id)} → {code(diff.b.leaf_id)}"
    return card("ProjectionDiff", heading, rows, listing, more)
