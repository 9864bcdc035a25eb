"""What a compaction lost: the view model of an :class:`~pikit.compaction.Evaluation` and its HTML.

:func:`lost_view` reads an evaluation into a frozen :class:`LostView`: the recall overall and
per kind (with the facts kept and counted), and the first ``limit`` lost facts, each with its
kind, text and source entry. :func:`render_lost` draws it. Every fact comes from session text
and goes through ``esc``. Each lost fact's source is a button
carrying ``data-fact`` (the fact's place in the list, which the widget maps back to the exact
entry id) and ``data-entry-id`` (the id, escaped), so a click can select that entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._card import cut
from ..._formatting import fmt_int, plural
from ...compaction._facts import FACT_KINDS
from .._html import esc

if TYPE_CHECKING:
    from ...compaction._evaluation import Evaluation

__all__ = ["LOST_CSS", "LOST_LIMIT", "KindRecall", "LostFact", "LostView", "lost_view", "render_lost"]

LOST_LIMIT = 12
"""How many lost facts the list shows (the rest are counted: "… 5 more")."""

_TEXT_CHARS = 160  # characters of a fact's text on its line (the full text is its tooltip)
_ID_CHARS = 8      # characters of the source id shown (the full id is the tooltip)

LOST_CSS = """
.pikit-lost { margin: 6px 0; }
.pikit-lost .pikit-lost-recall { display: flex; flex-wrap: wrap; gap: 4px 8px; margin: 4px 0; padding: 0;
  list-style: none; }
