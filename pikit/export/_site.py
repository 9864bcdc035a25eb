"""A whole corpus as a static site: a folder of pages that opens in any browser, with no server.

:func:`write_site` writes into ``OUT``:

* ``index.html``: every session as a row (title linking to its page, project, dates, models,
  cost, compactions), from the corpus index's ``sessions`` table; ``data.js`` and ``site.js``
  add a search over titles and first messages and sorting (the page works without them);
* ``sessions/NAME.html``: each session's page (:func:`pikit.export.render_page`), linking back;
* ``usage/day.html`` and ``usage/model.html``: :meth:`Corpus.usage_rows` by day and by model,
  with charts;
* ``.pikit-site.json``: the manifest, what a re-run compares with: each session's file size,
  modification time and settings fingerprint (keyed by a hash of its path, never the path), the
  site's settings, and every file the site holds.

A re-run rewrites only the pages of sessions whose fingerprint changed (all of them when the
settings did), removes the pages of sessions gone, and rewrites the index and usage pages.
Every file is written to a temporary name and renamed; nothing is written outside ``OUT``, and
an ``OUT`` that holds a file the manifest does not list is refused. With a redactor, every file
is redacted, its name included (each session page numbers its own placeholders, so a page does
not change when another session does).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._format.write import write_pieces
from .._session import Session
from .._version import __version__
from ..errors import PikitError, WriteError
from ._page import PageSettings, page_parts
from ._site_pages import SITE_SCRIPT, SessionRow, index_page, search_data, usage_page

if TYPE_CHECKING:
    from .._redaction.redactor import Redactor
    from ..corpus._corpus import Corpus

__all__ = ["MANIFEST", "SiteReport", "check_site", "write_site"]

MANIFEST = ".pikit-site.json"
_FORMAT = 1
_TEMPORARY = re.compile(r"\..+\.pikit-[0-9a-f]{8}\.tmp")  # what an interrupted write leaves (see write_pieces)
_FIXED = ("index.html", "data.js", "site.js", "usage/day.html", "usage/model.html")
_COLUMNS = ("path", "title", "project", "cwd", "started", "last_activity", "models", "cost", "compactions",
            "entries", "first_user_message")


@dataclass
class SiteReport:
    """What a run wrote: ``written`` (files, relative to ``folder``, in order), ``kept`` (session pages left as
    they were), ``removed`` (pages of sessions gone), ``skipped`` (session file → why), ``redacted`` (kind → count).
    """

    folder: str
    sessions: int = 0
    written: list[str] = field(default_factory=list)
    kept: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    redacted: dict[str, int] = field(default_factory=dict)


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode("utf-8", "surrogatepass")).hexdigest()


def _file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read(1 << 20)).hexdigest()
    except OSError:
        return None


def _redactor_key(redactor: Redactor | None) -> str | None:
    """A digest of what a redactor replaces (its options and the environment's secrets; never a value itself)."""
    if redactor is None:
        return None
    from .._redaction.redactor import environment_secrets

    environ = os.environ if redactor.environment is True else (redactor.environment or {})
    spell = [getattr(p, "pattern", p) for p in redactor.patterns], [getattr(p, "pattern", p) for p in redactor.allow]
    return _digest(*spell, redactor.emails, redactor.keep_images, redactor.entropy, redactor.library,
                   environment_secrets(environ))


def _site_key(redactor: Redactor | None) -> str:
    """What every page depends on: pikit, the redaction, Pi's global settings and the model facts."""
    from ..compaction._settings import agent_dir
    from ..corpus._derive import models_fingerprint

    return _digest(_FORMAT, __version__, _redactor_key(redactor),
                   _file_digest(os.path.join(agent_dir(), "settings.json")), models_fingerprint())


# ---------------------------------------------------------------- the folder

def _listed(folder: str) -> list[str]:
    """Every file and link under ``folder``, relative, with ``/`` (folders walked one by one, links not followed)."""
    found: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        with os.scandir(os.path.join(folder, relative)) as entries:
            for entry in entries:
                name = f"{relative}/{entry.name}" if relative else entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append(name)
                else:
                    found.append(name)
    return sorted(found)


def _read_manifest(folder: str, first: str) -> dict[str, Any]:
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, "rb") as file:
            manifest = json.loads(file.read(64 << 20))
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT or \
            not isinstance(manifest.get("files"), list) or not isinstance(manifest.get("sessions"), dict):
        raise WriteError(f"{folder}: holds {first}, a file pikit did not write (no site manifest {MANIFEST} it can "
                         "read); give a new or empty folder, or one that holds a site pikit wrote")
    return manifest


