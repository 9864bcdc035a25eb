"""The embedded offline summarizer: pikit's default, deterministic, with no network and no key.

:class:`OfflineSummarizer` writes the same Markdown layout a model is asked for (see
``pikit.llm._prompts``), but builds every section from the Pi AgentMessages themselves:

- **Goal**: the first substantial user request, then later distinct requests;
- **Constraints & Preferences**: user sentences that state a rule (*must*, *never*, *only*, …);
- **Progress**: files written or edited and successful builds/tests (*Done*), the request that
  has no final answer yet and tool calls still waiting for a result (*In Progress*), failed
  tool results, non-zero exit codes and errored or aborted replies that nothing later fixed,
  each with its error line (*Blocked*);
- **Key Decisions**: sentences saying what was chosen (*decided*, *instead*, *going with*, …);
- **Next Steps**: derived from the unfinished work and the open errors;
- **Critical Context**: files read and modified, commands, identifiers quoted in backticks,
  errors that were fixed later, extension notes, and the focus the caller asked for.

How it works, in three steps:

1. The reader (``reader``, with the sentence and line tests of
   ``patterns``) walks the messages once, each read as a
   ``MessageView``, and records facts (tool calls are paired with
   their results by id; a later success of the same command or on the same file marks an
   earlier failure as resolved). Every text it looks at is cut to a fixed length first, so the
   cost per message is bounded whatever the session holds.
2. The facts become notes (``notes``): one list of items per section plus the file,
   command and identifier sets. A previous summary is parsed into the same shape
   (``parse``, which also understands Pi's own free-form summaries) and the two are
   merged: items are kept and de-duplicated, *In Progress* moves to *Done* when the new
   messages contain a finished turn, *Blocked* items whose command or file later succeeded
   move to *Done*, and *Next Steps* are derived again.
3. The renderer (``render``) lays the notes out with a cap on the
   number and length of the items of
   every section, so a summary stays small however long the session was.

A request with ``format="handoff"`` gets Codex's handoff sections instead (*Active Task*, the
latest request; *Progress So Far*; *Next Steps*; *Key Context, Constraints & Preferences*;
*Completed Tasks*, the earlier requests when nothing is left in progress), from the same notes.

Text helpers live in ``text``; a conversation that arrives only as
Pi's serialized text is turned back into messages by ``conversation``.

All session text is treated as untrusted plain text: control, bidi-override and lone
surrogate characters are removed, every item is a single line, and nothing here produces HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pikit.compaction._summarizer import SummaryRequest, SummaryResult
from pikit.errors import SummarizerError

from .conversation import _messages_from_text
from .notes import _dedupe, _ends, _merge, _next_steps, _Notes
from .parse import _parse_notes
from .reader import _Reader
from .render import _render, _render_handoff
from .text import _CAP_CONSTRAINTS

__all__ = ["OfflineSummarizer"]


class OfflineSummarizer:
    """Pikit's default summarizer: structured notes built from the conversation itself.

    Deterministic (the same request always gives the same text), offline, key-free, and fast
    enough to run inside sweeps and replays (a few milliseconds for hundreds of messages).
    It reads :attr:`SummaryRequest.messages`; when a request has none it recovers them from
    :attr:`SummaryRequest.conversation_text`.

    Example::

        result = OfflineSummarizer().summarize(SummaryRequest("history", text, messages))
        print(result.text)  # "## Goal\\n…"
    """

    name = "offline"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Summarize ``request`` in the layout of its kind.

        ``kind="history"`` updates ``previous_summary`` when there is one; the other kinds
        treat it as background and only fall back on it when there are no messages.

        Raises:
            SummarizerError: there is nothing to summarize (no messages, no conversation text,
                no previous summary).
        """
        messages = _as_messages(request.messages)
        if not messages and isinstance(request.conversation_text, str) and request.conversation_text.strip():
            messages = _messages_from_text(request.conversation_text)
        previous = request.previous_summary if isinstance(request.previous_summary, str) else ""
        previous = previous if previous.strip() else ""
        if not messages and not previous:
            raise SummarizerError("offline summarizer: nothing to summarize (no messages and no previous summary)")
        focus = request.instructions.strip() if isinstance(request.instructions, str) else ""

        reader = _Reader()
        reader.read(messages)
        new = reader.notes()
        base = _Notes()
        for earlier in reader.embedded:
            base = _merge(base, _parse_notes(earlier), finished_turn=False, successes=set())
        if previous and (request.kind == "history" or not messages):
            base = _merge(_parse_notes(previous), base, finished_turn=False, successes=set())
        if base.empty():
            notes = new
        else:
            notes = _merge(base, new, finished_turn=reader.finished_turn, successes=reader.successes)
        if messages or not notes.next_steps:
            notes.next_steps = _next_steps(notes, reader.last_request(), reader.answered)
        if not notes.goal and previous and request.kind == "turn_prefix":
            goal = _parse_notes(previous).goal[:1]
            notes.goal = [f"(begun before this part; the session goal: {goal[0]})"] if goal else []
        notes.constraints = _ends(_dedupe(notes.constraints), _CAP_CONSTRAINTS)
        text = _render_handoff(notes, focus) if request.format == "handoff" else _render(request.kind, notes, focus)
        return SummaryResult(text=text, usage=None, model="offline")


def _as_messages(messages: Any) -> list[Any]:
    """``messages`` as a list, or an empty list when it is not a sequence of items."""
    if messages is None or isinstance(messages, str | bytes | bytearray | Mapping):
        return []
    try:
        return list(messages)
    except TypeError:
        return []
