"""The bundled sample corpus holds numbers a real Pi could have written: costs at the models' list prices,
compactions where Pi's threshold fires (never beyond the window), usage the messages account for, and
session names that end at a word."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pikit
from pikit.corpus import Corpus
from pikit.llm import lookup_model
from pikit.widgets import budget_segments


def _entries(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue  # the damaged file's garbage and torn lines


def _usages(root: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every recorded usage with its ``provider/model`` (summaries are made by the session's model)."""
    for path in sorted(root.rglob("*.jsonl")):
        model = None
        for entry in _entries(path):
            message = entry.get("message") or {}
            if message.get("role") == "assistant":
                model = f"{message['provider']}/{message['model']}"
                yield model, message["usage"]
            elif entry.get("type") in ("compaction", "branch_summary") and "usage" in entry:
                assert model is not None
                yield model, entry["usage"]


def test_costs_are_the_list_prices_times_the_tokens(sample_corpus: Path) -> None:
    counted = 0
    for model, usage in _usages(sample_corpus):
        info = lookup_model(model)
        assert info is not None and info.pricing is not None, model
        price = info.pricing
        expected = {"input": price.input * usage["input"], "output": price.output * usage["output"],
                    "cacheRead": price.cache_read * usage["cacheRead"],
                    "cacheWrite": price.cache_write * usage["cacheWrite"]}
        for key, value in expected.items():
            assert math.isclose(usage["cost"][key], value / 1e6, rel_tol=1e-9, abs_tol=1e-15), (model, key)
        assert math.isclose(usage["cost"]["total"], sum(expected.values()) / 1e6, rel_tol=1e-9, abs_tol=1e-15)
        assert usage["totalTokens"] == sum(usage[k] for k in ("input", "output", "cacheRead", "cacheWrite"))
        counted += 1
    assert counted > 1_000


def test_compactions_fire_past_the_threshold_and_within_the_window(sample_corpus: Path, tmp_path: Path) -> None:
    with Corpus.open(sample_corpus, index=tmp_path / "i.duckdb", workers=1) as corpus:
        compactions = corpus.compactions
    automatic = compactions[compactions.tokens_before > compactions.threshold]
    assert len(automatic) == len(compactions) - 1  # the version-1 file's compaction was asked for
    assert (compactions.tokens_before <= compactions.context_window).all()
    # a compaction fires before the call that would pass the threshold: by at most one tool result
    assert (automatic.over_threshold <= 50 * 1024 // 4).all()
    assert (automatic.tokens_after < automatic.threshold).all()


def test_the_reported_usage_is_mostly_itemized(sample_corpus: Path) -> None:
    """At each session's leaf the messages' estimates explain most of the usage the provider reported
    (the rest: the system prompt and tool definitions a file does not record, and denser tokenization)."""
    shares = []
    for path in sorted(sample_corpus.rglob("*.jsonl")):
        segments = budget_segments(pikit.load(path).context())
        if segments.tokens > 20_000:
            shares.append(segments.unitemized / segments.tokens)
    assert len(shares) >= 30
    assert max(shares) < 0.25, max(shares)


def test_session_names_end_at_a_word(sample_corpus: Path) -> None:
    named = 0
    for path in sorted(sample_corpus.rglob("*.jsonl")):
        entries = list(_entries(path))
        asks = [block["text"] for e in entries if (e.get("message") or {}).get("role") == "user"
                for block in e["message"]["content"] if block.get("type") == "text"]
        for entry in entries:
            if entry.get("type") != "session_info":
                continue
            name = entry["name"]
            named += 1
            assert len(name) <= 40 and name == name.strip() and name[-1].isalnum(), name
            for ask in asks:  # not a request cut short
                assert not (ask.startswith(name) and ask[len(name):len(name) + 1].isalnum()), (name, ask)
    assert named >= 30
