"""The session explorer: the tree on the left, the leaf's budget and context on the right."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from .._context.describe import session_title
from .._following import Follower
from .._formatting import plural
from .._inert import visible
from .._session import Session
from .._tree.sessiontree import CURRENT
from .._tree.tree import FILTER_MODES, describe_hidden
from ._base import LeafWidget
from ._budget import BudgetBar
from ._context import ContextView
from ._html import esc, fmt_int, gap as _gap, label_pill, style_widget
from ._live import LiveBar
from ._stepper import CompactionStepper, StepperLauncher
from ._tree import TreeView
from ._views.diff import diff_frame

if TYPE_CHECKING:
    from .._context.diff import ProjectionDiff
    from .._context.projection import Projection
    from .._tree.refresh import Refresh

__all__ = ["SessionExplorer"]

_MODE_HELP = {
    "default": "settings entries are hidden",
    "no-tools": "tool results and settings entries are hidden",
    "user-only": "only the user's prompts are shown",
    "labeled-only": "only labelled entries are shown",
    "all": "nothing more is hidden",
}
_ALWAYS_HIDDEN = "in every mode, assistant messages with only tool calls and usage entries are hidden"
_LIVE_SEARCH_LIMIT = 3_000  # above this many entries, search runs on Enter instead of on every key


class SessionExplorer(LeafWidget, widgets.VBox):
    """Browse a session like Pi's ``/tree`` and see what the model gets at any leaf.

    Left: search, filter mode, the tree (virtualized; labels, forks, the active path and the
    leaf marked) and the editor. Right: the leaf's :class:`BudgetBar` and :class:`ContextView`.

    Clicking an entry moves the leaf with Pi's semantics: a user (or custom) message puts
    its text in the editor and moves the leaf to its parent; anything else becomes the leaf.
    ``leaf_id`` is a traitlet: read it, set it (``explorer.leaf_id = "a1b2c3d4"``) or observe
    it; every part follows. The session's own ``leaf_id`` is kept in step.

    ``model``, ``context_window``, ``reserve_tokens`` and ``keep_recent_tokens`` set the budget
    bar (by default: the leaf's model, its window as Pi resolves it, unknown when no source
    knows the model, and the Pi settings).

    Parts: ``tree``, ``context_view``, ``budget``, ``editor``, ``search_box``, ``mode_picker``,
    and ``extras`` (a box under the context, for views that follow the same leaf: it holds the
    **Step through** button that opens a :class:`~pikit.widgets.CompactionStepper` on the leaf,
    also reached as :meth:`open_stepper` and ``stepper``; clicking the source of a fact its last step
    lists as lost reveals that entry in the tree: :meth:`reveal`).
    ``last_move_ms`` is the kernel time the last leaf move took.

    What it shows is one attribute away: ``projection`` (the context at the leaf), ``diff``
    (what the last leaf move changed in it), and ``frame()`` / ``diff_frame()`` as DataFrames.

    Live: ``SessionExplorer(pikit.follow(path))``, or the **follow file** toggle, keeps the
    explorer up with the file while Pi writes it (``live_bar``, a ``LiveBar``).
    The leaf follows the newest entry until you click elsewhere; **back to live** returns to it.
    A compaction that appears is called out and gains a bar in the compaction chart, and the
    budget bar drops with it; a move to another branch (Pi going on from another entry than
    the leaf) and a reload of a rewritten file are called out too. A burst of lines is one
    update of each view, and every part reads the same projection, that of the leaf shown.
    """

    selected_id = traitlets.Any(None)

    def __init__(self, session: Session | Follower, leaf_id: Any = CURRENT, *, mode: str = "default",
                 tree_height: int = 520, model: str | None = None, context_window: int | None = None,
                 reserve_tokens: int | None = None, keep_recent_tokens: int | None = None, page_size: int = 50,
                 **kwargs: Any) -> None:
        start = time.perf_counter()
        follower = session if isinstance(session, Follower) else None
        if isinstance(session, Follower):
            session = session.session
        leaf = self._bind(session, leaf_id)
        self.last_move_ms = 0.0
        self._previous: Projection | None = None
        self._hidden_key: tuple[Any, ...] | None = None
        self._hidden_by_reason: dict[str, int] = {}

        self.tree = TreeView(session, leaf, mode=mode, height=tree_height)
        self.search_box = widgets.Text(placeholder="search… (all words must match)",
                                       continuous_update=len(session.entries) <= _LIVE_SEARCH_LIMIT,
                                       layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.search_box.add_class("pikit-search")
        self.mode_picker = widgets.Dropdown(options=list(FILTER_MODES), value=mode,
                                            tooltip="filter (as in Pi's /tree): " + "; ".join(
                                                f"{m}: {_MODE_HELP[m]}" for m in FILTER_MODES) + f"; {_ALWAYS_HIDDEN}",
                                            layout=widgets.Layout(width="130px", flex="0 0 auto"))
        self.mode_picker.add_class("pikit-mode")
        self.resort_button = widgets.Button(description="re-sort", icon="sort",
                                            tooltip="lay the tree out again: the active branch first at every fork",
                                            layout=widgets.Layout(width="auto", flex="0 0 auto"))
        self.resort_button.add_class("pikit-resort")
        self.resort_button.on_click(lambda _b: self.tree.relayout())
        self.tree_status = widgets.HTML()
        self.tree_status.add_class("pikit-tree-status")
        self.editor = widgets.Textarea(placeholder="Select a user message in the tree: Pi puts its text here to "
                                                   "edit and send again, and moves the leaf to its parent.",
                                       layout=widgets.Layout(width="auto", align_self="stretch", height="72px"))
        self.editor.add_class("pikit-editor")
        self.leaf_info = widgets.HTML()
        self.leaf_info.add_class("pikit-leaf-info")
        self.budget = BudgetBar(session, leaf, model=model, context_window=context_window,
                                reserve_tokens=reserve_tokens, keep_recent_tokens=keep_recent_tokens)
        self.context_view = ContextView(session, leaf, page_size=page_size)
        self.extras = widgets.VBox()
        self.extras.add_class("pikit-explorer-extras")
        self.stepper_launcher = StepperLauncher(self, (self.budget, "keep_recent_tokens"), self.budget,
                                                on_entry=self.reveal)
        self.extras.children = [*self.extras.children, self.stepper_launcher]

        header = self._header = widgets.HTML(self._header_html())
        header.add_class("pikit-explorer-header")
        left = widgets.VBox([
            _gap(widgets.HBox([self.search_box, self.mode_picker])),
            widgets.HBox([self.tree_status, self.resort_button],
                         layout=widgets.Layout(justify_content="space-between", align_items="center",
                                               flex_flow="row wrap")),
            self.tree,
            self.tree.callback_errors,
            widgets.HTML('<div class="pikit-sub">Editor</div>'),
            self.editor,
        ], layout=widgets.Layout(flex="1 1 340px", min_width="300px"))
        left.add_class("pikit-explorer-pane")
        right = widgets.VBox([self.leaf_info, self.budget, self.context_view, self.extras],
                             layout=widgets.Layout(flex="1.4 1 440px", min_width="360px"))
        right.add_class("pikit-explorer-pane")
        # Side by side; on a narrow page the context wraps below the tree.
        body = _gap(widgets.HBox([left, right], layout=widgets.Layout(align_items="flex-start", flex_flow="row wrap")))
        super().__init__([style_widget(), header, body], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-explorer")

        self._follow_leaf(leaf)
        session.leaf_id = leaf
        self.tree.on_select(self._on_tree_select)
        self.tree.observe(self._on_tree_leaf, names="leaf_id")
        self.search_box.observe(lambda c: setattr(self.tree, "search", c["new"]), names="value")
        self.mode_picker.observe(lambda c: setattr(self.tree, "mode", c["new"]), names="value")
        self.tree.observe(lambda _c: self._update_status(), names=["rows_data", "mode", "search"])
        self._update_status()
        self._update_leaf_info()
        # Following the file: the follow toggle, back to live, the compaction call-out.
        self.live_bar = self._live_bar(follower)
        right.children = (self.live_bar, *right.children)
        self.build_ms = (time.perf_counter() - start) * 1000

    def _live_bar(self, follower: Follower | None) -> LiveBar:
        """The bar that follows the file, linked to this explorer: its leaf is the explorer's, and each
        change of the file is one update of the tree, the budget and the context."""
        bar = LiveBar(self.session, leaf_id=self.leaf_id, hold=(self.tree, self.budget, self.context_view))
        if self.session.path is None:
            bar.layout.display = "none"
        widgets.link((self, "leaf_id"), (bar, "leaf_id"))
        for name in ("context_window", "reserve_tokens"):
            widgets.dlink((self.budget, name), (bar, name))
        bar.on_relayout(self._relayout)
        bar.on_change(self._on_file_change)
        if follower is not None:
            bar.attach(follower)
        return bar

    def __repr__(self) -> str:
        return (f"<SessionExplorer {session_title(self.session)!r} leaf={self.leaf_id!r} "
                f"mode={self.tree.mode!r} rows={len(self.tree.row_ids)}>")

    @property
    def diff(self) -> ProjectionDiff | None:
        """What the last leaf move changed in the context (``None`` before the first move)."""
        from .._context.diff import diff_contexts

        return diff_contexts(self._previous, self.projection) if self._previous is not None else None

    def frame(self) -> Any:
        """The context at the leaf, one row per message, as a pandas DataFrame."""
        return self.context_view.to_frame()

    def diff_frame(self) -> Any:
        """:attr:`diff` as a pandas DataFrame (empty before the first move)."""
        return diff_frame(self.diff)

    def open_stepper(self) -> CompactionStepper:
        """Show the :class:`CompactionStepper` under the context (what **Step through** does): Pi's
        compaction at the explorer's leaf, step by step, with the budget bar's keepRecentTokens."""
        stepper = self.stepper_launcher.show()
        assert stepper is not None
        return stepper

    @property
    def stepper(self) -> CompactionStepper | None:
        """The stepper, once opened (it follows the explorer's leaf)."""
        return self.stepper_launcher.stepper

    # ------------------------------------------------------------------ actions
    def select(self, entry_id: Any) -> str | None:
        """Select an entry as a click in the tree does (Pi's selection); returns the editor text."""
        return self.tree.select(entry_id)

    def reveal(self, entry_id: Any) -> Any:
        """Mark an entry in the tree and scroll to it, leaving the leaf where it is (what a link to an
        entry from another view does: a lost fact's source); sets ``selected_id``; returns the id."""
        self.selected_id = self.tree.reveal(entry_id)
        return self.selected_id

    def _on_tree_select(self, entry_id: Any, text: str | None) -> None:
        self.selected_id = entry_id
        self.editor.value = visible(text or "")  # shown inertly; the exact text is tree.editor_text

    def _on_tree_leaf(self, change: dict[str, Any]) -> None:
        self.leaf_id = change["new"]

    def leaf_changed(self) -> None:
        start = time.perf_counter()
        leaf = self.leaf_id
        self._previous = self.context_view.projection
        self.session.leaf_id = leaf
        with self.hold_sync():
            self.tree.leaf_id = leaf
            self.context_view.leaf_id = leaf
            self.budget.leaf_id = leaf
            self._update_leaf_info()
        self.last_move_ms = (time.perf_counter() - start) * 1000

    def refresh(self) -> None:
        """Redraw the leaf line and the tree status."""
        self._update_status()
        self._update_leaf_info()

    def refresh_header(self) -> None:
        """Redraw the title line and the tree status (the session grew)."""
        self._header.value = self._header_html()
        self._update_status()

    def _relayout(self) -> None:
        """Lay the tree out again (the followed file changed)."""
        self.tree.relayout()
        self.refresh_header()

    def _on_file_change(self, _change: Refresh, redraw: bool) -> None:
        """Show a change of the followed file (the leaf has moved already, if it follows the newest entry)."""
        if redraw:  # loaded again under the same leaf: every part draws it from the new entries
            self._projection = None
            self.refresh()
            for view in (self.budget, self.context_view, self.stepper):
                if view is not None:
                    view.redraw()  # as after a move (the stepper traces its compaction again)
        self.refresh_header()

    @property
    def follower(self) -> Follower | None:
        """What follows the file (``None`` until following starts: ``SessionExplorer(pikit.follow(path))``
        or the **follow file** toggle)."""
        return self.live_bar.follower

    @property
    def live(self) -> bool:
        """Whether the leaf follows the newest entry of the followed file."""
        return self.live_bar.live

    def back_to_live(self) -> None:
        """Move the leaf to the newest entry and follow it again (the **back to live** button)."""
        self.live_bar.back_to_live()

    # ------------------------------------------------------------------ text
    def _header_html(self) -> str:
        s = self.session
        problems = len(s.report.problems)
        note = (f' · <span class="pikit-warn">{plural(problems, "loading problem")} (see session.report)</span>'
                if problems else "")
        return (f'<div class="pikit-title">{esc(session_title(s))}</div><div class="pikit-sub">'
                f'<span class="pikit-id">{esc(s.path or "<memory>")}</span> · {plural(len(s.entries), "entry")} · '
                f'{plural(len(s.roots), "root")} · {plural(len(s.labels), "label")}{note}</div>')

    @property
    def hidden(self) -> int:
        """How many entries the filter mode and the search hide from the tree."""
        return max(0, len(self.session.by_id) - len(self.tree.row_ids))

    def _hidden_counts(self) -> dict[str, int]:
        """The hidden entries by reason, counted once for each filter, search, leaf and size of the session."""
        key = (self.tree.mode, self.tree.search, self.tree.leaf_id, len(self.session.by_id))
        if self._hidden_key != key:
            self._hidden_key = key
            self._hidden_by_reason = self.session.tree_hidden(self.tree.leaf_id, self.tree.mode, self.tree.search)
        return self._hidden_by_reason

    def _update_status(self) -> None:
        rows = len(self.tree.row_ids)
        hidden = self.hidden
        why = ""
        if hidden:
            mode = self.tree.mode
            search = f", search “{esc(self.tree.search.strip())}”" if self.tree.search.strip() else ""
            reasons = describe_hidden(self._hidden_counts())
            why = (f' · <span class="pikit-hidden">{fmt_int(hidden)} of {plural(len(self.session.by_id), "entry")} '
                   f"hidden — filter “{esc(mode)}”{search}: {esc(reasons)}</span>")
        self.tree_status.value = (f'<span class="pikit-status">{plural(rows, "row")}{why} · ● leaf · │ active path'
                                  "</span>")

    def _update_leaf_info(self) -> None:
        leaf = self.leaf_id
        if leaf is None:
            self.leaf_info.value = ('<div class="pikit-sub">Leaf: <b>reset</b> (before the first entry): the next '
                                    "message would start a new root.</div>")
            return
        entry = self.session.by_id[leaf]
        kind, text = self.state.preview(entry)
        label = self.session.labels.get(leaf)
        depth = len(self.projection.path)
        self.leaf_info.value = (
            f'<div class="pikit-sub">Leaf <span class="pikit-id pikit-leaf-id">{esc(leaf)}</span>'
            + (f' {label_pill(label)}' if label else "")
            + f" · {esc(kind)} · depth {fmt_int(depth)} — {esc(text[:120])}</div>")
