"""Compaction strategies (pikit.compaction._strategy, _builtin_strategies, _replay) on hand-made branches."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pikit import compaction
from pikit.compaction import (
    Check,
    CodexInlineStrategy,
    CompactionSettings,
    ContextItem,
    ReplayContext,
    SummaryRequest,
    SummaryResult,
)
from pikit.compaction._builtin_strategies import CODEX_RESUME_PREFIX, codex_cut, codex_cut_marker
from pikit.errors import PikitError
from pikit.llm import get_summarizer
from tests.entries import asst, call, session_of, text, tool_result, user

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
OFFLINE = get_summarizer("offline")


class Fixed:
    """A summarizer that always answers SUMMARY and remembers its requests."""

    name = "fixed"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.requests.append(request)
        return SummaryResult("SUMMARY", None)


def codex_branch() -> list[dict[str, Any]]:
    """u1 (6,000 tokens, ``a`` then ``z``), a tool turn (10,000 tokens out), u2 (15,000), another tool turn, u3."""
    return [
        user("u1", None, 1, text("a" * 12_000 + "z" * 12_000)),
        asst("a1", "u1", 2, [call("c1", "read", path="big.txt")]),
        tool_result("t1", "a1", 3, text("x" * 40_000), toolCallId="c1"),
        asst("a2", "t1", 4, text("read it")),
        user("u2", "a2", 5, text("b" * 60_000)),
        asst("a3", "u2", 6, [call("c2", "read", path="small.txt")]),
        tool_result("t2", "a3", 7, text("y" * 8_000), toolCallId="c2"),
        asst("a4", "t2", 8, text("read that too")),
        user("u3", "a4", 9, text("now finish")),
        asst("a5", "u3", 10, text("finished")),
    ]


def _run(entries: list[dict[str, Any]], strategy: Any, window: int, settings: CompactionSettings | None = None,
         summarizer: Any = OFFLINE, **kw: Any) -> compaction.SimulationResult:
    result = compaction.simulate(session_of(HEADER, entries), summarizer, context_window=window,
                                 settings=settings or CompactionSettings(True, 16_384, 20_000), sizes="estimate",
                                 strategy=strategy, **kw)
    assert isinstance(result, compaction.SimulationResult)
    return result


# ------------------------------------------------------------------------------ codex-inline
def test_codex_inline_fires_pre_turn_and_keeps_recent_users_with_the_oldest_truncated() -> None:
    fixed = Fixed()
    r = _run(codex_branch(), "codex-inline", 100_000, summarizer=fixed, auto_compact_limit=32_000)
    assert r.threshold == 32_000  # min(32,000, 90% of 100,000)
    assert [(c[0], c[1]) for c in r.trace] == [(1, "a1"), (4, "u2"), (5, "a3"), (8, "u3")]  # mid-turn and pre-turn
    (event,) = r.events
    assert (event.after_entry_id, event.branch_index) == ("u3", 8)  # before the new user message
    assert event.kept == ("u1", "u2")
    assert event.truncated == ("u1", 5_000)  # 20,000 − 15,000 for u2
    assert event.replaced == ("a1", "t1", "a2", "a3", "t2", "a4")
    assert event.summary == "SUMMARY" and event.strategy == "codex-inline"
    (request,) = fixed.requests
    assert request.format == "handoff" and request.previous_summary is None
    assert len(request.messages) == 8  # the whole context went to the summarizer
    assert r.summarizer_calls == 1


def test_codex_inline_new_context_message_by_message() -> None:
    session = session_of(HEADER, codex_branch())
    items = [ContextItem.of(e.id, e.message) for e in session.branch("a4")]
    check = Check("pre-turn", 8, "u3", 33_000, 100_000, 33_000)
    context = ReplayContext(items, 0, 100_000, CompactionSettings(True, 16_384, 20_000), check)
    outcome = CodexInlineStrategy().compact(context, lambda request: "THE SUMMARY")
    assert outcome is not None
    roles = [(i.entry_id, i.role, i.kind) for i in outcome.items]
    assert roles == [("u1", "user", "truncated"), ("u2", "user", "message"), (None, "user", "summary")]
    cut = outcome.items[0].message["content"][0]["text"]
    # 5,000 tokens = 20,000 bytes kept, half from the head and half from the tail; 24,000 − 20,000 bytes removed
    assert cut == "a" * 10_000 + "…1000 tokens truncated…" + "z" * 10_000
    assert outcome.items[1].message is items[4].message  # u2 verbatim
    assert outcome.items[2].message["content"][0]["text"] == f"{CODEX_RESUME_PREFIX}\nTHE SUMMARY"
    assert outcome.truncated == ("u1", 5_000)


def _cut(text: str, tokens: int) -> str:
    head, tail, removed = codex_cut(text, tokens * 4)
    return head + codex_cut_marker(removed) + tail


def test_codex_cut_keeps_the_head_and_the_tail_of_whole_characters() -> None:
    # Codex's own vector: 63 bytes to 32, a head of 16 bytes (4 emoji), the tail from byte 47
    assert _cut("😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n", 8) == "😀😀😀😀…8 tokens truncated… line with text\n"
    assert codex_cut("short", 8) == ("short", "", 0)  # 5 bytes fit in 8: kept whole
    assert _cut("abcdefghij", 0) == "…3 tokens truncated…"  # no budget: only the marker, ceil(10 / 4)
    assert _cut("ab😀cd", 1) == "ab…1 tokens truncated…cd"  # 8 bytes to 4: the emoji fits neither half


def test_codex_cut_counts_a_lone_surrogate_as_three_bytes_and_never_splits_it() -> None:
    text = "a\ud800b\udfffc"  # 1 + 3 + 1 + 3 + 1 = 9 bytes
    head, tail, removed = codex_cut(text, 8)
    assert (head, tail, removed) == ("a\ud800", "\udfffc", 1)  # 4 bytes each side, ceil((9 − 8) / 4)
    assert codex_cut("\ud800" * 5, 7) == ("\ud800", "\ud800", 2)  # a half of 3 bytes holds one, not 4
    assert codex_cut("x\ud800y", 4) == ("x", "y", 1)  # the surrogate straddles both halves: left out whole


def test_codex_inline_a_later_compaction_updates_the_summary_and_keeps_only_real_user_messages() -> None:
    fixed = Fixed()
    entries = [
        *codex_branch(),
        asst("a6", "a5", 11, [call("c3", "read", path="more.txt")]),
        tool_result("t3", "a6", 12, text("z" * 120_000), toolCallId="c3"),
        asst("a7", "t3", 13, [call("c4", "read", path="end.txt")]),
        tool_result("t4", "a7", 14, text("ok"), toolCallId="c4"),
        asst("a8", "t4", 15, text("done")),
    ]
    r = _run(entries, "codex-inline", 100_000, summarizer=fixed, auto_compact_limit=32_000)
    first, second = r.events
    assert first.after_entry_id == "u3"
    assert (second.after_entry_id, second.kept) == ("a7", ("u1", "u2", "u3"))  # mid-turn: a call, more to come
    assert second.truncated == ("u1", 4_997)  # u3 (3 tokens) and u2 (15,000) first; u1, already cut, is cut again
    assert fixed.requests[1].previous_summary == "SUMMARY"
    assert all(m.get("role") != "user" or CODEX_RESUME_PREFIX not in str(m) for m in fixed.requests[1].messages)


def test_codex_inline_limit_is_ninety_percent_without_a_configured_limit() -> None:
    r = _run(codex_branch(), "codex-inline", 30_000)
    assert r.threshold == 27_000
    assert r.events[0].after_entry_id == "a3"  # u1 + t1 + u2 (31,000) ≥ 27,000 after a3's tool call
    assert r.events[0].summary.startswith("## Active Task\n")  # the offline summarizer writes the handoff format


# --------------------------------------------------------------------------- mask-observations
def turns(n: int, size: int = 8_000) -> list[dict[str, Any]]:
    """``n`` turns, each a user request, a tool call, its result of ``size`` characters and an answer."""
    out: list[dict[str, Any]] = []
    parent = None
    for t in range(1, n + 1):
        out += [user(f"u{t}", parent, 4 * t, text(f"request {t}")),
                asst(f"a{t}", f"u{t}", 4 * t + 1, [call(f"c{t}", "bash", command=f"step {t}")]),
                tool_result(f"t{t}", f"a{t}", 4 * t + 2, text(str(t) * size), name="bash", toolCallId=f"c{t}"),
                asst(f"b{t}", f"t{t}", 4 * t + 3, text(f"answer {t}"))]
        parent = f"b{t}"
    return out


def test_mask_observations_replaces_old_tool_output_and_keeps_the_pairing() -> None:
    settings = CompactionSettings(True, 1_000, 20_000)
    r = _run(turns(4), "mask-at-threshold", 6_000, settings, keep_turns=1)
    first = r.events[0]
    assert first.summary is None and r.summarizer_calls == 0
    assert first.masked == ("t1", "t2")  # fired at a3 (3 × 2,000 tokens > 5,000): t3 is in the last turn
    assert first.kept[:3] == ("u1", "a1", "t1")  # a placeholder still answers c1
    assert first.tokens_after < first.tokens_before - 3_900


def test_mask_observations_placeholder_names_the_tool_and_the_size() -> None:
    session = session_of(HEADER, turns(2))
    items = [ContextItem.of(e.id, e.message) for e in session.branch("b2")]
    context = ReplayContext(items, 0, 6_000, CompactionSettings(True, 1_000, 20_000),
                            Check("assistant", 7, "b2", 9_000, 6_000, 9_000))
    outcome = compaction.MaskAtThresholdStrategy(keep_turns=1).compact(context, lambda r: "")
    assert outcome is not None and outcome.masked == ["t1"]
    placeholder = outcome.items[2].message
    assert placeholder["toolCallId"] == "c1" and placeholder["toolName"] == "bash"
    assert placeholder["content"] == [{"type": "text", "text": "[output of bash removed from the context: "
                                                                "about 2,000 tokens]"}]
    assert compaction.MaskAtThresholdStrategy(keep_turns=3).compact(context, lambda r: "") is None


def test_mask_observations_with_no_turns_kept_masks_every_tool_result() -> None:
    r = _run(turns(2), "mask-at-threshold", 6_000, CompactionSettings(True, 3_500, 20_000), keep_turns=0)
    assert r.events[0].masked == ("t1", "t2")  # at b2 (t1 + t2 > 2,500), every tool result so far


# ----------------------------------------------------------------------------------- truncate
def test_truncate_drops_whole_units_from_the_oldest() -> None:
    settings = CompactionSettings(True, 1_000, 20_000)
    r = _run(turns(4), "truncate", 6_000, settings)
    for event in r.events:
        assert event.tokens_after <= 5_000
        assert event.kept and not event.kept[0].startswith("t")  # never a tool result without its call
        assert event.replaced[-1][0] in "tb"  # a unit ends with its result or the answer
    assert r.events[0].replaced == ("u1", "a1", "t1")


def test_truncate_that_cannot_fit_says_so() -> None:
    entries = [user("u1", None, 1, text("q" * 40_000)), asst("a1", "u1", 2, text("ok")),
               user("u2", "a1", 3, text("more")), asst("a2", "u2", 4, text("ok")),
               user("u3", "a2", 5, text("more")), asst("a3", "u3", 6, text("ok")),
               user("u4", "a3", 7, text("more")), asst("a4", "u4", 8, text("ok"))]
    r = _run(entries, "truncate", 5_000, CompactionSettings(True, 1_000, 20_000))
    # The big request goes at the first check (its answer is a unit of its own and stays).
    assert r.events[0].replaced == ("u1",)
    assert r.request_overflows == 1 and not r.never_fits
    huge: list[dict[str, Any]] = []  # every answer alone is over the threshold: nothing dropped makes it fit
    for n in range(1, 6):
        huge += [user(f"u{n}", f"a{n - 1}" if n > 1 else None, 2 * n, text("again")),
                 asst(f"a{n}", f"u{n}", 2 * n + 1, text("w" * 40_000))]
    r = _run(huge, "truncate", 5_000, CompactionSettings(True, 1_000, 20_000))
    assert r.never_fits and r.runaway is not None and r.totals()["neverFits"] is True


# -------------------------------------------------------------------------------- pi-percent
def test_pi_percent_fires_above_the_fraction_of_the_window() -> None:
    r = _run(turns(4), "pi-percent", 10_000, CompactionSettings(True, 1_000, 2_500), threshold=0.5)
    assert r.threshold == 5_000 and r.strategy == "pi-percent"
    first = r.events[0]
    assert first.tokens_before > 5_000
    assert all(before <= 5_000 for _, _, before, _ in r.trace if _ < first.branch_index)
    pi = _run(turns(4), "pi", 10_000, CompactionSettings(True, 1_000, 2_500))
    assert not pi.events  # Pi's threshold (9,000) is never passed


def test_pi_events_carry_the_summary_the_replaced_span_and_what_is_kept() -> None:
    r = _run(turns(4), "pi", 6_000, CompactionSettings(True, 1_000, 2_500))
    event = r.events[0]
    assert event.summary is not None and event.summary.startswith("## Goal")
    assert event.replaced and event.kept
    assert event.kept[0] == event.first_kept_entry_id
    assert not set(event.replaced) & set(event.kept)


# ------------------------------------------------------------------------- requests and cost
def test_requests_cache_reads_and_cost() -> None:
    r = _run(turns(4), "mask-at-threshold", 6_000, CompactionSettings(True, 1_000, 20_000), keep_turns=1)
    assert len(r.requests) == 8  # one per assistant message
    assert r.requests[0][1] == 0  # the first request reads nothing from a cache
    sizes = [size for size, _ in r.requests]
    assert r.requests[1][1] == sizes[0]  # nothing rewritten: the previous request's input is read
    masked_at = r.events[0].branch_index  # a3: the request after it (b3) starts cold from u1's end
    after = next(n for n, check in enumerate(r.trace) if check[0] > masked_at)
    assert r.requests[after][1] < sizes[after - 1]

    class Prices:
        def __init__(self, cache_write: float) -> None:
            self.cache_write = cache_write

        def rates(self, tokens: float) -> Any:
            return type("R", (), {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": self.cache_write})()

    branch = turns(4)
    for n, entry in enumerate(e for e in branch if e["message"]["role"] == "assistant"):
        entry["message"]["usage"] = {"input": 10, "output": 100 + n, "cacheRead": 0, "cacheWrite": 0,
                                     "totalTokens": 110 + n}
    branch[-1]["message"]["stopReason"] = "aborted"  # sent, and billed for its input and output
    for write in (0.0, 3.75):  # no cache-write price: fresh input at the input price; else at the write price
        priced = _run(branch, "truncate", 6_000, CompactionSettings(True, 1_000, 20_000), pricing=Prices(write))
        fresh = priced.input_tokens - priced.cached_input_tokens
        output = sum(priced.outputs)
        cost = priced.totals()["cost"]
        assert output == sum(100 + n for n in range(8)) == priced.totals()["outputTokens"]
        assert priced.totals()["abortedRequests"] == 1 and len(priced.requests) == 8
        assert cost["output"] == pytest.approx(output * 15.0 / 1e6, abs=1e-9)
        assert cost["cacheWrite" if write else "freshInput"] == pytest.approx(fresh * (write or 3.0) / 1e6, abs=1e-9)
        assert cost["total"] == pytest.approx((fresh * (write or 3.0) + priced.cached_input_tokens * 0.3
                                               + output * 15.0) / 1e6, abs=1e-9)
        assert cost["leftOut"]
    assert _run(turns(4), "truncate", 6_000).totals()["cost"] is None


def test_several_strategies_give_one_run_each_in_order() -> None:
    runs = compaction.simulate(session_of(HEADER, turns(3)), OFFLINE, context_window=6_000,
                               settings=CompactionSettings(True, 1_000, 2_000), strategy="pi,truncate")
    assert isinstance(runs, list) and [r.strategy for r in runs] == ["pi", "truncate"]


# ---------------------------------------------------------------------------- a user strategy
class KeepLastTwo(compaction.Strategy):
    name = "keep-last-2"

    def compact(self, context: ReplayContext, summarize: Any) -> compaction.Outcome | None:
        dropped = context.items[:-2]
        if not dropped:
            return None
        return compaction.Outcome(context.items[-2:], replaced=[i.entry_id for i in dropped])


def test_a_strategy_written_as_one_small_class() -> None:
    r = _run(turns(3), KeepLastTwo(), 6_000, CompactionSettings(True, 1_000, 20_000))
    assert r.strategy == "keep-last-2" and r.events
    assert r.events[0].kept == ("t3", "b3")  # at b3, the first check above 5,000


# ------------------------------------------------------------------ a user strategy, checked
class Returns(KeepLastTwo):
    """KeepLastTwo's outcome, changed by ``change`` (or ``change`` itself when it is not callable)."""

    name = "returns"

    def __init__(self, change: Any) -> None:
        self.change = change

    def compact(self, context: ReplayContext, summarize: Any) -> Any:
        outcome = super().compact(context, summarize)
        return self.change(outcome) if callable(self.change) else self.change


