"""Following a session file while Pi writes it: the session refreshes itself as the file grows.

>>> live = pikit.follow("session.jsonl")            # loads, then follows in the background
>>> live.on_change(lambda refresh: print(refresh))   # called once per batch of appended lines
>>> live.session.leaf_id                             # always the newest entry (unless moved)
>>> live.close()

The engine waits for file-system notifications (the ``watchfiles`` package: inotify on
Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows), so following costs next to no
CPU while nothing changes. ``watchfiles`` was chosen over ``watchdog`` because it already
batches a burst of writes into one event (its debounce: a burst of 100 lines is one refresh),
takes a stop event and a timeout, and runs its watcher in Rust without Python threads of its
own. Where it is missing or cannot watch (no notification support, the watch limit reached),
or when asked (``poll=SECONDS``), the file's size, time and inode are polled instead. Either
way the file is also looked at once a second, so a missed notification (network file
systems) costs at most that delay. Watching starts before the file is read again, whenever
following starts, so nothing appended between the last read and the start of watching is
left to that look.

In a notebook the refreshes run on the kernel's event loop, between cells, so widgets and
cells never see a half-updated session; elsewhere they run in the follower's thread under
:attr:`Follower.lock` (the read right after watching starts runs in :meth:`Follower.start`'s
caller). :meth:`Follower.updates` follows in the foreground instead (the CLI).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ._format.reading import file_signature
from ._limits import MIN_POLL, check_seconds
from ._session import Session, load
from ._tree.refresh import Refresh
from .errors import NotASessionError, PikitError, SessionFileError

if TYPE_CHECKING:
    import asyncio

__all__ = ["Follower", "follow"]

# The longest one wait lasts: the follower looks at the file at least this often.
CHECK_SECONDS = 1.0
# A burst of writes is one change: it ends after this quiet time (or at most DEBOUNCE_MS).
STEP_MS = 40
DEBOUNCE_MS = 250


class _Polling:
    """Waits by looking at the file's size, time and inode every ``interval`` seconds."""

    name = "polling"

    def __init__(self, path: str, interval: float, stop: threading.Event) -> None:
        self.path = path
        self.interval = interval
        self.stop = stop
        self.last = file_signature(path)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.stop.is_set():
            now = file_signature(self.path)
            if now != self.last:
                self.last = now
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.stop.wait(min(self.interval, left))
        return False

    def close(self) -> None:
        self.stop.set()


class _Notifications:
    """Waits for file-system notifications about the file (``watchfiles``), batched per burst.

    Watching starts when the engine is made, not at its first wait, so a change between the
    two is not lost (the watcher keeps what it saw until it is asked).
    """

    name = "watchfiles"

    def __init__(self, path: str, stop: threading.Event) -> None:
        from watchfiles._rust_notify import RustNotify  # watchfiles' documented direct interface

        self.target = os.path.normcase(os.path.abspath(path))
        self.stop = stop
        # The folder (a file replaced by a rename is still seen), not its subfolders. The flags:
        # debug, force_polling, poll_delay_ms (unused), recursive, ignore_permission_denied.
        self._watcher = RustNotify([os.path.dirname(self.target)], False, False, 300, False, False)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            changes = self._watcher.watch(DEBOUNCE_MS, STEP_MS, max(1, int(left * 1000)), self.stop)
            if changes == "signal":
                raise KeyboardInterrupt
            if not isinstance(changes, set):  # "stop" or "timeout"
                return False
            if any(os.path.normcase(os.path.abspath(changed)) == self.target for _kind, changed in changes):
                return True
        return False

    def close(self) -> None:
        self.stop.set()
        self._watcher.close()


