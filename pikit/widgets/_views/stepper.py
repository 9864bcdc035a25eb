"""HTML for one step of a compaction walkthrough (pure functions over the walkthrough's view model).

Every piece of session text goes through ``esc``. Rows carry
``data-entry-id`` and ``data-mark``; the rows a step is about carry the ``pikit-step-hl``
class, and a fold says how many of them it hides (``data-highlighted``), so a test (or a
reader) can account for every highlighted entry.
"""

from __future__ import annotations

from ..._formatting import fmt_int, plural
from ..._palette import LINES, SEGMENTS
from ...compaction._walkthrough import MARKS, Fold, Step, StepRow, Walkthrough
from .._html import esc, role_badge

__all__ = ["STEPPER_CSS", "highlight_css", "render_nav", "render_rows", "render_step", "render_walkthrough"]

_HIGHLIGHT_LIMIT = 3_000  # entries a step can highlight in another view (a longer selector is not worth it)

# Mark → colour, one colour per mark (a legend never shows two marks alike). Where a mark means what a part of
# the budget bar means, it takes that part's colour: kept messages, the new summary, the threshold.
_MARK_COLOURS = {
    "walked": "#0288d1",
    "reached": LINES["threshold"],
    "cut-point": "#546e7a",
    "cut": "#00897b",
    "turn-start": "#fb8c00",
    "prefix": "#6d4c41",
    "summarized": "#ec407a",
    "previous": "#3949ab",
    "kept": SEGMENTS["kept"],
    "summary": SEGMENTS["summary"],
    "skipped": "#bdbdbd",
}

# Mark → the few words of the "here" column (the legend gives the longer description).
_MARK_LABELS = {
    "walked": "added to the sum",
    "reached": "sum reaches the budget",
    "cut-point": "valid cut point",
    "cut": "first kept: the cut",
    "turn-start": "the split turn starts",
    "prefix": "turn prefix",
    "summarized": "summarized",
    "previous": "previous compaction",
    "kept": "kept",
    "summary": "new summary",
    "skipped": "silent",
}

STEPPER_CSS = """
.pikit-stepper .pikit-step-nav { display: flex; flex-wrap: wrap; gap: 4px; margin: 4px 0 6px; padding: 0;
  list-style: none; }
.pikit-stepper .pikit-step-nav li { font-size: 0.85em; padding: 1px 7px; border-radius: 10px;
  border: 1px solid var(--jp-border-color2, #ccc); color: var(--jp-ui-font-color2, #666); white-space: nowrap; }
.pikit-stepper .pikit-step-nav li.pikit-step-done { background: var(--jp-layout-color2, #eee); }
.pikit-stepper .pikit-step-nav li.pikit-step-current { border-color: var(--jp-brand-color1, #1565c0);
  color: var(--jp-ui-font-color0, #111); font-weight: 600;
  box-shadow: inset 0 0 0 1px var(--jp-brand-color1, #1565c0); }
.pikit-stepper .pikit-step-sentence { border-left: 4px solid var(--jp-brand-color1, #1565c0); padding: 4px 8px;
  margin: 4px 0; background: var(--jp-layout-color2, #f5f7fb); font-size: 1.02em; line-height: 1.4; }
.pikit-stepper .pikit-step-note { font-size: 0.92em; color: var(--jp-ui-font-color2, #555); margin: 2px 0 2px 12px; }
.pikit-stepper .pikit-step-body, .pikit-stepper .pikit-step-body > .widget-html-content { min-width: 0; }
.pikit-stepper .pikit-step-scroll { overflow-x: auto; max-width: 100%; }
.pikit-stepper table.pikit-step-table { border-collapse: collapse; width: 100%; min-width: 640px; table-layout: fixed;
  margin-top: 4px; }
.pikit-stepper table.pikit-step-table th { text-align: left; font-weight: 600; font-size: 0.86em;
  color: var(--jp-ui-font-color2, #555); border-bottom: 1px solid var(--jp-border-color1, #bbb); padding: 2px 4px;
  white-space: nowrap; }
.pikit-stepper table.pikit-step-table td { padding: 2px 4px; border-bottom: 1px solid var(--jp-border-color3, #eee);
  vertical-align: top; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pikit-stepper td.pikit-num, .pikit-stepper th.pikit-num { text-align: right; font-variant-numeric: tabular-nums; }
.pikit-stepper tr.pikit-step-row td:first-child { box-shadow: inset 4px 0 0 var(--pikit-mark, transparent); }
.pikit-stepper tr.pikit-step-hl td { background: color-mix(in srgb, var(--pikit-mark, #1565c0) 14%, transparent); }
.pikit-stepper tr.pikit-step-hl td.pikit-step-preview { color: var(--jp-ui-font-color0, #111); }
.pikit-stepper tr.pikit-step-fold td { text-align: center; font-style: italic; color: var(--jp-ui-font-color2, #777);
  background: var(--jp-layout-color2, #f5f5f5); }
.pikit-stepper .pikit-step-markname { font-size: 0.85em; color: var(--jp-ui-font-color1, #333); }
.pikit-stepper .pikit-step-cutpoint { color: var(--jp-ui-font-color2, #777); }
.pikit-stepper .pikit-step-text { max-height: 320px; overflow: auto; border: 1px solid var(--jp-border-color2, #ddd);
  border-radius: 4px; padding: 6px 8px; margin-top: 6px; }
.pikit-stepper .pikit-step-figures { display: flex; flex-wrap: wrap; gap: 2px 16px; margin: 4px 0; }
.pikit-stepper .pikit-step-figures b { font-variant-numeric: tabular-nums; }
.pikit-stepper .pikit-swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 4px; vertical-align: -1px; }
.pikit-stepper .pikit-step-legend { display: flex; flex-wrap: wrap; gap: 2px 12px; font-size: 0.88em; margin-top: 4px; }
.pikit-stepper .pikit-step-sizes { display: grid; grid-template-columns: max-content 1fr; gap: 3px 8px;
  align-items: center; margin: 6px 0; max-width: 640px; font-size: 0.9em; white-space: nowrap; }
.pikit-stepper .pikit-step-sizes > div > span { display: block; height: 14px; border-radius: 3px; }
"""