.pikit-lost .pikit-lost-recall li { font-size: 0.88em; padding: 1px 7px; border-radius: 10px; white-space: nowrap;
  border: 1px solid var(--jp-border-color2, #ccc); font-variant-numeric: tabular-nums; }
.pikit-lost .pikit-lost-recall li.pikit-lost-some { border-color: #ef6c00; }
.pikit-lost table.pikit-lost-table { border-collapse: collapse; width: 100%; table-layout: fixed; }
.pikit-lost table.pikit-lost-table th { text-align: left; font-weight: 600; font-size: 0.86em;
  color: var(--jp-ui-font-color2, #555); border-bottom: 1px solid var(--jp-border-color1, #bbb); padding: 2px 4px; }
.pikit-lost table.pikit-lost-table td { padding: 2px 4px; border-bottom: 1px solid var(--jp-border-color3, #eee);
  vertical-align: top; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pikit-lost col.pikit-lost-kind { width: 8.5em; }
.pikit-lost col.pikit-lost-source { width: 7em; }
.pikit-lost .pikit-lost-text { font-family: var(--jp-code-font-family, monospace); font-size: 0.9em; }
.pikit-lost button.pikit-lost-link { font: inherit; font-family: var(--jp-code-font-family, monospace);
  font-size: 0.88em; background: none; border: none; padding: 0; cursor: pointer; text-decoration: underline;
  color: var(--jp-brand-color1, #1565c0); }
.pikit-lost button.pikit-lost-link:focus-visible { outline: 2px solid var(--jp-brand-color1, #1565c0); }
.pikit-lost .pikit-lost-more { font-size: 0.9em; color: var(--jp-ui-font-color2, #666); margin: 2px 0 0 4px; }
"""


@dataclass(frozen=True)
class KindRecall:
    """One kind of fact: how many the span had, how many the context after still holds."""

    kind: str
    kept: int
    facts: int

    @property
    def recall(self) -> float:
        """``kept / facts``."""
        return self.kept / self.facts

    @property
    def lost(self) -> int:
        """``facts - kept``."""
        return self.facts - self.kept


@dataclass(frozen=True)
class LostFact:
    """One lost fact as listed: its place (``index``, 0 first), ``kind``, ``text`` and ``source`` entry id."""

    index: int
    kind: str
    text: str
    source: Any


@dataclass(frozen=True)
class LostView:
    """What one compaction lost: ``kinds`` (recall per kind, in :data:`FACT_KINDS` order), ``lost``
    (the first lost facts) and ``more`` (how many lost facts the list leaves out)."""

    compaction_id: Any
    strategy: str
    kept: int
    facts: int
    kinds: tuple[KindRecall, ...]
    lost: tuple[LostFact, ...]
    more: int

    @property
    def recall(self) -> float | None:
        """The fraction of all facts kept (``None``: the span had no fact)."""
        return self.kept / self.facts if self.facts else None

    @property
    def sources(self) -> tuple[Any, ...]:
        """The source entry of each listed fact, in list order (what ``data-fact`` indexes)."""
        return tuple(fact.source for fact in self.lost)


def lost_view(evaluation: Evaluation, limit: int = LOST_LIMIT) -> LostView:
    """The view of ``evaluation``: recall overall and per kind, the first ``limit`` lost facts."""
    kinds = []
    for kind in FACT_KINDS:
        flags = [k for f, k in zip(evaluation.facts, evaluation.kept, strict=True) if f.kind == kind]
        if flags:
            kinds.append(KindRecall(kind, sum(flags), len(flags)))
    lost = evaluation.lost
    shown = lost[:max(0, limit)]
    return LostView(evaluation.compaction_id, evaluation.strategy, sum(evaluation.kept), len(evaluation.facts),
                    tuple(kinds), tuple(LostFact(i, f.kind, f.text, f.source) for i, f in enumerate(shown)),
                    len(lost) - len(shown))


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _fact_row(fact: LostFact) -> str:
    source = fact.source
    link = ('<span class="pikit-dim">–</span>' if source is None else
            f'<button type="button" class="pikit-lost-link" data-fact="{fact.index}" data-entry-id="{esc(source)}" '
            f'title="select entry {esc(source)}">{esc(str(source)[:_ID_CHARS])}</button>')
    return (f'<tr class="pikit-lost-fact" data-kind="{esc(fact.kind)}"><td>{esc(fact.kind)}</td>'
            f'<td class="pikit-lost-text" title="{esc(fact.text)}">{esc(cut(fact.text, _TEXT_CHARS))}</td>'
            f"<td>{link}</td></tr>")


def render_lost(view: LostView) -> str:
    """The recall line (overall, then each kind), and the table of lost facts with their sources."""
    head = (f'<div class="pikit-sub">What compaction <span class="pikit-id">{esc(view.compaction_id)}</span> lost '
            f"({esc(view.strategy)}): {fmt_int(view.kept)} of {plural(view.facts, 'fact')} of the replaced span "
            f"kept — recall <b>{_share(view.recall)}</b></div>")
    if not view.facts:
        return f'<div class="pikit-lost" data-facts="0">{head}</div>'
    chips = "".join(
        f'<li class="{"pikit-lost-some" if k.lost else "pikit-lost-none"}" data-kind="{esc(k.kind)}" '
        f'title="{fmt_int(k.kept)} of {fmt_int(k.facts)} kept">{esc(k.kind)} <b>{_share(k.recall)}</b> '
        f'<span class="pikit-dim">{fmt_int(k.kept)}/{fmt_int(k.facts)}</span></li>' for k in view.kinds)
    recall = f'<ul class="pikit-lost-recall" aria-label="recall per kind">{chips}</ul>'
    total_lost = view.facts - view.kept
    if not total_lost:
        listing = '<div class="pikit-ok">nothing lost: the context after it holds every fact</div>'
    else:
        rows = "".join(_fact_row(fact) for fact in view.lost)
        listing = ('<table class="pikit-lost-table"><colgroup><col class="pikit-lost-kind"><col>'
                   '<col class="pikit-lost-source"></colgroup><thead><tr><th>lost</th><th>text</th><th>source</th>'
                   f"</tr></thead><tbody>{rows}</tbody></table>")
        if view.more:
            listing += (f'<div class="pikit-lost-more">… {fmt_int(view.more)} more lost '
                        "(evaluation.lost lists all)</div>")
    return (f'<div class="pikit-lost" data-facts="{view.facts}" data-lost="{total_lost}">'
            f"{head}{recall}{listing}</div>")
