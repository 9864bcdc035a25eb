"""Running compactions and branch summaries: summarize, build the entry, write it.

Nothing here talks to the network itself: a :class:`~pikit.compaction.Summarizer` writes
the summary text (the embedded offline one, or an HTTP client from :mod:`pikit.llm`).
Building an entry never writes; :func:`write_entry` writes it to a new file (a copy of
the source plus one line) or, only when asked, appends one line to the source with fsync.
A summarizer failure raises before anything is written.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import jsjson
from .._context.projection import project, project_path
from .._context.tokens import context_size, estimate_tokens
from .._format.entry import Entry
from .._format.migration import new_id
from .._format.timestamps import iso_now, parse_ms
from .._format.write import Appender, copy_with_lines
from .._tree.sessiontree import CURRENT, SessionTree
from .._tree.tree import selection
from ..errors import EntryError, PikitError, SummarizerOutputError, WriteError
from ._branch_summary import BranchPreparation, collect_branch, prepare_branch
from ._preparation import Preparation, prepare_compaction
from ._summarizer import Summarizer, SummaryRequest, combine_usage

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "NO_PRIOR_HISTORY",
    "BranchSummaryResult",
    "CompactionResult",
    "build_branch_summary",
    "build_compaction",
    "compact_prepared",
    "compaction_entry",
    "context_edit_entry",
    "label_entry",
    "last_line_is_whole",
    "summarize_preparation",
    "write_entry",
]

NO_PRIOR_HISTORY = "No prior history."
SPLIT_TURN_HEADING = "\n\n---\n\n**Turn Context (split turn):**\n\n"
BRANCH_SUMMARY_PREAMBLE = "This conversation returned from another branch it had explored. What happened there:\n\n"


@dataclass
class CompactionResult:
    """A compaction entry ready to append, with the figures around it."""

    entry: dict[str, Any]
    preparation: Preparation
    tokens_before: int
    tokens_after: int

    @property
    def line(self) -> bytes:
        """The JSON line to append."""
        return jsjson.stringify_bytes(self.entry)

    @property
    def summary_tokens(self) -> int:
        """Pi's estimate of the new summary message."""
        return estimate_tokens({"role": "compactionSummary", "summary": self.entry.get("summary")})

    @property
    def replaced_tokens(self) -> int:
        """Pi's estimate of what the summary replaces: the previous summary, the summarized
        messages and a split turn's prefix."""
        prep = self.preparation
        previous = [{"role": "compactionSummary", "summary": prep.previous_summary}] \
            if prep.previous_summary is not None else []
        return sum(estimate_tokens(m) for m in [*previous, *prep.messages_to_summarize, *prep.turn_prefix_messages])

    @property
    def is_larger(self) -> bool:
        """Whether the summary is larger than what it replaces (writing it makes the context grow)."""
        return self.summary_tokens > self.replaced_tokens

    @property
    def estimated_before(self) -> int:
        """Pi's estimate of the whole context before the compaction (the measure of ``tokens_after``,
        which is all estimated; ``tokens_before`` may start from recorded usage instead)."""
        projection = self.preparation.projection
        system = projection.system_message
        return context_size(projection.messages, projection.estimates,
                            system_estimate=estimate_tokens(system) if system is not None else 0).tokens

    def check_size(self, override: str = "write_entry(session, result.entry, ...) writes it anyway") -> None:
        """Refuse (:class:`~pikit.errors.SummarizerOutputError`) a summary larger than what it
        replaces, with the numbers, all by Pi's estimate: writing it would make the context grow.
        ``override`` tells the user how to write it anyway (by default, with :func:`write_entry`)."""
        if self.is_larger:
            raise SummarizerOutputError(
                f"the summary ({self.summary_tokens:,} tokens) is larger than what it replaces "
                f"({self.replaced_tokens:,} tokens): by Pi's estimate, the context would grow from "
                f"{self.estimated_before:,} to {self.tokens_after:,} tokens; nothing written ({override})")


@dataclass
class BranchSummaryResult:
    """A branch summary entry ready to append."""

    entry: dict[str, Any]
    preparation: BranchPreparation
    new_leaf: Any

    @property
    def line(self) -> bytes:
        """The JSON line to append."""
        return jsjson.stringify_bytes(self.entry)


def _summarize(summarizer: Summarizer, request: SummaryRequest) -> tuple[str, dict[str, Any] | None]:
    result = summarizer.summarize(request)
    return result.text, result.usage


