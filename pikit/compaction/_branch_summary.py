"""Branch summaries: what is left behind when the leaf moves to another branch.

Leaving leaf ``old`` for ``target``, the entries from ``old`` up to (not including) their
common ancestor are the abandoned branch. Their messages are gathered newest first within
a token budget (summaries get a little extra room), with the files they touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._context.fileops import FileOps, format_file_lists
from .._context.projection import _compaction_summary, apply_edit, entry_messages, latest_edits
from .._context.serialize import serialize_conversation, to_model_messages
from .._context.tokens import estimate_tokens
from .._format.entry import Entry
from .._format.timestamps import parse_ms

if TYPE_CHECKING:
    from .._tree.sessiontree import SessionTree

__all__ = ["BranchPreparation", "collect_branch", "prepare_branch"]


def collect_branch(session: SessionTree, old_leaf: Any, target: Any) -> tuple[list[Entry], Any]:
    """The abandoned entries (oldest first) and the common ancestor id, leaving ``old_leaf`` for ``target``."""
    if not old_leaf:
        return [], None
    old_leaf = session.resolve_leaf(old_leaf)
    ancestor = session.common_ancestor(old_leaf, target)
    entries: list[Entry] = []
    seen: set[Any] = set()
    current = old_leaf
    while current and current != ancestor and current not in seen:
        entry = session.by_id.get(current)
        if entry is None:
            break
        seen.add(current)
        entries.append(entry)
        current = entry.parent_id
    entries.reverse()
    return entries, ancestor


def _message_of(entry: Entry, edit: Entry | None) -> dict[str, Any] | None:
    kind = entry.type
    if kind == "message":
        if entry.role == "toolResult":
            return None
        if edit is not None:
            edited = apply_edit(entry_messages(entry), edit)
            return edited[0] if edited else None
        return entry.message
    if kind == "custom_message":
        if edit is not None:
            edited = apply_edit(entry_messages(entry), edit)
            return edited[0] if edited else None
        data = entry.data
        out: dict[str, Any] = {"role": "custom"}
        for key in ("customType", "content", "display", "details"):
            if key in data:
                out[key] = data[key]
        out["timestamp"] = parse_ms(data.get("timestamp"))
        return out
    if kind == "branch_summary":
        data = entry.data
        out = {"role": "branchSummary"}
        for key in ("summary", "fromId"):
            if key in data:
                out[key] = data[key]
        out["timestamp"] = parse_ms(data.get("timestamp"))
        return out
    if kind == "compaction":
        return _compaction_summary(entry.data)
    return None


@dataclass
class BranchPreparation:
    """The messages and files of an abandoned branch, within a budget."""

    entries: list[Entry]
    common_ancestor_id: Any
    budget: int
    messages: list[dict[str, Any]]
    total_tokens: int
    file_ops: FileOps = field(repr=False)

    @property
    def conversation_text(self) -> str:
        """The gathered messages serialized for the summarizer."""
        return serialize_conversation(to_model_messages(self.messages))

    @property
    def file_lists_text(self) -> str:
        """The suffix appended to the summary."""
        return format_file_lists(*self.file_ops.lists())


def prepare_branch(entries: Sequence[Entry], budget: int = 0, common_ancestor_id: Any = None) -> BranchPreparation:
    """Gather the branch's messages newest first until ``budget`` tokens (0 = no limit)."""
    ops = FileOps()
    for entry in entries:
        if entry.type == "branch_summary" and not entry.data.get("fromHook"):
            ops.add_details(entry.data.get("details"))
    edits = latest_edits(entries)
    messages: list[dict[str, Any]] = []
    total = 0
    for entry in reversed(entries):
        message = _message_of(entry, edits.get(entry.id))
        if message is None:
            continue
        ops.add_message(message)
        tokens = estimate_tokens(message)
        if budget > 0 and total + tokens > budget:
            if entry.type in ("compaction", "branch_summary") and total < budget * 0.9:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return BranchPreparation(list(entries), common_ancestor_id, budget, messages, total, ops)


def summary_details(prep: BranchPreparation) -> Mapping[str, list[str]]:
    """The ``details`` of a branch summary entry."""
    read, modified = prep.file_ops.lists()
    return {"readFiles": read, "modifiedFiles": modified}