def _with(**fields: Any) -> Any:
    return lambda outcome: dataclasses.replace(outcome, **fields)


def _negative(outcome: compaction.Outcome) -> compaction.Outcome:
    items = list(outcome.items)
    items[1] = dataclasses.replace(items[1], tokens=-5)
    return dataclasses.replace(outcome, items=items)


def _declaring(**fields: Any) -> compaction.Strategy:
    return type("Declared", (KeepLastTwo,), {"name": "declared", **fields})()


NO_COMPACT = type("NoCompact", (compaction.Strategy,), {"name": "no-compact"})()
CHECKED = "strategy 'returns' (Returns): "


@pytest.mark.parametrize(("strategy", "needle"), [
    (_declaring(checks=("asistant",)), "strategy 'declared' (Declared): checks must name check points among "
                                       "'assistant', 'mid-turn', 'pre-turn', 'request' (did you mean 'assistant'?), "
                                       "not ('asistant',)"),
    (_declaring(checks="pre-turn"), "strategy 'declared' (Declared): checks must be a tuple of check points among "
                                    "'assistant', 'mid-turn', 'pre-turn', 'request', not 'pre-turn'"),
    (_declaring(name=""), "strategy Declared: name must be a non-empty string, not ''"),
    (_declaring(counts_bytes="yes"), "strategy 'declared' (Declared): counts_bytes must be True or False, not 'yes'"),
    (_declaring(threshold=lambda self, window, settings: window * 0.9),
     "strategy 'declared' (Declared): threshold() must return a whole number of tokens, not 5400.0"),
    (NO_COMPACT, "strategy 'no-compact' (NoCompact): compact must be defined (the method that returns an Outcome), "
                 "not None"),
    (KeepLastTwo, "strategy KeepLastTwo is a class: pass an instance of it, KeepLastTwo()"),
    (Returns(lambda outcome: list(outcome.items)), CHECKED + "compact() must return an Outcome or None, not a list"),
    (Returns(_negative), CHECKED + "Outcome.items[1].tokens must be a whole number ≥ 0, not -5"),
    (Returns(_with(items=None)), CHECKED + "Outcome.items must be a list of ContextItem, not None"),
    (Returns(_with(items=[{"role": "user"}])), CHECKED + "Outcome.items[0] must be a ContextItem, not a dict"),
    (Returns(_with(summary=["text"])), CHECKED + "Outcome.summary must be a string or None, not ['text']"),
    (Returns(_with(replaced="t1")), CHECKED + "Outcome.replaced must be a list of entry ids, not 't1'"),
    (Returns(_with(truncated=("t1", -1))), CHECKED + "Outcome.truncated must be None or (entry id, tokens kept ≥ 0), "
                                                     "not ('t1', -1)"),
], ids=["checks-misspelled", "checks-a-string", "name", "counts_bytes", "threshold", "compact",
        "a-class", "returns-a-list", "negative-tokens", "items", "item", "summary", "replaced", "truncated"])