def build_compaction(session: SessionTree, leaf: Any = CURRENT, *, keep_recent_tokens: int,
                     summarizer: Summarizer, instructions: str | None = None) -> CompactionResult:
    """Prepare, summarize and build the compaction entry for the branch at ``leaf``.

    Raises :class:`PikitError` when there is nothing to compact, and whatever the
    summarizer raises (:class:`~pikit.errors.SummarizerError`) when it fails.
    """
    leaf_id = session.resolve_leaf(leaf)
    if leaf_id is None:
        raise EntryError(None, "the leaf is reset (empty branch): nothing to compact")
    branch = session.branch(leaf_id)
    prep = prepare_compaction(branch, keep_recent_tokens, project(session, leaf_id))
    if prep is None:
        raise PikitError(f"nothing to compact at {leaf_id} with keepRecentTokens={keep_recent_tokens} "
                         "(the leaf is a compaction, or everything fits in the kept part)")
    return compact_prepared(session, prep, summarizer=summarizer, instructions=instructions)


def compact_prepared(session: SessionTree, prep: Preparation, *, summarizer: Summarizer,
                     instructions: str | None = None) -> CompactionResult:
    """Summarize a prepared compaction of ``session`` and build its entry (the rest of
    :func:`build_compaction`); the entry's parent is the leaf ``prep`` was prepared at."""
    branch = prep.projection.path
    summary, usage = summarize_preparation(prep, summarizer, instructions)
    entry = compaction_entry(prep, new_id(session.by_id), branch[-1].id, summary, usage)
    after = project_path([*branch, Entry(entry)])
    return CompactionResult(entry, prep, prep.tokens_before, after.tokens)


def summarize_preparation(prep: Preparation, summarizer: Summarizer,
                          instructions: str | None = None) -> tuple[str, dict[str, Any] | None]:
    """The summary of a prepared compaction (file lists appended) and the usage of its call(s).

    A split turn takes two calls, the history (or the previous summary, or a "no prior
    history" note when there is nothing before the turn) and the turn's beginning.
    """
    # The texts are made only if the summarizer reads them (the offline one reads the messages).
    history_request = SummaryRequest("history", lambda: prep.conversation_text, prep.messages_to_summarize,
                                     prep.previous_summary, instructions)
    usage: dict[str, Any] | None = None
    if prep.is_split_turn and prep.turn_prefix_messages:
        history = prep.previous_summary if prep.previous_summary is not None else NO_PRIOR_HISTORY
        if prep.messages_to_summarize:
            history, usage = _summarize(summarizer, history_request)
        prefix, prefix_usage = _summarize(summarizer, SummaryRequest(
            "turn_prefix", lambda: prep.turn_prefix_text, prep.turn_prefix_messages, None, instructions))
        summary = f"{history}{SPLIT_TURN_HEADING}{prefix}"
        usage = combine_usage(usage, prefix_usage)
    else:
        summary, usage = _summarize(summarizer, history_request)
    return summary + prep.file_lists_text, usage


def compaction_entry(prep: Preparation, entry_id: str, parent_id: Any, summary: str,
                     usage: dict[str, Any] | None) -> dict[str, Any]:
    """The ``compaction`` entry for a prepared compaction and its summary, timestamped now."""
    read_files, modified_files = prep.file_ops.lists()
    timestamp = iso_now()
    entry: dict[str, Any] = {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "summary": summary,
        "firstKeptEntryId": prep.first_kept_entry_id,
        "tokensBefore": prep.tokens_before,
        "details": {"readFiles": read_files, "modifiedFiles": modified_files},
    }
    if usage is not None:
        entry["usage"] = usage
    system = prep.projection.system_message
    if system is not None:
        entry["systemMessage"] = {**system, "timestamp": parse_ms(timestamp)}
    return entry


def build_branch_summary(session: SessionTree, old_leaf: Any, target: Any, *, summarizer: Summarizer,
                         budget: int = 0, instructions: str | None = None) -> BranchSummaryResult:
    """Summarize the branch left when moving from ``old_leaf`` to ``target``.

    The entry goes where the leaf lands (Pi's ``/tree`` selection of ``target``);
    ``fromId`` is ``old_leaf`` (or ``"root"`` when there was none).
    """
    old_leaf = session.resolve_leaf(old_leaf) if old_leaf else None
    target_entry = session.entry(target)
    entries, ancestor = collect_branch(session, old_leaf, target_entry.id)
    prep = prepare_branch(entries, budget, ancestor)
    new_leaf, _ = selection(target_entry)
    usage: dict[str, Any] | None = None
    if prep.messages:
        text, usage = _summarize(summarizer, SummaryRequest("branch", lambda: prep.conversation_text, prep.messages,
                                                            None, instructions))
        summary = BRANCH_SUMMARY_PREAMBLE + text + prep.file_lists_text
    else:
        summary = "No content to summarize"
    read_files, modified_files = prep.file_ops.lists()
    entry: dict[str, Any] = {
        "type": "branch_summary",
        "id": new_id(session.by_id),
        "parentId": new_leaf,
        "timestamp": iso_now(),
        "fromId": old_leaf if old_leaf else "root",
        "summary": summary,
        "details": {"readFiles": read_files, "modifiedFiles": modified_files},
    }
    if usage is not None:
        entry["usage"] = usage
    return BranchSummaryResult(entry, prep, new_leaf)


