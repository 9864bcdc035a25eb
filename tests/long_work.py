"""Work long enough to be shown as progress (:data:`pikit._progress.WORTH_SHOWING`), built from the bundled data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pikit._progress import BYTES, ENTRIES, WORTH_SHOWING

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO / "data" / "sample_corpus" / "sessions"
REFACTOR = REPO / "data" / "sample_sessions" / "refactor-auth.jsonl"
#: Its current branch holds 1,878 entries: replayed under three settings, 5,634.
WIDE_TREE = REPO / "data" / "sample_sessions" / "wide-tree.jsonl"
WIDE_TREE_BRANCH = 1_878
assert 3 * WIDE_TREE_BRANCH >= WORTH_SHOWING[ENTRIES] > WIDE_TREE_BRANCH


def padded_session(source: Path, out: Path, session_id: str, megabytes: int) -> Path:
    """``source`` under another session id, continued by user messages of about 1 MB each (``megabytes`` of them)."""
    lines = source.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["id"] = session_id
    last = json.loads(lines[-1])
    parent, padding = last["id"], []
    for i in range(megabytes):
        text = f"part {i}: " + "lorem ipsum " * 83_000
        entry = {"type": "message", "id": f"{session_id}-{i:04d}", "parentId": parent, "timestamp": last["timestamp"],
                 "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
        padding.append(json.dumps(entry).encode())
        parent = entry["id"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:], *padding]) + b"\n")
    return out


def big_session(folder: Path) -> Path:
    """A session file of about 36 MB."""
    path = padded_session(REFACTOR, folder / "big.jsonl", "big", 36)
    assert path.stat().st_size >= WORTH_SHOWING[BYTES]
    return path


def big_corpus(root: Path) -> Path:
    """The bundled corpus and four sessions of about 9 MB (copies of one of its sessions, padded): 60 MB or so."""
    shutil.copytree(SAMPLE_CORPUS, root)
    source = sorted(root.glob("--home-dev-shop-api--/*.jsonl"))[0]
    for k in range(4):
        padded_session(source, root / "--home-dev-big--" / f"2026-11-0{k + 1}T00-00-00-000Z_big-{k}.jsonl",
                       f"big-{k}", 9)
    assert sum(p.stat().st_size for p in root.rglob("*.jsonl")) >= WORTH_SHOWING[BYTES]
    return root
