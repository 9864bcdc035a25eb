"""``pikit watch``: a live gauge of a session while Pi writes it.

A status block redrawn in place on a terminal (the leaf, the entries, the context against
the window and Pi's threshold as a bar, tokens until Pi compacts, the last compaction, the
model), or with ``--json`` one object per change, one per line. Ends on Ctrl-C, or after
``--idle-exit SECONDS`` without a change. What appending alone does not explain (the file
loaded again, Pi going on from another branch) is said in a note and, with ``--json``, in
the ``event`` key.
"""

from __future__ import annotations

import os
import sys
import time
from argparse import Namespace
from typing import Any, TextIO

from .. import jsjson
from .._following import Follower
from .._formatting import MISSING, fmt_int, fmt_percent, plural
from .._palette import LINES, SEGMENTS
from .._session import Session
from .._tree.refresh import Refresh
from ..compaction._settings import DEFAULTS, CompactionSettings, Settings
from ..errors import NotASessionError, PikitError, SessionFileError, SettingsError
from ..llm._window import UNKNOWN_WINDOW_HINT, model_window
from ._common import session_settings
from ._flags import in_flags
from ._json import watch as watch_json
from ._terminal import cut_echoes, inert, trusted
from ._watch_status import LastCompaction, Status

__all__ = ["run", "status_of"]

_BAR = 32


class _Gauge:
    """Computes :class:`Status` readings; remembers what does not change between them."""

    def __init__(self, session: Session, window: int | None, reserve: int | None, settings: Settings | None) -> None:
        self.session = session
        self.window = window
        self.reserve = reserve
        self.settings = settings
        self._after: dict[Any, int] = {}  # compaction id -> the context size right after it
        self._resolved: dict[str | None, CompactionSettings] = {}
        #: The change about to be shown (``None``: the first reading).
        self.change: Refresh | None = None

    def _settings_for(self, model: str | None) -> CompactionSettings:
        found = self._resolved.get(model)
        if found is None:
            defaults = DEFAULTS["compaction"]
            try:
                found = self.settings.for_model(model) if self.settings is not None else None
            except SettingsError:
                found = None
            if found is None:
                found = CompactionSettings(True, defaults["reserveTokens"], defaults["keepRecentTokens"], model)
            self._resolved[model] = found
        return found

    def reading(self) -> Status:
        session = self.session
        leaf = session.leaf_id
        projection = session.context(leaf)
        model = _model_key(projection.model)
        window = model_window(model, given=self.window)
        settings = self._settings_for(model)
        reserve = self.reserve if self.reserve is not None else settings.reserve_tokens
        tokens = projection.tokens
        head = projection.compaction
        last = None
        if head is not None:
            after = self._after.get(head.id)
            if after is None:
                after = self._after[head.id] = session.context(head.id).tokens
            last = LastCompaction(head.id, head.data.get("tokensBefore"), after, head.timestamp)
        entry = session.leaf
        kind = MISSING if entry is None else str(entry.type if entry.role is None else entry.role)
        change = self.change
        threshold = window.threshold(reserve)
        return Status(leaf, len(session), tokens, window.tokens, threshold,
                      settings.enabled and threshold is not None and tokens > threshold, _compactions(session, head),
                      last, model, kind, change.reloaded if change is not None else None,
                      change.branch_switch if change is not None else None, window.source)


def _model_key(model: dict[str, Any] | None) -> str | None:
    model = model or {}
    provider, model_id = model.get("provider"), model.get("modelId")
    if model_id is None:
        return None
    return f"{provider}/{model_id}" if provider else str(model_id)


def _compactions(session: Session, head: Any) -> int:
    """Compactions on the leaf's branch (the head one and those before it)."""
    ancestry = session.ancestry
    if ancestry is None:
        return sum(1 for e in session.branch() if e.type == "compaction")
    count = 0
    while head is not None:
        count += 1
        parent = head.parent_id
        head = ancestry.compaction.get(parent) if isinstance(parent, str | int | float) else None
    return count


def status_of(session: Session, *, context_window: int | None = None, reserve_tokens: int | None = None,
              settings: Settings | None = None) -> Status:
    """The gauge's reading of ``session`` at its leaf."""
    return _Gauge(session, context_window, reserve_tokens, settings).reading()


# ---------------------------------------------------------------------------------- display
def _rgb(color: str, text: str, enabled: bool) -> str:
    if not enabled:
        return text
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"\x1b[38;2;{r};{g};{b}m{text}\x1b[0m"


def _bar(status: Status, color: bool) -> str:
    if status.context_window is None or status.threshold is None:
        return "[" + "?" * _BAR + "]"
    window = max(status.context_window, 1)
    filled = min(_BAR, round(_BAR * status.tokens / window))
    mark = min(_BAR - 1, max(0, round(_BAR * status.threshold / window)))
    cells = []
    for i in range(_BAR):
        if i == mark:
            cells.append(_rgb(LINES["threshold"], "│", color))
        elif i < filled:
            cells.append(_rgb(LINES["threshold"] if status.would_compact else SEGMENTS["new"], "█", color))
        else:
            cells.append("░")
    return "[" + "".join(cells) + "]"