def label_entry(session: SessionTree, target: Any, label: str | None, leaf: Any = CURRENT) -> dict[str, Any]:
    """A ``label`` entry setting (or, with an empty label, clearing) the label of ``target``."""
    target_id = session.entry(target).id
    leaf_id = session.resolve_leaf(leaf)
    entry: dict[str, Any] = {"type": "label", "id": new_id(session.by_id), "parentId": leaf_id,
                             "timestamp": iso_now(), "targetId": target_id}
    if label:
        entry["label"] = label
    return entry


def context_edit_entry(session: SessionTree, target: Any, replacement: Mapping[str, Any] | None,
                       leaf: Any = CURRENT) -> dict[str, Any]:
    """A ``context_edit`` entry omitting (``None``) or replacing the content of ``target``.

    The target must be on the branch at ``leaf`` and contribute editable model content
    (a user, assistant or tool result message, or a custom message).
    """
    if replacement is not None and (not isinstance(replacement, Mapping) or "content" not in replacement
                                    or not isinstance(replacement["content"], str | list)):
        raise EntryError(target, "a context edit replacement must be None or {'content': str | list}")
    entry = session.entry(target)
    target = entry.id
    leaf_id = session.resolve_leaf(leaf)
    if leaf_id is None or target not in {e.id for e in session.branch(leaf_id)}:
        raise EntryError(target, f"entry {target!r} is not on the branch at {leaf_id!r}")
    editable = entry.type == "custom_message" or (
        entry.type == "message" and entry.role in ("user", "assistant", "toolResult"))
    if not editable:
        raise EntryError(target, f"entry {target!r} ({entry.type}) has no editable model content")
    role = entry.role if entry.type == "message" else "custom"
    normalized: Any = replacement
    if replacement is not None and role in ("assistant", "toolResult") and isinstance(replacement["content"], str):
        normalized = {"content": [{"type": "text", "text": replacement["content"]}]}
    elif replacement is not None:
        normalized = {"content": replacement["content"]}
    return {"type": "context_edit", "id": new_id(session.by_id), "parentId": leaf_id, "timestamp": iso_now(),
            "targetId": target, "replacement": normalized}


def write_entry(session: SessionTree, entry: Mapping[str, Any], *, output: str | os.PathLike[str] | None = None,
                in_place: bool = False, overwrite: bool = False, appender: Appender | None = None) -> str:
    """Write one new entry: to ``output`` (a copy of the source as loaded, plus the line) or,
    with ``in_place``, appended to the source itself (one ``O_APPEND`` write, fsync).

    In place, the file must be unchanged since it was loaded, and no other pikit run may be
    appending to it (an advisory lock); ``appender`` is that lock when the caller took it
    earlier (e.g. before a model call). A last line without a newline is ended first when
    it loaded as a complete entry (with a :class:`UserWarning`, or ``appender.added_newline``),
    and refused when it is damaged. Returns the path written.
    """
    if session.path is None:
        raise WriteError("the session was not loaded from a file; pass it to write.write_new instead")
    if (output is None) == (not in_place):
        raise WriteError("choose where to write: output=PATH (a copy of the source plus the entry) or in_place=True "
                         "(appends to the source)")
    line = jsjson.stringify_bytes(entry)
    if in_place:
        with contextlib.ExitStack() as stack:
            target = appender if appender is not None else stack.enter_context(Appender(session.path))
            target.check_unchanged(session.report.bytes, session.report.mtime_ns)
            target.append([line], end_last_line=last_line_is_whole(session))
            if target.added_newline and appender is None:
                warnings.warn(f"{session.path}: its last line had no newline; one was added before the new entry",
                              stacklevel=2)
        return session.path
    assert output is not None
    return copy_with_lines(session.path, output, [line], overwrite=overwrite, size=session.report.bytes)


def last_line_is_whole(session: SessionTree) -> bool:
    """Whether the file's last line loaded as an entry (not skipped as damaged)."""
    last = session.report.lines
    return not any(p.line == last for p in session.report.damaged_lines)
