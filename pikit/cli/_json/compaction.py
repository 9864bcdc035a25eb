"""The ``--json`` objects of ``pikit compact``, ``pikit branch-summary``, ``pikit simulate`` and
``pikit settings`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..._context.fileops import format_file_lists
from ...compaction._branch_summary import BranchPreparation
from ...compaction._common_ground import GroundPoint, ground_recall, key_fact
from ...compaction._entries import BranchSummaryResult, CompactionResult
from ...compaction._preparation import Preparation
from ...compaction._settings import CompactionSettings, Settings
from ...compaction._simulate import SimulationEvent, SimulationResult, threshold_table


# ------------------------------------------------------------------------------ pikit compact
def dry_run(results: Mapping[Any, Mapping[str, Preparation | None]]) -> dict[str, Any]:
    """``compact --dry-run``: per leaf, per keepRecentTokens value (a string), the preparation or ``None``."""
    return {"leaves": {leaf: {keep: (preparation(prep) if prep is not None else None) for keep, prep in per.items()}
                       for leaf, per in results.items()}}


def preparation(prep: Preparation) -> dict[str, Any]:
    """What Pi's compaction would summarize and keep, as it would send it to the summarizer."""
    read, modified = prep.file_ops.lists()
    return {
        "firstKeptEntryId": prep.first_kept_entry_id,
        "isSplitTurn": prep.is_split_turn,
        "tokensBefore": prep.tokens_before,
        "previousSummary": prep.previous_summary,
        "messagesToSummarize": prep.messages_to_summarize,
        "turnPrefixMessages": prep.turn_prefix_messages,
        "readFiles": read,
        "modifiedFiles": modified,
        "fileListsText": format_file_lists(read, modified),
        "conversationText": prep.conversation_text,
    }


def compaction(result: CompactionResult, output: str | None) -> dict[str, Any]:
    """A real ``compact``: the entry written, the context size before and after, the file written."""
    return {"entry": result.entry, "tokensBefore": result.tokens_before, "tokensAfter": result.tokens_after,
            "output": output}


# ------------------------------------------------------------------------ pikit branch-summary
def branch_dry_run(items: Iterable[tuple[Any, Any, BranchPreparation]]) -> dict[str, Any]:
    """``branch-summary --dry-run``: one object per pair and budget."""
    return {"pairs": [branch_preparation(prep, old, target) for old, target, prep in items]}


def branch_preparation(prep: BranchPreparation, from_id: Any, to_id: Any) -> dict[str, Any]:
    """What leaving ``from_id`` for ``to_id`` would summarize."""
    read, modified = prep.file_ops.lists()
    return {
        "from": from_id, "to": to_id, "budget": prep.budget, "commonAncestorId": prep.common_ancestor_id,
        "entryIds": [e.id for e in prep.entries], "messages": prep.messages, "totalTokens": prep.total_tokens,
        "readFiles": read, "modifiedFiles": modified,
    }


def branch_summary(result: BranchSummaryResult, output: str | None) -> dict[str, Any]:
    """A written branch summary: the entry, the file written, the leaf after it."""
    return {"entry": result.entry, "output": output, "newLeaf": result.new_leaf}


# ----------------------------------------------------------------------------- pikit simulate
def simulate(runs: list[SimulationResult], ground: list[GroundPoint] | None = None) -> dict[str, Any]:
    """Every replay, and one row per replay (``threshold_table``); with ``ground`` (the replays of
    ``--strategy`` on common ground), each replay's ``commonGround``."""
    out = [replay(r) for r in runs]
    if ground is not None:
        for run, data in zip(runs, out, strict=True):
            data["commonGround"] = common_ground(run.strategy or "pi", ground)
    return {"runs": out, "thresholds": threshold_table(runs)}


def common_ground(strategy: str, ground: list[GroundPoint]) -> dict[str, Any]:
    """One replay on common ground: its mean key recall and recall over the branch points, and each point."""
    points = [p for p in ground if p.strategy == strategy]
    return {"keyRecall": ground_recall(points, key_fact), "recall": ground_recall(points),
            "points": [{"branchIndex": p.branch_index, "entryId": p.entry_id, "contextTokens": p.context_tokens,
                        "fits": p.fits, "facts": len(p.evaluation.facts), "kept": sum(p.evaluation.kept),
                        "keyRecall": p.recall(key_fact), "recall": p.recall()} for p in points]}


def replay(result: SimulationResult) -> dict[str, Any]:
    """One replay: its totals (``SimulationResult.totals``), its compactions, its checks, its overflows
    (and, in a replay with a strategy, the strategy's name first and what each compaction kept)."""
    strategy = result.strategy is not None
    head: dict[str, Any] = {"strategy": result.strategy} if strategy else {}
    return {**head, "leaf": result.leaf_id, "totals": result.totals(),
            "events": [event(e, strategy) for e in result.events],
            "trace": [{"branchIndex": i, "entryId": eid, "tokens": after, "compacted": before != after}
                      for i, eid, before, after in result.trace],
            "overflows": [{"branchIndex": i, "entryId": eid, "tokens": tokens}
                          for i, eid, tokens in result.overflows]}


def event(e: SimulationEvent, strategy: bool) -> dict[str, Any]:
    """One simulated compaction; with a strategy, also ``strategy``, ``kept``, ``masked``, ``truncated``."""
    out: dict[str, Any] = {"afterEntryId": e.after_entry_id, "branchIndex": e.branch_index,
                           "tokensBefore": e.tokens_before, "tokensAfter": e.tokens_after,
                           "firstKeptEntryId": e.first_kept_entry_id, "isSplitTurn": e.is_split_turn,
                           "summarizedMessages": e.summarized_messages, "summaryTokens": e.summary_tokens}
    if strategy:
        ratio = e.compression
        out.update({"strategy": e.strategy, "compression": None if ratio is None else round(ratio, 3),
                    "kept": list(e.kept), "masked": list(e.masked),
                    "truncated": None if e.truncated is None else {"entryId": e.truncated[0],
                                                                  "keptTokens": e.truncated[1]}})
    return out


# ----------------------------------------------------------------------------- pikit settings
def settings(loaded: Settings, effective: CompactionSettings, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The files read, the effective compaction settings, the model overrides (``Settings.overrides``),
    the branch summary reserve."""
    return {"files": loaded.files, "effective": compaction_settings(effective), "modelOverrides": overrides,
            "branchSummary": {"reserveTokens": loaded.branch_summary_reserve_tokens}}


def compaction_settings(effective: CompactionSettings) -> dict[str, Any]:
    """One model's compaction settings, in Pi's names, with where each value came from."""
    return {"model": effective.model, "enabled": effective.enabled, "reserveTokens": effective.reserve_tokens,
            "keepRecentTokens": effective.keep_recent_tokens, "sources": dict(effective.sources)}