def test_a_user_strategy_is_checked_and_the_error_names_it_and_the_field(strategy: Any, needle: str) -> None:
    with pytest.raises(compaction.StrategyError) as caught:
        _run(turns(3), strategy, 6_000, CompactionSettings(True, 1_000, 20_000))
    assert str(caught.value) == needle
    assert caught.value.worded({"strategy": "STRATEGY"}) == needle.replace("strategy", "STRATEGY", 1)


def test_a_checked_user_strategy_that_returns_its_outcome_unchanged_still_runs() -> None:
    r = _run(turns(3), Returns(lambda outcome: outcome), 6_000, CompactionSettings(True, 1_000, 20_000))
    assert r.strategy == "returns" and r.events and all(e.tokens_after >= 0 for e in r.events)


# -------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("kw", "needle"), [
    ({"strategy": "codex"}, "unknown strategy 'codex'; the built-in strategies are pi, pi-percent, none, "
                            "codex-inline, mask-observations, mask-at-threshold, truncate"),
    ({"strategy": "pi-percent", "threshold": 0}, "threshold must be a fraction of the window in (0, 1], not 0"),
    ({"strategy": "pi-percent", "threshold": 1.5}, "threshold must be a fraction of the window in (0, 1], not 1.5"),
    ({"strategy": "mask-at-threshold", "keep_turns": -1}, "keep_turns must be a whole number ≥ 0, not -1"),
])
def test_bad_strategy_parameters_name_the_parameter(kw: dict[str, Any], needle: str) -> None:
    with pytest.raises(PikitError) as caught:
        _run(turns(1), window=6_000, **kw)
    assert str(caught.value) == needle


