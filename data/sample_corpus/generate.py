#!/usr/bin/env python3
"""Write a sessions directory laid out the way Pi keeps one (deterministic: same bytes every run).

    python data/sample_corpus/generate.py                       # the bundled corpus, next to this script
    python data/sample_corpus/generate.py OUT --sessions 320 --mb 2.5   # a large one (benchmarks)

``OUT/--home-dev-<project>--/<timestamp>_<session id>.jsonl``: several projects, sessions over
several days (some crossing midnight UTC), several providers and models, branches abandoned
with ``/tree`` (some with a branch summary whose summarization call's usage is recorded),
compactions where Pi's threshold check (context > window − 16,384) fires, labels, session
names, forks to another project (every entry copied, ``parentSession`` set; only of sessions
that are one branch) and new sessions from a branch (the branch path
copied), one damaged file (a garbage line, a torn last line) and one version-1 file (no ids,
``firstKeptEntryIndex``).

The numbers are those a real Pi would record. The models are Pi 1.6 catalog entries with their
windows and prices; each call's usage is what it sends (the messages since the latest
compaction, plus a system prompt and tool definitions the file does not record, counted a few
percent denser than Pi's chars / 4 estimate), split into cache reads and writes as Anthropic
and OpenAI count them (a cache lasts 5 minutes), and its cost is the price per million tokens
times the tokens, as Pi computes it. Tool results hold the text the usage counts (Pi's read
limits: 2,000 lines, 50 KB). Pi's threshold check runs before each model call and after each
turn; a compaction keeps the recent 20,000 tokens by Pi's cut-point rule and records the
summarization call's usage. Session names are short names the user gives with /name.

Every random choice comes from a seeded :class:`random.Random` and every time from a fixed
start, so the same arguments give the same bytes. ``--mb`` sets the size of each session (tool
outputs of about 4,000 characters; sessions grow to reach it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
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
# Pi 1.6's model catalog (pi-ai providers/data/anthropic.json, openai.json): provider, model id, context
# window, $ per million input, output, cache read, cache write tokens (none of these has price tiers)
MODELS = (
    ("anthropic", "claude-sonnet-4-5", 200_000, 3.0, 15.0, 0.3, 3.75),
    ("anthropic", "claude-haiku-4-5", 200_000, 1.0, 5.0, 0.1, 1.25),
    ("openai", "gpt-5", 400_000, 1.25, 10.0, 0.125, 0.0),
    ("openai", "gpt-4o", 128_000, 2.5, 10.0, 1.25, 0.0),
)
MODEL_WEIGHTS = (3, 2, 2, 3)
LONG_WEIGHTS = (1, 1, 0, 3)
RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000
CACHE_TTL = timedelta(minutes=5)
READ_MAX_LINES, READ_MAX_BYTES = 2_000, 50 * 1024  # what Pi's read tool returns at most
FILES = ("src/index.ts", "src/config.ts", "src/auth/tokens.ts", "src/db/pool.ts", "README.md", "tests/app.test.ts",
         "scripts/seed.py", "Makefile", "docs/guide.md", "src/cli/main.rs")
WORDS = ("request", "handler", "config", "token", "cache", "schema", "retry", "queue", "parser", "index",
         "migration", "timeout", "refactor", "pipeline", "render", "deploy", "metrics", "batch", "session")
# what the user asks, and the short name they give the session with /name
ASKS = (("Why does {f} fail on a cold start?", "Cold start failure in {b}"),
        ("Add a {w} option to {f}.", "A {w} option for {b}"),
        ("Refactor the {w} code in {f}.", "Refactor the {w} code"),
        ("Write tests for the {w} path in {f}.", "Tests for the {w} path"),
        ("Explain how {f} handles the {w}.", "How {b} handles the {w}"),
        ("Speed up the {w} in {f}.", "A faster {w} in {b}"))
CODE = ("const {w} = await load{W}(options);", "if (!{w}) throw new Error(\"missing {w}\");",
        "export function {w}{W}(input: {W}Input): {W} {{", "  return {{ ...{w}, updatedAt: Date.now() }};",
        "}}", "", "import {{ {w} }} from \"./{w}\";", "// {w}: keep the {w2} in step with the {w}",
        "for (const item of {w}s) {{", "  {w2}.push(item.{w});", "def {w}_{w2}(self, {w}):",
        "    return self._{w}.get({w}, None)", "  await {w2}.flush();", "type {W} = {{ id: string; {w2}: number }};")
SAYS = ("The {w} in `{f}` is read once at start-up; the {w2} comes later.",
        "I changed the {w} handling so the {w2} no longer waits on it.",
        "The tests cover the {w} path now, including an empty {w2}.",
        "`{f}` keeps the {w} in a module-level {w2}; that is why a cold start sees a stale value.",
        "Nothing else uses the {w2}, so the change stays local to `{f}`.",
        "I left the {w} API as it was and moved the {w2} behind it.",
        "Run the tests again after the {w2} migration: two of them depend on its order.")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _estimate(message: dict[str, Any]) -> int:
    """Pi's estimate of a message's tokens: ceil(chars / 4)."""
    role = message["role"]
    if role in ("compactionSummary", "branchSummary"):
        return math.ceil(_utf16(message["summary"]) / 4)
    chars = 0
    for block in message["content"]:
        if block["type"] == "text":
            chars += _utf16(block["text"])
        elif block["type"] == "toolCall":
            chars += _utf16(block["name"]) + _utf16(json.dumps(block["arguments"], separators=(",", ":"),
                                                                 ensure_ascii=False))
    return math.ceil(chars / 4)


def _cost(model: tuple[Any, ...], fresh: int, output: int, cache_read: int, cache_write: int) -> dict[str, Any]:
    """A usage with its cost as Pi computes it (the model's price per million tokens × tokens)."""
    _, _, _, p_in, p_out, p_read, p_write = model
    cost = {"input": p_in / 1e6 * fresh, "output": p_out / 1e6 * output, "cacheRead": p_read / 1e6 * cache_read,
            "cacheWrite": p_write * cache_write / 1e6}
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return {"input": fresh, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": fresh + output + cache_read + cache_write, "cost": cost}


@dataclass
class Sent:
    """A message the next model call sends: its entry, role, Pi's estimate, the provider's count of it,
    and (assistant messages since the latest compaction) the context size its usage reports."""

    entry_id: str
    role: str
    estimate: int
    tokens: int
    usage_total: int | None = None


@dataclass
class Writer:
    """One session being written: entries in file order, a leaf pointer, a clock, and what the next model
    call sends (``sent``; the system prompt and tool definitions, which the file does not record, are
    ``base`` tokens more). The provider counts ``density`` tokens per token Pi estimates (code
    tokenizes denser than chars / 4)."""

    rng: random.Random
    now: datetime
    model: tuple[Any, ...]
    body_chars: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    leaf: str | None = None
    ids: set[str] = field(default_factory=set)
    sent: list[Sent] = field(default_factory=list)
    base: int = 2_800
    density: float = 1.08
    cached: int = 0
    last_call: datetime | None = None
    since_compaction: int = 0
    thinking: str = "off"
    long: bool = False

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

    def send(self, entry: dict[str, Any], message: dict[str, Any]) -> Sent:
        estimate = _estimate(message)
        sent = Sent(entry["id"], message["role"], estimate, math.ceil(estimate * self.density))
        self.sent.append(sent)
        return sent

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        entry = self.add("message", message=message)
        self.send(entry, message)
        return entry

    def prompt(self) -> int:
        """The provider's count of what the next call sends."""
        return self.base + sum(s.tokens for s in self.sent)

    def pi_tokens(self) -> int:
        """The context size by Pi's rule: the latest usage (since the latest compaction) plus the
        estimates of the messages after it; only estimates when there is no such usage."""
        for index in range(len(self.sent) - 1, -1, -1):
            total = self.sent[index].usage_total
            if total is not None:
                return total + sum(s.estimate for s in self.sent[index + 1:])
        return sum(s.estimate for s in self.sent)

    def usage(self, model: tuple[Any, ...], prompt: int, output: int) -> dict[str, Any]:
        """A call's usage: the cached prefix is read from the cache, the rest written to it (Anthropic)
        or sent as input (OpenAI caches prefixes in steps of 128 tokens and has no write price)."""
        if self.last_call is not None and self.now - self.last_call > CACHE_TTL:
            self.cached = 0
        self.last_call = self.now
        if model[0] == "anthropic":
            cache_read = min(self.cached, prompt)
            fresh = min(prompt - cache_read, self.rng.randint(1, 12))
            cache_write = prompt - cache_read - fresh
        else:
            cache_read = min(self.cached, prompt) // 128 * 128 if prompt >= 1024 else 0
            fresh, cache_write = prompt - cache_read, 0
        self.cached = prompt
        return _cost(model, fresh, output, cache_read, cache_write)

    def assistant(self, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        provider, model_id = self.model[0], self.model[1]
        api = "anthropic-messages" if provider == "anthropic" else "openai-responses"
        message: dict[str, Any] = {"role": "assistant", "content": content, "api": api, "provider": provider,
                                   "model": model_id}
        visible = math.ceil(_estimate(message) * self.density)  # what the next call sends back
        reasoning = {"off": 0, "low": self.rng.randint(20, 300), "medium": self.rng.randint(80, 1_200)}[self.thinking]
        usage = self.usage(self.model, self.prompt(), visible + reasoning)
        message.update(usage=usage, stopReason=stop, timestamp=self.ms())
        entry = self.message(message)
        self.sent[-1].usage_total = usage["totalTokens"]
        return entry

    def tool(self, path: str) -> tuple[dict[str, Any], str]:
        """One tool call (read, bash or edit) and the text it returns."""
        roll = self.rng.random()
        if roll < 0.65:
            return {"name": "read", "arguments": {"path": path}}, self.file_text()
        if roll < 0.85:
            return {"name": "bash", "arguments": {"command": "npm test 2>&1 | tail -n 200"}}, self.test_log()
        old = self.code_line()
        edit = {"name": "edit", "arguments": {"path": path, "oldText": old, "newText": old + " // " +
                                              self.rng.choice(WORDS)}}
        return edit, f"Successfully replaced text in {path}."

    def code_line(self) -> str:
        w, w2 = self.rng.choice(WORDS), self.rng.choice(WORDS)
        return self.rng.choice(CODE).format(w=w, W=w.capitalize(), w2=w2)

    def file_text(self) -> str:
        if self.body_chars > 0:
            target = self.rng.randint(self.body_chars // 2, self.body_chars * 3 // 2)
            lines = []
            size = 0
            while size < target:
                lines.append(self.code_line())
                size += len(lines[-1]) + 1
            return "\n".join(lines)[:target]
        total = max(12, min(int(self.rng.lognormvariate(5.6, 0.9)), 6_000))
        lines = []
        size = 0
        for _ in range(min(total, READ_MAX_LINES)):
            line = self.code_line()
            if size + len(line) + 1 > READ_MAX_BYTES:
                break
            lines.append(line)
            size += len(line) + 1
        text = "\n".join(lines)
        if len(lines) < total:
            text += (f"\n\n[Showing lines 1-{len(lines)} of {total}. Use offset={len(lines) + 1} to continue.]")
        return text

    def test_log(self) -> str:
        count = self.rng.randint(8, 90)
        lines = [f"> {PROJECTS[0]}@1.4.2 test", "> vitest run", ""]
        for _ in range(count):
            w, w2 = self.rng.choice(WORDS), self.rng.choice(WORDS)
            mark = "✓" if self.rng.random() < 0.9 else "×"
            lines.append(f" {mark} tests/{w}.test.ts > {w} > keeps the {w2} ({self.rng.randint(1, 900)}ms)")
        failed = sum(1 for line in lines if line.startswith(" ×"))
        lines += ["", f" Tests  {failed} failed | {count - failed} passed ({count})"]
        return "\n".join(lines)

    def reply(self, path: str) -> str:
        sentences = []
        for _ in range(self.rng.randint(2, 7)):
            sentences.append(self.rng.choice(SAYS).format(w=self.rng.choice(WORDS), w2=self.rng.choice(WORDS),
                                                          f=path))
        return " ".join(sentences)

    def turn(self, ask: str, path: str) -> None:
        self.message({"role": "user", "content": [{"type": "text", "text": ask}], "timestamp": self.ms()})
        for _ in range(self.rng.randint(1, 5)):
            target = path if self.rng.random() < 0.5 else self.rng.choice(FILES)
            call, text = self.tool(target)
            prefix = "toolu_" if self.model[0] == "anthropic" else "call_"
            call_id = f"{prefix}{self.rng.getrandbits(64):016x}"
            said = {"read": f"Reading `{target}`.", "bash": "Running the tests.", "edit": f"Editing `{target}`."}
            self.assistant([{"type": "text", "text": said[call["name"]]},
                            {"type": "toolCall", "id": call_id, **call}], "toolUse")
            self.tick(0.1, 2)
            self.message({"role": "toolResult", "toolCallId": call_id, "toolName": call["name"],
                          "content": [{"type": "text", "text": text}], "isError": False, "timestamp": self.ms()})
            self.maybe_compact()  # Pi checks before the next model call
        self.tick(2, 30)
        self.assistant([{"type": "text", "text": self.reply(path)}], "stop")
        self.maybe_compact()

    def maybe_compact(self) -> None:
        """Pi's threshold check (context > window − reserveTokens) and, when it fires, the compaction."""
        tokens = self.pi_tokens()
        if tokens <= self.model[2] - RESERVE_TOKENS:
            return
        cut = self._cut_point()
        summarized, kept = self.sent[:cut], self.sent[cut:]
        files = sorted(set(self.rng.sample(FILES, 4)))
        sections = ["## Goal\n" + self.reply(files[0]), "## Progress\n" + self.reply(files[1]),
                    "## Key Decisions\n" + self.reply(files[2]), "## Next Steps\n" + self.reply(files[3])]
        summary = "\n\n".join(sections) + "\n\n<read-files>\n" + "\n".join(files) + "\n</read-files>"
        summary_tokens = math.ceil(_utf16(summary) / 4 * self.density)
        usage = _cost(self.model, sum(s.tokens for s in summarized) + 600, summary_tokens, 0, 0)
        self.tick(10, 40)
        entry = self.add("compaction", summary=summary, firstKeptEntryId=kept[0].entry_id, tokensBefore=tokens,
                         details={"readFiles": files, "modifiedFiles": []}, usage=usage)
        for sent in kept:
            sent.usage_total = None  # usages from before the compaction no longer count
        self.sent = [Sent(entry["id"], "compactionSummary", 0, 0)]
        estimate = math.ceil(_utf16(summary) / 4)
        self.sent[0].estimate, self.sent[0].tokens = estimate, math.ceil(estimate * self.density)
        self.sent += kept
        self.since_compaction = len(self.sent)
        self.cached = min(self.cached, self.base)  # the prompt changed after the system prompt

    def _cut_point(self) -> int:
        """Where the kept messages start: Pi's findCutPoint (keepRecentTokens of estimates, at a message a
        turn can start from or an assistant message, never at a tool result)."""
        cuts = [i for i, s in enumerate(self.sent) if s.role in ("user", "assistant", "branchSummary")]
        total = 0
        for index in range(len(self.sent) - 1, -1, -1):
            total += self.sent[index].estimate
            if total >= KEEP_RECENT_TOKENS:
                return next((c for c in cuts if c >= index), cuts[-1])
        return cuts[0]

    def branch_back(self, with_summary: bool) -> None:
        """Go back with /tree to an earlier user message's parent (the abandoned path stays)."""
        users = [i for i in range(self.since_compaction, len(self.sent)) if self.sent[i].role == "user"]
        if len(users) < 2:
            return
        target = users[-1]  # the latest turn is done again
        if target == 0:
            return
        abandoned, dropped = self.leaf, self.sent[target:]
        user_id = self.sent[target].entry_id
        self.leaf = next(e for e in reversed(self.entries) if e["id"] == user_id)["parentId"]
        self.sent = self.sent[:target]
        self.cached = min(self.cached, self.prompt())
        if with_summary:
            text = ("The abandoned attempt changed " + ", ".join(self.rng.sample(FILES, 2)) + ". "
                    + self.reply(self.rng.choice(FILES)))
            tokens = math.ceil(_utf16(text) / 4 * self.density)
            usage = _cost(self.model, sum(s.tokens for s in dropped) + 500, tokens, 0, 0)
            entry = self.add("branch_summary", fromId=abandoned, summary=text, usage=usage)
            self.send(entry, {"role": "branchSummary", "summary": text})


def _session_file(root: Path, project: str, started: datetime, session_id: str) -> Path:
    stamp = _iso(started).replace(":", "-").replace(".", "-")
    return root / f"--home-dev-{project}--" / f"{stamp}_{session_id}.jsonl"


def _write(path: Path, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(_dump(header) + "\n")
        for entry in entries:
            out.write(_dump(entry) + "\n")


def _ask(rng: random.Random) -> tuple[str, str, str]:
    """A user request, the file it is about, and the name the user would give a session about it."""
    ask, name = rng.choice(ASKS)
    path, word = rng.choice(FILES), rng.choice(WORDS)
    return ask.format(f=path, w=word), path, name.format(b=path.rsplit("/", 1)[-1], w=word)


def _switch_model(w: Writer) -> None:
    """/model: another model whose threshold the context is below (a smaller window would overflow)."""
    fits = [m for m in MODELS if m != w.model and w.pi_tokens() < m[2] - RESERVE_TOKENS - 20_000
            and not (w.long and m[2] > 200_000)]
    if fits:
        w.model = w.rng.choice(fits)
        w.cached = 0
        w.add("model_change", provider=w.model[0], modelId=w.model[1])


def _grow(w: Writer, turns: int, target_bytes: int) -> None:
    w.add("model_change", provider=w.model[0], modelId=w.model[1])
    w.thinking = w.rng.choice(["off", "low", "medium"])
    w.add("thinking_level_change", thinkingLevel=w.thinking)
    size = 0
    done = 0
    name = ""
    while (done < turns) if target_bytes <= 0 else (size < target_bytes):
        ask, path, topic = _ask(w.rng)
        name = name or topic
        before = len(w.entries)
        w.turn(ask, path)
        size += sum(len(_dump(e)) + 1 for e in w.entries[before:])
        done += 1
        if done == 2:
            w.add("session_info", name=name)
        roll = w.rng.random()
        if roll < 0.12 and done > 2:
            w.branch_back(with_summary=w.rng.random() < 0.6)
        elif roll < 0.18:
            w.add("label", targetId=w.leaf, label=f"checkpoint {done}")
        elif roll < 0.22:
            _switch_model(w)
        w.now += timedelta(seconds=w.rng.randint(20, 600))


@dataclass
class Made:
    path: Path
    header: dict[str, Any]
    writer: Writer

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.writer.entries


def _pick_model(rng: random.Random, fits: int = 0, long: bool = False) -> tuple[Any, ...]:
    """A model whose threshold is above ``fits`` (a long session stays with a model that compacts)."""
    models = [m for m in MODELS if fits < m[2] - RESERVE_TOKENS - 20_000 and not (long and m[2] > 200_000)]
    weights = [(LONG_WEIGHTS if long else MODEL_WEIGHTS)[MODELS.index(m)] for m in models]
    return rng.choices(models, weights)[0]


def _new_session(rng: random.Random, root: Path, project: str, started: datetime, body_chars: int,
                 turns: int, target_bytes: int) -> Made:
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(started),
              "cwd": f"/home/dev/{project}"}
    long = turns > 15
    w = Writer(rng, started, _pick_model(rng, long=long), body_chars, base=rng.randint(2_400, 3_400),
               density=rng.uniform(1.03, 1.12), long=long)
    _grow(w, turns, target_bytes)
    path = _session_file(root, project, started, session_id)
    _write(path, header, w.entries)
    return Made(path, header, w)


def _one_branch(made: Made) -> bool:
    """Whether every entry of the file is on its current branch (no path was abandoned with /tree)."""
    by_id = {e["id"]: e for e in made.entries}
    on_branch = set()
    node = by_id.get(made.writer.leaf) if made.writer.leaf else None
    while node is not None:
        on_branch.add(node["id"])
        node = by_id.get(node["parentId"])
    return all(e["id"] in on_branch for e in made.entries)


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
        node = by_id.get(source.writer.leaf) if source.writer.leaf else None
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
    old = source.writer
    fits = old.pi_tokens() < max(m[2] for m in MODELS) - RESERVE_TOKENS - 20_000
    model = _pick_model(rng, old.pi_tokens()) if fits else old.model  # else only the same model goes on
    w = Writer(rng, started, model, body_chars, entries=copied,
               leaf=copied[-1]["id"] if copied else None, ids={e["id"] for e in copied},
               sent=[dataclasses.replace(s) for s in old.sent], base=old.base, density=old.density,
               since_compaction=old.since_compaction, thinking=old.thinking)
    if w.model != old.model:
        w.add("model_change", provider=w.model[0], modelId=w.model[1])
    for _ in range(rng.randint(1, 3)):
        ask, path_, _ = _ask(rng)
        w.turn(ask, path_)
    out = _session_file(root, project, started, session_id)
    _write(out, header, w.entries)
    return Made(out, header, w)


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
    w.turn("List the scripts in the Makefile.", "Makefile")
    w.turn("Which of them deploys?", "Makefile")
    entries = []
    for entry in w.entries:
        plain = {k: v for k, v in entry.items() if k not in ("id", "parentId")}
        entries.append(plain)
    entries.append({"type": "compaction", "timestamp": w.tick(5, 20), "summary": "## Goal\nList the scripts.",
                    "firstKeptEntryIndex": len(entries) - 1, "tokensBefore": w.pi_tokens()})
    header = {"type": "session", "id": session_id, "timestamp": _iso(started), "cwd": "/home/dev/infra"}
    _write(_session_file(root, "infra", started, session_id), header, entries)


def _plan(rng: random.Random, sessions: int) -> Iterator[tuple[str, datetime]]:
    for index in range(sessions):
        day = index * 6 // max(sessions, 1)
        hour = rng.choice((7, 9, 11, 14, 16, 20, 23))
        started = START + timedelta(days=day, hours=hour - 8, minutes=rng.randint(0, 55))
        yield PROJECTS[index % len(PROJECTS)], started


def generate(root: Path, *, sessions: int = 30, mb: float = 0.0, seed: int = 3) -> list[Path]:
    """Write the corpus below ``root``; return the session files written, in order."""
    rng = random.Random(seed)
    body_chars = 0 if mb <= 0 else 4_000
    target = int(mb * 1_000_000)
    made: list[Made] = []
    for project, started in _plan(rng, sessions):
        turns = rng.randint(3, 10) if rng.random() < 0.55 else rng.randint(24, 44)  # some long sessions
        made.append(_new_session(rng, root, project, started, body_chars, turns, target))
    forks = []
    for index, source in enumerate(made[: max(len(made) // 5, 1)]):
        # ccusage 20 counts a whole-file fork's copies again from the first entry off the source's current
        # branch on: a corpus forks whole only a source that is all one branch, so that it gives ccusage 20's
        # totals where the parentSession paths resolve
        whole = index % 2 == 0 and _one_branch(source)
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
    parser.add_argument("--seed", type=int, default=3)
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
