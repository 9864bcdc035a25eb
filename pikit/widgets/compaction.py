"""What-if compaction: sliders, a live preview of the cut point, running it, and the tokens it saves."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import traitlets

from ..entry import Entry
from ..errors import PikitError, SettingsError
from ..preparation import Preparation, prepare_compaction
from ..session import CURRENT, Session
from ..settings import Settings, load_settings
from ..summarizer import Summarizer, SummaryRequest, SummaryResult
from ._html import error_box, esc, fmt_int, style_widget
from ._html import gap as _gap
from ._state import LeafOfSession, SessionState, state_for
from .budget import BudgetBar, model_key, resolve_budget

__all__ = ["CompactionPanel", "CompactionPoint", "compaction_history", "history_chart_html"]

SummarizerFactory = Callable[[str, "str | None", "str | None"], Summarizer]
"""``factory(name, model, base_url) -> Summarizer``."""

_SUMMARIZERS = ("offline", "openai", "anthropic")
_WINDOW_MAX = 2_000_000


@dataclass(frozen=True)
class CompactionPoint:
    """One compaction on a branch: its tokens before (recorded) and after (the new context size)."""

    id: Any
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: Any
    new: bool = False


def compaction_history(session: Session, leaf: Any = CURRENT, *, new_ids: Sequence[Any] = ()) -> list[CompactionPoint]:
    """Every compaction on the branch at ``leaf``, oldest first.

    ``tokens_before`` is what the entry recorded; ``tokens_after`` is the context size of the
    projection the compaction leaves (Pi does not record it). ``new_ids`` are flagged ``new``.
    """
    state = state_for(session)
    leaf_id = session.leaf_id if leaf is CURRENT else leaf
    out = []
    for entry in session.branch(leaf_id) if leaf_id is not None else []:
        if entry.type != "compaction":
            continue
        before = entry.data.get("tokensBefore")
        out.append(CompactionPoint(entry.id, int(before) if isinstance(before, int | float) else 0,
                                   state.projection(entry.id).tokens, entry.data.get("firstKeptEntryId"),
                                   entry.id in new_ids))
    return out


def _short(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def history_chart_html(points: Sequence[CompactionPoint], threshold: int | None = None) -> str:
    """An inline SVG bar chart of tokensBefore/tokensAfter per compaction (escaped labels)."""
    if not points:
        return ('<div class="pikit-chart pikit-dim" aria-label="compaction chart">No compaction on this branch yet: '
                "run one to see its tokensBefore/tokensAfter here.</div>")
    group, bar, left, top, height = 74, 26, 52, 18, 170
    width = left + group * len(points) + 16
    peak = max([p.tokens_before for p in points] + [p.tokens_after for p in points] + [threshold or 0, 1])

    def y(value: int) -> float:
        return top + height - height * value / peak

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 44}" '
             f'role="img" aria-label="tokensBefore and tokensAfter of each compaction">']
    for frac in (0, 0.5, 1):
        value = int(peak * frac)
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                     'stroke="#9e9e9e" stroke-opacity="0.35"/>'
                     f'<text x="{left - 6}" y="{y(value) + 4:.1f}" font-size="10" text-anchor="end">'
                     f"{esc(_short(value))}</text>")
    if threshold is not None and threshold > 0:
        parts.append(f'<line class="pikit-chart-threshold" x1="{left}" x2="{width - 8}" y1="{y(threshold):.1f}" '
                     f'y2="{y(threshold):.1f}" stroke="#d32f2f" stroke-dasharray="5 3"/>'
                     f'<text x="{width - 10}" y="{y(threshold) - 4:.1f}" font-size="10" text-anchor="end" '
                     f'style="fill:#d32f2f">threshold {esc(_short(threshold))}</text>')
    for i, point in enumerate(points):
        x = left + i * group + 8
        for j, (value, color, what) in enumerate(((point.tokens_before, "#90a4ae", "tokensBefore"),
                                                  (point.tokens_after, "#42a5f5", "tokensAfter"))):
            bx = x + j * (bar + 4)
            stroke = ' stroke="#6a1b9a" stroke-width="2"' if point.new else ""
            parts.append(f'<rect class="pikit-chart-bar" x="{bx}" y="{y(value):.1f}" width="{bar}" '
                         f'height="{max(0.0, top + height - y(value)):.1f}" fill="{color}"{stroke}>'
                         f"<title>{esc(point.id)} {what}: {fmt_int(value)}</title></rect>"
                         f'<text x="{bx + bar / 2}" y="{y(value) - 3:.1f}" font-size="10" text-anchor="middle">'
                         f"{esc(_short(value))}</text>")
        tag = " (new)" if point.new else ""
        parts.append(f'<text x="{x + bar + 2}" y="{top + height + 14}" font-size="10" text-anchor="middle">'
                     f"#{i + 1}{esc(tag)}</text>"
                     f'<text x="{x + bar + 2}" y="{top + height + 26}" font-size="9" text-anchor="middle" '
                     f'style="fill:#888">{esc(str(point.id)[:10])}</text>')
    parts.append("</svg>")
    legend = ('<div class="pikit-legend"><span><span class="pikit-swatch" style="background:#90a4ae"></span>'
              'tokensBefore (recorded)</span><span><span class="pikit-swatch" style="background:#42a5f5"></span>'
              "tokensAfter (context size the compaction leaves)</span></div>")
    return (f'<div class="pikit-chart" aria-label="compaction chart"><div class="pikit-sub">tokensBefore → '
            f"tokensAfter of every compaction on the branch</div>{''.join(parts)}{legend}</div>")


class _Reporting:
    """Wraps a summarizer to report each call to the panel."""

    def __init__(self, inner: Summarizer, report: Callable[[str], None]) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.report = report
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.calls += 1
        what = {"history": "the history", "turn_prefix": "the split turn's beginning"}.get(request.kind, request.kind)
        self.report(f"summarizing {what} ({len(request.messages)} messages) with {self.name}…")
        return self.inner.summarize(request)


def _default_factory(name: str, model: str | None, base_url: str | None) -> Summarizer:
    from ..llm.select import get_summarizer

    return get_summarizer(name, model=model or None, base_url=base_url or None)


class CompactionPanel(LeafOfSession, widgets.VBox):
    """Try compaction settings on a leaf and run a compaction.

    Sliders set ``keep_recent_tokens``, ``reserve_tokens`` and ``context_window`` (also
    traitlets); the model picker loads a model's settings (``compaction.modelOverrides`` and
    the known context window); ``context_window``, ``reserve_tokens`` and ``keep_recent_tokens``
    given to the constructor override the settings. The preview shows, live, where the cut would fall and what
    would be summarized and kept. **Run compaction** summarizes with the chosen summarizer
    and writes the entry to a *new file* (a copy of the source plus one line) unless *append
    to the source* is ticked. Every failure is shown in the panel; nothing is raised.

    After a run, ``last_result`` (:class:`~pikit.compaction.CompactionResult`),
    ``last_output`` (the path written) and ``result_session`` (that file loaded) are set and
    the callbacks registered with :meth:`on_compacted` are called.
    """

    leaf_id = traitlets.Any(None)
    model = traitlets.Unicode("")
    keep_recent_tokens = traitlets.Int(20_000)
    reserve_tokens = traitlets.Int(16_384)
    context_window = traitlets.Int(128_000)
    in_place = traitlets.Bool(False)
    status = traitlets.Unicode("idle")

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, settings: Settings | None = None,
                 output_dir: str | os.PathLike[str] | None = None, summarizer: Summarizer | None = None,
                 summarizer_factory: SummarizerFactory | None = None, context_window: int | None = None,
                 reserve_tokens: int | None = None, keep_recent_tokens: int | None = None, **kwargs: Any) -> None:
        self.session = session
        self.state: SessionState = state_for(session)
        leaf = session.leaf_id if leaf_id is CURRENT else leaf_id
        if leaf is not None and leaf not in session:
            raise traitlets.TraitError(f"no entry {leaf!r} in the session")
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.last_result: Any = None
        self.last_output: str | None = None
        self.result_session: Session | None = None
        self.preparation: Preparation | None = None
        self.preview_ms = 0.0
        self._callbacks: list[Callable[[Any, str], None]] = []
        self._custom_summarizer = summarizer
        self._factory: SummarizerFactory = summarizer_factory or _default_factory
        self._branch_cache: tuple[Any, list[Entry]] | None = None
        self._settings_problem: str | None = None
        try:
            self.settings: Settings | None = settings if settings is not None else load_settings()
        except SettingsError as exc:
            self.settings = None
            self._settings_problem = str(exc)

        session_model = model_key(self.state.projection(leaf)) or ""
        self.model_picker = widgets.Dropdown(options=self._model_options(session_model), value="",
                                             description="model", layout=widgets.Layout(width="420px"))
        self.model_picker.add_class("pikit-model-picker")
        style = {"description_width": "150px"}
        wide = widgets.Layout(width="520px")
        self.keep_slider = widgets.IntSlider(description="keepRecentTokens", min=0, max=128_000, step=1,
                                             style=style, layout=wide)
        self.reserve_slider = widgets.IntSlider(description="reserveTokens", min=0, max=128_000, step=1,
                                                style=style, layout=wide)
        # Windows span 4k to 2M tokens: a logarithmic slider keeps both ends usable.
        self.window_slider = widgets.FloatLogSlider(description="context window", base=2, min=12, max=21,
                                                    step=0.01, readout_format=",.0f", style=style, layout=wide)
        for slider, css in ((self.keep_slider, "pikit-keep-slider"), (self.reserve_slider, "pikit-reserve-slider"),
                            (self.window_slider, "pikit-window-slider")):
            slider.add_class(css)
        self.budget = BudgetBar(session, leaf, settings=self.settings)
        self.preview = widgets.HTML()
        self.preview.add_class("pikit-compaction-preview")

        self.summarizer_picker = widgets.Dropdown(
            options=([(f"custom: {getattr(summarizer, 'name', 'summarizer')}", "custom")] if summarizer else [])
            + [(name, name) for name in _SUMMARIZERS],
            value="custom" if summarizer else "offline", description="summarizer")
        self.summarizer_picker.add_class("pikit-summarizer-picker")
        self.summarizer_model = widgets.Text(description="model", placeholder="provider/modelId (HTTP summarizers)")
        self.base_url = widgets.Text(description="base URL", placeholder="default for the provider")
        self.instructions = widgets.Textarea(description="focus", placeholder="optional extra instructions",
                                             layout=widgets.Layout(width="520px", height="48px"))
        self.output = widgets.Text(description="write to", value="", layout=widgets.Layout(width="620px"))
        self.output.add_class("pikit-output-path")
        self.in_place_box = widgets.Checkbox(description="append to the source file instead (in place)",
                                             value=False, indent=False, layout=widgets.Layout(width="auto"))
        self.in_place_box.add_class("pikit-in-place")
        self.run_button = widgets.Button(description="Run compaction", button_style="primary", icon="compress",
                                         tooltip="summarize and write the compaction entry")
        self.run_button.add_class("pikit-run-compaction")
        self.run_button.on_click(lambda _b: self.run())
        self.progress = widgets.IntProgress(value=0, min=0, max=4, layout=widgets.Layout(width="160px"))
        self.progress.add_class("pikit-progress")
        self.message = widgets.HTML()
        self.message.add_class("pikit-compaction-status")
        self.chart = widgets.HTML()
        self.chart.add_class("pikit-compaction-chart")

        title = widgets.HTML('<div class="pikit-title">Compaction what-if</div>')
        settings_box = widgets.VBox([self.model_picker, self.keep_slider, self.reserve_slider, self.window_slider])
        http = widgets.Accordion([widgets.VBox([self.summarizer_model, self.base_url])],
                                 titles=("HTTP summarizer options",), selected_index=None)
        run_box = widgets.VBox([
            widgets.HBox([self.summarizer_picker, http]),
            self.instructions,
            widgets.HBox([self.output, self.in_place_box], layout=widgets.Layout(align_items="center")),
            _gap(widgets.HBox([self.run_button, self.progress], layout=widgets.Layout(align_items="center"))),
            self.message,
        ])
        super().__init__([style_widget(), title, settings_box, self.budget, self.preview, run_box, self.chart],
                         **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-compaction-panel")

        window, reserve, keep, problem = self._resolve(session_model)
        self._settings_problem = self._settings_problem or problem
        with self.hold_trait_notifications():
            self.leaf_id = leaf
            self.context_window = context_window if context_window is not None else window
            self.reserve_tokens = reserve_tokens if reserve_tokens is not None else reserve
            self.keep_recent_tokens = keep_recent_tokens if keep_recent_tokens is not None else keep
        self._sync_sliders()
        for slider, name in ((self.keep_slider, "keep_recent_tokens"), (self.reserve_slider, "reserve_tokens")):
            widgets.link((slider, "value"), (self, name))
        self.window_slider.observe(lambda c: setattr(self, "context_window", round(c["new"])), names="value")
        widgets.link((self.in_place_box, "value"), (self, "in_place"))
        widgets.dlink((self, "model"), (self.budget, "model"), transform=lambda m: m or session_model)
        for name in ("leaf_id", "keep_recent_tokens", "reserve_tokens", "context_window"):
            widgets.dlink((self, name), (self.budget, name))
        self.model_picker.observe(self._on_model, names="value")
        self.observe(self._on_setting, names=["keep_recent_tokens", "reserve_tokens", "context_window"])
        self.observe(self._on_leaf, names="leaf_id")
        self.observe(lambda _c: self._update_output_default(), names="in_place")
        self._update_output_default()
        self.update_preview()
        self.update_chart()

    # ------------------------------------------------------------------ settings
    def _model_options(self, session_model: str) -> list[tuple[str, str]]:
        from ..llm.models import MODELS

        options = [(f"session model ({session_model or 'unknown'})", "")]
        overrides: Mapping[str, Any] = {}
        if self.settings is not None:
            try:
                overrides = self.settings.overrides()
            except SettingsError as exc:
                self._settings_problem = str(exc)
        for key in overrides:
            options.append((f"override: {key}", key))
        for key, info in MODELS.items():
            if key not in overrides:
                options.append((f"{key} ({fmt_int(info.context_window)})", key))
        return options

    def _resolve(self, model: str) -> tuple[int, int, int, str | None]:
        return resolve_budget(model or None, self.settings)

    def _on_model(self, change: dict[str, Any]) -> None:
        try:
            key = change["new"] or ""
            effective = key or (model_key(self.state.projection(self.leaf_id)) or "")
            window, reserve, keep, problem = self._resolve(effective)
            self._settings_problem = problem or self._settings_problem
            with self.hold_trait_notifications():
                self.model = key
                self.context_window = window
                self.reserve_tokens = reserve
                self.keep_recent_tokens = keep
            self._sync_sliders()
        except Exception as exc:
            self.preview.value = error_box("Cannot load that model's settings", exc)

    def _sync_sliders(self) -> None:
        window = max(self.context_window, 1)
        top = max(window, self.keep_recent_tokens, self.reserve_tokens)
        self.keep_slider.max = top
        self.reserve_slider.max = top
        self.keep_slider.value = self.keep_recent_tokens
        self.reserve_slider.value = self.reserve_tokens
        self._set_window_slider(window)

    def _set_window_slider(self, window: int) -> None:
        if round(self.window_slider.value) != window:
            exponent = math.log2(max(window, 1))
            self.window_slider.min = min(12.0, exponent)
            self.window_slider.max = max(math.log2(_WINDOW_MAX), exponent)
            self.window_slider.value = float(window)

    def _on_setting(self, change: dict[str, Any]) -> None:
        if change["name"] == "context_window":
            top = max(change["new"], self.keep_recent_tokens, self.reserve_tokens)
            self.keep_slider.max = top
            self.reserve_slider.max = top
            self._set_window_slider(change["new"])
        self.update_preview()

    def _on_leaf(self, _change: dict[str, Any]) -> None:
        self._branch_cache = None
        self.update_preview()
        self.update_chart()

    # ------------------------------------------------------------------ preview
    def _branch(self) -> list[Entry]:
        if self._branch_cache is None or self._branch_cache[0] != self.leaf_id:
            self._branch_cache = (self.leaf_id, self.session.branch(self.leaf_id) if self.leaf_id is not None else [])
        return self._branch_cache[1]

    def update_preview(self) -> None:
        """Recompute where the cut falls for the current settings and redraw the preview."""
        start = time.perf_counter()
        try:
            projection = self.state.projection(self.leaf_id)
            self.preparation = prepare_compaction(self._branch(), max(0, self.keep_recent_tokens), projection) \
                if self.leaf_id is not None else None
            self.preview.value = self._preview_html(self.preparation, projection.tokens)
        except Exception as exc:
            self.preparation = None
            self.preview.value = error_box("Cannot prepare a compaction here", exc)
        self.preview_ms = (time.perf_counter() - start) * 1000

    def _preview_html(self, prep: Preparation | None, tokens: int) -> str:
        threshold = self.context_window - self.reserve_tokens
        fires = tokens > threshold
        verdict = (f'<div class="pikit-warn"><b>Pi would compact here</b>: context size {fmt_int(tokens)} &gt; '
                   f"threshold {fmt_int(threshold)}.</div>" if fires else
                   f'<div class="pikit-sub">Pi would not compact yet (context size {fmt_int(tokens)} ≤ threshold '
                   f"{fmt_int(threshold)}); below is what a compaction run now would do.</div>")
        problem = (f'<div class="pikit-warn">settings: {esc(self._settings_problem)}</div>'
                   if self._settings_problem else "")
        if prep is None:
            return (f'<div class="pikit-block pikit-cut-preview" aria-label="cut point preview">{verdict}'
                    '<div><b>Nothing to compact</b> at this leaf with these settings: the leaf is a compaction, '
                    f"or everything already fits in keepRecentTokens.</div>{problem}</div>")
        entries = prep.projection.entries
        estimates = prep.projection.estimates
        per_entry: list[int] = []  # tokens of each entry without system messages (never summarized or kept)
        index = 0
        for pe in entries:
            per_entry.append(sum(estimates[index + k] for k, m in enumerate(pe.messages) if m.get("role") != "system"))
            index += len(pe.messages)
        start = 1 if prep.previous_compaction is not None else 0
        previous = sum(per_entry[:start])
        history_end = prep.turn_start_index if prep.is_split_turn else prep.first_kept_index
        summarized = sum(per_entry[start:history_end])
        prefix = sum(per_entry[history_end:prep.first_kept_index]) if prep.is_split_turn else 0
        kept = sum(per_entry[prep.first_kept_index:])
        total = max(1, previous + summarized + prefix + kept)
        strip = "".join(
            f'<div class="pikit-cut-{key}" style="width:{100 * value / total:.3f}%" '
            f'title="{esc(label)}: {fmt_int(value)} tokens"></div>'
            for key, label, value in (("previous", "previous summary", previous),
                                      ("summarized", "summarized", summarized),
                                      ("prefix", "split turn's beginning (summarized apart)", prefix),
                                      ("kept", "kept", kept)) if value > 0)
        first = self.session.by_id.get(prep.first_kept_entry_id)
        first_text = self.state.preview(first)[1] if first is not None else ""
        role = (first.role or first.type) if first is not None else "?"
        split = (f" — <b>split turn</b>: the turn's beginning ({len(prep.turn_prefix_messages)} messages, "
                 f"{fmt_int(prefix)} tokens) is summarized separately" if prep.is_split_turn else "")
        files = ""
        if prep.read_files or prep.modified_files:
            files = (f'<div class="pikit-sub">files: {len(prep.read_files)} read, {len(prep.modified_files)} '
                     f"modified — {esc(', '.join(prep.modified_files[:6]))}"
                     f"{'…' if len(prep.modified_files) > 6 else ''}</div>")
        legend = ('<div class="pikit-legend">'
                  + (f'<span><span class="pikit-swatch pikit-cut-previous"></span>previous summary '
                     f"{fmt_int(previous)}</span>" if previous else "")
                  + '<span><span class="pikit-swatch pikit-cut-summarized"></span>'
                  + f"summarized {fmt_int(summarized)}</span>"
                  + (f'<span><span class="pikit-swatch pikit-cut-prefix"></span>turn prefix {fmt_int(prefix)}</span>'
                     if prefix else "")
                  + f'<span><span class="pikit-swatch pikit-cut-kept"></span>kept {fmt_int(kept)}</span></div>')
        return (
            f'<div class="pikit-block pikit-cut-preview" aria-label="cut point preview">{verdict}'
            f'<div>Cut at <span class="pikit-id pikit-first-kept">{esc(prep.first_kept_entry_id)}</span> '
            f"({esc(role)}: {esc(first_text[:90])}){split}.</div>"
            f'<div class="pikit-cut">{strip}</div>{legend}'
            f"<div>Summarize <b>{fmt_int(len(prep.messages_to_summarize))}</b> messages "
            f"from {fmt_int(len(prep.summarized_entry_ids))} entries; keep <b>{fmt_int(len(prep.kept_entry_ids))}</b> "
            f"entries ({fmt_int(prep.kept_tokens)} tokens). tokensBefore {fmt_int(prep.tokens_before)}.</div>"
            f"{files}{problem}</div>"
        )

    # ------------------------------------------------------------------ chart
    def update_chart(self) -> None:
        """Redraw the tokensBefore/tokensAfter chart of the branch (including a compaction just run)."""
        try:
            if self.result_session is not None and self.last_result is not None:
                new_id = self.last_result.entry["id"]
                points = compaction_history(self.result_session, new_id, new_ids=[new_id])
            else:
                points = compaction_history(self.session, self.leaf_id)
            self.chart.value = history_chart_html(points, self.context_window - self.reserve_tokens)
        except Exception as exc:
            self.chart.value = error_box("Cannot draw the compaction chart", exc)

    @property
    def history(self) -> list[CompactionPoint]:
        """The points of the chart."""
        if self.result_session is not None and self.last_result is not None:
            new_id = self.last_result.entry["id"]
            return compaction_history(self.result_session, new_id, new_ids=[new_id])
        return compaction_history(self.session, self.leaf_id)

    # ------------------------------------------------------------------ running
    def on_compacted(self, callback: Callable[[Any, str], None], remove: bool = False) -> None:
        """Call ``callback(result, path)`` after each successful run."""
        if remove:
            self._callbacks.remove(callback)
        else:
            self._callbacks.append(callback)

    def _default_output(self) -> str:
        source = Path(self.session.path) if self.session.path else Path("session.jsonl")
        folder = self.output_dir if self.output_dir is not None else source.parent
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        candidate = folder / f"{source.stem}.compacted-{stamp}.jsonl"
        n = 2
        while candidate.exists():
            candidate = folder / f"{source.stem}.compacted-{stamp}-{n}.jsonl"
            n += 1
        return str(candidate)

    def _update_output_default(self) -> None:
        if self.in_place:
            self.output.value = self.session.path or ""
            self.output.disabled = True
        else:
            self.output.disabled = False
            if not self.output.value or self.output.value == self.session.path or \
                    Path(self.output.value).exists():
                self.output.value = self._default_output()

    def _step(self, value: int, text: str) -> None:
        self.progress.value = value
        self.message.value = f'<div class="pikit-status">{esc(text)}</div>'

    def _summarizer(self) -> Summarizer:
        name = self.summarizer_picker.value
        if name == "custom" and self._custom_summarizer is not None:
            return self._custom_summarizer
        return self._factory(name, self.summarizer_model.value.strip() or None, self.base_url.value.strip() or None)

    def run(self) -> Any:
        """Summarize and write the compaction (what the button does). Returns the result or ``None``.

        Errors are shown in the panel and leave ``status == "error"``; nothing is raised and,
        when summarizing fails, nothing is written.
        """
        from ..compaction import build_compaction, write_entry
        from ..loading import load

        if self.status == "running":
            return None
        self.status = "running"
        self.run_button.disabled = True
        self.progress.bar_style = "info"
        result = None
        written: str | None = None
        try:
            if self.leaf_id is None:
                raise PikitError("the leaf is reset (empty branch): there is nothing to compact")
            self._step(1, "preparing…")
            summarizer = _Reporting(self._summarizer(), lambda text: self._step(2, text))
            result = build_compaction(self.session, self.leaf_id, keep_recent_tokens=max(0, self.keep_recent_tokens),
                                      summarizer=summarizer,
                                      instructions=self.instructions.value.strip() or None)
            self._step(3, "writing…")
            if self.in_place:
                path = write_entry(self.session, result.entry, in_place=True)
            else:
                target = self.output.value.strip() or self._default_output()
                path = write_entry(self.session, result.entry, output=target)
            written = path
            self._step(4, "loading the result…")
            self.result_session = load(path)
            self.last_result = result
            self.last_output = path
            self.progress.bar_style = "success"
            where = "appended to the source" if self.in_place else "written to a new file"
            self.message.value = (
                f'<div class="pikit-ok pikit-compaction-done"><b>Compaction {esc(result.entry["id"])}</b> {where}: '
                f'<span class="pikit-id">{esc(path)}</span><br>tokensBefore <b>{fmt_int(result.tokens_before)}</b> → '
                f"tokensAfter <b>{fmt_int(result.tokens_after)}</b> "
                f"({fmt_int(result.tokens_before - result.tokens_after)} tokens freed; "
                f"{summarizer.calls} summarizer call{'s' if summarizer.calls != 1 else ''}).</div>")
            self.status = "done"
            self.update_chart()
            if not self.in_place:
                self.output.value = self._default_output()
            for callback in list(self._callbacks):
                callback(result, path)
        except Exception as exc:
            self.progress.bar_style = "danger"
            title = ("Compaction failed: nothing was written" if written is None else
                     f"The compaction was written to {written}, but then this failed")
            self.message.value = error_box(title, exc)
            self.status = "error"
            result = None
        finally:
            self.run_button.disabled = False
        return result