def render_nav(walk: Walkthrough, number: int) -> str:
    """The seven step names, the current one marked (a list the reader can follow)."""
    items = []
    for step in walk.steps:
        css = ("pikit-step-current" if step.number == number else
               "pikit-step-done" if step.number < number else "pikit-step-todo")
        current = ' aria-current="step"' if step.number == number else ""
        items.append(f'<li class="{css}"{current}>{step.number}. {esc(step.title)}</li>')
    return f'<ol class="pikit-step-nav" aria-label="steps">{"".join(items)}</ol>'


def _row(row: StepRow, walked: bool) -> str:
    colour = _MARK_COLOURS.get(row.mark, "transparent")
    css = "pikit-step-row" + (" pikit-step-hl" if row.highlighted else "") + \
        (f" pikit-mark-{row.mark}" if row.mark else "")
    mark = esc(_MARK_LABELS.get(row.mark, row.mark))
    summed = fmt_int(row.running_sum) if row.running_sum is not None else ""
    running = f'<td class="pikit-num">{summed}</td>' if walked else ""
    cut = '<span class="pikit-step-cutpoint" title="a valid cut point">✂</span>' if row.cut_point else ""
    return (f'<tr class="{css}" style="--pikit-mark: {colour}" data-entry-id="{esc(row.entry_id)}" '
            f'data-mark="{esc(row.mark)}" data-index="{row.index}">'
            f'<td class="pikit-num">{fmt_int(row.index)}</td><td class="pikit-id">{esc(row.entry_id)}</td>'
            f"<td>{role_badge(row.role)}</td>"
            f'<td class="pikit-step-preview" title="{esc(row.preview)}">{esc(row.preview)}</td>'
            f'<td class="pikit-num">{fmt_int(row.estimate)}</td>{running}<td>{cut}</td>'
            f'<td class="pikit-step-markname">{mark}</td></tr>')


def render_rows(step: Step) -> str:
    """The step's window of entries as a table (folds name how many entries they hide)."""
    if not step.rows:
        return ""
    walked = any(isinstance(r, StepRow) and r.running_sum is not None for r in step.rows)
    width = 8 if walked else 7
    head = ('<tr><th class="pikit-num" style="width:3em">#</th><th style="width:6.5em">entry</th>'
            '<th style="width:7em">role</th><th>preview</th><th class="pikit-num" style="width:4.5em">est</th>'
            + ('<th class="pikit-num" style="width:7.5em">running sum</th>' if walked else "")
            + '<th style="width:1.5em" title="valid cut point">✂</th><th style="width:11.5em">here</th></tr>')
    body = []
    for row in step.rows:
        if isinstance(row, Fold):
            hidden = f", {fmt_int(row.highlighted)} of them highlighted" if row.highlighted else ""
            body.append(f'<tr class="pikit-step-fold" data-highlighted="{row.highlighted}" '
                        f'data-start="{row.start}" data-stop="{row.stop}"><td colspan="{width}">⋯ '
                        f"{esc(plural(row.count, 'entry'))} not shown{esc(hidden)} ⋯</td></tr>")
        else:
            body.append(_row(row, walked))
    where = "the context the compaction leaves" if step.view == "after" else "the context at the leaf"
    return (f'<div class="pikit-step-scroll"><table class="pikit-step-table" aria-label="entries of {where}" '
            f'data-view="{esc(step.view)}"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>')


