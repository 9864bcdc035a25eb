"""What a projection holds: the context entries, their messages, and the figures over them.

:class:`Projection` is what :meth:`pikit.Session.context` returns, and :class:`ProjectedEntry`
one context entry of it; both draw their own notebook card. How a branch becomes a
projection is ``pikit._context.projection``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .._format.content import content_text
from .._format.entry import Entry, is_key
from ..jsjson import js_items
from .tokens import ContextSize, context_size, estimate_tokens, message_usage

__all__ = ["ProjectedEntry", "Projection", "replay_system", "segment_tokens"]

_MISSING: Any = object()


@dataclass(repr=False)
class ProjectedEntry:
    """One context entry and the messages it contributes to the model."""

    entry: Entry
    messages: list[dict[str, Any]]
    edit: Entry | None = None
    plain: bool = False  # the entry's own messages, unedited: their estimates are cached on the entry
    _estimates: list[int] | None = field(default=None, repr=False, compare=False)
    _roles: frozenset[Any] | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        """``<ProjectedEntry '1d4d5299' message/user kept: 1 message, 13 tokens>``."""
        from .._formatting import plural
        from .describe import entry_kind

        return (f"<ProjectedEntry {self.id!r} {entry_kind(self.entry)} {self.status}: "
                f"{plural(len(self.messages), 'message')}, {plural(self.tokens, 'token')}>")

    def _repr_html_(self) -> str:
        """A card: kind, status, the edit that changed it, its messages with their estimates."""
        return _entry_html(self)

    @property
    def estimates(self) -> list[int]:
        """Pi's estimate of each of the entry's messages (computed once per entry)."""
        if self._estimates is None:
            if self.plain:
                cached = self.entry._estimates
                if cached is None:
                    cached = self.entry._estimates = [estimate_tokens(m) for m in self.messages]
                self._estimates = cached
            else:
                self._estimates = [estimate_tokens(m) for m in self.messages]
        return self._estimates

    @property
    def tokens(self) -> int:
        """Pi's estimate of the entry's messages."""
        return sum(self.estimates)

    @property
    def roles(self) -> frozenset[Any]:
        """The roles of the entry's messages (computed once)."""
        if self._roles is None:
            # An array or object as a role matches no role Pi knows: it is left out.
            self._roles = frozenset(role for m in self.messages if is_key(role := m.get("role")))
        return self._roles

    @property
    def id(self) -> Any:
        """The source entry id."""
        return self.entry.id

    @property
    def status(self) -> str:
        """``kept``, ``omitted`` or ``replaced`` (by an edit), ``summary`` (the head
        compaction) or ``silent`` (an entry that never reaches the model)."""
        if self.edit is not None:
            return "omitted" if not self.messages else "replaced"
        if self.entry.type == "compaction" and self.messages:
            return "summary"
        return "kept" if self.messages else "silent"


