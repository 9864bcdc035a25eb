#!/usr/bin/env python3
"""Widget benchmarks: kernel time of a leaf move, and how fast the explorer renders in a browser.

    python benchmarks/bench_widgets.py                 # kernel-side figures (no browser)
    python benchmarks/bench_widgets.py --browser       # also JupyterLab + Chromium render times
    python benchmarks/bench_widgets.py --entries 20000 --moves 200 --json out.json
    python benchmarks/bench_widgets.py --compare /tmp/pikit-before --rounds 5
                                                       # this checkout against another, alternating

Sessions: a deterministic synthetic one of ``--entries`` entries (branches, labels, compactions;
``tests/widgets/synthetic.py``) and, when present, the bundled samples ``refactor-auth.jsonl``
and ``wide-tree.jsonl`` (11k entries).

Kernel side, per session: building a :class:`~pikit.widgets.SessionExplorer`; a click in the tree
(the handler the browser view calls) to a random row, and setting ``explorer.leaf_id`` from code,
``--moves`` times each (median / p90 / max of the kernel time the move took, and how many of
the moves had a full garbage collection in them); a context diff of two distant leaves; the
compaction panel's preview after a slider move.

Browser side (``--browser``; needs JupyterLab, Playwright and Debian's chromium, see
``tests/browser``): the notebook displays an explorer of the synthetic session; reported are the
view's own render time (view created → first paint), the time from the start of the cell to the
first paint, and the time of re-running that cell measured in the page until the new tree shows.
Targets (spec): a leaf move < 100 ms of kernel time; a 10k-entry tree renders in < 1 s.

``--compare DIR`` runs the kernel-side figures of this checkout and of the checkout in ``DIR``
(its own ``benchmarks/bench_widgets.py``) in turn, ``--rounds`` times each in fresh processes,
and prints the ratio this/other of the medians for every session (below 1: this one is faster).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pikit  # noqa: E402
from pikit._context.diff import diff_contexts  # noqa: E402
from pikit.compaction._settings import Settings  # noqa: E402
from pikit.widgets import CompactionPanel, SessionExplorer  # noqa: E402
from tests.widgets.synthetic import big_session_lines, write_session  # noqa: E402

SAMPLES = ROOT / "data" / "sample_sessions"


class GCWatch:
    """Counts full (generation 2) collections and their time while active."""

    def __init__(self) -> None:
        self.full = 0
        self.full_ms = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.full += 1
            self.full_ms += (time.perf_counter() - self._start) * 1000

    def __enter__(self) -> GCWatch:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p90": p90, "max": ordered[-1]}


def bench_session(name: str, path: Path, moves: int, seed: int) -> dict[str, Any]:
    """Kernel-side figures for one session file."""
    session = pikit.load(path)
    result: dict[str, Any] = {"session": name, "entries": len(session.entries)}
    start = time.perf_counter()
    SessionExplorer(session)  # first build: tokenizer, tree index, previews
    result["build_cold_ms"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    explorer = SessionExplorer(session)
    result["build_warm_ms"] = (time.perf_counter() - start) * 1000
    tree = explorer.tree
    result["rows"] = len(tree.row_ids)
    result["rows_bytes"] = len(tree.rows_data)
    rng = random.Random(seed)
    ids = tree.row_ids

    click_ms: list[float] = []
    with GCWatch() as watch:
        for _ in range(moves):
            target = rng.choice(ids)
            message = {"event": "select", "id": target, "row": ids.index(target)}
            begin = time.perf_counter()
            tree._on_front_end_msg(tree, message, [])  # what a click in the browser calls
            click_ms.append((time.perf_counter() - begin) * 1000)
    result["click"] = stats(click_ms)
    result["click_full_gc"] = watch.full

    set_ms: list[float] = []
    for _ in range(moves):
        target = rng.choice(ids)
        begin = time.perf_counter()
        explorer.leaf_id = target
        set_ms.append((time.perf_counter() - begin) * 1000)
    result["set_leaf"] = stats(set_ms)

    tips = [i for i in ids if not session.children(i)]
    a, b = session.context(tips[0]), session.context(tips[-1])
    begin = time.perf_counter()
    diff_contexts(a, b)
    result["diff_ms"] = (time.perf_counter() - begin) * 1000

    panel = CompactionPanel(session, session.entries[-1].id, settings=Settings({}),
                            output_dir=tempfile.gettempdir())
    preview_ms = []
    size = max(1, session.context(session.entries[-1].id).size.tokens)
    for share in (0.05, 0.15, 0.3, 0.5, 0.8):  # keepRecentTokens as a share of the context, as a slider drag
        panel.keep_slider.value = max(1, int(size * share))
        preview_ms.append(panel.preview_ms)
    result["preview"] = stats(preview_ms)
    return result


def bench_browser(path: Path) -> dict[str, Any]:
    """Render times of the explorer of ``path`` in JupyterLab + Chromium."""
    from playwright.sync_api import sync_playwright

    from tests.browser.jupyter import (
        CHROMIUM_ARGS,
        CHROMIUM_PATH,
        kernel_exec,
        open_notebook,
        run_all,
        start_jupyter_server,
        wait_for_kernel_output,
        write_notebook,
    )

    with tempfile.TemporaryDirectory(prefix="pikit-bench-") as tmp:
        server = start_jupyter_server(Path(tmp))
        try:
            (server.root_dir / "big.jsonl").write_bytes(path.read_bytes())
            write_notebook(server, "bench.ipynb", [
                "import time, json, pikit\nfrom pikit.widgets import SessionExplorer\n"
                "big = pikit.load('big.jsonl')\nwarm = SessionExplorer(big)",
                "cell_start_ms = time.time() * 1000\nexplorer = SessionExplorer(big)\nexplorer",
            ])
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                open_notebook(page, server, "bench.ipynb")
                run_all(page, timeout=300)
                page.locator(".pikit-tree-row").first.wait_for(state="visible")
                wait_for_kernel_output(server, "bench.ipynb", "print(explorer.tree.render_ms > 0)", "True", 30)
                first = json.loads(kernel_exec(server, "bench.ipynb", textwrap.dedent("""\
                    s = explorer.tree.render_stats
                    print(json.dumps({"build_ms": explorer.build_ms, "render_ms": s["render_ms"],
                                      "cell_to_paint_ms": explorer.tree.paint_epoch_ms - cell_start_ms}))""")))
                reruns = []
                for _ in range(3):
                    reruns.append(page.evaluate(textwrap.dedent("""\
                        async () => {
                          const panel = window.jupyterapp.shell.currentWidget;
                          panel.content.activeCellIndex = 1;
                          const start = performance.now();
                          const run = window.jupyterapp.commands.execute('notebook:run-cell');
                          await new Promise((resolve) => {
                            const check = () => {
                              const cell = panel.content.widgets[1].node;
                              if (cell.querySelector('.pikit-tree-row')) resolve(); else requestAnimationFrame(check);
                            };
                            requestAnimationFrame(check);
                          });
                          const painted = performance.now() - start;
                          await run;
                          return painted;
                        }""")))
                    wait_for_kernel_output(server, "bench.ipynb", "print(explorer.tree.render_ms > 0)", "True", 30)
                browser.close()
            return {**first, "rerun_cell_to_paint_ms": stats(reruns)}
        finally:
            server.stop()


def fmt(value: Any) -> str:
    if isinstance(value, dict):
        return " / ".join(f"{v:.1f}" for v in value.values())
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def compare(other: Path, rounds: int, entries: int, moves: int, seed: int) -> int:
    """Alternate this checkout and ``other`` in fresh processes; print the ratios of the medians."""
    import subprocess

    keys = ("click", "set_leaf", "preview")
    runs: dict[str, list[list[dict[str, Any]]]] = {"this": [], "other": []}
    with tempfile.TemporaryDirectory(prefix="pikit-bench-") as tmp:
        for round_ in range(rounds):
            for name, root in (("other", other), ("this", ROOT)) if round_ % 2 else (("this", ROOT), ("other", other)):
                out = Path(tmp) / f"{name}-{round_}.json"
                subprocess.run([sys.executable, str(root / "benchmarks" / "bench_widgets.py"), "--entries",
                                str(entries), "--moves", str(moves), "--seed", str(seed), "--json", str(out)],
                               check=True, capture_output=True, cwd=root)
                runs[name].append(json.loads(out.read_text())["kernel"])
    print(f"\nthis/other, median of {rounds} alternating runs ({moves} moves each; below 1: this checkout is "
          f"faster). Other: {other}\n")
    print("session".ljust(24) + "".join(f"{k + ' ms (this / other)':>32}{'ratio':>8}" for k in keys))
    for index, result in enumerate(runs["this"][0]):
        line = result["session"].ljust(24)
        for key in keys:
            mine = statistics.median(r[index][key]["median"] for r in runs["this"])
            theirs = statistics.median(r[index][key]["median"] for r in runs["other"])
            line += f"{mine:>15.2f} / {theirs:<14.2f}{mine / theirs if theirs else float('nan'):>8.2f}"
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="size of the synthetic session")
    parser.add_argument("--moves", type=int, default=100, help="leaf moves per kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--browser", action="store_true", help="also measure rendering in JupyterLab + Chromium")
    parser.add_argument("--json", type=Path, help="write the results here as JSON")
    parser.add_argument("--compare", type=Path, metavar="DIR", help="alternate with the checkout in DIR")
    parser.add_argument("--rounds", type=int, default=5, help="alternating runs of each side with --compare")
    args = parser.parse_args(argv)
    if args.compare is not None:
        return compare(args.compare.resolve(), args.rounds, args.entries, args.moves, args.seed)

    with tempfile.TemporaryDirectory(prefix="pikit-bench-") as tmp:
        synthetic = write_session(Path(tmp) / f"synthetic-{args.entries}.jsonl", big_session_lines(args.entries))
        sessions = [(f"synthetic {args.entries}", synthetic)]
        for sample in ("refactor-auth.jsonl", "wide-tree.jsonl"):
            if (SAMPLES / sample).is_file():
                sessions.append((sample, SAMPLES / sample))
        results = [bench_session(name, path, args.moves, args.seed) for name, path in sessions]
        browser = bench_browser(synthetic) if args.browser else None

    print(f"\nKernel time (ms) — {args.moves} moves each; median / p90 / max. Target: leaf move < 100 ms.\n")
    columns = [("entries", "entries"), ("rows", "tree rows"), ("build_cold_ms", "build (cold)"),
               ("build_warm_ms", "build (warm)"), ("click", "click → leaf moved"),
               ("click_full_gc", "full GCs"), ("set_leaf", "leaf_id = …"), ("diff_ms", "diff 2 tips"),
               ("preview", "compaction preview")]
    width = max(len(r["session"]) for r in results) + 2
    header = "session".ljust(width) + " | ".join(label for _, label in columns)
    print(header)
    print("-" * len(header))
    for r in results:
        print(r["session"].ljust(width) + " | ".join(fmt(r[key]).rjust(len(label)) for key, label in columns))
    if browser is not None:
        print(f"\nBrowser (JupyterLab + Chromium), synthetic {args.entries}-entry tree. Target: renders < 1000 ms.\n")
        rows = [("kernel build of the explorer", browser["build_ms"]),
                ("view created → first paint (browser render)", browser["render_ms"]),
                ("cell start → first paint", browser["cell_to_paint_ms"]),
                ("re-run cell → tree shown, measured in the page (median/p90/max)",
                 browser["rerun_cell_to_paint_ms"])]
        for label, value in rows:
            print(f"  {label:<66} {fmt(value):>22}")
    if args.json:
        args.json.write_text(json.dumps({"kernel": results, "browser": browser}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
