"""A corpus as a static site: an index of its sessions, one page per session, usage by day and by model.

The folder opens in any browser from the disk: nothing is fetched and no server runs. The
index lists every session as a link in its HTML (it works without JavaScript); one inline
script, allowed by its hash in the page's Content-Security-Policy and by nothing else, adds
sorting and a filter over titles and first messages. Each session's page is
:func:`~pikit.export.render_page`'s, as ``pikit export`` writes it. Every value from a session
is escaped (:func:`pikit._inert.html_text`), and with a redactor every string is redacted
before it is written. A re-run rewrites only the pages of sessions whose file changed (size or
modification time, as ``pikit-site.json`` in the folder records them) and the corpus pages
whose content changed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._format.write import write_pieces
from ..errors import WriteError
from ._sitehtml import SCRIPT, index_page, usage_page

if TYPE_CHECKING:
    from .._redaction.redactor import Placeholders, Redactor
    from ..corpus import Corpus

__all__ = ["MANIFEST", "SiteReport", "export_site"]

MANIFEST = "pikit-site.json"
_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_COLUMNS = ("path", "session_id", "title", "project", "started", "last_activity", "models", "cost", "compactions",
            "entries", "first_user_message", "abandoned_branches", "size", "mtime")


@dataclass
class SiteReport:
    """What :func:`export_site` did: the pages it wrote, those it left as they were, those it removed."""

    folder: str
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)


def page_name(path: str) -> str:
    """The file name of a session's page: its file's name made safe, and a digest of its whole path."""
    stem = _UNSAFE.sub("_", os.path.splitext(os.path.basename(path))[0])[:80] or "session"
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{stem}-{digest}.html"


def _manifest(folder: str) -> dict[str, Any]:
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) and found.get("version") == _VERSION else {}


def _check_folder(folder: str, known: dict[str, Any]) -> None:
    """A folder to write into: new, empty, or a site written before (its manifest)."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise WriteError(f"{folder}: is not a folder; give a folder for the site")
    if os.path.isdir(folder) and os.listdir(folder) and not known:
        raise WriteError(f"{folder}: holds files and no {MANIFEST}; give a new or empty folder (or the folder of a "
                         "site pikit wrote, which is brought up to date)")
    os.makedirs(os.path.join(folder, "sessions"), exist_ok=True)


def _write_if_changed(path: str, text: str, report: SiteReport) -> None:
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                report.unchanged.append(path)
                return
    except OSError:
        pass
    write_pieces(path, [data], overwrite=True)
    report.written.append(path)


def _redacting(redactor: Redactor | None, placeholders: Placeholders | None,
               counts: dict[str, int]) -> Any:
    if redactor is None:
        return None
    from .._redaction.redactor import Placeholders as _Placeholders

    numbering = placeholders if placeholders is not None else _Placeholders()

    def text(value: str) -> str:
        return redactor.redact_text(value, numbering, counts)

    return text


def _settings(session: Any) -> Any:
    """The page settings ``pikit export`` would draw the session with (model, window, Pi's settings)."""
    from ..compaction._settings import load_settings
    from ..llm._window import model_window
    from ._page import PageSettings

    recorded = session.context(session.leaf_id).model or {} if session.leaf_id is not None else {}
    model = None
    if recorded.get("modelId") is not None:
        provider = recorded.get("provider")
        model = f"{provider}/{recorded['modelId']}" if provider else str(recorded["modelId"])
    cwd = session.header.get("cwd")
    effective = load_settings(None, cwd=cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None).for_model(model)
    window = model_window(model)
    return PageSettings(model or "", window.tokens, effective.reserve_tokens, effective.keep_recent_tokens,
                        window.source)


def _session_page(path: str, target: str, redactor: Redactor | None, placeholders: Placeholders | None,
                  counts: dict[str, int]) -> None:
    from .._session import load
    from ._page import write_page

    session = load(path)
    if redactor is not None:
        from .._redaction.session import redact

        session, report = redact(session, redactor, placeholders=placeholders)
        for kind, n in report.counts.items():
            counts[kind] = counts.get(kind, 0) + n
    write_page(session, _settings(session), target, overwrite=True)


def _rows(corpus: Corpus) -> list[dict[str, Any]]:
    columns = ", ".join(f'"{c}"' for c in _COLUMNS)
    rows = corpus.rows(f"SELECT {columns} FROM sessions WHERE migrated_to IS NULL ORDER BY started DESC NULLS LAST, "
                       "path")
    return [dict(zip(_COLUMNS, row, strict=True)) for row in rows]


def export_site(corpus: Corpus, folder: str | os.PathLike[str], *, redactor: Redactor | None = None,
                placeholders: Placeholders | None = None, fingerprint: str = "") -> SiteReport:
    """Write (or bring up to date) the static site of ``corpus`` in ``folder``.

    ``folder``: new, empty, or a site written before (its ``pikit-site.json``). ``redactor``:
    every string of every page redacted (``placeholders``: one numbering shared with other
    exports). ``fingerprint``: what else the pages depend on (the redaction options): a site
    written with another is written anew. Pages of sessions gone from the corpus are removed.
    """
    out = os.path.abspath(os.fspath(folder))
    known = _manifest(out)
    _check_folder(out, known)
    report = SiteReport(out)
    text = _redacting(redactor, placeholders, report.redacted)
    same_setup = known.get("fingerprint") == fingerprint and known.get("redacted") == (redactor is not None)
    before: dict[str, Any] = known.get("pages", {}) if same_setup else {}
    rows = _rows(corpus)
    pages: dict[str, Any] = {}
    for row in rows:
        path = row["path"]
        name = page_name(path)
        target = os.path.join(out, "sessions", name)
        try:
            stat = os.stat(path)
        except OSError:
            continue  # (gone since the scan: listed without a page until the next run)
        seen = {"page": name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        if before.get(path) == seen and os.path.isfile(target):
            report.unchanged.append(target)
        else:
            _session_page(path, target, redactor, placeholders, report.redacted)
            report.written.append(target)
        pages[path] = seen
    for path, seen in before.items():
        page = seen.get("page") if isinstance(seen, dict) else None
        if path not in pages and isinstance(page, str):
            gone = os.path.join(out, "sessions", os.path.basename(page))
            if os.path.isfile(gone):
                os.remove(gone)
                report.removed.append(gone)
    by_day = corpus.usage_rows("day")
    by_model = corpus.usage_rows("model")
    _write_if_changed(os.path.join(out, "index.html"),
                      index_page(rows, {r["path"]: f"sessions/{p['page']}" for r in rows
                                        if (p := pages.get(r["path"])) is not None}, text, _script_hash()), report)
    _write_if_changed(os.path.join(out, "usage-by-day.html"), usage_page("day", by_day, text), report)
    _write_if_changed(os.path.join(out, "usage-by-model.html"), usage_page("model", by_model, text), report)
    manifest = {"version": _VERSION, "fingerprint": fingerprint, "redacted": redactor is not None, "pages": pages}
    _write_if_changed(os.path.join(out, MANIFEST), json.dumps(manifest, indent=1, sort_keys=True), report)
    return report


def _script_hash() -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
