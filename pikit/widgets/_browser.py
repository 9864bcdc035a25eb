"""The session browser: a corpus's sessions table, sortable and searchable; a click opens a session below."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anywidget
import ipywidgets as widgets
import traitlets

from .. import jsjson
from .._inert import visible
from ._base import error_output
from ._html import CSS, error_box
from ._views.browser import BROWSER_COLUMNS, browser_rows, resume_command

if TYPE_CHECKING:
    import pandas as pd

    from ..corpus import Corpus
    from ..corpus._search import SearchHit
    from ._explorer import SessionExplorer

__all__ = ["HITS", "SessionBrowser", "SessionTable"]

HITS = 20  # entries the browser lists under the table for the words of its search box

_BROWSER_CSS = """
.pikit-browser { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, #222); }
.pikit-browser-bar { display: flex; gap: 8px; align-items: center; margin-bottom: 4px; }
.pikit-browser-search { flex: 1 1 auto; padding: 3px 6px; border: 1px solid var(--jp-border-color2, #ccc);
  border-radius: 4px; font: inherit; }
.pikit-browser-count { color: var(--jp-ui-font-color2, #666); white-space: nowrap; }
.pikit-browser-head { display: grid; gap: 6px; padding: 0 6px; border-bottom: 2px solid var(--jp-border-color2, #ddd); }
.pikit-browser-heading { all: unset; cursor: pointer; font-weight: 600; padding: 4px 0; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
.pikit-browser-viewport { position: relative; overflow-y: auto; border: 1px solid var(--jp-border-color2, #ddd);
  border-top: none; background: var(--jp-layout-color1, #fff); }
.pikit-browser-spacer { position: relative; width: 100%; }
.pikit-browser-row { position: absolute; left: 0; right: 0; display: grid; gap: 6px; align-items: center;
  padding: 0 6px; box-sizing: border-box; cursor: pointer; border-bottom: 1px solid var(--jp-border-color3, #eee); }
.pikit-browser-row:hover { background: var(--jp-layout-color2, #f0f4f8); }
.pikit-browser-row.pikit-selected { background: rgba(25, 118, 210, 0.16); }
.pikit-browser-cell { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.pikit-num { text-align: right; }
.pikit-browser-resume { display: flex; gap: 6px; align-items: center; margin-top: 4px; }
.pikit-browser-resume[hidden] { display: none; }
.pikit-browser-id { color: var(--jp-ui-font-color2, #666); white-space: nowrap; font-family: var(--jp-code-font-family,
  monospace); }
.pikit-browser-command { flex: 1 1 auto; padding: 2px 6px; border: 1px solid var(--jp-border-color2, #ccc);
  border-radius: 4px; font-family: var(--jp-code-font-family, monospace); font-size: inherit;
  background: var(--jp-layout-color2, #f7f7f7); color: inherit; }
.pikit-browser-copy { padding: 2px 10px; font: inherit; cursor: pointer; }
"""


class SessionTable(anywidget.AnyWidget):
    """The table part of :class:`SessionBrowser`: virtualized rows, sorted in the browser.

    Traits: ``search`` (the words typed in the search box), ``matches`` (JSON bytes of
    ``{"search": words, "rows": [row indexes]}``: the rows kept for those words, ``null``
    for every row; the kernel works them out, see :class:`SessionBrowser`), ``searchable``
    (whether the search box is on), ``sort_column`` (index in
    ``BROWSER_COLUMNS``), ``sort_descending``, and
    ``selected_path`` (the session file of the row last clicked). Under the table, the selected
    session's id (made visible: ``visible``) and the command that resumes it in
    Pi (``selected_id`` and ``resume``, set here from the ``resume`` column, inert as it is
    quoted) stand in a field to select and a button that copies the command.
    ``shown_count`` is how many rows the search keeps; ``render_ms`` the time the browser took to
    first paint.

    A path that is not valid UTF-8 (a lone surrogate, as Python reads an undecodable file name)
    cannot travel to the page and back as it is: its row holds it with ``\\udXXX`` escapes, and
    ``files`` maps that form back to the path.
    """

    _esm = Path(__file__).with_name("_browser.js")
    _css = CSS + _BROWSER_CSS

    rows_data = traitlets.Bytes(b"[]").tag(sync=True)
    columns: traitlets.List[Any] = traitlets.List().tag(sync=True)
    search = traitlets.Unicode("").tag(sync=True)
    matches = traitlets.Bytes(b'{"search":"","rows":null}').tag(sync=True)
    searchable = traitlets.Bool(False).tag(sync=True)
    sort_column = traitlets.Int(0).tag(sync=True)
    sort_descending = traitlets.Bool(True).tag(sync=True)
    selected_path = traitlets.Unicode("").tag(sync=True)
    selected_id = traitlets.Unicode("").tag(sync=True)
    resume = traitlets.Unicode("").tag(sync=True)
    row_height = traitlets.Int(26).tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    shown_count = traitlets.Int(-1).tag(sync=True)
    render_ms = traitlets.Float(-1.0).tag(sync=True)

    def __init__(self, rows: list[list[Any]], *, height: int = 420,
                 sessions: dict[str, tuple[str, str]] | None = None, **kwargs: Any) -> None:
        columns = [[c.title, c.numeric, c.width] for c in BROWSER_COLUMNS]
        self._paths = [row[0] for row in rows]
        self._sessions = dict(sessions or {})  # path → (session id, resume command)
        self.files: dict[str, str] = {}
        for row in rows:
            sent = row[0].encode("utf-8", "backslashreplace").decode("utf-8")
            if sent != row[0]:
                self.files[sent], row[0] = row[0], sent
        super().__init__(rows_data=jsjson.stringify_bytes(rows), columns=columns, height=height,
                         shown_count=len(rows), **kwargs)
        self.observe(self._selected, names=["selected_path"])

    def _selected(self, change: dict[str, Any]) -> None:
        path = self.files.get(change["new"], change["new"])
        session_id, resume = self._sessions.get(path, ("", ""))
        with self.hold_sync():
            self.selected_id, self.resume = session_id, resume

    def keep(self, search: str, paths: Iterable[str] | None) -> None:
        """Show only the rows of ``paths`` (``None``: every row), found for the words ``search``."""
        wanted = None if paths is None else set(paths)
        kept = None if wanted is None else [i for i, path in enumerate(self._paths) if path in wanted]
        with self.hold_sync():
            self.matches = jsjson.stringify_bytes({"search": search, "rows": kept})  # words may hold lone surrogates
            self.shown_count = len(self._paths) if kept is None else len(kept)

    @property
    def rows(self) -> list[list[Any]]:
        """The rows sent to the browser (see ``browser_rows``)."""
        rows: list[list[Any]] = jsjson.loads(self.rows_data)
        return rows


class SessionBrowser(widgets.VBox):
    """Every session of a corpus in one table; clicking a row opens it in a :class:`SessionExplorer` below.

    ``source`` is a :class:`pikit.corpus.Corpus` or its ``sessions`` DataFrame. The table stays
    fast with thousands of rows (only the rows in view are in the page; sorting runs in the
    browser). The search box keeps the sessions ``pikit sessions --search`` and
    :meth:`Corpus.search_sessions <pikit.corpus.Corpus.search_sessions>` find, by the text of
    the user and assistant messages in the corpus index (every word must occur, in any case),
    not the columns shown; below the table it lists the first :data:`HITS` entries that hold
    the words (:meth:`Corpus.search <pikit.corpus.Corpus.search>`: ``hits``), and clicking one
    opens its session at that entry (:meth:`open_entry`). It needs the Corpus (a DataFrame
    alone has no message text, so the box is off).
    ``selected_path`` (a traitlet) is the session shown below: set it
    from Python to open one, or observe it. Parts: ``table`` (a :class:`SessionTable`),
    ``detail`` (the box the explorer goes in, or the error when a session cannot be opened),
    ``explorer`` (the open :class:`SessionExplorer`, or ``None``); ``open_ms`` is the kernel
    time the last open took.
    ``explorer_options`` are passed to each :class:`SessionExplorer`. A version-1 file whose
    migrated copy the corpus holds (``migrated_to``) is not listed: the copy is the same session.
    """

    selected_path = traitlets.Unicode("")

    def __init__(self, source: Corpus | pd.DataFrame, *, height: int = 420,
                 explorer_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self.corpus = cast("Corpus", source) if hasattr(source, "sessions") else None
        sessions = cast("pd.DataFrame", source) if self.corpus is None else self.corpus.sessions
        # A version-1 file beside its migrated copy is the same session: the copy stands for both.
        records = [r for r in sessions.to_dict("records") if not isinstance(r.get("migrated_to"), str)]
        self.table = SessionTable(browser_rows(records), height=height, searchable=self.corpus is not None,
                                  sessions={str(r.get("path")): (visible(str(r.get("session_id") or "")),
                                                                 resume_command(r)) for r in records})
        self.detail = widgets.VBox()
        self.hits: list[SearchHit] = []
        self.hits_box = widgets.VBox(layout=widgets.Layout(max_height="220px", overflow="auto"))
        self.explorer: SessionExplorer | None = None
        self.errors = error_output()
        self.open_ms = 0.0
        self._options = dict(explorer_options or {})
        super().__init__([self.table, self.errors, self.hits_box, self.detail], **kwargs)
        self.add_class("pikit-session-browser")
        traitlets.link((self.table, "selected_path"), (self, "selected_path"))
        self.observe(self._open, names=["selected_path"])
        self.table.observe(self._search, names=["search"])

    def _search(self, change: dict[str, Any]) -> None:
        words = change["new"]
        if self.corpus is None or not words.split():
            self.table.keep(words, None)
            self._show_hits([])
            return
        from IPython.display import HTML

        try:
            paths = self.corpus.search_sessions(words)
            hits = self.corpus.search(words, limit=HITS)
        except Exception as exc:  # a closed index, a failing query: said under the table, which keeps no row
            self.errors.clear_output()
            self.errors.append_display_data(HTML(error_box(f"cannot search the messages for “{words}”", exc)))
            self.errors.layout.display = None
            self.table.keep(words, [])
            self._show_hits([])
            return
        self.errors.layout.display = "none"
        self.table.keep(words, paths)
        self._show_hits(hits)

    def _show_hits(self, hits: list[SearchHit]) -> None:
        """One button per hit (its kind, entry and snippet as inert text); a click opens the session there."""
        self.hits = hits
        buttons = []
        for hit in hits:
            label = f"{hit.kind} · {hit.entry_id or hit.entry_index} · {Path(hit.path).name} · {hit.snippet}"
            button = widgets.Button(description=visible(label)[:200], tooltip=visible(hit.snippet),
                                    layout=widgets.Layout(width="100%", height="auto"))
            button.style.text_align = "left"
            button.on_click(lambda _b, h=hit: self.open_entry(h.path, h.entry_id))
            buttons.append(button)
        self.hits_box.children = buttons

    def open_entry(self, path: str, entry_id: Any) -> None:
        """Open the session of ``path`` below (as a click on its row) and reveal ``entry_id`` in its tree."""
        self.selected_path = path
        if self.explorer is not None and entry_id is not None:
            self.explorer.reveal(entry_id)

    def _open(self, change: dict[str, Any]) -> None:
        path = change["new"]
        if not path:
            self.detail.children = []
            self.explorer = None
            return
        start = time.perf_counter()
        from .._session import load
        from ._explorer import SessionExplorer

        try:
            session = load(self.table.files.get(path, path))
            self.explorer = SessionExplorer(session, **self._options)  # it shows the session's name and path
        except Exception as exc:  # shown here: an observer's error would only reach the kernel's log
            self.detail.children = [widgets.HTML(error_box(f"cannot open {path}", exc))]
            self.explorer = None
            return
        self.detail.children = [self.explorer]
        self.open_ms = (time.perf_counter() - start) * 1000
