"""Compaction: what Pi does when a context grows too large, step by step and replayed.

>>> from pikit import compaction
>>> settings = compaction.load_settings()                 # Pi's global + project settings.json
>>> prep = compaction.prepare_compaction(session)          # the cut point, what is summarized and kept
>>> result = compaction.build_compaction(session, keep_recent_tokens=20_000, summarizer=summarizer)
>>> compaction.write_entry(session, result.entry, output="copy.jsonl")

- settings: :class:`CompactionSettings`, :class:`Settings`, :func:`load_settings`;
- the summarizer protocol: :class:`Summarizer`, :class:`SummaryRequest`, :class:`SummaryResult`
  (the summarizers themselves are in :mod:`pikit.llm`);
- preparation: :func:`prepare_compaction`, :func:`find_cut_point`, :func:`trace_compaction`;
- branch summaries: :func:`collect_branch`, :func:`prepare_branch`;
- building and writing entries: :func:`build_compaction`, :func:`compact_prepared`,
  :func:`build_branch_summary`, :func:`label_entry`, :func:`context_edit_entry`, :func:`write_entry`;
- replays: :func:`simulate`, :func:`sweep`, :func:`threshold_table`;
- compaction strategies replayed side by side (``simulate(..., strategy=[...])``): the protocol
  :class:`Strategy` (with :class:`Check`, :class:`ContextItem`, :class:`ReplayContext`,
  :class:`Outcome`, :class:`StrategyError`) and the built-ins :data:`STRATEGIES`
  (:class:`PiStrategy`, :class:`PiPercentStrategy`, :class:`NoneStrategy`, :class:`CodexInlineStrategy`,
  :class:`MaskObservationsStrategy`, :class:`MaskAtThresholdStrategy`, :class:`TruncateStrategy`);
- strategies on common ground: :func:`common_ground` (:class:`GroundPoint`), :func:`ground_recall`,
  :func:`pool_recall`;
- the walk-through of one compaction: :func:`walkthrough`;
- what a compaction kept and lost: :func:`extract_facts` (:class:`Fact`, :data:`FACT_KINDS`),
  :func:`evaluate_span` (:class:`Evaluation`), the core of :func:`pikit.evaluate`.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._branch_summary import (
        BranchPreparation as BranchPreparation,
        collect_branch as collect_branch,
        prepare_branch as prepare_branch,
    )
    from ._builtin_strategies import (
        STRATEGIES as STRATEGIES,
        CodexInlineStrategy as CodexInlineStrategy,
        MaskAtThresholdStrategy as MaskAtThresholdStrategy,
        MaskObservationsStrategy as MaskObservationsStrategy,
        NoneStrategy as NoneStrategy,
        TruncateStrategy as TruncateStrategy,
    )
    from ._common_ground import (
        GroundPoint as GroundPoint,
        common_ground as common_ground,
        ground_recall as ground_recall,
        pool_recall as pool_recall,
    )
    from ._entries import (
        BranchSummaryResult as BranchSummaryResult,
        CompactionResult as CompactionResult,
        build_branch_summary as build_branch_summary,
        build_compaction as build_compaction,
        compact_prepared as compact_prepared,
        context_edit_entry as context_edit_entry,
        label_entry as label_entry,
        write_entry as write_entry,
    )
    from ._evaluation import Evaluation as Evaluation, evaluate_span as evaluate_span
    from ._factkinds import FACT_KINDS as FACT_KINDS
    from ._facts import Fact as Fact, extract_facts as extract_facts
    from ._preparation import (
        CompactionTrace as CompactionTrace,
        CutPoint as CutPoint,
        CutTrace as CutTrace,
        Preparation as Preparation,
        find_cut_point as find_cut_point,
        prepare_compaction as prepare_compaction,
        trace_compaction as trace_compaction,
    )
    from ._replay import simulate as simulate
    from ._settings import (
        CompactionSettings as CompactionSettings,
        Settings as Settings,
        load_settings as load_settings,
    )
    from ._simulate import (
        SimulationEvent as SimulationEvent,
        SimulationResult as SimulationResult,
        sweep as sweep,
        threshold_table as threshold_table,
    )
    from ._strategy import (
        Check as Check,
        ContextItem as ContextItem,
        Outcome as Outcome,
        PiPercentStrategy as PiPercentStrategy,
        PiStrategy as PiStrategy,
        ReplayContext as ReplayContext,
        Strategy as Strategy,
        StrategyError as StrategyError,
    )
    from ._summarizer import Summarizer as Summarizer, SummaryRequest as SummaryRequest, SummaryResult as SummaryResult
    from ._walkthrough import Step as Step, Walkthrough as Walkthrough, walkthrough as walkthrough

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
