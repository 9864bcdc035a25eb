"""``pikit demo``: the bundled sample session, then the explorer notebook in JupyterLab."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from argparse import Namespace
from pathlib import Path

from ..errors import PikitError
from ..loading import load
from .context import print_context
from .tree import print_tree

SAMPLE = "refactor-auth.jsonl"
NOTEBOOKS = ("01-explore-a-session.ipynb", "02-keep-recent-and-reserve.ipynb", "03-compaction-step-by-step.ipynb")


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
    session = load(sample)
    print(f"== the tree of {sample.relative_to(root)} (▶ leaf, • active branch, ⑂ fork) ==")
    print_tree(session, session.leaf_id, "default", "")
    print()
    print("== what the model sees at the leaf ==")
    from ..counting import get_counter

    counter = get_counter()
    if counter.notice:
        print(f"(note: {counter.notice})")
    print_context(session.context(), counter)
    print()
    if args.headless:
        return _run_notebooks(root)
    return _open_lab(root, args.port)


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
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, out_dir / name)
        cells = sum(1 for c in nb.cells if c.cell_type == "code")
        print(f"{cells} code cells ran without error")
    print(f"executed notebooks (with outputs) saved in {out_dir}")
    return 0


def _open_lab(root: Path, port: int) -> int:
    jupyter = shutil.which("jupyter")
    if jupyter is None:
        raise PikitError("JupyterLab is not installed; install the notebook extras: pip install -e '.[notebook]' "
                         "(or run `pikit demo --headless`)")
    notebook = f"notebooks/{NOTEBOOKS[0]}"
    print(f"opening {notebook} in JupyterLab on port {port} (Ctrl-C to stop; "
          "no browser here? use `pikit demo --headless`)", flush=True)
    argv = [jupyter, "lab", notebook, f"--port={port}", f"--ServerApp.root_dir={root}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    sys.stdout.flush()
    os.chdir(root)
    os.execv(jupyter, argv)
    return 0  # not reached: the process is now JupyterLab