def render(status: Status, path: str, engine: str, notice: str | None, color: bool) -> list[str]:
    """The status block, one string per line (session text made visible, never raw)."""
    if status.context_window is None or status.threshold is None:
        size = f"{fmt_int(status.tokens)} tokens; window unknown: {UNKNOWN_WINDOW_HINT}"
        until = "unknown: no window, no threshold"
    else:
        size = (f"{fmt_int(status.tokens)} / {fmt_int(status.context_window)} tokens "
                f"({fmt_percent(status.tokens, status.context_window)}), threshold {fmt_int(status.threshold)} "
                f"(window from {status.window_source})")
        until = _until(status, color)
    last = status.last_compaction
    if last is None:
        compaction = "none on this branch"
    else:
        compaction = (f"{inert(str(last.id))}  tokensBefore {fmt_int(last.tokens_before)} → tokensAfter "
                      f"{fmt_int(last.tokens_after)}  ({plural(status.compactions, 'compaction')} on this branch)")
    lines = [
        f"pikit watch  {inert(path)}  ({engine}; Ctrl-C ends)",
        f"  leaf        {inert(str(status.leaf_id))}  {inert(status.leaf_kind)}",
        f"  entries     {fmt_int(status.entries)}",
        f"  context     {_bar(status, color)} {size}",
        f"  compaction  {until}",
        f"  last        {compaction}",
        f"  model       {inert(status.model) if status.model else MISSING}",
    ]
    if notice:
        lines.append(f"  note        {inert(notice)}")
    return lines


def _until(status: Status, color: bool) -> str:
    left = (status.threshold or 0) - status.tokens
    if status.would_compact:
        return _rgb(LINES["threshold"], f"over the threshold by {fmt_int(-left)}: Pi compacts at its next check", color)
    return f"{plural(left, 'token')} until Pi compacts"


class _Screen:
    """Redraws the block in place on a terminal; elsewhere prints each block once."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.color = self.tty and not os.environ.get("NO_COLOR")
        self.drawn = 0

    def draw(self, lines: list[str]) -> None:
        out = self.out
        if self.tty:
            if self.drawn:
                out.write(f"\x1b[{self.drawn}F")
            for line in lines:
                out.write("\x1b[2K" + line + "\n")
            for _ in range(self.drawn - len(lines)):
                out.write("\x1b[2K\n")
            self.drawn = max(self.drawn, len(lines))
        else:
            out.write("\n".join(lines) + "\n\n")
        out.flush()


def _open(path: str, poll: float | None, idle_exit: float | None, strict: bool) -> Follower:
    """The follower, once the file exists with a session header.

    Raises :class:`PikitError` (exit status 1) when ``idle_exit`` seconds pass first: there
    was nothing to watch, which a script must be able to tell from a watch that ended idle.
    """
    start = time.monotonic()
    told = False
    while True:
        try:
            return Follower(path, poll=poll, strict=strict, background=False)
        except (SessionFileError, NotASessionError) as exc:
            empty = isinstance(exc, NotASessionError) and "is empty" in str(exc)
            if not empty and "no such file" not in str(exc):
                raise
        if not told:
            print(f"pikit: note: waiting for {inert(path)} to appear…", file=sys.stderr)
            told = True
        if idle_exit is not None and time.monotonic() - start >= idle_exit:
            what = "was still empty" if empty else "never appeared"
            raise PikitError(f"{inert(path)} {what} in {idle_exit:g} s (--idle-exit): nothing to watch")
        time.sleep(0.2)


def run(args: Namespace) -> int:
    follower = _open(args.file, args.poll, args.idle_exit, args.strict)
    session = follower.session
    settings: Settings | None
    try:
        settings = session_settings(args, session)
    except SettingsError as exc:
        print(f"pikit: warning: {cut_echoes(in_flags(exc), [args.settings])}; using Pi's default settings",
              file=sys.stderr)
        settings = None
    gauge = _Gauge(session, args.context_window, args.reserve_tokens, settings)
    screen = _Screen(trusted(sys.stdout))  # pikit's own escapes; session text is made inert in render()
    notice: str | None = None
    noted: str | None = None

    def show() -> None:
        status = gauge.reading()
        if args.json:  # the contract, exact as JSON.stringify writes it (bytes, not through the inert stream)
            out = sys.stdout.buffer
            out.write(jsjson.stringify_bytes(watch_json.status(status)) + b"\n")
            out.flush()
        else:
            screen.draw(render(status, follower.path, follower.engine, notice, screen.color))

    try:
        show()
        for change in follower.updates(idle_exit=args.idle_exit):
            gauge.change = change
            news = _news(change)
            standing = follower.notices[-1] if follower.notices and follower.engine == "polling" else None
            if args.json and (news or standing):
                print(f"pikit: {news or standing}", file=sys.stderr)
            if news:  # on a terminal it stays on the redrawn block until there is other news
                noted = f"{news} (at {time.strftime('%H:%M:%S')})"
            elif not screen.tty:
                noted = None
            notice = noted or standing
            show()
    except KeyboardInterrupt:
        pass
    finally:
        follower.close()
    return 0


def _news(change: Refresh) -> str | None:
    """What a change did that the gauge alone does not explain (``None``: plain appends)."""
    if change.reloaded:
        return f"the file was loaded again: {change.reloaded}"
    if change.branch_switch is not None:
        return str(change.branch_switch)
    damaged = [p for p in change.problems if p.kind == "damaged-line"]
    if damaged:
        return f"skipped damaged line(s) {', '.join(str(p.line) for p in damaged[:5])}"
    return None
