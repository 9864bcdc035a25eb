"""Writing sessions: new files, or whole lines appended with fsync. Never a rewrite.

* :func:`write_new` writes a complete file next to its target and renames it into place,
  so a crash or a signal leaves either nothing or the whole file (the temporary file is
  removed on any error); it refuses to overwrite the source, a directory, or (unless
  ``overwrite``) an existing file. A new file gets the umask's mode, restricted to the
  permissions of its source (a private session stays private); a replaced file keeps its mode.
* :class:`Appender` appends whole lines to an existing session the way Pi does: the file
  is opened with ``O_APPEND`` and each batch of lines goes out in one ``write``, so a line
  Pi appends at the same moment is never overwritten; an advisory lock (``flock``) keeps a
  second in-place run out, and a file whose last line is unterminated is refused rather
  than repaired. :func:`append_lines` is the one-call form.
* :func:`fork` and :func:`migrated_lines` build the content of a fork/clone and of a
  migrated copy.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
import time
from collections.abc import Iterable
from types import TracebackType

from ..errors import Wording, WriteError
from .reading import NotRegularFileError, kind_of, open_regular

__all__ = ["Appender", "append_lines", "check_target", "copy_with_lines",
           "uuid7", "write_new", "write_pieces"]

_COPY_CHUNK = 8 * 1024 * 1024


def uuid7() -> str:
    """A time-ordered UUID (version 7), as Pi uses for session ids."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64
    value |= 0b10 << 62 | (rand & ((1 << 62) - 1))
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def write_new(target: str | os.PathLike[str], lines: Iterable[bytes], *, source: str | None = None,
              overwrite: bool = False) -> str:
    """Write ``lines`` (each without newline) as a new file; return its path.

    Raises :class:`WriteError` (one line) when ``target`` is the source, a directory, an
    existing file without ``overwrite``, or cannot be written; nothing is left behind then.
    """
    return _write_new(os.fspath(target), (piece for line in lines for piece in (line, b"\n")), source, overwrite)


def write_pieces(target: str | os.PathLike[str], pieces: Iterable[bytes], *, source: str | None = None,
                 overwrite: bool = False) -> str:
    """Write ``pieces`` one after the other, as they are, as a new file (as :func:`write_new`)."""
    return _write_new(os.fspath(target), pieces, source, overwrite)


