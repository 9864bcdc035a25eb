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

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._format.entry import Entry
from .._format.timestamps import parse_ms
from ..jsjson import js_truthy
from .projected import ProjectedEntry, Projection, replay_system

if TYPE_CHECKING:
    from .._tree.sessiontree import SessionTree

__all__ = [
    "ProjectedEntry",
    "Projection",
    "context_entries",
    "entry_messages",
    "latest_edits",
    "project",
    "project_at",
    "project_path",
    "project_prefixes",
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
        if not isinstance(role, str) or role not in _EDITABLE_ROLES:  # (an array or object as a role: no role)
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


def _settings(path: Sequence[Entry], model: dict[str, Any] | None = None,
              thinking: Any = "off") -> tuple[dict[str, Any] | None, Any]:
    """The model and thinking level after ``path``, from those before it (``model``, ``thinking``)."""
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


def _project_entries(entries: list[Entry],
                     cache: dict[Any, ProjectedEntry] | None = None) -> list[ProjectedEntry]:
    """Each context entry with its messages; with ``cache``, an entry projected before the same way
    (the same edit, or none; head or not, for a compaction) is the one built then."""
    edits = latest_edits(entries)
    projected = []
    for index, entry in enumerate(entries):
        head = not (entry.type == "compaction" and index > 0)  # a compaction below the head adds nothing
        edit = edits.get(entry.id) if head and edits else None
        key: Any = id(entry) if head and edit is None else (id(entry), id(edit) if edit is not None else None)
        done = cache.get(key) if cache is not None else None
        if done is None:
            done = ProjectedEntry(entry, apply_edit(entry_messages(entry), edit), edit, plain=edit is None) \
                if head else ProjectedEntry(entry, [])
            if cache is not None:
                cache[key] = done
        projected.append(done)
    return projected


def project_path(path: list[Entry], leaf_id: Any = None) -> Projection:
    """Project a branch (root first) into the model's context."""
    entries, compaction = context_entries(path)
    model, thinking = _settings(path)
    return Projection(leaf_id if leaf_id is not None else (path[-1].id if path else None),
                      _project_entries(entries), compaction, model, thinking, path=path)


def project_prefixes(path: list[Entry], ends: Iterable[int],
                     cache: dict[Any, ProjectedEntry] | None = None) -> dict[int, Projection]:
    """``{n: project_path(path[:n])}`` for each ``n`` of ``ends``, in one pass over ``path``.

    The model and thinking level are carried along the path instead of read again from its
    start for each prefix, and ``cache`` (kept across calls by the caller) makes an entry
    several prefixes hold projected once: the projections equal :func:`project_path`'s.
    """
    out: dict[int, Projection] = {}
    thinking: Any = "off"
    model: dict[str, Any] | None = None
    done = 0
    for end in sorted(set(ends)):
        model, thinking = _settings(path[done:end], model, thinking)
        done = max(done, end)
        prefix = path[:end]
        entries, compaction = context_entries(prefix)
        out[end] = Projection(prefix[-1].id if prefix else None, _project_entries(entries, cache), compaction,
                              dict(model) if model is not None else None, thinking, path=prefix)
    return out


def _kept_and_after(session: SessionTree, leaf: Entry, compaction: Entry) -> list[Entry]:
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


def project_at(tree: SessionTree, leaf: Any) -> Projection:
    """The projection at ``leaf`` as :meth:`~pikit.SessionTree.resolve_leaf` reads it (``None``: the empty leaf)."""
    return project(tree, tree.resolve_leaf(leaf))


def project(session: SessionTree, leaf_id: Any, indexed: bool = True) -> Projection:
    """Project ``session`` at ``leaf_id`` (``None``: the reset leaf, an empty context; any leaf
    :meth:`~pikit.Session.resolve_leaf` reads).

    With the session's ancestry index the cost is the size of the context, not the depth
    of the branch; a session with parent cycles falls back to walking the branch.
    """
    return _project(session, session.resolve_leaf(leaf_id), indexed)


def _project(session: SessionTree, leaf_id: Any, indexed: bool) -> Projection:
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
