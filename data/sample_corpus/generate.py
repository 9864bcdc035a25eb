#!/usr/bin/env python3
"""Write a sessions directory laid out the way Pi keeps one (deterministic: same bytes every run).

    python data/sample_corpus/generate.py                       # the bundled corpus, next to this script
    python data/sample_corpus/generate.py OUT --sessions 320 --mb 2.5   # a large one (benchmarks)

``OUT/--home-dev-<project>--/<timestamp>_<session id>.jsonl``: several projects, sessions over
several days (some crossing midnight UTC), several providers and models, branches abandoned
with ``/tree`` (some with a branch summary whose summarization call's usage is recorded),
compactions where Pi's threshold check (context > window − 16,384) fires, labels, session
names, forks to another project (every entry copied, ``parentSession`` set) and new sessions
from a branch (the branch path copied), one damaged file (a garbage line, a torn last line)
and one version-1 file (no ids, ``firstKeptEntryIndex``).

Every random choice comes from a seeded :class:`random.Random` and every time from a fixed
start, so the same arguments give the same bytes. ``--mb`` sets the size of each session (tool
outputs grow to reach it); without it, tool outputs are short excerpts and the usage still
counts the full outputs the agent read (the bundled corpus stays small).
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
START = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
PROJECTS = ("shop-api", "ml-pipeline", "docs-site", "cli-tool", "infra")
# provider, model id, context window, $/M input, output, cache read, cache write
MODELS = (
    ("anthropic", "claude-sonnet-4-5", 200_000, 3.0, 15.0, 0.3, 3.75),
    ("anthropic", "claude-haiku-4-5", 200_000, 1.0, 5.0, 0.1, 1.25),
    ("openai", "gpt-5", 400_000, 1.25, 10.0, 0.125, 0.0),
    ("openai", "gpt-4o", 128_000, 2.5, 10.0, 1.25, 0.0),
)
RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000
FILES = ("src/index.ts", "src/config.ts", "src/auth/tokens.ts", "src/db/pool.ts", "README.md", "tests/app.test.ts",
         "scripts/seed.py", "Makefile", "docs/guide.md", "src/cli/main.rs")
WORDS = ("request", "handler", "config", "token", "cache", "schema", "retry", "queue", "parser", "index",
         "migration", "timeout", "refactor", "pipeline", "render", "deploy", "metrics", "batch", "session")
ASKS = ("Why does {f} fail on a cold start?", "Add a {w} option to {f}.", "Refactor the {w} code in {f}.",
        "Write tests for the {w} path in {f}.", "Explain how {f} handles the {w}.", "Speed up the {w} in {f}.")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Writer:
    """One session being written: entries in file order, a leaf pointer, a clock, a context size."""

    rng: random.Random
    now: datetime
    model: tuple[Any, ...]
    body_chars: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    leaf: str | None = None
    context: int = 3_000
    ids: set[str] = field(default_factory=set)

    def new_id(self) -> str:
        while True:
            value = f"{self.rng.getrandbits(32):08x}"
            if value not in self.ids:
                self.ids.add(value)
                return value

    def tick(self, low: float, high: float) -> str:
        self.now += timedelta(milliseconds=int(self.rng.uniform(low, high) * 1000))
        return _iso(self.now)

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry = {"type": kind, "id": self.new_id(), "parentId": self.leaf, "timestamp": self.tick(0.2, 4), **fields}
        self.entries.append(entry)
        self.leaf = entry["id"]
        return entry

    def ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def usage(self, model: tuple[Any, ...], new_tokens: int, output: int) -> dict[str, Any]:
        _, _, _, p_in, p_out, p_read, p_write = model
        fresh = self.rng.randint(3, 40)
        cache_write = new_tokens if p_write else 0
        cache_read = max(self.context - new_tokens - fresh, 0)
        if not p_write:
            fresh += new_tokens
        cost = {"input": fresh * p_in / 1e6, "output": output * p_out / 1e6, "cacheRead": cache_read * p_read / 1e6,
                "cacheWrite": cache_write * p_write / 1e6}
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        return {"input": fresh, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
                "totalTokens": fresh + output + cache_read + cache_write, "cost": cost}

    def assistant(self, content: list[dict[str, Any]], new_tokens: int, stop: str) -> dict[str, Any]:
        provider, model_id = self.model[0], self.model[1]
        output = self.rng.randint(40, 900)
        self.context += new_tokens
        usage = self.usage(self.model, new_tokens, output)
        self.context += output
        api = "anthropic-messages" if provider == "anthropic" else "openai-responses"
        message = {"role": "assistant", "content": content, "api": api, "provider": provider, "model": model_id,
                   "usage": usage, "stopReason": stop, "timestamp": self.ms()}
        return self.add("message", message=message)

    def tool_output(self, path: str) -> tuple[str, int]:
        lines = self.rng.randint(40, 2400)
        full_chars = lines * 38
        size = full_chars if self.body_chars <= 0 else self.rng.randint(self.body_chars // 2, self.body_chars * 3 // 2)
        if self.body_chars <= 0:
            size = min(full_chars, 240)
        words = [self.rng.choice(WORDS) for _ in range(24)]
        line = f"// {path}: " + " ".join(words) + "\n"
        text = (line * (size // len(line) + 1))[:size]
        return text, full_chars // 4

    def turn(self, ask: str) -> None:
        self.add("message", message={"role": "user", "content": [{"type": "text", "text": ask}],
                                     "timestamp": self.ms()})
        self.context += len(ask) // 4 + 1
        for _ in range(self.rng.randint(1, 4)):
            path = self.rng.choice(FILES)
            call_id = f"toolu_{self.rng.getrandbits(64):016x}"
            call = {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": path}}
            self.assistant([{"type": "text", "text": f"Reading `{path}`."}, call], 60, "toolUse")
            text, tokens = self.tool_output(path)
            self.tick(0.1, 2)
            self.add("message", message={"role": "toolResult", "toolCallId": call_id, "toolName": "read",
                                         "content": [{"type": "text", "text": text}], "isError": False,
                                         "timestamp": self.ms()})
            self.context += tokens
            self.maybe_compact()
        words = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(8, 40)))
        self.tick(2, 30)
        self.assistant([{"type": "text", "text": f"Done: the {words}."}], 20, "stop")
        self.maybe_compact()

    def maybe_compact(self) -> None:
        window = self.model[2]
        if self.context <= window - RESERVE_TOKENS:
            return
        first_kept = self._first_kept()
        summary = "## Goal\n" + " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(60, 200)))
        usage = self.usage(self.model, 0, self.rng.randint(800, 2500))
        self.tick(10, 40)
        self.add("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=self.context,
                 details={"readFiles": sorted(set(self.rng.sample(FILES, 4))), "modifiedFiles": []}, usage=usage)
        self.context = KEEP_RECENT_TOKENS + len(summary) // 4

    def _first_kept(self) -> str:
        by_id = {e["id"]: e for e in self.entries}
        node = by_id[self.leaf] if self.leaf else None
        best = node
        steps = 0
        while node is not None and steps < 12:
            if node["type"] == "message" and node["message"]["role"] == "user":
                best = node
            node = by_id.get(node["parentId"])
            steps += 1
        assert best is not None
        return str(best["id"])

    def branch_back(self, with_summary: bool) -> None:
        """Go back with /tree to an earlier user message's parent (the abandoned path stays)."""
        by_id = {e["id"]: e for e in self.entries}
        users = []
        node = by_id.get(self.leaf) if self.leaf else None
        while node is not None and len(users) < 3:
            if node["type"] == "message" and node["message"]["role"] == "user":
                users.append(node)
            node = by_id.get(node["parentId"])
        if len(users) < 2:
            return
        target = users[-1]
        abandoned = self.leaf
        self.leaf = target["parentId"]
        self.context = max(self.context // 2, 3_000)
        if with_summary:
            usage = self.usage(self.model, 0, self.rng.randint(200, 700))
            text = "The abandoned attempt changed " + ", ".join(self.rng.sample(FILES, 2)) + "."
            self.add("branch_summary", fromId=abandoned, summary=text, usage=usage)


def _session_file(root: Path, project: str, started: datetime, session_id: str) -> Path:
    stamp = _iso(started).replace(":", "-").replace(".", "-")
    return root / f"--home-dev-{project}--" / f"{stamp}_{session_id}.jsonl"


def _write(path: Path, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(_dump(header) + "\n")
        for entry in entries:
            out.write(_dump(entry) + "\n")


def _grow(w: Writer, turns: int, target_bytes: int) -> None:
    w.add("model_change", provider=w.model[0], modelId=w.model[1])
    w.add("thinking_level_change", thinkingLevel=w.rng.choice(["off", "low", "medium"]))
    size = 0
    done = 0
    while (done < turns) if target_bytes <= 0 else (size < target_bytes):
        ask = w.rng.choice(ASKS).format(f=w.rng.choice(FILES), w=w.rng.choice(WORDS))
        before = len(w.entries)
        w.turn(ask)
        size += sum(len(_dump(e)) + 1 for e in w.entries[before:])
        done += 1
        if done == 2:
            w.add("session_info", name=f"{ask[:40].rstrip('.')}")
        roll = w.rng.random()
        if roll < 0.12 and done > 2:
            w.branch_back(with_summary=w.rng.random() < 0.6)
        elif roll < 0.18:
            w.add("label", targetId=w.leaf, label=f"checkpoint {done}")
        elif roll < 0.22:
            w.model = w.rng.choice(MODELS)
            w.add("model_change", provider=w.model[0], modelId=w.model[1])
        w.now += timedelta(seconds=w.rng.randint(20, 600))


@dataclass
class Made:
    path: Path
    header: dict[str, Any]
    entries: list[dict[str, Any]]
    leaf: str | None


def _new_session(rng: random.Random, root: Path, project: str, started: datetime, body_chars: int,
                 turns: int, target_bytes: int) -> Made:
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(started),
              "cwd": f"/home/dev/{project}"}
    w = Writer(rng, started, rng.choice(MODELS), body_chars)
    _grow(w, turns, target_bytes)
    path = _session_file(root, project, started, session_id)
    _write(path, header, w.entries)
    return Made(path, header, w.entries, w.leaf)


def _fork(rng: random.Random, root: Path, source: Made, project: str, whole: bool, body_chars: int) -> Made:
    """A fork to another project (every entry copied) or a new session from the current branch."""
    last = max(datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")) for e in source.entries)
    started = last + timedelta(minutes=rng.randint(5, 90))
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(started),
              "cwd": f"/home/dev/{project}",
              # where the source file sits in the user's store (independent of where this corpus is written)
              "parentSession": f"/home/dev/.pi/agent/sessions/{source.path.parent.name}/{source.path.name}"}
    if whole:
        copied = [dict(e) for e in source.entries]
    else:
        by_id = {e["id"]: e for e in source.entries}
        path: list[dict[str, Any]] = []
        node = by_id.get(source.leaf) if source.leaf else None
        while node is not None:
            path.append(node)
            node = by_id.get(node["parentId"])
        copied = []
        previous = None
        for entry in reversed(path):
            if entry["type"] == "label":
                continue
            copied.append({**entry, "parentId": previous})
            previous = entry["id"]
    w = Writer(rng, started, rng.choice(MODELS), body_chars, entries=copied, leaf=copied[-1]["id"] if copied else None,
               ids={e["id"] for e in copied})
    for _ in range(rng.randint(1, 3)):
        w.turn(rng.choice(ASKS).format(f=rng.choice(FILES), w=rng.choice(WORDS)))
    out = _session_file(root, project, started, session_id)
    _write(out, header, w.entries)
    return Made(out, header, w.entries, w.leaf)


def _damage(path: Path) -> None:
    """A garbage line in the middle and a last line torn mid-write."""
    lines = path.read_bytes().split(b"\n")[:-1]
    middle = len(lines) // 2
    lines.insert(middle, b"<<<<<<< HEAD this line is not JSON")
    torn = lines[-1][: len(lines[-1]) // 2]
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + torn)


def _write_v1(rng: random.Random, root: Path) -> None:
    """A version-1 session: no ids or parents, a compaction with firstKeptEntryIndex."""
    started = START - timedelta(days=3, hours=2)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    w = Writer(rng, started, MODELS[0], 0)
    w.turn("List the scripts in the Makefile.")
    w.turn("Which of them deploys?")
    entries = []
    for entry in w.entries:
        plain = {k: v for k, v in entry.items() if k not in ("id", "parentId")}
        entries.append(plain)
    entries.append({"type": "compaction", "timestamp": w.tick(5, 20), "summary": "## Goal\nList the scripts.",
                    "firstKeptEntryIndex": len(entries) - 1, "tokensBefore": w.context})
    header = {"type": "session", "id": session_id, "timestamp": _iso(started), "cwd": "/home/dev/infra"}
    _write(_session_file(root, "infra", started, session_id), header, entries)


def _plan(rng: random.Random, sessions: int) -> Iterator[tuple[str, datetime]]:
    for index in range(sessions):
        day = index * 6 // max(sessions, 1)
        hour = rng.choice((7, 9, 11, 14, 16, 20, 23))
        started = START + timedelta(days=day, hours=hour - 8, minutes=rng.randint(0, 55))
        yield PROJECTS[index % len(PROJECTS)], started


def generate(root: Path, *, sessions: int = 30, mb: float = 0.0, seed: int = 1) -> list[Path]:
    """Write the corpus below ``root``; return the session files written, in order."""
    rng = random.Random(seed)
    body_chars = 0 if mb <= 0 else 4_000
    target = int(mb * 1_000_000)
    made: list[Made] = []
    for project, started in _plan(rng, sessions):
        made.append(_new_session(rng, root, project, started, body_chars, rng.randint(4, 14), target))
    forks = []
    for index, source in enumerate(made[: max(len(made) // 5, 1)]):
        whole = index % 2 == 0
        project = PROJECTS[(PROJECTS.index(source.header["cwd"].rsplit("/", 1)[1]) + (1 if whole else 0))
                           % len(PROJECTS)]
        forks.append(_fork(rng, root, source, project, whole, body_chars))
    if mb <= 0:
        _damage(made[-1].path)
        _write_v1(rng, root)
    return sorted(p for p in root.rglob("*.jsonl"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=str(HERE / "sessions"), help="the sessions directory to write")
    parser.add_argument("--sessions", type=int, default=30, help="sessions before forks (default 30)")
    parser.add_argument("--mb", type=float, default=0.0, help="size of each session in MB (default: small)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = Path(args.out)
    if root.exists() and any(root.rglob("*.jsonl")):
        for old in root.rglob("*.jsonl"):
            old.unlink()
    files = generate(root, sessions=args.sessions, mb=args.mb, seed=args.seed)
    total = sum(f.stat().st_size for f in files)
    print(f"{len(files)} files, {total / 1e6:.1f} MB in {root}")


if __name__ == "__main__":
    main()
