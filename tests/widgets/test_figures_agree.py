"""One session, every surface, the same figures: the context size (with the system prompt), the system prompt and
the summary on their own, the kept entries and tokens of a compaction, the messages after it, and the entries the
tree hides, read off the explorer, the stepper, the compaction panel, the exported page, the Markdown export and
the command line."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets
import pytest

import pikit
from pikit._tree.tree import describe_hidden
from pikit.compaction import Settings, prepare_compaction
from pikit.export import render_markdown
from pikit.widgets import CompactionPanel, CompactionStepper, SessionExplorer
from tests.procs import pikit as run_pikit

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"
KEEP = 4_000


def _html(widget: Any) -> Iterator[str]:
    if isinstance(widget, ipywidgets.HTML):
        yield widget.value
    for child in getattr(widget, "children", ()):
        yield from _html(child)


def _text(markup: str) -> str:
    """What a reader sees of some HTML: no styles or tags, entities decoded, white space folded."""
    plain = re.sub(r"<style.*?</style>|<[^>]+>", " ", markup, flags=re.S)
    return " ".join(html.unescape(plain).split())


@pytest.fixture(scope="module")
def session() -> pikit.Session:
    return pikit.load(SAMPLE)


def test_every_surface_shows_the_same_figures(session: pikit.Session, tmp_path: Path) -> None:
    ctx = session.context()
    size, system, summary = ctx.size.tokens, ctx.estimates[0], ctx.estimates[1]
    assert ctx.messages[0]["role"] == "system" and ctx.messages[1]["role"] == "compactionSummary"
    prep = prepare_compaction(ctx.path, KEEP, ctx)
    assert prep is not None

    explorer = _text(" ".join(_html(SessionExplorer(session))))
    written = run_pikit("export", SAMPLE, "-o", tmp_path / "page.html")
    assert written.returncode == 0, written.stderr
    page = _text((tmp_path / "page.html").read_text(encoding="utf-8"))
    markdown = render_markdown(session)
    cli = run_pikit("context", SAMPLE, "--no-pager").stdout.decode()
    cli_json = json.loads(run_pikit("context", SAMPLE, "--json").stdout)
    leaf = next(iter(cli_json["leaves"].values()))

    # the context size at the leaf, system prompt included
    for surface in (explorer, page):
        assert f"context size {size:,}" in surface
    assert f"context size **{size:,}** tokens" in markdown and f"tokens {size:,}:" in cli
    assert leaf["tokens"] == size
    # the system prompt and the summary, each on its own
    assert f"system prompt {system:,}" in explorer and f"compaction summary {summary:,}" in explorer
    assert f"### 1 · system · carried by compaction {ctx.compaction.id}\n\n*{system:,} tokens" in markdown
    assert f"### 2 · compaction summary · entry {ctx.compaction.id}\n\n*{summary:,} tokens" in markdown
    assert leaf["estimates"][:2] == [system, summary]

    # a compaction at keepRecentTokens 4,000: kept entries and kept tokens, and the messages after it
    stepper = CompactionStepper(session, keep_recent_tokens=KEEP)
    stepper.step = 6
    step6 = _text(stepper.body.value)
    assert re.search(rf"0 {ctx.compaction.id} summary .*? {summary:,} previous compaction", step6)
    stepper.step = 7
    step7 = _text(stepper.body.value)
    panel = _text(" ".join(_html(CompactionPanel(session, keep_recent_tokens=KEEP, settings=Settings({})))))
    kept = prep.kept_entries
    assert kept == 23 and len(prep.kept_entry_ids) == 24  # a kept label sends nothing and is not counted
    assert f"the {kept} kept entries" in step7 and f"keep {kept} entries ({prep.kept_tokens:,} tokens)" in panel
    assert f"kept {prep.kept_tokens:,}" in panel
    messages = int(re.search(r"\((\d+) messages with the system prompt and the summary\)", step7).group(1))
    assert f"messages {messages}" in step7 and messages == 1 + 1 + kept + sum(
        len(pe.messages) - 1 for pe in ctx.entries[prep.first_kept_index:] if pe.messages)
    dry = run_pikit("compact", SAMPLE, "--dry-run", "--keep-recent-tokens", str(KEEP)).stdout.decode()
    assert f"{prep.kept_tokens:,}" in dry and f"{size:,} tokens in context" in dry

    # the entries the tree hides, by reason
    hidden = session.tree_hidden()
    tree = run_pikit("tree", SAMPLE, "--no-pager").stdout.decode().splitlines()[0]
    assert f"{sum(hidden.values())} hidden: {describe_hidden(hidden)}" in tree
    assert describe_hidden(hidden) in explorer
