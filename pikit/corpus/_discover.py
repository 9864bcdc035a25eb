"""Which files make a corpus: Pi's sessions directory, any directory, a glob or a list of files."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["STORES", "Found", "agent_root", "default_agent_dir", "default_root", "find_files", "is_url", "order_key",
           "project_of", "store_of"]

#: The stores of Pi's format pikit knows by name (``agent_dir="omp"``), with where each keeps its sessions.
STORES = {
    "pi": "Pi: $PI_CODING_AGENT_DIR or ~/.pi/agent, sessions in <agent dir>/sessions/<encoded cwd>/",
    "omp": "oh-my-pi: $OMP_CODING_AGENT_DIR or ~/.omp/agent, sessions in <agent dir>/sessions/<encoded cwd>/",
    "openclaw": "OpenClaw: $OPENCLAW_STATE_DIR or ~/.openclaw, transcripts in agents/<agent id>/sessions/",
}


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL for fsspec (``s3://…``, ``file://…``) rather than a local path."""
    return "://" in path


def default_agent_dir(store: str = "pi") -> str:
    """The agent directory of a known store (:data:`STORES`): ``pi`` is ``$PI_CODING_AGENT_DIR`` (``~`` expanded),
    else ``~/.pi/agent``; ``omp`` is ``$OMP_CODING_AGENT_DIR``, else ``~/.omp/agent``; ``openclaw`` is
    ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw`` (its agents' folders are below it)."""
    variable, folder = {"pi": ("PI_CODING_AGENT_DIR", (".pi", "agent")),
                        "omp": ("OMP_CODING_AGENT_DIR", (".omp", "agent")),
                        "openclaw": ("OPENCLAW_STATE_DIR", (".openclaw",))}[store]
    given = os.environ.get(variable)
    return os.path.expanduser(given) if given else os.path.join(os.path.expanduser("~"), *folder)


def default_root() -> str:
    """Pi's sessions directory: ``$PI_CODING_AGENT_DIR/sessions`` (``~`` expanded), else ``~/.pi/agent/sessions``."""
    return os.path.join(default_agent_dir(), "sessions")


def agent_root(agent_dir: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> str | list[str]:
    """The sessions folders of agent directories: a path (Pi's layout: ``DIR/sessions/``) or a store's name.

    ``openclaw`` stands for the ``sessions`` folder of every agent below ``~/.openclaw/agents``.
    A folder that holds no ``sessions`` folder is refused, naming it.
    """
    from ..errors import PikitError, Wording

    given = [agent_dir] if isinstance(agent_dir, str | os.PathLike) else list(agent_dir)
    if not given:
        raise PikitError(Wording("{agent_dir} names no agent directory", {"agent_dir": "agent_dir"}))
    folders: list[str] = []
    for each in given:
        name = os.fspath(each)
        if name == "openclaw":
            agents = os.path.join(default_agent_dir("openclaw"), "agents")
            found = sorted(glob.glob(os.path.join(glob.escape(agents), "*", "sessions")))
            if not found:
                raise PikitError(Wording("{agent_dir} openclaw: no agents/*/sessions folder in {where}",
                                         {"agent_dir": "agent_dir"}, where=os.path.dirname(agents)))
            folders.extend(found)
            continue
        base = default_agent_dir(name) if name in STORES else os.path.abspath(os.path.expanduser(name))
        sessions = os.path.join(base, "sessions")
        if not os.path.isdir(sessions):
            raise PikitError(Wording("{agent_dir} {name}: no sessions folder in {where}", {"agent_dir": "agent_dir"},
                                     name=name, where=base))
        folders.append(sessions)
    return folders[0] if len(folders) == 1 else folders


def store_of(path: str) -> str | None:
    """Which store a session file belongs to: ``pi``, ``omp``, ``openclaw``, else the agent directory holding it
    (the folder with the ``sessions`` folder the file is in, up to three levels down); None outside such a layout."""
    parts = path.replace("\\", "/").split("/")
    for depth in (1, 2, 3):  # OpenClaw: sessions/FILE; Pi: sessions/CWD/FILE; omp's subagents: sessions/CWD/RUN/FILE
        if len(parts) > depth and parts[-depth - 1] == "sessions":
            agent = "/".join(parts[:-depth - 1])
            break
    else:
        return None
    if agent in (default_agent_dir("pi"), default_agent_dir("omp")):
        return "pi" if agent == default_agent_dir("pi") else "omp"
    if agent.endswith(("/.pi/agent", "/.omp/agent")):
        return agent.rsplit("/", 2)[-2][1:]
    above = agent.rsplit("/", 2)
    if len(above) == 3 and above[1] == "agents" and (above[0].endswith("/.openclaw")
                                                       or above[0] == default_agent_dir("openclaw")):
        return "openclaw"
    return agent or "/"


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
        files = []
        for p in root:
            text = os.fspath(p)
            if not is_url(text) and os.path.isdir(os.path.expanduser(text)):  # a folder of the list: its files
                files.extend(_walk(os.path.expanduser(text), problems))
            else:
                files.append(text if is_url(text) else os.path.abspath(os.path.expanduser(text)))
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