def test_a_branch_with_nothing_to_compact() -> None:
    with pytest.raises(PikitError, match="has no assistant message: there is nothing to compact"):
        _run([user("u1", None, 1, text("hello"))], "codex-inline", 6_000)


# ---------------------------------------------------------------------------- frames and charts
def test_strategy_totals_frame_and_sawtooth_figure() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from pikit import charts, frames

    runs = compaction.simulate(session_of(HEADER, turns(4)), OFFLINE, context_window=6_000,
                               settings=CompactionSettings(True, 1_000, 2_500),
                               strategy=["pi", "mask-at-threshold", "truncate"], keep_turns=1)
    assert isinstance(runs, list)
    df = frames.strategy_totals(runs)
    assert list(df["strategy"]) == ["pi", "mask-at-threshold", "truncate"]
    assert list(df["input_tokens"]) == [r.input_tokens for r in runs]
    assert df["cost"].isna().all()  # no prices given
    fig = charts.strategy_sawtooth(runs)
    ax = fig.axes[0]
    assert len([line for line in ax.get_lines() if line.get_gid() == "context"]) == 3
    assert sorted(line.get_ydata()[0] for line in ax.get_lines() if line.get_gid() == "threshold") == [5_000] * 3
    assert [line.get_gid() for line in ax.get_lines()].count("window") == 1


