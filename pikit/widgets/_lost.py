"""What a compaction lost, as a part: the recall per kind and the lost facts, each linked to its entry."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from ._base import Callbacks, error_output
from ._html import CSS, error_box
from ._views.lost import LOST_CSS, LOST_LIMIT, LostView, lost_view, render_lost

if TYPE_CHECKING:
    import ipywidgets as widgets

    from ..compaction._evaluation import Evaluation

__all__ = ["LostFacts"]

# The kernel's HTML (escaped by render_lost) goes in as it is; a click on a fact's source sends
# the fact's place in the list, which the kernel maps back to the entry id.
_LOST_ESM = """
function render({ model, el }) {
  el.classList.add("pikit-root");
  const draw = () => { el.innerHTML = model.get("html"); };
  const onClick = (event) => {
    const link = event.target.closest("button.pikit-lost-link");
    if (!link || !el.contains(link)) return;
    event.preventDefault();
    model.send({ event: "select", fact: Number(link.dataset.fact) });
  };
  el.addEventListener("click", onClick);
  model.on("change:html", draw);
  draw();
  return () => el.removeEventListener("click", onClick);
}
export default { render };
"""


class LostFacts(anywidget.AnyWidget):
    """What one compaction lost: recall overall and per kind, and the first ``limit`` lost facts
    (kind, text, source entry; "… N more" for the rest).

    :meth:`show` draws an :class:`~pikit.compaction.Evaluation` (``evaluation``, ``view``),
    :meth:`clear` hides it. Clicking a fact's source (or :meth:`select` with its place in the
    list) sets ``selected_id`` to that entry's id and calls the callbacks of :meth:`on_select`
    with it: the widget holding this part links them to its tree or entry view. A failing
    callback shows in ``callback_errors``; the others still run.
    """

    _esm = _LOST_ESM
    _css = CSS + LOST_CSS

    html = traitlets.Unicode("").tag(sync=True)
    selected_id = traitlets.Any(None)

    def __init__(self, limit: int = LOST_LIMIT, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = limit
        self.evaluation: Evaluation | None = None
        self.view: LostView | None = None
        self.callback_errors: widgets.Output = error_output()
        self._callbacks = Callbacks(self.callback_errors, "lost fact selection")
        self.add_class("pikit-lost-facts")
        self.layout.display = "none"
        self.on_msg(self._on_front_end_msg)

    def __repr__(self) -> str:
        lost = len(self.evaluation.lost) if self.evaluation is not None else 0
        return f"<LostFacts of {getattr(self.evaluation, 'compaction_id', None)!r}: {lost} lost>"

    def show(self, evaluation: Evaluation) -> None:
        """Draw what ``evaluation``'s compaction lost."""
        self.evaluation = evaluation
        self.view = lost_view(evaluation, self.limit)
        self.html = render_lost(self.view)
        self.layout.display = None

    def show_error(self, title: str, exc: BaseException | str) -> None:
        """Show why there is no evaluation to draw."""
        self.evaluation = self.view = None
        self.html = error_box(title, exc)
        self.layout.display = None

    def clear(self) -> None:
        """Hide the list (nothing evaluated)."""
        self.evaluation = self.view = None
        self.html = ""
        self.selected_id = None
        self.layout.display = "none"

    def on_select(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(entry_id)`` when a lost fact's source is clicked."""
        self._callbacks.register_callback(callback, remove=remove)

    def select(self, index: int) -> Any:
        """Select the source entry of the listed fact at ``index`` (what a click does); returns its id."""
        if self.view is None or not 0 <= index < len(self.view.lost):
            return None
        source = self.view.lost[index].source
        if source is None:
            return None
        self.selected_id = source
        self._callbacks(source)
        return source

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "select" and isinstance(content.get("fact"), int):
            self.select(content["fact"])
