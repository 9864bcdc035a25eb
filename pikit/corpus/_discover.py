"""Which files make a corpus: Pi's sessions directory, any directory, a glob or a list of files."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Found", "default_root", "find_files", "is_url", "order_key", "project_of"]


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL for fsspec (``s3://…``, ``file://…``) rather than a local path."""
    return "://" in path


def default_root() -> str:
    """Pi's sessions directory: ``$PI_CODING_AGENT_DIR/sessions`` (``~`` expanded), else ``~/.pi/agent/sessions``."""
    agent = os.environ.get("PI_CODING_AGENT_DIR")
    base = os.path.expanduser(agent) if agent else os.path.join(os.path.expanduser("~"), ".pi", "agent")
    return os.path.join(base, "sessions")


def order_key(path: str) -> tuple[int, tuple[bytes, ...]]:
    """The order files are counted in: shallower first, then by path component, byte-wise.

    This is the order ``@ccusage/pi`` reads a sessions directory in (its directory walk lists
    each folder sorted by name, the files of a folder before those of its subfolders), which
    decides which copy of a forked entry is counted.
    """
    parts = tuple(os.fsencode(p) for p in path.replace("://", "/").split("/") if p)
    return len(parts), parts


def project_of(path: str) -> str:
    """The folder a session file sits in (``unknown`` without one)."""
    parent = path.rstrip("/").rsplit("/", 2)[-2] if "/" in path.rstrip("/") else ""
    return parent or "unknown"


@dataclass
class Found:
    """The files of a corpus, in counting order, and what could not be listed."""

    files: list[str]
    problems: list[tuple[str, str, str]]  # path, kind, message


def _walk(root: str, problems: list[tuple[str, str, str]]) -> Iterable[str]:
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            problems.append((folder, "unreadable", f"cannot list the folder ({exc.strerror or exc})"))
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".jsonl"):
                    yield os.path.abspath(entry.path)
            except OSError as exc:
                problems.append((entry.path, "unreadable", f"cannot be examined ({exc.strerror or exc})"))


def find_files(root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None) -> Found:
    """Every ``.jsonl`` file below a directory (symlinked folders are not followed), matching a glob, or listed.

    A path that exists is taken as it is, even when its name holds glob characters (``*?[``).
    """
    problems: list[tuple[str, str, str]] = []
    if root is None:
        root = default_root()
    if isinstance(root, str) and is_url(root):
        files = _remote_files(root, problems)
    elif isinstance(root, str | os.PathLike):
        text = os.path.expanduser(os.fspath(root))
        if os.path.isdir(text):
            files = list(_walk(text, problems))
            if not files:
                problems.append((os.path.abspath(text), "no-sessions", "no .jsonl files below this folder"))
        elif os.path.lexists(text):  # an existing file, even with glob characters in its name
            files = [os.path.abspath(text)]
        elif glob.has_magic(text):
            files = [os.path.abspath(p) for p in glob.glob(text, recursive=True) if not os.path.isdir(p)]
            if not files:
                problems.append((text, "no-sessions", "no file matches this pattern"))
        else:
            from ..errors import PikitError

            raise PikitError(f"{text}: no such file or folder; check the path")
    else:
        files = [os.fspath(p) if is_url(os.fspath(p)) else os.path.abspath(os.path.expanduser(os.fspath(p)))
                 for p in root]
    named = [path for path in set(files) if _utf8(path)]
    problems.extend((_shown(path), "unreadable", "the file name is not valid UTF-8: rename the file to index it")
                    for path in set(files) if not _utf8(path))
    return Found(sorted(named, key=order_key), [(_shown(path), kind, what) for path, kind, what in problems])


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, kept by Python as surrogates
        return False
    return True


def _shown(path: str) -> str:
    """A path as text the index can hold (bytes that are not UTF-8 become U+FFFD)."""
    return path if _utf8(path) else os.fsencode(path).decode("utf-8", "replace")


def _remote_files(url: str, problems: list[tuple[str, str, str]]) -> list[str]:
    """The ``.jsonl`` files below (or matching) a URL that fsspec serves."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    protocol = url.split("://", 1)[0]
    pattern = path if glob.has_magic(path) else path.rstrip("/") + "/**/*.jsonl"
    try:
        found = [p for p in fs.glob(pattern) if p.endswith(".jsonl")]
    except OSError as exc:
        problems.append((url, "unreadable", f"cannot list ({exc})"))
        return []
    if not found:
        problems.append((url, "no-sessions", "no .jsonl files there"))
    return [f"{protocol}://{p.lstrip('/')}" if protocol != "file" else f"file:///{p.lstrip('/')}" for p in found]