def _checked_folder(out: str | os.PathLike[str]) -> tuple[str, dict[str, Any] | None]:
    """``out`` and its manifest (``None`` for a new or empty folder); refuse a folder holding anything else."""
    folder = os.fspath(out)
    if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
        raise WriteError(f"{folder}: is not a folder; give a new or empty folder for the site")
    if not os.path.isdir(folder):
        parent = os.path.dirname(os.path.abspath(folder))
        if not os.path.isdir(parent):
            raise WriteError(f"{folder}: folder {parent} does not exist")
        return folder, None
    present = _listed(folder)
    if not present:
        return folder, None
    manifest = _read_manifest(folder, present[0])
    known = {*manifest["files"], MANIFEST}
    stranger = next((name for name in present if name not in known and not _temporary(name)), None)
    if stranger is not None:
        raise WriteError(f"{folder}: holds {stranger}, a file pikit did not write; give a new or empty folder, or "
                         "one that holds a site pikit wrote")
    for name in present:
        if os.path.islink(os.path.join(folder, name)):
            raise WriteError(f"{folder}: {name} is a link; pikit writes a site only into plain files and folders")
    return folder, manifest


def check_site(out: str | os.PathLike[str]) -> str:
    """Check, before any work, that the site may be written into ``out``: a new folder in an existing one, an
    empty folder, or a site pikit wrote (its manifest lists every file it holds)."""
    return _checked_folder(out)[0]


def _temporary(name: str) -> bool:
    return bool(_TEMPORARY.fullmatch(name.rsplit("/", 1)[-1]))


class _Folder:
    """Writes files into the site folder only (relative names checked), each whole or not at all."""

    def __init__(self, folder: str, report: SiteReport) -> None:
        self.folder, self.report = folder, report
        os.makedirs(os.path.join(folder, "sessions"), exist_ok=True)
        os.makedirs(os.path.join(folder, "usage"), exist_ok=True)

    def path(self, name: str) -> str:
        parts = name.split("/")
        if any(part in ("", ".", "..") for part in parts) or len(parts) > 2:
            raise PikitError(f"refusing to write {name!r}: not a name inside the site folder")
        return os.path.join(self.folder, *parts)

    def write(self, name: str, pieces: Iterable[str], *, log: bool = True) -> None:
        write_pieces(self.path(name), (p.encode("utf-8", "surrogatepass") for p in pieces), overwrite=True)
        if log:
            self.report.written.append(name)

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path(name))

    def manifest(self, data: dict[str, Any]) -> None:
        self.write(MANIFEST, [json.dumps(data, ensure_ascii=True, indent=0)], log=False)


# ---------------------------------------------------------------- the sessions

class _Text:
    """A redactor with its own numbering per use, or nothing: the text as it is."""

    def __init__(self, redactor: Redactor | None, counts: dict[str, int]) -> None:
        self.redactor, self.counts = redactor, counts

    def __call__(self, value: Any, placeholders: Any = None) -> str:
        text = "" if value is None else str(value)
        if self.redactor is None or not text:
            return text
        from .._redaction.redactor import Placeholders

        return self.redactor.redact_text(text, placeholders or Placeholders(), self.counts)


def _page_name(path: str, text: _Text) -> str:
    """``sessions/NAME.html``: the file's name (redacted, then kept to safe characters) and a short hash of it."""
    shown = text(path)
    stem = os.path.basename(shown)
    stem = stem[:-len(".jsonl")] if stem.endswith(".jsonl") else stem
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip(".-")[:80] or "session"
    return f"sessions/{safe}-{hashlib.sha256(shown.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}.html"


def _fingerprint(path: str, cwd: str | None, site: str) -> str | None:
    """The file's size and modification time, the project settings its page uses, and the site's settings."""
    try:
        state = os.stat(path)
    except OSError:
        return None
    project = _file_digest(os.path.join(cwd, ".pi", "settings.json")) if cwd and os.path.isdir(cwd) else None
    return _digest(state.st_size, state.st_mtime_ns, project, site)


def _session_page(path: str, name: str, text: _Text, settings_of: Callable[[Session], PageSettings]) -> list[str]:
    from .._redaction.redactor import Placeholders
    from .._session import load

    session = load(path)
    if text.redactor is not None:
        from .._redaction.session import redact

        placeholders = Placeholders()
        session, report = redact(session, text.redactor, placeholders=placeholders)
        for kind, n in report.counts.items():
            text.counts[kind] = text.counts.get(kind, 0) + n
        session.path = text(path, placeholders)
    anchor = name.rsplit("/", 1)[-1][:-len(".html")]
    return page_parts(session, settings_of(session), session.leaf_id, "default",
                      home=(f"../index.html#s-{anchor}", "all sessions"))