def _engine(path: str, poll: float | None, stop: threading.Event) -> tuple[_Polling | _Notifications, str | None]:
    """The notification engine, or polling (and why) when asked for or when notifications fail."""
    if poll is not None:
        return _Polling(path, poll, stop), None
    try:
        return _Notifications(path, stop), None
    except ImportError:
        why = "watchfiles is not installed; polling the file instead (pip install watchfiles)"
    except (OSError, RuntimeError) as exc:  # no notification support here, or the watch limit reached
        why = f"file-system notifications are unavailable ({exc}); polling the file instead"
    return _Polling(path, 0.25, stop), why


class Follower:
    """A session that follows its file (see :func:`follow`).

    ``session`` is the live :class:`~pikit.Session`; every change of the file refreshes it
    (:meth:`Session.refresh`) and calls the ``on_change`` callbacks with the
    :class:`~pikit.Refresh`. ``engine`` is ``"watchfiles"`` or ``"polling"``; ``notices``
    collects what a user should hear (a fallback to polling, a reload of a rewritten file).
    """

    def __init__(self, source: str | os.PathLike[str] | Session, *, poll: float | None = None, strict: bool = False,
                 background: bool = True) -> None:
        if poll is not None:
            check_seconds("poll", poll, MIN_POLL)
        if isinstance(source, Session):
            if source.path is None:
                raise PikitError("this session was not loaded from a file, so there is no file to follow")
            self.path, self.session = source.path, source
        else:
            self.path = os.fspath(source)
            self.session = load(self.path, strict=strict, wait_for_last_line=True)
        self.lock = threading.RLock()
        self.notices: list[str] = []
        self.changes = 0
        self._poll = poll
        self._callbacks: list[Callable[[Refresh], Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._scheduled = False
        self._waiting = False
        #: The event loop the refreshes are delivered on (``None``: the follower's own thread).
        self.loop: asyncio.AbstractEventLoop | None = None
        self._finalizer = weakref.finalize(self, self._stop.set)
        self.engine = "watchfiles" if poll is None else "polling"
        if background:
            self.start()

    def __repr__(self) -> str:
        state = "following" if self.running else "stopped"
        return f"<Follower {self.path} {state} ({self.engine}), {len(self.session)} entries>"

    # ------------------------------------------------------------------ callbacks
    def on_change(self, callback: Callable[[Refresh], Any]) -> Callable[[], None]:
        """Call ``callback(refresh)`` after each change; returns a function that removes it."""
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def check(self) -> Refresh | None:
        """Refresh now; the :class:`~pikit.Refresh` when something changed (callbacks called)."""
        self._scheduled = False
        with self.lock:
            try:
                result = self.session.refresh()
            except SessionFileError as exc:
                if os.path.exists(self.path) and not isinstance(exc, NotASessionError):
                    raise
                # Between a rotation's steps: gone, or not yet holding a header. Wait for it.
                self._notice(f"{self.path} is gone or has no session header yet; waiting for it")
                return None
            self._waiting = False
            if not result.changed:
                return None
            self.changes += 1
            if result.reloaded:
                self.notices.append(f"{self.path} was loaded again: {result.reloaded}")
            for callback in list(self._callbacks):
                try:
                    callback(result)
                except Exception as exc:  # one failing view must not stop the others, nor following
                    self.notices.append(f"a change callback failed: {type(exc).__name__}: {exc}")
        return result

    def _notice(self, text: str) -> None:
        if not self._waiting:  # once per absence, not once a second
            self._waiting = True
            self.notices.append(text)

    # ------------------------------------------------------------------ foreground
    def updates(self, *, idle_exit: float | None = None) -> Iterator[Refresh]:
        """Follow in the calling thread: yield each change; end after ``idle_exit`` quiet seconds.

        Ends on Ctrl-C too (``KeyboardInterrupt`` propagates) and when :meth:`close` is called.
        """
        if idle_exit is not None:
            check_seconds("idle_exit", idle_exit)
        if self.running:
            raise PikitError("this follower already follows in the background; use on_change() or stop() first")
        self._stop = threading.Event()  # close() ends this loop too
        engine = self._make_engine()  # watching from here on: the first check reads what came before
        try:
            quiet_since = time.monotonic()
            while not self._stop.is_set():
                result = self.check()
                if result is not None:
                    quiet_since = time.monotonic()
                    yield result
                wait = CHECK_SECONDS
                if idle_exit is not None:
                    left = idle_exit - (time.monotonic() - quiet_since)
                    if left <= 0:
                        return
                    wait = min(wait, left)
                engine.wait(wait)
        finally:
            engine.close()

    # ------------------------------------------------------------------ background
    @property
    def running(self) -> bool:
        """Whether the follower follows in the background."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Follow in the background (a daemon thread; see the module's notes on where refreshes run)."""
        if self.running:
            return
        self._stop = threading.Event()
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, self._stop.set)
        engine = self._make_engine()
        self._check_noting()  # watching already: what was appended since the last read is read now
        loop = self.loop = _calling_loop()
        self._thread = threading.Thread(target=_follow, args=(weakref.ref(self), engine, self._stop, loop),
                                        name=f"pikit-follow {os.path.basename(self.path)}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop following (the session stays as it is; :meth:`start` follows again)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    close = stop

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _make_engine(self) -> _Polling | _Notifications:
        engine, why = _engine(self.path, self._poll, self._stop)
        self.engine = engine.name
        if why:
            self.notices.append(why)
        return engine

    def _check_noting(self) -> None:
        """:meth:`check`; a failure goes to :attr:`notices` and following goes on."""
        try:
            self.check()
        except Exception as exc:  # a callback or a read failed: say so and keep following
            self.notices.append(f"following {self.path}: {type(exc).__name__}: {exc}")

    def _deliver(self, loop: asyncio.AbstractEventLoop | None) -> None:
        if loop is None:
            self._check_noting()
        elif not self._scheduled:
            self._scheduled = True  # one pending refresh at a time, however busy the loop is
            try:
                loop.call_soon_threadsafe(self._check_noting)
            except RuntimeError:  # the loop was closed: refresh here instead
                self._scheduled = False
                self._check_noting()


def _calling_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop the caller runs in (a notebook's kernel, an asyncio program), if any.

    Only a loop that runs the caller as one of its tasks counts: such a loop comes back to
    its queue between steps. A loop that merely reports itself running (as Playwright's
    synchronous API leaves one) might never look at it again.
    """
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop if asyncio.current_task(loop) is not None else None


def _follow(ref: weakref.ReferenceType[Follower], engine: _Polling | _Notifications, stop: threading.Event,
            loop: asyncio.AbstractEventLoop | None) -> None:
    """The background loop; it holds the follower only weakly, so dropping it ends the loop."""
    try:
        while not stop.is_set():
            changed = engine.wait(CHECK_SECONDS)
            follower = ref()
            if follower is None or stop.is_set():
                return
            if changed or _stale(follower):
                follower._deliver(loop)
            del follower
    finally:
        engine.close()


def _stale(follower: Follower) -> bool:
    """Whether the file differs from what was read (a missed notification)."""
    report = follower.session.report
    mark = report.mark
    now = file_signature(follower.path)
    if now is None or mark is None:
        return False
    size, mtime_ns, inode = now
    return size != report.bytes or mtime_ns != report.mtime_ns or inode != mark.inode


def follow(path: str | os.PathLike[str] | Session, *, poll: float | None = None, strict: bool = False) -> Follower:
    """Load a session file and keep it up to date as it grows (a :class:`Follower`).

    ``path`` may also be a session loaded from a file: it is then followed as it is (not
    loaded again). ``follow(path).session`` is the live session; pass the follower to the explorer
    (``SessionExplorer(pikit.follow(path))``) to watch the tree, the budget and the context
    follow Pi. ``poll=SECONDS`` polls instead of using file-system notifications. Call
    ``close()`` (or use ``with``) to stop following.
    """
    return Follower(path, poll=poll, strict=strict)
