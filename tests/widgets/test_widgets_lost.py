"""What a compaction lost, in the widgets: the pure view and its HTML, the part, the panel and the stepper."""

from __future__ import annotations

from pathlib import Path

import pikit
from pikit.compaction import Evaluation, Fact, Settings, evaluate_span
from pikit.widgets import CompactionPanel, CompactionStepper, SessionExplorer
from pikit.widgets._lost import LostFacts
from pikit.widgets._views.lost import lost_view, render_lost
from tests.widgets.summarizers import FakeSummarizer
from tests.widgets.synthetic import PAYLOAD, TWINS, UNSAFE

LOST_COMMAND = "pytest -q tests/test_queue.py"  # a fact a fake summary of compaction-chain loses
LOST_SOURCE = "005ff486"
# (the other two it loses are the goal and next step of the summary it replaces, from entry 799eac36)
LOST_AT = 2  # the command's place in the list of lost facts


def _evaluation(lost: int, kept: int = 2) -> Evaluation:
    facts = [Fact("command", f"make step-{i}", f"src{i:03d}") for i in range(lost)]
    facts += [Fact("read_file", f"/w/file{i}.py", "kept0001") for i in range(kept)]
    return Evaluation("c1", "pikit", 1000, 100, facts, [False] * lost + [True] * kept)


# ---------------------------------------------------------------------------------- the view
def test_the_view_has_the_recall_per_kind_and_the_first_lost_facts() -> None:
    evaluation = _evaluation(lost=15, kept=5)
    evaluation.facts.append(Fact("url", "https://example.com/a", "u1"))
    evaluation.kept.append(False)
    view = lost_view(evaluation, limit=12)
    assert (view.kept, view.facts, view.recall) == (5, 21, 5 / 21)
    assert [(k.kind, k.kept, k.facts) for k in view.kinds] == [("read_file", 5, 5), ("command", 0, 15), ("url", 0, 1)]
    assert [f.text for f in view.lost] == [f"make step-{i}" for i in range(12)]
    assert view.sources == tuple(f"src{i:03d}" for i in range(12)) and view.more == 4
    html = render_lost(view)
    assert html.count('class="pikit-lost-fact"') == 12 and "… 4 more lost" in html
    assert 'data-fact="11" data-entry-id="src011"' in html
    assert "recall <b>24%</b>" in html and "command <b>0%</b>" in html and "read_file <b>100%</b>" in html


def test_nothing_lost_and_no_fact_say_so() -> None:
    assert "nothing lost" in render_lost(lost_view(_evaluation(lost=0)))
    empty = render_lost(lost_view(Evaluation("c1", "pi", None, None, [], [])))
    assert 'data-facts="0"' in empty and "recall <b>–</b>" in empty and "pikit-lost-link" not in empty


def test_hostile_facts_and_sources_stay_text() -> None:
    hostile_id = "id" + PAYLOAD + UNSAFE
    evaluation = evaluate_span([(hostile_id, {"role": "user", "content": f"You must keep `{'x' * 3}` {PAYLOAD}."})],
                               [], tokens_before=10, tokens_after=1, strategy="s" + PAYLOAD)
    assert evaluation.lost and all(f.source == hostile_id for f in evaluation.lost)
    html = render_lost(lost_view(evaluation))
    lowered = html.lower()
    assert "<script" not in lowered and "<img" not in lowered and 'onerror="' not in lowered
    assert "&lt;script&gt;window.__pikit_pwned=1&lt;/script&gt;" in html
    assert not any(c in html for c in "\x00\x1b\x9b\u202e\ud800")
    assert html.count('class="pikit-lost-link"') == len(evaluation.lost)