def write_site(corpus: Corpus, out: str | os.PathLike[str], settings_of: Callable[[Session], PageSettings], *,
               redactor: Redactor | None = None) -> SiteReport:
    """Write the site of ``corpus`` into ``out`` (new, empty, or a site written before: then incrementally).

    ``settings_of`` gives a session's page settings (model, window, reserve and keep: see
    ``pikit.export._page.page_settings``). With a ``redactor``, every file written is redacted.
    """
    folder, manifest = _checked_folder(out)
    report = SiteReport(folder)
    text = _Text(redactor, report.redacted)
    site = _site_key(redactor)
    columns = ", ".join(f'"{c}"' for c in _COLUMNS)
    rows = corpus.rows(f"SELECT {columns} FROM sessions WHERE migrated_to IS NULL "
                       "ORDER BY started DESC NULLS LAST, path")
    report.sessions = len(rows)
    before: dict[str, Any] = manifest["sessions"] if manifest else {}
    old_files: list[str] = manifest["files"] if manifest else []
    planned = {hashlib.sha256(row[0].encode("utf-8", "surrogatepass")).hexdigest(): _page_name(row[0], text)
               for row in rows}
    writer = _Folder(folder, report)
    for name in _listed(folder):
        if _temporary(name):  # left by an interrupted run
            writer.remove(name)
    # first the manifest of every file there may be once this run ends: an interrupted run leaves a folder
    # the next one recognises
    entries = {k: v for k, v in before.items() if k in planned and v.get("page") == planned[k]}
    files = sorted({*old_files, *_FIXED, *planned.values()})
    writer.manifest({"format": _FORMAT, "site": site, "sessions": entries, "files": files})
    listed: list[SessionRow] = []
    for row in rows:
        data = dict(zip(_COLUMNS, row, strict=True))
        key = hashlib.sha256(data["path"].encode("utf-8", "surrogatepass")).hexdigest()
        name = planned[key]
        fingerprint = _fingerprint(data["path"], data["cwd"], site)
        known = before.get(key, {})
        if fingerprint is not None and known.get("fingerprint") == fingerprint and known.get("page") == name \
                and os.path.isfile(writer.path(name)):
            report.kept += 1
        else:
            try:
                writer.write(name, _session_page(data["path"], name, text, settings_of))
            except PikitError as exc:  # vanished or unreadable since the scan
                report.skipped[text(data["path"])] = text(str(exc))  # a redacting site names nothing
                entries.pop(key, None)
                continue
            entries[key] = {"page": name, "fingerprint": fingerprint}
        listed.append(_listed_row(data, name, text))
    keep = {*_FIXED, *(entry["page"] for entry in entries.values())}
    for gone in sorted(name for name in old_files if name not in keep):
        writer.remove(gone)
        report.removed.append(gone)
    _write_fixed(corpus, writer, listed, text)
    writer.manifest({"format": _FORMAT, "site": site, "sessions": entries, "files": sorted(keep)})
    return report


def _cost_sum(costs: Iterable[float]) -> float:
    """Costs added as ``pikit usage`` adds them: compensated summation; Infinity and -Infinity make NaN."""
    import math

    try:
        return math.fsum(costs)
    except ValueError:
        return math.nan


def _listed_row(data: dict[str, Any], name: str, text: _Text) -> SessionRow:
    """The index's row of a session, its text redacted (one numbering for the row)."""
    from .._redaction.redactor import Placeholders

    numbering = Placeholders() if text.redactor is not None else None
    anchor = "s-" + name.rsplit("/", 1)[-1][:-len(".html")]
    cost = data["cost"]
    return SessionRow(page=name, anchor=anchor, title=text(data["title"], numbering),
                      project=text(data["project"], numbering), started=data["started"],
                      last_activity=data["last_activity"], models=text(data["models"], numbering),
                      cost=None if cost is None else float(cost), compactions=int(data["compactions"] or 0),
                      entries=int(data["entries"] or 0), first_message=text(data["first_user_message"], numbering))


def _write_fixed(corpus: Corpus, writer: _Folder, rows: list[SessionRow], text: _Text) -> None:
    """The index, its script and data, and the usage pages (rewritten on every run)."""
    from .._redaction.redactor import Placeholders
    from ..corpus._usage import FIELDS

    redacted = text.redactor is not None
    writer.write("index.html", [index_page(rows, redacted=redacted)])
    writer.write("data.js", [search_data(rows)])
    writer.write("site.js", [SITE_SCRIPT])
    numbering = Placeholders() if redacted else None
    for by in ("day", "model"):
        usage = corpus.usage_rows(by)
        if by == "model":
            usage = [{**r, "key": text(r["key"], numbering)} for r in usage]
        totals = {f: (_cost_sum if f in ("cost", "summarizationCost") else sum)(r[f] for r in usage) for f in FIELDS}
        writer.write(f"usage/{by}.html", [usage_page(by, usage, totals, redacted=redacted)])
