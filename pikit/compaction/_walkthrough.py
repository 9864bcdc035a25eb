"""A compaction, step by step: the seven steps of Pi's algorithm as plain, frozen data.

:func:`walkthrough` turns one :func:`~pikit.compaction.trace_compaction` (and, once the
summary is written, the :class:`~pikit.compaction.CompactionResult` built from the same
preparation) into seven :class:`Step` values:

1. the walk back from the newest entry, with the running sum against keepRecentTokens;
2. the entry where the sum reaches it;
3. the move to the nearest valid cut point;
4. the split-turn decision and the turn prefix;
5. the messages to summarize, the previous summary and the file lists;
6. the summary;
7. the new context and its size.

Every figure comes from the trace or the preparation; nothing here decides where to cut.
Each step names the entries it is about (``highlighted``), marks them in a window of rows
(long runs folded), and says in one sentence what Pi does. Text is plain: whoever renders it
escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._context.describe import entry_kind, entry_preview, message_preview
from .._context.projection import ProjectedEntry, Projection, project_path
from .._context.tokens import estimate_tokens
from .._format.entry import Entry
from .._formatting import fmt_int, plural
from ._preparation import CompactionTrace, CutTrace, Preparation
from ._settings import CompactionSettings

if TYPE_CHECKING:
    from ._entries import CompactionResult

__all__ = ["STEP_TITLES", "Fold", "Step", "StepRow", "Walkthrough", "walkthrough"]

STEP_TITLES: tuple[str, ...] = (
    "Walk back from the newest entry",
    "Where the sum reaches keepRecentTokens",
    "Move to a valid cut point",
    "Split turn?",
    "What gets summarized",
    "The summary",
    "The new context",
)
"""The title of each step, in order (step 1 first)."""

MARKS: Mapping[str, str] = {
    "walked": "added to the running sum",
    "reached": "the sum reaches keepRecentTokens here",
    "cut-point": "a valid cut point",
    "cut": "the first kept entry (the cut)",
    "turn-start": "the split turn starts here",
    "prefix": "turn prefix (summarized apart)",
    "summarized": "summarized",
    "previous": "the previous compaction (its summary is updated)",
    "kept": "kept verbatim",
    "summary": "the new compaction summary",
    "skipped": "silent: projects no message",
}
"""What each row mark means (for legends)."""

_PREVIEW = 110
_RUN = 5  # a marked run longer than 2 * _RUN + 1 rows shows its first and last _RUN rows
_AROUND = 1  # unmarked rows shown on each side of a marked one


@dataclass(frozen=True)
class StepRow:
    """One context entry as a step shows it."""

    index: int
    entry_id: Any
    kind: str
    role: str
    preview: str
    estimate: int
    mark: str = ""
    running_sum: int | None = None
    cut_point: bool = False
    highlighted: bool = False


@dataclass(frozen=True)
class Fold:
    """Rows ``start`` to ``stop - 1`` left out of the window (``highlighted`` of them are highlighted)."""

    start: int
    stop: int
    highlighted: int = 0

    @property
    def count(self) -> int:
        """How many rows the fold hides."""
        return self.stop - self.start


@dataclass(frozen=True)
class Step:
    """One step of the walkthrough.

    ``view`` is ``"before"`` (the context at the leaf) or ``"after"`` (the context the new
    compaction leaves, whose ``sizes`` are the context size before and after); ``rows`` is a
    window of that view (marked rows and their neighbours, :class:`Fold` for the rest);
    ``highlighted`` lists every entry the step is about, in context order, folded or not.
    ``figures`` are (label, value) pairs, ``text`` a longer plain text (the file lists, the
    summary).
    """

    number: int
    title: str
    sentence: str
    highlighted: tuple[Any, ...]
    rows: tuple[StepRow | Fold, ...]
    figures: tuple[tuple[str, str], ...] = ()
    text: str | None = None
    view: str = "before"
    notes: tuple[str, ...] = ()
    sizes: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"<Step {self.number}: {self.title} ({plural(len(self.highlighted), 'entry')} highlighted)>"


@dataclass(frozen=True)
class Walkthrough:
    """The seven steps of one compaction at one leaf with one keepRecentTokens value."""

    leaf_id: Any
    keep_recent_tokens: int
    steps: tuple[Step, ...]
    summarized: bool
    reason: str | None = None
    summarizer: str | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        state = "summarized" if self.summarized else f"nothing to compact: {self.reason}" if self.reason else \
            "not summarized yet"
        return (f"<Walkthrough at {self.leaf_id!r} keepRecentTokens={fmt_int(self.keep_recent_tokens)}: "
                f"{len(self.steps)} steps, {state}>")

    def step(self, number: int) -> Step:
        """Step ``number`` (1 to 7)."""
        if not 1 <= number <= len(self.steps):
            raise IndexError(f"a walkthrough has steps 1 to {len(self.steps)}, not {number}")
        return self.steps[number - 1]


# ---------------------------------------------------------------------------------- rows
class _Rows:
    """Builds windows of rows over one projection (previews made only for rows shown)."""

    def __init__(self, projection: Projection, cut: CutTrace | None) -> None:
        self.entries: Sequence[ProjectedEntry] = projection.entries
        self.cut = cut

    def row(self, i: int, mark: str, running: bool, highlighted: bool) -> StepRow:
        pe = self.entries[i]
        # A compaction also replays the system prompt: show what it stands for, its summary.
        messages = [m for m in pe.messages if m.get("role") != "system"] or pe.messages
        role = str(messages[0].get("role")) if messages else str(pe.entry.type)
        text = " · ".join(message_preview(m) for m in messages[:3]) if messages else entry_preview(pe.entry)
        text = " ".join(text[:_PREVIEW * 3].split())
        preview = text if len(text) <= _PREVIEW else text[:_PREVIEW - 1] + "…"
        cut = self.cut
        in_walk = cut is not None and cut.start <= i < cut.end
        if in_walk and cut is not None:
            estimate = cut.estimate(i)
        else:  # what the row shows: a compaction's summary without the system prompt it carries
            estimate = pe.tokens if messages is pe.messages else sum(estimate_tokens(m) for m in messages)
        summed = running and mark in ("walked", "reached") and in_walk and cut is not None
        return StepRow(i, pe.entry.id, entry_kind(pe.entry), role, preview, estimate, mark,
                       cut.running_sum(i) if summed and cut is not None else None,
                       bool(in_walk and cut is not None and cut.is_cut_point(i)), highlighted)

    def window(self, marks: Mapping[int, str], highlighted: Sequence[Any] = (),
               running: bool = False) -> tuple[StepRow | Fold, ...]:
        """Marked rows (long runs folded in the middle), one neighbour each side, folds between."""
        n = len(self.entries)
        wanted = set(highlighted)
        lit = [pe.entry.id in wanted for pe in self.entries] if wanted else [False] * n
        shown: set[int] = set()
        run: list[int] = []
        for i in [*sorted(marks), None]:
            if i is not None and run and i == run[-1] + 1:
                run.append(i)
                continue
            if run:
                shown.update(run if len(run) <= 2 * _RUN + 1 else run[:_RUN] + run[-_RUN:])
                shown.update(range(max(0, run[0] - _AROUND), run[0]))
                shown.update(range(run[-1] + 1, min(n, run[-1] + 1 + _AROUND)))
            run = [i] if i is not None else []
        if not shown and n:
            shown.update(range(max(0, n - 3), n))
        out: list[StepRow | Fold] = []
        previous = -1
        for i in [*sorted(shown), n]:
            if i > previous + 1:
                out.append(Fold(previous + 1, i, sum(lit[previous + 1:i])))
            if i < n:
                out.append(self.row(i, marks.get(i, ""), running, lit[i]))
            previous = i
        return tuple(out)


def _ids(entries: Sequence[ProjectedEntry], indices: Sequence[int] | range) -> tuple[Any, ...]:
    return tuple(entries[i].entry.id for i in indices)


def _describe(pe: ProjectedEntry) -> str:
    roles = [str(m.get("role")) for m in pe.messages]
    what = {"user": "a user message", "assistant": "an assistant message", "toolResult": "a tool result",
            "bashExecution": "a shell command", "custom": "a custom message", "branchSummary": "a branch summary",
            "compactionSummary": "a compaction summary", "system": "a system message"}
    if not roles:
        return f"a {pe.entry.type} entry that projects no message"
    return what.get(roles[0], roles[0])


# ---------------------------------------------------------------------------------- steps
def _trigger(trace: CompactionTrace, settings: CompactionSettings | None, window: int | None) -> tuple[str, ...]:
    """Whether Pi would compact here on its own (its trigger, from the settings), as a note."""
    if settings is None or not window:
        return ()
    size = trace.projection.tokens
    threshold = settings.threshold(window)
    if settings.should_compact(size, window):
        return (f"Pi compacts here on its own: the context size, {fmt_int(size)} tokens, is above the threshold "
                f"(window {fmt_int(window)} − reserveTokens {fmt_int(settings.reserve_tokens)} = "
                f"{fmt_int(threshold)}).",)
    return (f"Pi would not compact here yet (context size {fmt_int(size)} ≤ threshold {fmt_int(threshold)} = window "
            f"{fmt_int(window)} − reserveTokens {fmt_int(settings.reserve_tokens)}); the steps show what a "
            "compaction run now (/compact) does.",)


def _walk_step(rows: _Rows, trace: CompactionTrace, cut: CutTrace, trigger: tuple[str, ...] = ()) -> Step:
    keep = trace.keep_recent_tokens
    walked = cut.walked
    marks = dict.fromkeys(walked, "walked")
    if cut.start > 0:
        marks[cut.start - 1] = "previous"
    total = cut.running_sum(cut.start) if cut.end > cut.start else 0
    figures = [("keepRecentTokens", fmt_int(keep)), ("entries walked", fmt_int(len(walked))),
               ("running sum", fmt_int(cut.running_sum(walked.start) if len(walked) else 0)),
               ("entries after the previous compaction" if cut.start > 0 else "all context entries",
                f"{plural(cut.end - cut.start, 'entry')}, {fmt_int(total)} tokens")]
    notes = trigger + (("The walk stops at the previous compaction: what it summarized is never walked again.",)
                       if cut.start > 0 else ())
    ids = _ids(rows.entries, walked)
    return Step(1, STEP_TITLES[0],
                f"Pi walks back from the newest entry, adding each entry's estimate to a running sum, until the "
                f"sum reaches keepRecentTokens ({fmt_int(keep)}).",
                ids, rows.window(marks, ids, running=True), tuple(figures), notes=notes)


def _reach_step(rows: _Rows, trace: CompactionTrace, cut: CutTrace) -> Step:
    keep = trace.keep_recent_tokens
    if not cut.reached:
        total = cut.running_sum(cut.start) if cut.end > cut.start else 0
        count = plural(cut.end - cut.start, "context entry", "context entries")
        return Step(2, STEP_TITLES[1],
                    f"The sum never reaches keepRecentTokens: all {count} "
                    f"add up to {fmt_int(total)} < {fmt_int(keep)} tokens, so everything fits and the walk ends at "
                    "the oldest entry.", (), rows.window({}), (("running sum", fmt_int(total)),))
    i = cut.reached_index
    reached = cut.running_sum(i)
    estimate = cut.estimate(i)
    return Step(2, STEP_TITLES[1],
                f"The running sum reaches keepRecentTokens at entry {rows.entries[i].entry.id} "
                f"({_describe(rows.entries[i])}): {fmt_int(reached - estimate)} + {fmt_int(estimate)} = "
                f"{fmt_int(reached)} ≥ {fmt_int(keep)}.",
                _ids(rows.entries, [i]), rows.window({i: "reached"}, _ids(rows.entries, [i]), running=True),
                (("sum before it", fmt_int(reached - estimate)), ("its estimate", fmt_int(estimate)),
                 ("sum with it", fmt_int(reached)), ("keepRecentTokens", fmt_int(keep))))


def _cut_step(rows: _Rows, cut: CutTrace) -> Step:
    entries = rows.entries
    final = cut.cut.first_kept_index
    if cut.nearest_cut_index < 0:
        return Step(3, STEP_TITLES[2], "There is no valid cut point after the last compaction (no user, assistant, "
                    "shell, custom or summary message), so Pi has nowhere to cut.", (), rows.window({}))
    origin = cut.reached_index if cut.reached else cut.start
    nearest = cut.nearest_cut_index
    marks = {i: "cut-point" for i in cut.cut_points if min(origin, nearest) <= i <= max(origin, nearest)}
    if cut.reached:
        marks[origin] = "reached"
    marks[nearest] = "cut-point"
    if final < len(entries):
        marks[final] = "cut"
    pe = entries[nearest]
    if not cut.reached:
        sentence = (f"Everything fits, so Pi takes the first valid cut point, entry {pe.entry.id} "
                    f"({_describe(pe)}): nothing before it would be summarized.")
    elif nearest == origin:
        sentence = (f"Entry {pe.entry.id} is itself a valid cut point ({_describe(pe)}), so the cut stays "
                    "there.")
    elif nearest > origin:
        sentence = (f"Entry {entries[origin].entry.id} is {_describe(entries[origin])}, not a valid cut point: "
                    f"Pi moves forward to the nearest one, entry {pe.entry.id} ({_describe(pe)}), so that "
                    "a tool result stays with the call that asked for it.")
    else:
        sentence = (f"Entry {entries[origin].entry.id} is {_describe(entries[origin])}, not a valid cut point, and "
                    f"no valid cut point follows it: Pi takes the last one, entry {pe.entry.id} ({_describe(pe)}).")
    notes = []
    if cut.recovered_index != nearest:
        notes.append("Everything after that cut is an omitted failed attempt: Pi moves the cut one entry further.")
    if cut.pulled_back:
        silent = plural(cut.pulled_back, "silent entry", "silent entries")
        notes.append(f"The cut is pulled back over {silent} (labels, model or thinking changes) so they stay with "
                     "what they describe.")
    highlighted = tuple(dict.fromkeys(_ids(entries, sorted({nearest, final} & set(range(len(entries)))))))
    figures = [("valid cut points", fmt_int(len(cut.cut_points))),
               ("first kept", str(entries[final].entry.id) if final < len(entries) else "–")]
    if cut.reached:
        figures.append(("moved", "forward " + plural(nearest - origin, "entry") if nearest >= origin
                        else "back " + plural(origin - nearest, "entry")))
    return Step(3, STEP_TITLES[2], sentence, highlighted, rows.window(marks, highlighted), tuple(figures),
                notes=tuple(notes))


def _nothing(number: int, rows: _Rows, reason: str) -> Step:
    return Step(number, STEP_TITLES[number - 1], f"Nothing to compact ({reason}): Pi stops here.", (),
                rows.window({}))


def _turn_step(rows: _Rows, prep: Preparation) -> Step:
    entries = rows.entries
    first = prep.first_kept_index
    if not prep.is_split_turn:
        return Step(4, STEP_TITLES[3],
                    f"The first kept entry, {prep.first_kept_entry_id}, starts a turn ({_describe(entries[first])}): "
                    "no turn is split, so there is no turn prefix.",
                    (prep.first_kept_entry_id,), rows.window({first: "cut"}, (prep.first_kept_entry_id,)),
                    (("split turn", "no"),))
    start = prep.turn_start_index
    marks = dict.fromkeys(range(start, first), "prefix")
    marks[start] = "turn-start"
    marks[first] = "cut"
    tokens = sum(entries[i].tokens for i in range(start, first))
    return Step(4, STEP_TITLES[3],
                f"The cut falls inside the turn that starts at entry {entries[start].entry.id}: Pi summarizes the "
                f"turn's beginning ({plural(len(prep.turn_prefix_messages), 'message')}) on its own, as the turn "
                "prefix, so the kept end still says what was asked.",
                _ids(entries, range(start, first)), rows.window(marks, _ids(entries, range(start, first))),
                (("split turn", "yes"), ("turn prefix", f"{plural(len(prep.turn_prefix_messages), 'message')}, "
                                                        f"{fmt_int(tokens)} tokens")))


def _span_marks(prep: Preparation) -> dict[int, str]:
    start = 1 if prep.previous_compaction is not None else 0
    history_end = prep.turn_start_index if prep.is_split_turn else prep.first_kept_index
    marks = dict.fromkeys(range(start, history_end), "summarized")
    marks.update(dict.fromkeys(range(history_end, prep.first_kept_index), "prefix"))
    if start:
        marks[0] = "previous"
    return marks


def _summarize_step(rows: _Rows, prep: Preparation) -> Step:
    read, modified = prep.read_files, prep.modified_files
    previous = (f", updating the previous summary ({plural(len(prep.previous_summary or ''), 'character')})"
                if prep.previous_summary is not None else "")
    figures = [("messages to summarize", fmt_int(len(prep.messages_to_summarize))),
               ("turn prefix messages", fmt_int(len(prep.turn_prefix_messages))),
               ("previous summary", "yes" if prep.previous_summary is not None else "none"),
               ("read files", fmt_int(len(read))), ("modified files", fmt_int(len(modified))),
               ("tokensBefore", fmt_int(prep.tokens_before))]
    prefix = (f" plus the turn prefix ({plural(len(prep.turn_prefix_messages), 'message')})"
              if prep.turn_prefix_messages else "")
    return Step(5, STEP_TITLES[4],
                f"Pi hands the summarizer {plural(len(prep.messages_to_summarize), 'message')}{prefix} from "
                f"{plural(len(prep.summarized_entry_ids), 'entry')}{previous}, and lists the files they read "
                f"({len(read)}) and modified ({len(modified)}).",
                tuple(prep.summarized_entry_ids), rows.window(_span_marks(prep), prep.summarized_entry_ids),
                tuple(figures),
                text=prep.file_lists_text.strip() or "(no file was read or modified in the summarized span)")


def _summary_step(rows: _Rows, prep: Preparation, result: CompactionResult | None, summarizer: str | None) -> Step:
    highlighted = tuple(prep.summarized_entry_ids)
    if result is None:
        return Step(6, STEP_TITLES[5], "The summary is not written yet: the summarizer has not run on these "
                    "messages.", highlighted, rows.window(_span_marks(prep), highlighted))
    summary = str(result.entry.get("summary") or "")
    calls = 2 if prep.is_split_turn and prep.turn_prefix_messages and prep.messages_to_summarize else 1
    how = ("the history and the turn prefix in two calls, joined under a split-turn heading" if calls == 2 else
           "the turn prefix" if prep.is_split_turn and not prep.messages_to_summarize else "those messages")
    return Step(6, STEP_TITLES[5],
                f"The summarizer ({summarizer or 'custom'}) writes a structured summary of {how}, and Pi appends the "
                "file lists to it.",
                highlighted, rows.window(_span_marks(prep), highlighted),
                (("summarizer", summarizer or "custom"), ("summary", plural(len(summary), "character")),
                 ("calls", fmt_int(calls))), text=summary, notes=_size_notes(result))


def _size_notes(result: CompactionResult) -> tuple[str, ...]:
    """What ``check_size`` refuses, said where the stepper shows the summary and the new context."""
    if not result.is_larger:
        return ()
    return (f"This summary ({fmt_int(result.summary_tokens)} tokens) is larger than what it replaces "
            f"({fmt_int(result.replaced_tokens)} tokens): the context grows. pikit compact and the compaction "
            "panel refuse to write it unless a larger summary is allowed.",)


def _after_step(prep: Preparation, result: CompactionResult | None) -> Step:
    if result is None:
        return Step(7, STEP_TITLES[6], "The new context needs the summary: run step 6 first.", (), (), view="after")
    after = project_path([*prep.projection.path, Entry(result.entry)])
    rows = _Rows(after, None)
    marks = {i: "summary" if pe.entry.id == result.entry["id"] else "kept" if pe.messages else "skipped"
             for i, pe in enumerate(after.entries)}
    saved = result.tokens_before - result.tokens_after
    ids = tuple(after.entries[i].entry.id for i, mark in sorted(marks.items()) if mark != "skipped")
    return Step(7, STEP_TITLES[6],
                f"Pi appends the compaction entry: the model now sees the summary and then the "
                f"{plural(len(ids) - 1, 'kept entry', 'kept entries')} ({plural(len(after.messages), 'message')} "
                f"with the system prompt and the summary), "
                f"{fmt_int(result.tokens_after)} tokens instead of {fmt_int(result.tokens_before)}.",
                ids, rows.window(marks, ids),
                (("tokensBefore", fmt_int(result.tokens_before)), ("tokensAfter", fmt_int(result.tokens_after)),
                 ("freed", fmt_int(saved)), ("messages", fmt_int(len(after.messages)))), view="after",
                notes=_size_notes(result), sizes=(result.tokens_before, result.tokens_after))


def walkthrough(trace: CompactionTrace, result: CompactionResult | None = None, *,
                summarizer: str | None = None, settings: CompactionSettings | None = None,
                context_window: int | None = None) -> Walkthrough:
    """The seven steps of the compaction ``trace`` describes.

    ``result`` is the compaction built from ``trace.preparation`` (see
    :func:`pikit.compaction.compact_prepared`); without it, steps 6 and 7 say the summary is
    not written yet. ``summarizer`` names the summarizer that wrote it. With ``settings`` and
    ``context_window``, step 1 also says whether Pi's trigger fires at this leaf.
    """
    projection = trace.projection
    leaf = projection.leaf_id
    cut = trace.cut
    rows = _Rows(projection, cut)
    prep = trace.preparation
    if result is not None and (prep is None or result.preparation.first_kept_entry_id != prep.first_kept_entry_id):
        raise ValueError("the compaction result was not built from this trace's preparation")
    if cut is None:
        reason = trace.reason or "nothing to compact"
        steps = tuple(_nothing(n, rows, reason) for n in range(1, 8))
        return Walkthrough(leaf, trace.keep_recent_tokens, steps, False, reason, summarizer)
    first = (_walk_step(rows, trace, cut, _trigger(trace, settings, context_window)), _reach_step(rows, trace, cut),
             _cut_step(rows, cut))
    if prep is None:
        reason = trace.reason or "nothing to compact"
        return Walkthrough(leaf, trace.keep_recent_tokens,
                           first + tuple(_nothing(n, rows, reason) for n in range(4, 8)), False, reason, summarizer)
    rest = (_turn_step(rows, prep), _summarize_step(rows, prep), _summary_step(rows, prep, result, summarizer),
            _after_step(prep, result))
    return Walkthrough(leaf, trace.keep_recent_tokens, first + rest, result is not None, None, summarizer)