def _legend(step: Step) -> str:
    shown = [r for r in step.rows if isinstance(r, StepRow)]
    marks = sorted({r.mark for r in shown if r.mark}, key=list(MARKS).index)
    items = [f'<span><span class="pikit-swatch" style="background:{_MARK_COLOURS[m]}"></span>{esc(MARKS[m])}</span>'
             for m in marks]
    if any(r.cut_point for r in shown):
        items.append("<span>✂ a valid cut point (never a tool result)</span>")
    return f'<div class="pikit-step-legend">{"".join(items)}</div>' if items else ""


def _sizes(step: Step) -> str:
    """Two bars, the context size before and after the compaction, to scale."""
    if step.sizes is None:
        return ""
    before, after = step.sizes
    top = max(before, after, 1)
    bars = [("before", before, LINES["tokens_before"]), ("after", after, LINES["tokens_after"])]
    cells = "".join(f'<div>{label} <b>{fmt_int(value)}</b> tokens</div>'
                    f'<div><span style="width:{100 * value / top:.2f}%; background:{colour}"></span></div>'
                    for label, value, colour in bars)
    return f'<div class="pikit-step-sizes" aria-label="context size before and after">{cells}</div>'


def render_step(walk: Walkthrough, number: int) -> str:
    """Step ``number`` of ``walk``: where it is, what Pi does (one sentence), its figures,
    the entries involved and, for the file lists and the summary, the text."""
    step = walk.step(number)
    figures = "".join(f"<span>{esc(label)} <b>{esc(value)}</b></span>" for label, value in step.figures)
    notes = "".join(f'<div class="pikit-step-note">{esc(note)}</div>' for note in step.notes)
    text = (f'<div class="pikit-step-text pikit-pre" aria-label="{esc(step.title)}">{esc(step.text)}</div>'
            if step.text else "")
    return (f'<div class="pikit-step" data-step="{step.number}" data-highlighted-count="{len(step.highlighted)}">'
            f"{render_nav(walk, number)}"
            f'<div class="pikit-title">Step {step.number} of {len(walk)}: {esc(step.title)}</div>'
            f'<div class="pikit-step-sentence" role="status">{esc(step.sentence)}</div>{notes}'
            f'<div class="pikit-step-figures">{figures}</div>{_sizes(step)}{render_rows(step)}{_legend(step)}'
            f"{text}</div>")


def render_walkthrough(walk: Walkthrough) -> str:
    """Every step one after the other (for a static page)."""
    return "".join(render_step(walk, n) for n in range(1, len(walk) + 1))


def _css_string(value: object) -> str:
    """``value`` as the inside of a CSS string: every character but letters, digits, ``-`` and ``_`` escaped."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_") else f"\\{ord(c):x} " for c in str(value))


def highlight_css(step: Step, scope: str) -> str:
    """A stylesheet that highlights the step's entries in the tree and context rows under ``.scope``
    (matched by ``data-entry-id``; the ids are CSS-escaped, so session text cannot leave the string)."""
    if step.view != "before" or not step.highlighted:
        return ""
    marks = [r.mark for r in step.rows if isinstance(r, StepRow) and r.highlighted and r.mark]
    colour = _MARK_COLOURS.get(marks[0] if marks else "", LINES["keep_recent"])
    ids = step.highlighted[:_HIGHLIGHT_LIMIT]
    selectors = ",".join(f'.{scope} .pikit-tree-row[data-entry-id="{_css_string(i)}"],'
                         f'.{scope} .pikit-context-body tr[data-entry-id="{_css_string(i)}"] > td' for i in ids)
    return (f"<style>{selectors} {{ background: color-mix(in srgb, {colour} 18%, transparent) !important; "
            f"box-shadow: inset 3px 0 0 {colour}; }}</style>")