# ---------------------------------------------------------------------------------- the part
def test_a_click_on_a_source_selects_that_exact_entry() -> None:
    evaluation = Evaluation("c1", "pikit", None, None, [Fact("error", "Error: one", TWINS[0]),
                                                        Fact("error", "Error: two", TWINS[1])], [False, False])
    part = LostFacts()
    assert part.layout.display == "none"
    part.show(evaluation)
    seen: list[object] = []
    part.on_select(seen.append)
    part._on_front_end_msg(part, {"event": "select", "fact": 1}, [])
    part._on_front_end_msg(part, {"event": "select", "fact": "0"}, [])  # not a place in the list
    part._on_front_end_msg(part, {"event": "select", "fact": 7}, [])
    assert seen == [TWINS[1]] and part.selected_id == TWINS[1]  # the id object itself, not its JSON
    assert part.select(0) == TWINS[0] and seen == [TWINS[1], TWINS[0]]
    part.clear()
    assert part.html == "" and part.layout.display == "none" and part.select(0) is None


# ---------------------------------------------------------------------------------- the panel
def test_the_panel_shows_what_its_run_lost_and_links_the_sources(compaction_copy: Path, tmp_path: Path) -> None:
    session = pikit.load(compaction_copy)
    panel = CompactionPanel(session, settings=Settings({}), output_dir=tmp_path, summarizer=FakeSummarizer(),
                            keep_recent_tokens=2000)
    assert panel.last_evaluation is None and panel.lost.layout.display == "none"
    panel.run()
    assert panel.status == "done"
    evaluation = panel.last_evaluation
    assert evaluation is not None and evaluation.compaction_id == panel.last_result.entry["id"]
    lost = [(f.kind, f.text, f.source) for f in evaluation.lost]
    assert lost[LOST_AT] == ("command", LOST_COMMAND, LOST_SOURCE) and [k for k, _, _ in lost] == ["task", "progress",
                                                                                                 "command"]
    assert panel.lost.layout.display is None and LOST_COMMAND in panel.lost.html
    assert f'data-entry-id="{LOST_SOURCE}"' in panel.lost.html and "command <b>0%</b>" in panel.lost.html

    explorer = SessionExplorer(session)
    leaf = explorer.leaf_id
    panel.on_entry_link(explorer.reveal)
    panel.lost._on_front_end_msg(panel.lost, {"event": "select", "fact": LOST_AT}, [])
    assert explorer.selected_id == LOST_SOURCE and explorer.tree.selected_id == LOST_SOURCE
    assert explorer.tree.selected_row == explorer.tree.row_ids.index(LOST_SOURCE)
    assert explorer.leaf_id == leaf  # revealed, not selected: the leaf stays

    panel.clear_button.click()
    assert panel.last_evaluation is None and panel.lost.layout.display == "none"


# ---------------------------------------------------------------------------------- the stepper
def test_the_stepper_shows_what_was_lost_at_its_last_step(compaction_chain: pikit.Session) -> None:
    stepper = CompactionStepper(compaction_chain, keep_recent_tokens=2000, summarizer=FakeSummarizer(), step=5)
    assert stepper.evaluation is None and stepper.lost.layout.display == "none"
    stepper.step = 7
    assert stepper.evaluation is not None and stepper.lost.evaluation is stepper.evaluation
    assert LOST_COMMAND in stepper.lost.html and stepper.lost.layout.display is None
    stepper.back()
    assert stepper.lost.layout.display == "none"


def test_the_explorers_stepper_reveals_a_lost_facts_entry_in_the_tree(compaction_chain: pikit.Session) -> None:
    explorer = SessionExplorer(compaction_chain, keep_recent_tokens=2000)
    leaf = explorer.leaf_id
    stepper = explorer.open_stepper()
    stepper.set_summarizer(FakeSummarizer())
    stepper.step = 7
    assert stepper.lost.select(LOST_AT) == LOST_SOURCE
    assert explorer.tree.selected_id == LOST_SOURCE and explorer.leaf_id == leaf
    assert stepper.lost.layout.display is None  # the leaf did not move: the list stays


def test_reveal_marks_a_hidden_entry_on_its_nearest_shown_ancestor(compaction_chain: pikit.Session) -> None:
    explorer = SessionExplorer(compaction_chain, mode="user-only")
    tree = explorer.tree
    hidden = next(e.id for e in compaction_chain.entries if e.id not in tree.row_ids and e.type == "message")
    assert explorer.reveal(hidden) == hidden and tree.selected_id == hidden
    assert tree.selected_row >= 0 and tree.row_ids[tree.selected_row] in {e.id for e in compaction_chain.branch(hidden)}
