"""The planted-token matrix: every rule's planted value (and the token in the file's name) in every
output redaction covers; none survives in any form (raw, escaped, base64, percent-encoded).

Each output is first run without redaction, to show it carries the session's text (so the
matrix can fail), then with it. The export of a corpus is in ``test_corpus_export.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pikit
from tests.procs import pikit as run
from tests.redaction import planted
from tests.redaction.test_redact_cli import ENV, FLAGS

#: name → (command line after FILE, files it writes: relative to the run's folder)
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "redact": (["redact", "-o", "{out}/copy.jsonl", "--json"], ["copy.jsonl"]),
    "context": (["context"], []),
    "context --json": (["context", "--json"], []),
    "context other leaf --json": (["context", "--leaf", "a000000e", "--json"], []),
    "tree": (["tree", "--filter", "all"], []),
    "tree --json": (["tree", "--json"], []),
    "info": (["info"], []),
    "info --json": (["info", "--json"], []),
    "show tool call": (["show", "a0000004", "--no-pager"], []),
    "show tool result --json": (["show", "a0000005", "--json"], []),
    "show compaction": (["show", "a0000007", "--no-pager"], []),
    "show context edit --json": (["show", "a000000b", "--json"], []),
    "diff": (["diff", "a000000c", "a000000e", "--no-pager", "--all"], []),
    "diff --json": (["diff", "a000000c", "a000000e", "--json"], []),
    "diff compaction": (["diff", "--compaction", "a0000007", "--no-pager", "--all"], []),
    "simulate": (["simulate", "--context-window", "3000", "--reserve-tokens", "500", "--keep-recent-tokens", "200"],
                 []),
    "simulate --json": (["simulate", "--context-window", "3000", "--reserve-tokens", "500", "--keep-recent-tokens",
                         "200", "--json"], []),
    "evaluate": (["evaluate", "--all"], []),
    "evaluate --json": (["evaluate", "--all", "--json"], []),
    "compact --dry-run": (["compact", "--dry-run", "--keep-recent-tokens", "10"], []),
    "compact --dry-run --json": (["compact", "--dry-run", "--keep-recent-tokens", "10", "--json"], []),
    "branch-summary --dry-run --json": (["branch-summary", "--dry-run", "--pair", "a000000e:a000000c", "--json"],
                                        []),
    "export html": (["export", "-o", "{out}/page.html", "--filter", "all"], ["page.html"]),
    "export markdown": (["export", "--format", "markdown", "-o", "{out}/page.md"], ["page.md"]),
    "export markdown --tree": (["export", "--format", "markdown", "--tree", "-o", "{out}/tree.md"], ["tree.md"]),
    "fork": (["fork", "--leaf", "a000000c", "-o", "{out}/fork.jsonl"], ["fork.jsonl"]),
    "migrate": (["migrate", "-o", "{out}/migrated.jsonl"], ["migrated.jsonl"]),
}


#: The outputs that show figures and ids, or texts cut to a preview, but no whole planted value even unredacted.
TEXTLESS = frozenset({"diff", "diff --json", "diff compaction", "simulate", "simulate --json", "evaluate",
                      "compact --dry-run"})


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return planted.write(tmp_path_factory.mktemp("planted"))


def _output(source: Path, folder: Path, name: str, redact: bool) -> bytes:
    """What the command ``name`` prints and writes, as one text."""
    command, written = COMMANDS[name]
    folder.mkdir()
    args = [a.format(out=folder) for a in command]
    flags = FLAGS if redact or name == "redact" else []
    if redact and name != "redact":
        flags = ["--redact", *flags]
    proc = run(args[0], source, *args[1:], *flags, extra_env={**ENV, "COLUMNS": "100"})  # (not an inherited width)
    assert proc.returncode == 0, (name, proc.stderr[-2000:])
    return proc.stdout + proc.stderr + b"".join((folder / f).read_bytes() for f in written)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_planted_value_in_any_command_output(source: Path, tmp_path: Path, name: str) -> None:
    if name != "redact" and name not in TEXTLESS:  # (redact redacts always)
        assert planted.survivors(_output(source, tmp_path / "plain", name, redact=False)), name
    assert planted.survivors(_output(source, tmp_path / "redacted", name, redact=True)) == [], name


def _library_outputs(copy: pikit.Session) -> dict[str, str]:
    """What the library shows of a redacted session: its repr, its notebook view, the page, the Markdown,
    and every string a SessionExplorer on it sends to the browser."""
    from ipywidgets.widgets.widget import _instances

    from pikit.export import PageSettings, render_markdown, render_page
    from pikit.widgets import SessionExplorer
    from tests.widgets.wire import new_widgets, strings

    before = list(_instances)
    explorer = SessionExplorer(copy, mode="all")
    sent = []
    for leaf in ("a000000c", "a000000e"):  # each branch shown in turn
        explorer.leaf_id = leaf
        for widget in new_widgets(before):
            state = widget.get_state()
            sent += [text for _, text in strings({k: v for k, v in state.items() if isinstance(v, str | list | dict)})]
            sent += [bytes(v).decode("utf-8", "replace") for v in state.values() if isinstance(v, bytes | memoryview)]
    for widget in new_widgets(before):
        widget.close()
    settings = PageSettings("anthropic/claude-sonnet-4-5", 200_000, 16_384, 20_000)
    return {"repr": repr(copy), "html repr": copy._repr_html_(),
            "page": render_page(copy, settings, tree_filter="all"), "page other leaf": render_page(copy, settings,
                                                                                                   "a000000e"),
            "markdown": render_markdown(copy, tree=True), "widgets": "\n".join(sent),
            "title": copy.title}


def test_no_planted_value_in_what_the_library_shows(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    session = pikit.load(source)
    plain = _library_outputs(session)
    assert all(planted.survivors(text) for text in plain.values()), [k for k, v in plain.items()
                                                                     if not planted.survivors(v)]
    copy, _ = pikit.redact(session, patterns=[r"ACME-[0-9]{12}"], emails=True, allow=[planted.ALLOWED])
    left = {name: planted.survivors(text) for name, text in _library_outputs(copy).items()}
    assert left == {name: [] for name in left}
