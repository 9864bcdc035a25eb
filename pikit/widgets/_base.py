"""What every leaf-following widget shares: the leaf traitlet, its projection, callbacks.

A widget that shows something about one leaf of a session mixes in :class:`LeafWidget`.
The mixin owns the one rule they all follow: when ``leaf_id`` changes, the cached
projection is dropped and the widget's :meth:`LeafWidget.refresh` runs (which builds a
fresh view model from :attr:`LeafWidget.projection` and renders it). ``show_projection``
shows a projection made elsewhere (a what-if branch that is not in the file) the same way.

:class:`Callbacks` is an ``ipywidgets.CallbackDispatcher`` whose failing callbacks are
shown in an ``Output`` (as an error box naming the callback) instead of being lost in
the kernel log; the other callbacks still run.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from ..errors import PikitError
from ._html import error_box, esc
from ._state import SessionState, state_for

if TYPE_CHECKING:
    from .._context.projection import Projection
    from .._session import Session

__all__ = ["Callbacks", "LeafWidget", "error_output", "resolve_leaf"]


def resolve_leaf(session: Session, leaf_id: Any) -> Any:
    """The entry id ``leaf_id`` names in ``session`` (``CURRENT``: the session's leaf; ``None``: the reset
    leaf; an id, a unique prefix or an :class:`~pikit.Entry`, as
    :meth:`~pikit.Session.resolve_leaf` reads them); a :class:`traitlets.TraitError` if none."""
    try:
        return session.resolve_leaf(leaf_id)
    except PikitError as exc:
        raise traitlets.TraitError(str(exc)) from None


class LeafWidget(traitlets.HasTraits):
    """Mixin for widgets that follow one leaf of a session.

    Call :meth:`_bind` first in ``__init__`` (it sets ``session`` and ``state`` and returns
    the checked leaf), build the children, then :meth:`_follow_leaf` once the widget can
    render: from then on every change of ``leaf_id`` drops the projection and calls
    :meth:`leaf_changed` (by default :meth:`refresh`).
    """

    leaf_id = traitlets.Any(None)

    session: Session
    state: SessionState
    _projection: Projection | None = None
    _following = False

    def _bind(self, session: Session, leaf_id: Any) -> Any:
        self.session = session
        self.state = state_for(session)
        self._projection = None
        return resolve_leaf(session, leaf_id)

    def _follow_leaf(self, leaf: Any) -> None:
        self.set_trait("leaf_id", leaf)
        self._following = True

    @traitlets.validate("leaf_id")
    def _check_leaf(self, proposal: dict[str, Any]) -> Any:
        return resolve_leaf(self.session, proposal["value"])

    @traitlets.observe("leaf_id")
    def _leaf_moved(self, _change: dict[str, Any]) -> None:
        if self._following:
            self._projection = None
            self.leaf_changed()

    def leaf_changed(self) -> None:
        """Called after a leaf move (the projection is already dropped); redraws by default."""
        self.refresh()

    @property
    def projection(self) -> Projection:
        """The projection at ``leaf_id`` (or the one given to :meth:`show_projection`)."""
        if self._projection is None:
            self._projection = self.state.projection(self.leaf_id)
        return self._projection

    def redraw(self) -> None:
        """Draw the leaf again from the session as it is now (its file was loaded again under the
        same leaf): the projection is dropped and :meth:`leaf_changed` runs, as after a move."""
        self._projection = None
        self.leaf_changed()

    def show_projection(self, projection: Projection) -> None:
        """Show a projection made elsewhere (e.g. a what-if branch that is not in the file)."""
        self._projection = projection
        self.refresh()

    def refresh(self) -> None:
        """Build the view model from :attr:`projection` and render it."""
        raise NotImplementedError


class Callbacks(widgets.CallbackDispatcher):
    """Registered callbacks, called in order; a failure shows in ``output`` and the rest still run.

    ``errors`` keeps the exceptions of the callbacks that failed (newest last).
    """

    def __init__(self, output: widgets.Output, what: str) -> None:
        super().__init__()
        self.output = output
        self.what = what
        self.errors: list[BaseException] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        value = None
        for callback in list(self.callbacks):
            try:
                result = callback(*args, **kwargs)
            except Exception as exc:
                self._show(callback, exc)
            else:
                value = result if result is not None else value
        return value

    def _show(self, callback: Any, exc: BaseException) -> None:
        from IPython.display import HTML

        self.errors.append(exc)
        name = getattr(callback, "__qualname__", None) or repr(callback)
        where = "".join(traceback.format_tb(exc.__traceback__)[-3:])
        self.output.append_display_data(HTML(error_box(f"A {self.what} callback ({name}) failed", exc)
                                             + f'<details class="pikit-more"><summary>where</summary>'
                                               f'<div class="pikit-pre">{esc(where)}</div></details>'))
        self.output.layout.display = None


def error_output() -> widgets.Output:
    """A hidden ``Output`` that appears when a callback fails."""
    output = widgets.Output(layout=widgets.Layout(display="none"))
    output.add_class("pikit-callback-errors")
    return output
