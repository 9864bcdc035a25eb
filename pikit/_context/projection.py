"""What the model sees: the projection of one branch, with provenance.

1. The *context entries*: the branch, or — when it holds a compaction — the latest
   compaction, the branch entries from its ``firstKeptEntryId`` up to it (system messages
   left out), then everything after it.
2. Each context entry projects to zero or more model messages; the latest
   ``context_edit`` per target (among the context entries) omits or replaces them.
3. Model and thinking level come from the whole branch; the current system prompt is
   the replay of every system message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .._format.content import content_text
from .._format.entry import Entry, is_key
from .._format.timestamps import parse_ms
from .tokens import ContextSize, context_size, estimate_tokens, js_truthy, message_usage

if TYPE_CHECKING:
    from .._tree.sessiontree import Session

__all__ = [
    "ProjectedEntry",
    "Projection",
    "context_entries",
    "entry_messages",
    "latest_edits",
    "project",
    "project_path",
    "replay_system",
]

_MISSING: Any = object()
_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


def _copy_present(out: dict[str, Any], data: Mapping[str, Any], keys: Iterable[str]) -> None:
    for key in keys:
        if key in data:
            out[key] = data[key]


def entry_messages(entry: Entry) -> list[dict[str, Any]]:
    """The model messages one entry contributes, before edits (Pi's per-entry projection)."""
    kind = entry.type
    if kind == "message":
        message = entry.message
        if message is None:
            return []
        role = message.get("role")
        if message.get("content") is None:
            if role == "system":
                return [{**message, "content": ""}]
            if role in ("user", "assistant", "toolResult"):
                return [{**message, "content": []}]
        return [message]
    data = entry.data
    if kind == "custom_message":
        out: dict[str, Any] = {"role": "custom"}
        _copy_present(out, data, ("customType",))
        content = data.get("content")
        out["content"] = [] if content is None else content
        _copy_present(out, data, ("display", "details"))
        out["timestamp"] = parse_ms(data.get("timestamp"))
        return [out]
    if kind == "branch_summary" and js_truthy(data.get("summary")):
        out = {"role": "branchSummary", "summary": data["summary"]}
        _copy_present(out, data, ("fromId",))
        out["timestamp"] = parse_ms(data.get("timestamp"))
        return [out]
    if kind == "compaction":
        summary = _compaction_summary(data)
        system = data.get("systemMessage")
        return [system, summary] if isinstance(system, dict) and js_truthy(system) else [summary]
    return []


def _compaction_summary(data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "compactionSummary"}
    _copy_present(out, data, ("summary", "tokensBefore"))
    out["timestamp"] = parse_ms(data.get("timestamp"))
    return out


def apply_edit(messages: list[dict[str, Any]], edit: Entry | None) -> list[dict[str, Any]]:
    """Apply a ``context_edit`` to an entry's messages: omit them or replace their content."""
    if edit is None:
        return messages
    data = edit.data
    if "replacement" not in data:
        return messages  # not a valid edit: Pi could not apply it either
    replacement = data["replacement"]
    if replacement is None:
        return []
    if not isinstance(replacement, Mapping):
        return messages
    out = []
    for message in messages:
        role = message.get("role")
        if role not in _EDITABLE_ROLES:
            out.append(message)
            continue
        new = dict(message)
        if "content" in replacement:
            content = replacement["content"]
            if role in ("assistant", "toolResult") and isinstance(content, str):
                content = [{"type": "text", "text": content}]
            new["content"] = content
        else:
            new.pop("content", None)  # JavaScript's undefined: the key is not printed
        out.append(new)
    return out


def context_entries(path: Sequence[Entry]) -> tuple[list[Entry], Entry | None]:
    """The compaction-aware entry list of a branch, and its head compaction (if any)."""
    compaction_index = -1
    for i in range(len(path) - 1, -1, -1):
        if path[i].type == "compaction":
            compaction_index = i
            break
    if compaction_index < 0:
        return list(path), None
    compaction = path[compaction_index]
    first_kept = compaction.data.get("firstKeptEntryId")
    out = [compaction]
    found = False
    for entry in path[:compaction_index]:
        if not found and entry.id == first_kept:
            found = True
        if found and not (entry.type == "message" and entry.role == "system"):
            out.append(entry)
    out.extend(path[compaction_index + 1:])
    return out, compaction


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
        from .cards import entry_repr

        return entry_repr(self)

    def _repr_html_(self) -> str:
        """A summary card for notebooks (session text escaped)."""
        from .cards import entry_html

        return entry_html(self)

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
    from ..jsjson import js_items

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
        from .cards import projection_repr

        return projection_repr(self)

    def _repr_html_(self) -> str:
        """A summary card for notebooks (session text escaped)."""
        from .cards import projection_html

        return projection_html(self)

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

    def to_json(self) -> dict[str, Any]:
        """The per-leaf object of ``pikit context --json``."""
        return {
            "path": [e.id for e in self.path],
            "model": self.model,
            "thinkingLevel": self.thinking_level,
            "messages": self.messages,
            "sources": self.sources,
            "estimates": self.estimates,
            "tokens": self.tokens,
        }


def _settings(path: Sequence[Entry]) -> tuple[dict[str, Any] | None, Any]:
    thinking: Any = "off"
    model: dict[str, Any] | None = None
    for entry in path:
        kind = entry.type
        if kind == "thinking_level_change":
            thinking = entry.data.get("thinkingLevel")
        elif kind == "model_change":
            model = _model(entry.data, "provider", "modelId")
        elif entry.model is not None:
            model = dict(entry.model)
    return model, thinking


def _model(data: Mapping[str, Any], provider_key: str, model_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if provider_key in data:
        out["provider"] = data[provider_key]
    if model_key in data:
        out["modelId"] = data[model_key]
    return out


def latest_edits(entries: Iterable[Entry]) -> dict[Any, Entry]:
    """The latest ``context_edit`` per target id among ``entries``."""
    edits: dict[Any, Entry] = {}
    for entry in entries:
        if entry.type == "context_edit":
            target = entry.data.get("targetId")
            if isinstance(target, str | int | float | bool) or target is None:
                edits[target] = entry
    return edits


def _project_entries(entries: list[Entry]) -> list[ProjectedEntry]:
    edits = latest_edits(entries)
    projected = []
    for index, entry in enumerate(entries):
        if entry.type == "compaction" and index > 0:
            projected.append(ProjectedEntry(entry, []))
            continue
        edit = edits.get(entry.id)
        projected.append(ProjectedEntry(entry, apply_edit(entry_messages(entry), edit), edit, plain=edit is None))
    return projected


def project_path(path: list[Entry], leaf_id: Any = None) -> Projection:
    """Project a branch (root first) into the model's context."""
    entries, compaction = context_entries(path)
    model, thinking = _settings(path)
    return Projection(leaf_id if leaf_id is not None else (path[-1].id if path else None),
                      _project_entries(entries), compaction, model, thinking, path=path)


def _kept_and_after(session: Session, leaf: Entry, compaction: Entry) -> list[Entry]:
    """The context entries below a head compaction, walking up only as far as needed."""
    by_id = session.by_id
    after: list[Entry] = []
    current = leaf
    while current is not compaction:
        after.append(current)
        current = by_id[current.parent_id]
    first_kept = compaction.data.get("firstKeptEntryId")
    kept: list[Entry] = []
    parent = compaction.parent_id
    while parent and isinstance(parent, str | int | float) and parent in by_id and parent != current.id:
        current = by_id[parent]
        if not (current.type == "message" and current.role == "system"):
            kept.append(current)
        if current.id == first_kept:
            kept.reverse()
            after.reverse()
            return [compaction, *kept, *after]
        parent = current.parent_id
    after.reverse()
    return [compaction, *after]  # the first kept entry is not on the branch: nothing before is kept


def project(session: Session, leaf_id: Any, indexed: bool = True) -> Projection:
    """Project ``session`` at ``leaf_id`` (``None``: the reset leaf, an empty context; any leaf
    :meth:`~pikit._tree.sessiontree.Session.resolve_leaf` reads).

    With the session's ancestry index the cost is the size of the context, not the depth
    of the branch; a session with parent cycles falls back to walking the branch.
    """
    return _project(session, session.resolve_leaf(leaf_id), indexed)


def _project(session: Session, leaf_id: Any, indexed: bool) -> Projection:
    if leaf_id is None:
        return project_path([], None)
    ancestry = session.ancestry if indexed else None
    if ancestry is None:
        return project_path(session.branch(leaf_id), leaf_id)
    leaf = session.entry(leaf_id)
    compaction = ancestry.compaction[leaf_id]
    if compaction is None:
        return project_path(session.branch(leaf_id), leaf_id)
    entries = _kept_and_after(session, leaf, compaction)
    thinking_entry = ancestry.thinking[leaf_id]
    thinking = thinking_entry.data.get("thinkingLevel") if thinking_entry is not None else "off"
    model_entry = ancestry.model[leaf_id]
    model = None
    if model_entry is not None:
        model = _model(model_entry.data, "provider", "modelId") if model_entry.type == "model_change" \
            else dict(model_entry.model or {})
    invalidation = ancestry.invalidation[leaf_id]
    depth = ancestry.depth

    def positions(source: Any) -> tuple[int, int]:
        # Depth is the position on the branch (the usage's entry and the invalidating one are on it).
        return depth.get(source, -1), depth[invalidation.id] if invalidation is not None else -1

    return Projection(leaf_id, _project_entries(entries), compaction, model, thinking,
                      branch=lambda: session.branch(leaf_id), usage_positions=positions)