def replay_system(messages: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The current system message: every system message replayed in order.

    Non-empty texts are joined by a blank line, ``sections`` are patched by name (null
    deletes), tools are resolved by name (removals, then additions, per message).
    ``None`` when there is no system message and no tool.
    """
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = _MISSING
    for message in messages:
        if message.get("role") != "system":
            continue
        if timestamp is _MISSING or timestamp is None:
            timestamp = message.get("timestamp", _MISSING)
        text = content_text(message.get("content"))
        if text:
            texts.append(text)
        raw_sections = message.get("sections")
        if isinstance(raw_sections, Mapping):
            for name, value in js_items(raw_sections):
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        for tool in _list(message.get("toolsRemoved")):
            if isinstance(tool, Mapping):
                tools.pop(_key(tool.get("name")), None)
        for tool in _list(message.get("toolsAdded")):
            if isinstance(tool, Mapping):
                tools[_key(tool.get("name"))] = tool
    if timestamp is _MISSING and not tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(texts)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = list(tools.values())
    out["timestamp"] = 0 if timestamp is _MISSING or timestamp is None else timestamp
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _key(name: Any) -> Any:
    return name if isinstance(name, str | int | float | bool) or name is None else id(name)


class Projection:
    """The projected context at one leaf.

    ``messages`` is exactly what Pi would send (before provider formatting);
    ``sources[i]`` is the id of the entry that produced ``messages[i]``. The branch
    (``path``) is materialized only when asked for.
    """

    def __init__(self, leaf_id: Any, entries: list[ProjectedEntry], compaction: Entry | None,
                 model: dict[str, Any] | None, thinking_level: Any, *, path: list[Entry] | None = None,
                 branch: Callable[[], list[Entry]] | None = None,
                 usage_positions: Callable[[Any], tuple[int, int]] | None = None) -> None:
        self.leaf_id = leaf_id
        self.entries = entries
        self.compaction = compaction
        self.model = model
        self.thinking_level = thinking_level
        self._path = path
        self._branch = branch
        self._usage_positions = usage_positions
        self.messages: list[dict[str, Any]] = [m for pe in entries for m in pe.messages]
        self.sources: list[Any] = [pe.entry.id for pe in entries for _ in pe.messages]

    def __repr__(self) -> str:
        """``<Projection at '0ce8fc25': 59 messages, 10,599 tokens, compaction 'f6135720'>``."""
        from .._formatting import plural

        compaction = f", compaction {self.compaction.id!r}" if self.compaction is not None else ""
        return (f"<Projection at {self.leaf_id!r}: {plural(len(self.messages), 'message')}, "
                f"{plural(self.tokens, 'token')}{compaction}>")

    def _repr_html_(self) -> str:
        """A card: leaf, model, size and how it was obtained, the segment bar, the last messages."""
        return _projection_html(self)

    @property
    def path(self) -> list[Entry]:
        """The branch, root first, ending at the leaf."""
        if self._path is None:
            self._path = self._branch() if self._branch is not None else []
        return self._path

    @cached_property
    def estimates(self) -> list[int]:
        """Pi's token estimate of each message."""
        return [e for pe in self.entries for e in pe.estimates]

    @cached_property
    def system_message(self) -> dict[str, Any] | None:
        """The replayed current system message (prompt, sections, tools)."""
        return replay_system(self.messages)

    def _positions(self, source: Any) -> tuple[int, int]:
        """Branch positions of entry ``source`` and of the last edit or compaction (-1: none)."""
        if self._usage_positions is not None:
            return self._usage_positions(source)
        path = self.path
        usage_position = next((i for i in range(len(path) - 1, -1, -1) if path[i].id == source), -1)
        invalidation = next((i for i in range(len(path) - 1, -1, -1)
                             if path[i].type in ("context_edit", "compaction")), -1)
        return usage_position, invalidation

    @cached_property
    def size(self) -> ContextSize:
        """The context size by Pi's rule (last usable usage + trailing estimates, or estimates)."""
        messages = self.messages
        index = next((i for i in range(len(messages) - 1, -1, -1) if message_usage(messages[i]) is not None), None)
        usage_position, invalidation = self._positions(self.sources[index]) if index is not None else (-1, -1)
        system = self.system_message
        return context_size(messages, self.estimates, usage_position, invalidation,
                            estimate_tokens(system) if system is not None else 0)

    @property
    def tokens(self) -> int:
        """The context size in tokens (``tokens`` in ``pikit context --json``)."""
        return self.size.tokens

    @cached_property
    def segments(self) -> list[str]:
        """For each message: ``system``, ``summary``, ``kept`` or ``new`` (the parts of a budget bar).

        ``summary`` is the head compaction's summary; ``kept`` the messages of the entries the
        head compaction kept (before it on the branch); ``new`` everything after it (or every
        non-system message when there is no compaction).
        """
        compaction = self.compaction
        before: set[Any] = set()
        if compaction is not None:
            for entry in self.path:
                if entry is compaction:
                    break
                before.add(entry.id)
        out = []
        for message, source in zip(self.messages, self.sources, strict=True):
            role = message.get("role")
            if role == "system":
                out.append("system")
            elif role == "compactionSummary" and compaction is not None and source == compaction.id:
                out.append("summary")
            elif source in before:
                out.append("kept")
            else:
                out.append("new")
        return out

    @property
    def context_ids(self) -> list[Any]:
        """Ids of the context entries (the head compaction first, when there is one)."""
        return [pe.entry.id for pe in self.entries]

    @property
    def summarized_ids(self) -> list[Any]:
        """Branch entries the head compaction replaced with its summary."""
        if self.compaction is None:
            return []
        kept = {pe.entry.id for pe in self.entries}
        out = []
        for entry in self.path:
            if entry is self.compaction:
                break
            if entry.id not in kept:
                out.append(entry.id)
        return out

    @property
    def omitted_ids(self) -> list[Any]:
        """Entries whose messages a context edit removed."""
        return [pe.entry.id for pe in self.entries if pe.status == "omitted"]

    @property
    def replaced_ids(self) -> list[Any]:
        """Entries whose content a context edit replaced."""
        return [pe.entry.id for pe in self.entries if pe.status == "replaced"]


def segment_tokens(projection: Projection) -> list[tuple[str, int]]:
    """Estimated tokens of the system prompt (counted once), summary, kept and new messages."""
    sums = {"system": 0, "summary": 0, "kept": 0, "new": 0}
    for segment, estimate in zip(projection.segments, projection.estimates, strict=True):
        if segment != "system":
            sums[segment] += estimate
    system = projection.system_message
    sums["system"] = estimate_tokens(system) if system is not None else 0
    return list(sums.items())


def _size_text(projection: Projection) -> str:
    from .._formatting import fmt_int

    size = projection.size
    if size.usage_index is None:
        return f"{fmt_int(size.tokens)} (all estimated: no usable usage)"
    if size.stale:
        return f"{fmt_int(size.tokens)} (all estimated: the last usage predates an edit or a compaction)"
    return (f"{fmt_int(size.tokens)} ({fmt_int(size.usage_tokens)} reported by the provider + "
            f"{fmt_int(size.trailing_tokens)} estimated after it)")


def _projection_html(projection: Projection) -> str:
    from .._card import PREVIEW, TABLE_ROWS, badge, bar, card, code, cut, esc, note, table
    from .._formatting import fmt_int, plural
    from .describe import message_preview

    compaction = projection.compaction
    rows = [
        ("model", esc(_model_name(projection.model) or "not recorded")
         + f" · thinking {esc(projection.thinking_level)}"),
        ("messages", fmt_int(len(projection.messages))),
        ("context size", esc(_size_text(projection))),
    ]
    if compaction is not None:
        rows.append(("compaction", f"{code(compaction.id)} summarizes "
                                   f"{plural(len(projection.summarized_ids), 'entry')}"))
    omitted, replaced = len(projection.omitted_ids), len(projection.replaced_ids)
    if omitted or replaced:
        rows.append(("context edits", f"{fmt_int(omitted)} omitted, {fmt_int(replaced)} replaced"))
    start = max(0, len(projection.messages) - TABLE_ROWS)
    listing = table(
        ("#", "role", "source", "est", "text"),
        ((str(i), badge(m.get("role")), code(str(projection.sources[i])[:8]), fmt_int(projection.estimates[i]),
          esc(cut(message_preview(m), PREVIEW)))
         for i, m in enumerate(projection.messages[start:], start)),
        numeric=(0, 3))
    more = (note(f"… {plural(start, 'earlier message')} (pikit.frames.messages(projection) lists all)")
            if start else "")
    return card("Projection", f"at {code(projection.leaf_id)}", rows,
                 bar(segment_tokens(projection), "by Pi's estimate"), more, listing)


def _entry_html(projected: ProjectedEntry) -> str:
    from .._card import ENTRY_PREVIEW, TABLE_ROWS, badge, card, code, cut, esc, note, table
    from .._formatting import fmt_int
    from .describe import entry_kind, message_preview

    rows = [("kind", esc(entry_kind(projected.entry))), ("status", esc(projected.status)),
            ("tokens", fmt_int(projected.tokens) + " (Pi's estimate)")]
    if projected.edit is not None:
        rows.append(("edited by", code(projected.edit.id)))
    listing = table(("role", "est", "text"),
                   ((badge(m.get("role")), fmt_int(e), esc(cut(message_preview(m), ENTRY_PREVIEW)))
                    for m, e in zip(projected.messages[:TABLE_ROWS], projected.estimates, strict=False)),
                   numeric=(1,)) if projected.messages else note("contributes no message to the model")
    return card("ProjectedEntry", code(projected.id), rows, listing)


def _model_name(model: Any) -> str | None:
    if not isinstance(model, dict) or model.get("modelId") is None:
        return None
    provider = model.get("provider")
    return f"{provider}/{model['modelId']}" if provider else str(model["modelId"])
