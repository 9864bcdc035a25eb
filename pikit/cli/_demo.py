"""``pikit demo``: the bundled sample session, then the explorer notebook in JupyterLab."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from argparse import Namespace
from pathlib import Path

from .._context.describe import message_preview
from .._context.projection import Projection
from .._formatting import fmt_int, plural
from .._session import load
from ..errors import PikitError
from ._common import one_line, width
from ._context import model_text, size_text

SAMPLE = "refactor-auth.jsonl"
DEFAULT_PORT = 8888
PORT_TRIES = 50  # JupyterLab's own number of retries past a taken default port
DEMO_ROWS = 6
NOTEBOOKS = ("01-explore-a-session.ipynb", "02-keep-recent-and-reserve.ipynb", "03-compaction-step-by-step.ipynb",
             "04-a-corpus-of-sessions.ipynb", "05-compaction-strategies.ipynb")


def project_root() -> Path:
    """The source checkout pikit runs from (the demo needs its data/ and notebooks/)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "data" / "sample_sessions" / SAMPLE).is_file():
        raise PikitError(f"the sample data is not next to the package ({root}); run the demo from a source "
                         "checkout installed with `pip install -e .`")
    return root


def run(args: Namespace) -> int:
    root = project_root()
    sample = root / "data" / "sample_sessions" / SAMPLE
    port = None if args.headless else lab_port(args.port)
    preview(sample, root)
    if port is None:
        return _run_notebooks(root)
    return _open_lab(root, port)


def preview(sample: Path, root: Path) -> None:
    """A short look at the sample session (about fifteen lines) and where to go next."""
    session = load(sample)
    ctx = session.context()
    relative = sample.relative_to(root)
    print(f"{session.title} — {relative}")
    print(f"{plural(len(session), 'entry')}, {plural(len(session.roots), 'root')}, "
          f"{plural(len(session.labels), 'label')}; at the leaf the model sees:")
    print(f"  {size_text(ctx)}")
    print(f"  {plural(len(ctx.messages), 'message')}, {model_text(ctx.model)}")
    if ctx.compaction is not None:
        print(f"  a compaction ({ctx.compaction.id}) replaces {plural(len(ctx.summarized_ids), 'earlier entry')} "
              "with its summary")
    print()
    print_context_tail(ctx, DEMO_ROWS)
    print()
    print(f"next: pikit tree {relative} --limit 20      (the tree, like Pi's /tree)")
    print(f"      pikit compact {relative} --dry-run --keep-recent-tokens 1000,4000")


def print_context_tail(ctx: Projection, rows: int) -> None:
    """The last ``rows`` messages of a context, one short line each."""
    start = max(0, len(ctx.messages) - rows)
    if start:
        print(f"  … {plural(start, 'earlier message')}, then:")
    cols = width()
    for i in range(start, len(ctx.messages)):
        message = ctx.messages[i]
        head = f"  {i:>3} {message.get('role')!s:<11} {fmt_int(ctx.estimates[i]):>6}  "
        print(head + one_line(message_preview(message), max(20, cols - len(head))))


def _run_notebooks(root: Path) -> int:
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError:
        raise PikitError("nbclient is not installed; install the notebook extras: pip install -e '.[notebook]'") \
            from None
    out_dir = Path(tempfile.mkdtemp(prefix="pikit-demo-"))
    for name in NOTEBOOKS:
        path = root / "notebooks" / name
        nb = nbformat.read(path, as_version=4)
        print(f"running {name} …", end=" ", flush=True)
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        # The kernel's own log (start-up notices) is shown only when the notebook fails.
        with tempfile.TemporaryFile() as kernel_log:
            try:
                client.execute(stderr=kernel_log)
            except Exception:
                kernel_log.seek(0)
                sys.stderr.write(kernel_log.read()[-4000:].decode("utf-8", "replace"))
                raise
        nbformat.write(nb, out_dir / name)
        cells = sum(1 for c in nb.cells if c.cell_type == "code")
        print(f"{plural(cells, 'code cell')} ran without error")
    print(f"executed notebooks (with outputs) saved in {out_dir}")
    return 0


def port_free(port: int) -> bool:
    """Whether JupyterLab can listen on ``port`` of localhost (its default address) now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def lab_port(asked: int | None) -> int:
    """The port JupyterLab will serve on: the one asked for, refused when it is taken, or the first free one
    from 8888 on. JupyterLab is then started with no retries, so the port printed is the port it serves on."""
    if asked is not None:
        if not port_free(asked):
            raise PikitError(f"port {asked} is in use; choose another with --port N (or leave --port out to take "
                             "the first free one)")
        return asked
    for port in range(DEFAULT_PORT, DEFAULT_PORT + PORT_TRIES):
        if port_free(port):
            return port
    raise PikitError(f"ports {DEFAULT_PORT}–{DEFAULT_PORT + PORT_TRIES - 1} are all in use; choose one with --port N")


def _open_lab(root: Path, port: int) -> int:
    jupyter = shutil.which("jupyter")
    if jupyter is None:
        raise PikitError("JupyterLab is not installed; install the notebook extras: pip install -e '.[notebook]' "
                         "(or run `pikit demo --headless`)")
    notebook = f"notebooks/{NOTEBOOKS[0]}"
    print(f"opening {notebook} in JupyterLab on port {port} (Ctrl-C to stop; "
          "no browser here? use `pikit demo --headless`)", flush=True)
    argv = [jupyter, "lab", notebook, f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    sys.stdout.flush()
    os.chdir(root)
    os.execv(jupyter, argv)
    return 0  # not reached: the process is now JupyterLab