def test_codex_bytes_count_an_image_as_pi_estimates_it() -> None:
    from pikit.compaction._strategy import IMAGE_BYTES, message_bytes

    plain = {"role": "user", "content": [{"type": "text", "text": "look"}]}
    with_image = {"role": "user", "content": [{"type": "text", "text": "look"},
                                              {"type": "image", "data": "A" * 100_000, "mimeType": "image/png"}]}
    assert message_bytes(with_image) == message_bytes(plain) + IMAGE_BYTES
    assert message_bytes({"role": "user", "content": "é"}) == len('{"role":"user","content":"é"}'.encode())


class EditsEveryRequest(compaction.Strategy):
    """A continuous strategy whose edit returns what the test gives it."""

    name = "edits"
    checks = ("request",)
    continuous = True

    def __init__(self, changes: Any) -> None:
        self.changes = changes

    def edit(self, context: ReplayContext) -> Any:
        return self.changes(context) if callable(self.changes) else self.changes


@pytest.mark.parametrize(("strategy", "needle"), [
    (type("NoEdit", (compaction.Strategy,), {"name": "no-edit", "checks": ("request",), "continuous": True})(),
     "strategy 'no-edit' (NoEdit): edit must be defined by a continuous strategy"),
    (EditsEveryRequest([]), "strategy 'edits' (EditsEveryRequest): edit() must return a dict of index → ContextItem"),
    (EditsEveryRequest(lambda c: {len(c.items): c.items[0]}), "edit() must key its items by an index from 0 to"),
    (EditsEveryRequest(lambda c: {0: "masked"}), "edit()[0] must be a ContextItem, not 'masked'"),
], ids=["no-edit", "a-list", "index-out-of-range", "not-an-item"])
def test_a_continuous_strategy_and_each_edit_are_checked(strategy: Any, needle: str) -> None:
    with pytest.raises(compaction.StrategyError, match=None) as caught:
        _run(turns(3), strategy, 6_000, CompactionSettings(True, 1_000, 20_000))
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_a_continuous_strategy_with_nothing_to_edit_runs() -> None:
    result = _run(turns(3), EditsEveryRequest(lambda c: {}), 6_000, CompactionSettings(True, 1_000, 20_000))
    assert result.masked_observations == 0