def check_target(target: str | os.PathLike[str], *, source: str | None = None,
                 overwrite: bool = False) -> os.stat_result | None:
    """Check that ``target`` may be written as a new file (before any costly work).

    Returns the stat of the existing file that ``overwrite`` allows to replace, if any;
    raises :class:`WriteError` (one line) for the source itself, a directory, an existing
    file without ``overwrite``, something other than a regular file, or a missing folder.
    """
    path = os.fspath(target)
    if source is not None and _same_file(path, source):
        raise WriteError(f"{path}: refusing to write over the source file; choose another output path")
    try:
        existing: os.stat_result | None = os.stat(path)
    except OSError:
        existing = None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise WriteError(f"{path}: is a directory; give the path of the file to write (e.g. {path}/out.jsonl)")
    if existing is not None and not overwrite:
        raise WriteError(Wording("{path}: already exists; choose a new output path (or pass {overwrite} to replace it)",
                                 {"overwrite": "overwrite=True"}, path=path))
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        raise WriteError(f"{path}: is {kind_of(existing.st_mode)}; pikit replaces regular files only")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise WriteError(f"{path}: folder {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise WriteError(f"{path}: cannot write in {directory} (permission denied)")
    return existing


def _write_new(path: str, pieces: Iterable[bytes], source: str | None, overwrite: bool) -> str:
    """Write ``pieces`` (bytes written as they are) as the new file ``path``."""
    existing = check_target(path, source=source, overwrite=overwrite)
    directory = os.path.dirname(os.path.abspath(path))
    # A new file gets the umask's mode, never readable by more people than the source
    # (a private 0600 session stays private), and always writable by its owner.
    mode = 0o666
    if source is not None:
        with contextlib.suppress(OSError):
            mode = (os.stat(source).st_mode | 0o200) & 0o666
    # The temporary file is created (with ``mode``; the kernel applies the umask) and filled
    # under one handler that removes it by name: a signal that lands between the creation
    # and the first write still leaves nothing behind.
    for _ in range(100):
        tmp = os.path.join(directory, f".{os.path.basename(path)}.pikit-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
        except FileExistsError:
            continue  # not ours: try another name
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # created just before an interruption
            if isinstance(exc, OSError):
                raise WriteError(f"{path}: cannot write in {directory} ({_why(exc)})") from None
            raise
        break
    else:
        raise WriteError(f"{directory}: cannot create a temporary file there")
    try:
        with os.fdopen(fd, "wb") as out:
            for piece in pieces:
                out.write(piece)
            out.flush()
            if existing is not None:
                os.fchmod(out.fileno(), existing.st_mode & 0o7777)  # a replaced file keeps its mode
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise WriteError(f"{path}: cannot be written ({_why(exc)}); nothing was written") from None
        raise
    return path


def copy_with_lines(source: str, target: str | os.PathLike[str], lines: Iterable[bytes], *,
                    overwrite: bool = False, size: int | None = None) -> str:
    """Write a copy of ``source`` (its bytes unchanged) followed by ``lines``.

    ``size`` copies only the first ``size`` bytes (what was loaded: lines appended since
    then are left out, so the copy is the session the new lines were made for).
    """
    return _write_new(os.fspath(target), _source_then(source, lines, size), source, overwrite)


def _source_then(source: str, lines: Iterable[bytes], size: int | None) -> Iterable[bytes]:
    try:
        handle = open_regular(source)
    except (NotRegularFileError, OSError) as exc:
        raise WriteError(f"{source}: cannot be read ({_why(exc)})") from None
    with handle:
        left = size if size is not None else -1
        last = b""
        while left != 0:  # the source's bytes, unchanged
            chunk = handle.read(_COPY_CHUNK if left < 0 else min(left, _COPY_CHUNK))
            if not chunk:
                if left > 0:
                    raise WriteError(f"{source}: the file shrank since it was loaded; load it again and retry")
                break
            if left > 0:
                left -= len(chunk)
            last = chunk
            yield chunk
    if last and not last.endswith(b"\n"):
        yield b"\n"  # only a missing final newline is supplied: no line is glued to the damage
    for line in lines:
        yield line
        yield b"\n"


# How long an unterminated last line must stay unchanged to count as damaged (see Appender).
_SETTLE_SECONDS = 0.05
_SETTLE_TRIES = 40


class Appender:
    """A session file opened to append whole lines, as Pi appends them (a context manager).

    Opening takes an advisory lock (``flock``): a second :class:`Appender` on the same file
    (another pikit process) is refused with :class:`WriteError` until the first closes.
    Pi itself takes no lock; what protects its lines is ``O_APPEND``: every
    :meth:`append` is a single ``write`` at the end of the file, so Pi's line and pikit's
    each land whole, one after the other, never one over the other.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        #: Whether :meth:`append` ended an unterminated last line before its own lines.
        self.added_newline = False
        try:
            # Read and write: the last byte is read through the same descriptor that appends.
            self.fd = os.open(path, os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK)
        except OSError as exc:
            raise WriteError(f"{path}: cannot append ({_why(exc)})") from None
        try:
            mode = os.fstat(self.fd).st_mode
            if not stat.S_ISREG(mode):
                raise WriteError(f"{path}: is {kind_of(mode)}, not a regular file; cannot append")
            os.set_blocking(self.fd, True)
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise WriteError(f"{path}: another pikit run is appending to this file right now; "
                                     "try again when it has finished") from None
                raise WriteError(f"{path}: cannot lock for appending ({_why(exc)})") from None
        except BaseException:
            os.close(self.fd)
            raise

    def check_unchanged(self, size: int, mtime_ns: int | None) -> None:
        """Refuse (:class:`WriteError`) when the file is no longer the one that was loaded."""
        now = os.fstat(self.fd)
        if now.st_size != size or (mtime_ns is not None and now.st_mtime_ns != mtime_ns):
            raise WriteError(f"{self.path}: the file changed since it was loaded (Pi or another program wrote to "
                             "it); load it again and retry")

    def needs_newline(self, *, end_last_line: bool = False) -> bool:
        """Whether the last line lacks its newline; :class:`WriteError` when it does and
        ``end_last_line`` (the caller knows that line to be a complete entry) is not given."""
        if self._ends_with_newline():
            return False
        if not end_last_line:
            raise WriteError(Wording("{path}: the last line has no newline and is damaged (an interrupted write?); "
                                     "pikit will not append to it or repair it. Write a copy with {output} instead",
                                     {"output": "output=PATH"}, path=self.path))
        return True

    def _ends_with_newline(self) -> bool:
        """Whether the file is empty or ends with a newline, once it has stopped growing.

        A writer appending at this moment (Pi) grows the file a page at a time, so its last
        byte can be the middle of a line still being written: such a file is looked at again
        until its size holds still for ``_SETTLE_SECONDS`` (at most ``_SETTLE_TRIES`` times).
        """
        size = os.fstat(self.fd).st_size
        for _ in range(_SETTLE_TRIES):
            if not size or os.pread(self.fd, 1, size - 1) == b"\n":
                return True
            time.sleep(_SETTLE_SECONDS)
            now = os.fstat(self.fd).st_size
            if now == size:
                return False
            size = now
        return not size or os.pread(self.fd, 1, size - 1) == b"\n"

    def append(self, lines: Iterable[bytes], *, end_last_line: bool = False) -> None:
        """Append ``lines`` (each without newline) in one ``write``, then fsync.

        When the file's last line has no newline, the new lines are never glued to it:
        with ``end_last_line`` (the caller knows that line to be a complete entry) a newline
        goes first, in the same write, and :attr:`added_newline` says so; otherwise the
        append is refused with :class:`WriteError`.
        """
        payload = b"".join(line + b"\n" for line in lines)
        if not payload:
            return
        if self.needs_newline(end_last_line=end_last_line):
            payload = b"\n" + payload
            self.added_newline = True
        try:
            written = os.write(self.fd, payload)
            while written < len(payload):  # a short write (rare: a full disk, a signal)
                written += os.write(self.fd, payload[written:])
            os.fsync(self.fd)
        except OSError as exc:
            raise WriteError(f"{self.path}: cannot append ({_why(exc)}); the end of the file may hold a partial "
                             "line, which loading reports as damaged") from None

    def close(self) -> None:
        """Release the lock and close the file."""
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def append_lines(path: str, lines: Iterable[bytes], *, end_last_line: bool = False) -> bool:
    """Append whole lines to ``path`` and fsync (the explicit in-place write; see :class:`Appender`).

    Returns whether a newline had to be added first (only with ``end_last_line``).
    """
    with Appender(path) as appender:
        appender.append(lines, end_last_line=end_last_line)
        return appender.added_newline
