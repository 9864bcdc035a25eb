#!/usr/bin/env python3
"""Write pikit's own sample sessions (deterministic: same bytes on every run).

    python data/sample_sessions/generate.py [OUT_DIR]

The sessions are invented, not recorded, but they are written the way Pi 1.5 writes
its JSONL files: the same key order, 8-hex entry ids, ISO entry timestamps with
millisecond message timestamps, Anthropic-shaped usage with costs. Every random choice
comes from a seeded :class:`random.Random` and every timestamp from a fixed start, so
running the script twice gives byte-identical files.

The compactions and the branch summary of ``refactor-auth.jsonl`` are not written by
hand: the session is built in memory step by step, Pi's trigger
(``contextTokens > contextWindow - reserveTokens``) is evaluated with pikit after every
tool batch and every final answer, and when it fires pikit's own
:func:`pikit.compaction._entries.build_compaction` (and, for the abandoned branch,
:func:`pikit.compaction._entries.build_branch_summary`) prepares the entry. Only the summary text
comes from :class:`StorySummarizer`, a scripted summarizer holding hand-written summaries
that checks it is asked to summarize the part of the story it expects. The entry ids and
timestamps pikit generated are then replaced by ones from this script's seeded sources.

See README.md next to this file for what each session contains.
"""

from __future__ import annotations

import base64
import difflib
import math
import random
import struct
import sys
import textwrap
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

try:
    import pikit
except ImportError:  # run as a script from a checkout: put the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import pikit

from pikit import jsjson
from pikit._context.projection import project_path
from pikit._context.tokens import estimate_tokens
from pikit.compaction._entries import (
    BRANCH_SUMMARY_PREAMBLE,
    build_branch_summary,
    build_compaction,
    context_edit_entry,
    label_entry,
)
from pikit.compaction._summarizer import SummaryRequest, SummaryResult

HERE = Path(__file__).resolve().parent

# The small context window the main story was "recorded" with (see README.md).
CONTEXT_WINDOW = 16_384
RESERVE_TOKENS = 3_000
KEEP_RECENT_TOKENS = 4_000

PROVIDER = "anthropic"
MODEL = "claude-sonnet-4-5"
API = "anthropic-messages"
# US dollars per million tokens (claude-sonnet-4-5).
PRICES = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}

SAMPLE_FILES = ("refactor-auth.jsonl", "quick-tour.jsonl", "xss-and-unicode.jsonl", "wide-tree.jsonl",
                "damaged.jsonl")


# --------------------------------------------------------------------------- seeded sources
class Clock:
    """A fake wall clock: a fixed start, moved forward by seeded random amounts."""

    _EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

    def __init__(self, start: datetime, rng: random.Random) -> None:
        self.ms = int((start - self._EPOCH).total_seconds() * 1000)
        self.rng = rng

    def wait(self, low: float, high: float) -> int:
        """Let ``low``..``high`` seconds pass; returns the new time in ms."""
        self.ms += int(self.rng.uniform(low, high) * 1000)
        return self.ms

    def tick(self, low: int = 1, high: int = 9) -> int:
        """Let a few milliseconds pass; returns the new time in ms."""
        self.ms += self.rng.randint(low, high)
        return self.ms

    @classmethod
    def iso(cls, ms: int) -> str:
        """``ms`` as JavaScript's ``Date.prototype.toISOString`` prints it."""
        moment = cls._EPOCH + timedelta(milliseconds=ms)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class Ids:
    """Entry ids, tool-call ids, session ids and signatures from one seeded generator."""

    _ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.taken: set[str] = set()

    def entry(self) -> str:
        """A fresh 8-hex-digit entry id (Pi's format)."""
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def tool_call(self) -> str:
        """An Anthropic-style tool-use id."""
        return "toolu_01" + "".join(self.rng.choice(self._ALPHABET) for _ in range(22))

    def session(self) -> str:
        """A version-4 UUID for the header."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def signature(self, size: int) -> str:
        """An opaque thinking signature (base64 of random bytes)."""
        return base64.b64encode(self.rng.randbytes(size)).decode("ascii")


def prose(text: str) -> str:
    """Unwrap source-wrapped Markdown: lines of one paragraph or list item are joined.

    Blank lines, list items, headings, tables and fenced code are kept as they are; a line
    indented under a list item continues it.
    """
    out: list[str] = []
    fenced = False
    for raw in textwrap.dedent(text).strip("\n").split("\n"):
        line = raw.rstrip()
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
            continue
        if fenced or not line:
            out.append(line)
            continue
        stripped = line.lstrip()
        starts_block = (stripped[:2] in ("- ", "* ", "> ") or stripped.startswith(("#", "|"))
                        or (stripped.split(" ", 1)[0].rstrip(".").isdigit() and stripped.split(" ", 1)[0][-1:] == "."))
        previous = out[-1].lstrip() if out else ""
        joinable = previous and not previous.startswith(("```", "#", "|")) and not starts_block
        if joinable and (line.startswith("  ") or not line.startswith(" ")):
            out[-1] = out[-1] + " " + stripped
        else:
            out.append(line)
    return "\n".join(out)


def usage_record(input_tokens: int, output: int, cache_read: int, cache_write: int) -> dict[str, Any]:
    """A usage object in Pi's shape, costs computed the way pi-ai does (rate / 1e6 * tokens)."""
    cost = {
        "input": PRICES["input"] / 1_000_000 * input_tokens,
        "output": PRICES["output"] / 1_000_000 * output,
        "cacheRead": PRICES["cacheRead"] / 1_000_000 * cache_read,
        "cacheWrite": PRICES["cacheWrite"] / 1_000_000 * cache_write,
    }
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return {"input": input_tokens, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": input_tokens + output + cache_read + cache_write, "cost": cost}


def pi_diff(before: str, after: str, context: int = 3) -> str:
    """A diff in the style of Pi's edit tool details (numbered lines, ``...`` between hunks)."""
    old, new = before.split("\n"), after.split("\n")
    width = len(str(max(len(old), len(new))))
    gap = " " + " " * width + " ..."
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(context))
    for group in groups:
        if group[0][1] > 0 or out:
            out.append(gap)
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(f" {j1 + k + 1:>{width}} {new[j1 + k]}" for k in range(i2 - i1))
                continue
            out.extend(f"-{i + 1:>{width}} {old[i]}" for i in range(i1, i2))
            out.extend(f"+{j + 1:>{width}} {new[j]}" for j in range(j1, j2))
    if groups and groups[-1][-1][2] < len(old):
        out.append(gap)
    return "\n".join(out)


def write_jsonl(path: Path, header: Mapping[str, Any], entries: Iterable[Mapping[str, Any]]) -> bytes:
    """Write a session file the way Pi does (one ``JSON.stringify`` line each) and return its bytes."""
    lines = [jsjson.stringify_bytes(header)] + [jsjson.stringify_bytes(e) for e in entries]
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    return data


# --------------------------------------------------------------------------- session recording
@dataclass
class Call:
    """A tool call the assistant makes, and how to produce its result when it runs."""

    name: str
    arguments: dict[str, Any]
    run: Callable[[Recorder], ToolOutput]
    id: str = ""


@dataclass
class ToolOutput:
    """What a tool returned."""

    text: str
    is_error: bool = False
    details: dict[str, Any] | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.05


class Recorder:
    """Builds one session in memory, in file order, the way Pi appends entries.

    Keeps a fake file system (the project's files as the agent sees them), the current
    leaf, and the usage model: every assistant message reports the tokens of the context
    it was sent (Pi's estimate of the projection scaled by ``token_ratio``, the provider
    counting a little more than ``chars / 4``), split into cache reads and writes the way
    Anthropic's prompt caching reports them.
    """

    def __init__(self, *, seed: int, start: datetime, cwd: str, files: Mapping[str, str] | None = None,
                 token_ratio: float = 1.12) -> None:
        self.rng = random.Random(seed)
        self.clock = Clock(start, self.rng)
        self.ids = Ids(self.rng)
        self.header: dict[str, Any] = {"type": "session", "version": 3, "id": self.ids.session(),
                                       "timestamp": Clock.iso(self.clock.ms), "cwd": cwd}
        self.entries: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.leaf: str | None = None
        self.files: dict[str, str] = dict(files or {})
        self.token_ratio = token_ratio
        self.pending: list[Call] = []
        self._cache_key: list[tuple[Any, int]] = []
        self._cached_tokens = 0

    # ---------------------------------------------------------------- raw entries
    def append(self, kind: str, fields: Mapping[str, Any], *, ms: int | None = None) -> dict[str, Any]:
        """Append an entry under the current leaf (Pi's key order) and make it the leaf."""
        when = self.clock.tick() if ms is None else ms
        entry: dict[str, Any] = {"type": kind, "id": self.ids.entry(), "parentId": self.leaf,
                                 "timestamp": Clock.iso(when), **fields}
        return self._add(entry)

    def adopt(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Append an entry pikit built, with this recorder's id and timestamp instead of pikit's."""
        when = self.clock.tick(40, 400)
        out = dict(entry)
        out["id"] = self.ids.entry()
        out["timestamp"] = Clock.iso(when)
        system = out.get("systemMessage")
        if isinstance(system, dict) and "timestamp" in system:
            out["systemMessage"] = {**system, "timestamp": when}
        return self._add(out)

    def _add(self, entry: dict[str, Any]) -> dict[str, Any]:
        self.entries.append(entry)
        self.by_id[entry["id"]] = entry
        self.leaf = entry["id"]
        return entry

    def session(self) -> pikit.Session:
        """The session so far, as pikit sees it (the current leaf selected)."""
        session = pikit.Session.from_entries(self.entries, self.header)
        session.leaf_id = self.leaf
        return session

    def path(self, leaf: str | None = None) -> list[dict[str, Any]]:
        """Entries from the root to ``leaf`` (default: the current leaf)."""
        out = []
        current = self.leaf if leaf is None else leaf
        while current is not None:
            entry = self.by_id[current]
            out.append(entry)
            current = entry["parentId"]
        out.reverse()
        return out

    def projection(self) -> pikit.Projection:
        """pikit's projection of the current branch."""
        return project_path([pikit.Entry(e) for e in self.path()]) if self.leaf else project_path([])

    def message(self, message: dict[str, Any], *, ms: int | None = None) -> dict[str, Any]:
        """Append a ``message`` entry; its entry timestamp follows the message's by a few ms."""
        when = message["timestamp"] + self.rng.randint(1, 12) if ms is None else ms
        self.clock.ms = max(self.clock.ms, when)
        return self.append("message", {"message": message}, ms=when)

    # ---------------------------------------------------------------- messages
    def system(self, content: str, sections: Mapping[str, str | None], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """A system message (prompt text, named sections, tool declarations)."""
        ts = self.clock.tick(5, 30)
        return self.message({"role": "system", "content": content, "sections": dict(sections), "timestamp": ts,
                             "toolsAdded": tools})

    def user(self, text: str, *, images: Sequence[dict[str, Any]] = (), think: tuple[float, float] = (20, 110),
             raw: bool = False) -> dict[str, Any]:
        """A user prompt after some reading and typing time."""
        ts = self.clock.wait(*think)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text if raw else prose(text)}, *images]
        return self.message({"role": "user", "content": blocks, "timestamp": ts})

    def assistant(self, *, text: str | None = None, thinking: str | None = None, calls: Sequence[Call] = (),
                  stop_reason: str | None = None, raw: bool = False, extra_output: int = 0) -> dict[str, Any]:
        """An assistant message; its tool calls run right after (see :meth:`run_tools`)."""
        start = self.clock.tick(3, 25)
        content: list[dict[str, Any]] = []
        if thinking is not None:
            content.append({"type": "thinking", "thinking": prose(thinking),
                            "thinkingSignature": self.ids.signature(self.rng.randint(180, 420))})
        if text is not None:
            content.append({"type": "text", "text": text if raw else prose(text)})
        for call in calls:
            call.id = self.ids.tool_call()
            content.append({"type": "toolCall", "id": call.id, "name": call.name, "arguments": call.arguments})
        message: dict[str, Any] = {"role": "assistant", "content": content, "api": API, "provider": PROVIDER,
                                   "model": MODEL}
        output = math.ceil(estimate_tokens(message) * self.token_ratio) + self.rng.randint(4, 40) + extra_output
        message["usage"] = self._usage(output)
        message["stopReason"] = stop_reason or ("toolUse" if calls else "stop")
        message["timestamp"] = start
        end = self.clock.wait(1.2 + output / 85, 2.5 + output / 60)
        entry = self.message(message, ms=end)
        self.pending = list(calls)
        return entry

    def _usage(self, output: int) -> dict[str, Any]:
        """Usage of a model call sent the current projection."""
        projection = self.projection()
        key = list(zip(projection.sources, projection.estimates, strict=True))
        prompt = math.ceil(sum(projection.estimates) * self.token_ratio) + self.rng.randint(0, 60)
        system = projection.system_message
        system_tokens = math.ceil(estimate_tokens(system) * self.token_ratio) if system is not None else 0
        fresh = self.rng.choice((1, 1, 1, 2, 3, 6, 10))
        # Messages since the last answer (tool results, a prompt) are new to the cache in any case.
        last_answer = max((i for i, m in enumerate(projection.messages) if m.get("role") == "assistant"), default=-1)
        new_part = math.ceil(sum(projection.estimates[last_answer + 1:]) * self.token_ratio)
        if key[:len(self._cache_key)] == self._cache_key and self._cached_tokens:
            cache_read = max(0, min(self._cached_tokens, prompt - fresh - new_part))
        elif self._cache_key:
            # The prefix changed (a compaction, an edit, another branch): the provider's cache still
            # holds the part both prompts share, and at least the system prompt and tools.
            shared = 0
            for old, new in zip(self._cache_key, key, strict=False):
                if old != new:
                    break
                shared += new[1]
            cache_read = min(max(system_tokens, math.ceil(shared * self.token_ratio)), prompt - fresh)
        else:
            cache_read = 0
        cache_write = prompt - fresh - cache_read
        self._cache_key = key
        self._cached_tokens = prompt + output
        return usage_record(fresh, output, cache_read, cache_write)

    def run_tools(self) -> list[dict[str, Any]]:
        """Run the pending tool calls in order and append their results."""
        results = []
        for call in self.pending:
            out = call.run(self)
            ts = self.clock.wait(out.seconds * 0.8, out.seconds * 1.2 + 0.004)
            message: dict[str, Any] = {"role": "toolResult", "toolCallId": call.id, "toolName": call.name,
                                       "content": [{"type": "text", "text": out.text}, *out.images]}
            if out.details is not None:
                message["details"] = out.details
            message["isError"] = out.is_error
            message["timestamp"] = ts
            results.append(self.message(message))
        self.pending = []
        return results

    def bash_execution(self, command: str, output: str, exit_code: int = 0) -> dict[str, Any]:
        """A command the user ran themselves (``!cmd``): a ``bashExecution`` message."""
        ts = self.clock.wait(8, 40)
        return self.message({"role": "bashExecution", "command": command, "output": output, "exitCode": exit_code,
                             "cancelled": False, "truncated": False, "timestamp": ts})

    def custom_message(self, custom_type: str, content: str, details: Mapping[str, Any] | None = None,
                       display: bool = True) -> dict[str, Any]:
        """A message injected by an extension."""
        fields: dict[str, Any] = {"customType": custom_type, "content": content, "display": display}
        if details is not None:
            fields["details"] = dict(details)
        return self.append("custom_message", fields, ms=self.clock.wait(0.2, 1.5))

    def model_change(self, provider: str = PROVIDER, model: str = MODEL) -> dict[str, Any]:
        """Pi's ``model_change`` entry."""
        return self.append("model_change", {"provider": provider, "modelId": model}, ms=self.clock.wait(0.5, 3))

    def thinking_level(self, level: str) -> dict[str, Any]:
        """Pi's ``thinking_level_change`` entry."""
        return self.append("thinking_level_change", {"thinkingLevel": level}, ms=self.clock.wait(0.5, 3))

    def session_name(self, name: str) -> dict[str, Any]:
        """Pi's ``session_info`` entry."""
        return self.append("session_info", {"name": name}, ms=self.clock.wait(1, 6))

    def label(self, target: str, text: str | None) -> dict[str, Any]:
        """A ``label`` entry built by pikit (appended under the current leaf)."""
        self.clock.wait(2, 12)
        return self.adopt(label_entry(self.session(), target, text, self.leaf))

    def label_fast(self, target: str, text: str) -> str:
        """A ``label`` entry written directly, in Pi's shape (for big trees, where building a
        pikit session per label would be slow)."""
        return self.append("label", {"targetId": target, "label": text}, ms=self.clock.wait(2, 12))["id"]

    def context_edit(self, target: str, replacement: Mapping[str, Any] | None) -> dict[str, Any]:
        """A ``context_edit`` entry built by pikit (omits or replaces ``target`` in the context)."""
        self.clock.wait(3, 20)
        return self.adopt(context_edit_entry(self.session(), target, replacement, self.leaf))

    # ---------------------------------------------------------------- tools
    def read(self, path: str, *, offset: int | None = None, limit: int | None = None) -> Call:
        """The ``read`` tool on the fake file system."""
        arguments: dict[str, Any] = {"path": path}
        if offset is not None:
            arguments["offset"] = offset
        if limit is not None:
            arguments["limit"] = limit

        def run(rec: Recorder) -> ToolOutput:
            if path not in rec.files:
                return ToolOutput(f"ENOENT: no such file or directory, access '{rec.header['cwd']}/{path}'",
                                  is_error=True, details={})
            lines = rec.files[path].split("\n")
            if offset is None and limit is None:
                return ToolOutput(rec.files[path], seconds=0.01)
            first = (offset or 1) - 1
            last = len(lines) if limit is None else min(len(lines), first + limit)
            text = "\n".join(lines[first:last])
            if last < len(lines):
                text += f"\n\n[Showing lines {first + 1}-{last} of {len(lines)}. Use offset={last + 1} to continue.]"
            return ToolOutput(text, seconds=0.01)

        return Call("read", arguments, run)

    def write(self, path: str, content: str) -> Call:
        """The ``write`` tool: creates or replaces a file."""

        def run(rec: Recorder) -> ToolOutput:
            rec.files[path] = content
            return ToolOutput(f"Successfully wrote {len(content.encode('utf-8'))} bytes to {path}", seconds=0.01)

        return Call("write", {"path": path, "content": content}, run)

    def edit(self, path: str, old: str, new: str) -> Call:
        """The ``edit`` tool: replaces one exact occurrence of ``old``."""

        def run(rec: Recorder) -> ToolOutput:
            before = rec.files.get(path)
            if before is None or before.count(old) != 1:
                raise AssertionError(f"story error: edit of {path} does not match exactly once: {old[:60]!r}")
            after = before.replace(old, new)
            rec.files[path] = after
            return ToolOutput(f"Successfully replaced text in {path}. Changed {len(old)} characters to "
                              f"{len(new)} characters.", details={"diff": pi_diff(before, after)}, seconds=0.01)

        return Call("edit", {"path": path, "oldText": old, "newText": new}, run)

    def bash(self, command: str, output: str, *, exit_code: int = 0, seconds: float = 0.3,
             effect: Callable[[Recorder], None] | None = None, timeout: int | None = None) -> Call:
        """The ``bash`` tool with a scripted output (and an optional effect on the files)."""
        arguments: dict[str, Any] = {"command": command}
        if timeout is not None:
            arguments["timeout"] = timeout

        def run(rec: Recorder) -> ToolOutput:
            if effect is not None:
                effect(rec)
            text = output if output else "(no output)"
            if exit_code:
                return ToolOutput(f"{text}\n\nCommand exited with code {exit_code}", is_error=True, details={},
                                  seconds=seconds)
            return ToolOutput(text, seconds=seconds)

        return Call("bash", arguments, run)


# --------------------------------------------------------------------------- the shop-api project
# The files of the small web app the main story works on, before the refactor.
LOGIN_TS = """\
import type { Request, Response } from "express";
import crypto from "node:crypto";
import bcrypt from "bcryptjs";
import jwt from "jsonwebtoken";
import { db } from "../db/pool";
import { findUserByEmail, recordLogin, updatePasswordHash } from "../db/users";
import { logger } from "../logger";

// TODO(2025-11): move these to config.ts
const ACCESS_TTL = 15 * 60; // seconds
const REFRESH_TTL_DAYS = 30;
const MAX_ATTEMPTS = 5;
const LOCKOUT_MS = 15 * 60 * 1000;

// ip:email -> failed attempts in the current window (reset on restart!)
const attempts = new Map<string, { count: number; first: number }>();

function legacyHash(password: string, salt: string): string {
  // accounts imported from the old PHP shop: sha256(salt + password), hex
  return crypto.createHash("sha256").update(salt + password).digest("hex");
}

export async function login(req: Request, res: Response) {
  const email = String(req.body?.email ?? "").trim().toLowerCase();
  const password = String(req.body?.password ?? "");
  if (!email || !password) {
    return res.status(400).json({ error: "invalid_request", message: "email and password are required" });
  }

  const key = `${req.ip}:${email}`;
  const entry = attempts.get(key);
  if (entry && entry.count >= MAX_ATTEMPTS && Date.now() - entry.first < LOCKOUT_MS) {
    logger.warn({ email, ip: req.ip }, "login locked out");
    return res.status(429).json({ error: "too_many_attempts", message: "try again later" });
  }

  const user = await findUserByEmail(email);
  let ok = false;
  if (user) {
    if (user.password_hash.startsWith("$2")) {
      ok = await bcrypt.compare(password, user.password_hash);
    } else {
      ok = legacyHash(password, user.password_salt ?? "") === user.password_hash;
      if (ok) {
        // upgrade on the fly so the legacy hash disappears over time
        const upgraded = await bcrypt.hash(password, 10);
        await updatePasswordHash(user.id, upgraded);
        logger.info({ userId: user.id }, "upgraded legacy password hash");
      }
    }
  }

  if (!user || !ok) {
    const fresh = !entry || Date.now() - entry.first >= LOCKOUT_MS;
    attempts.set(key, fresh ? { count: 1, first: Date.now() } : { count: entry.count + 1, first: entry.first });
    return res.status(401).json({ error: "invalid_credentials", message: "wrong email or password" });
  }
  attempts.delete(key);

  if (user.disabled_at) {
    return res.status(403).json({ error: "account_disabled", message: "this account is disabled" });
  }

  const accessToken = jwt.sign(
    { sub: String(user.id), role: user.role, email: user.email },
    process.env.JWT_SECRET as string,
    { expiresIn: ACCESS_TTL, issuer: "shop-api", audience: "shop-web" },
  );

  const refreshToken = crypto.randomBytes(48).toString("base64url");
  const refreshHash = crypto.createHash("sha256").update(refreshToken).digest("hex");
  const expiresAt = new Date(Date.now() + REFRESH_TTL_DAYS * 24 * 60 * 60 * 1000);
  await db.query(
    "INSERT INTO refresh_tokens (user_id, token_hash, expires_at, user_agent, ip) VALUES ($1, $2, $3, $4, $5)",
    [user.id, refreshHash, expiresAt, req.get("user-agent") ?? null, req.ip],
  );

  await recordLogin(user.id, req.ip);

  res.cookie("refresh_token", refreshToken, {
    httpOnly: true,
    secure: process.env.NODE_ENV === "production",
    sameSite: "strict",
    path: "/auth",
    maxAge: REFRESH_TTL_DAYS * 24 * 60 * 60 * 1000,
  });

  return res.json({
    accessToken,
    tokenType: "Bearer",
    expiresIn: ACCESS_TTL,
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
  });
}
"""

REFRESH_TS = """\
import type { Request, Response } from "express";
import crypto from "node:crypto";
import jwt from "jsonwebtoken";
import { db } from "../db/pool";
import { findUserById } from "../db/users";

export async function refresh(req: Request, res: Response) {
  const presented: string | undefined = req.cookies?.refresh_token ?? req.body?.refreshToken;
  if (!presented) {
    return res.status(401).json({ error: "missing_token", message: "no refresh token" });
  }

  const hash = crypto.createHash("sha256").update(presented).digest("hex");
  const { rows } = await db.query(
    "SELECT id, user_id, expires_at, revoked_at FROM refresh_tokens WHERE token_hash = $1",
    [hash],
  );
  const stored = rows[0];
  if (!stored || stored.revoked_at || new Date(stored.expires_at) < new Date()) {
    return res.status(401).json({ error: "invalid_token", message: "refresh token is invalid or expired" });
  }

  const user = await findUserById(stored.user_id);
  if (!user || user.disabled_at) {
    return res.status(401).json({ error: "invalid_token", message: "refresh token is invalid or expired" });
  }

  // rotate: a refresh token can be used once
  await db.query("UPDATE refresh_tokens SET revoked_at = now() WHERE id = $1", [stored.id]);
  const next = crypto.randomBytes(48).toString("base64url");
  const nextHash = crypto.createHash("sha256").update(next).digest("hex");
  await db.query(
    "INSERT INTO refresh_tokens (user_id, token_hash, expires_at, user_agent, ip) VALUES ($1, $2, $3, $4, $5)",
    [user.id, nextHash, new Date(Date.now() + 30 * 86400000), req.get("user-agent") ?? null, req.ip],
  );

  const accessToken = jwt.sign({ sub: String(user.id), role: user.role, email: user.email }, process.env.JWT_SECRET!, {
    expiresIn: "15m",
    issuer: "shop-api",
  });

  res.cookie("refresh_token", next, {
    httpOnly: true,
    secure: process.env.NODE_ENV === "production",
    sameSite: "lax",
    path: "/auth",
    maxAge: 30 * 86400000,
  });
  return res.json({ accessToken, tokenType: "Bearer", expiresIn: 900 });
}
"""

LOGOUT_TS = """\
import type { Request, Response } from "express";
import crypto from "node:crypto";
import { revokeByHash } from "../db/refreshTokens";

export async function logout(req: Request, res: Response) {
  const presented: string | undefined = req.cookies?.refresh_token;
  if (presented) {
    await revokeByHash(crypto.createHash("sha256").update(presented).digest("hex"));
  }
  res.clearCookie("refresh_token", { path: "/auth" });
  return res.status(204).end();
}
"""

MIDDLEWARE_TS = """\
import type { NextFunction, Request, Response } from "express";
import jwt, { type JwtPayload } from "jsonwebtoken";

export interface AuthUser {
  id: number;
  role: "customer" | "staff" | "admin";
  email: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      user?: AuthUser;
    }
  }
}

export function requireAuth(req: Request, res: Response, next: NextFunction) {
  const header = req.get("authorization") ?? "";
  const [scheme, token] = header.split(" ");
  if (scheme !== "Bearer" || !token) {
    return res.status(401).json({ error: "unauthenticated", message: "missing bearer token" });
  }
  try {
    const payload = jwt.verify(token, process.env.JWT_SECRET || "dev-secret", {
      issuer: "shop-api",
    }) as JwtPayload;
    req.user = { id: Number(payload.sub), role: payload.role, email: payload.email };
    return next();
  } catch (err) {
    const expired = err instanceof jwt.TokenExpiredError;
    return res.status(401).json({
      error: expired ? "token_expired" : "invalid_token",
      message: expired ? "access token expired" : "invalid access token",
    });
  }
}

export function requireRole(...roles: AuthUser["role"][]) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.user) {
      return res.status(401).json({ error: "unauthenticated", message: "login required" });
    }
    if (!roles.includes(req.user.role)) {
      return res.status(403).json({ error: "forbidden", message: "insufficient role" });
    }
    return next();
  };
}
"""

PASSWORD_TS = """\
import bcrypt from "bcryptjs";

const COST = Number(process.env.BCRYPT_COST ?? 10);
const MIN_LENGTH = 10;

export class PasswordPolicyError extends Error {}

export function checkPolicy(plain: string): void {
  if (plain.length < MIN_LENGTH) {
    throw new PasswordPolicyError(`password must be at least ${MIN_LENGTH} characters`);
  }
  if (!/[0-9]/.test(plain) || !/[a-zA-Z]/.test(plain)) {
    throw new PasswordPolicyError("password must contain letters and digits");
  }
}

export async function hashPassword(plain: string): Promise<string> {
  checkPolicy(plain);
  return bcrypt.hash(plain, COST);
}

export async function verifyPassword(plain: string, hash: string): Promise<boolean> {
  return bcrypt.compare(plain, hash);
}
"""

CONFIG_TS = """\
import "dotenv/config";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`missing required environment variable ${name}`);
  }
  return value;
}

export const config = {
  env: process.env.NODE_ENV ?? "development",
  port: Number(process.env.PORT ?? 3000),
  databaseUrl: required("DATABASE_URL"),
  auth: {
    jwtSecret: required("JWT_SECRET"),
    issuer: "shop-api",
    audience: "shop-web",
    accessTtlSeconds: 15 * 60,
    refreshTtlDays: 30,
    bcryptCost: Number(process.env.AUTH_BCRYPT_COST ?? 12),
  },
} as const;
"""

REFRESH_TOKENS_DB_TS = """\
import { db } from "./pool";

export interface RefreshTokenRow {
  id: number;
  user_id: number;
  token_hash: string;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function findByHash(tokenHash: string): Promise<RefreshTokenRow | undefined> {
  const { rows } = await db.query<RefreshTokenRow>(
    "SELECT id, user_id, token_hash, expires_at, revoked_at FROM refresh_tokens WHERE token_hash = $1",
    [tokenHash],
  );
  return rows[0];
}

export async function revokeByHash(tokenHash: string): Promise<void> {
  await db.query("UPDATE refresh_tokens SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL", [
    tokenHash,
  ]);
}

export async function revokeAllForUser(userId: number): Promise<number> {
  const { rowCount } = await db.query(
    "UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL",
    [userId],
  );
  return rowCount ?? 0;
}
"""

LOGIN_TEST_TS = """\
import request from "supertest";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { createUser, resetDb } from "../helpers/db";

const ADA = { email: "ada@example.com", password: "correct horse 42" };

describe("POST /auth/login", () => {
  beforeEach(async () => {
    await resetDb();
    await createUser(ADA);
  });

  it("returns an access token for valid credentials", async () => {
    const res = await request(app).post("/auth/login").send(ADA);
    expect(res.status).toBe(200);
    expect(res.body.tokenType).toBe("Bearer");
    expect(res.body.expiresIn).toBe(900);
    expect(res.body.user).toMatchObject({ email: "ada@example.com", role: "customer" });
  });

  it("sets an httpOnly refresh cookie scoped to /auth", async () => {
    const res = await request(app).post("/auth/login").send(ADA);
    const cookie = res.headers["set-cookie"][0];
    expect(cookie).toMatch(/^refresh_token=/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("Path=/auth");
  });

  it("rejects a wrong password with 401", async () => {
    const res = await request(app).post("/auth/login").send({ email: "ada@example.com", password: "nope nope 1" });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("invalid_credentials");
  });

  it("answers an unknown email exactly like a wrong password", async () => {
    const res = await request(app).post("/auth/login").send({ email: "bob@example.com", password: "whatever 12" });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "invalid_credentials", message: "wrong email or password" });
  });

  it("returns 400 when a field is missing", async () => {
    const res = await request(app).post("/auth/login").send({ email: "ada@example.com" });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_request");
  });

  it("locks the account out after 5 failed attempts", async () => {
    for (let i = 0; i < 5; i++) {
      await request(app).post("/auth/login").send({ email: "ada@example.com", password: `wrong ${i} x` });
    }
    const res = await request(app).post("/auth/login").send(ADA);
    expect(res.status).toBe(429);
  });

  it("upgrades a legacy sha256 hash to bcrypt", async () => {
    const user = await createUser({ email: "old@example.com", password: "legacy pass 7", legacy: true });
    const res = await request(app).post("/auth/login").send({ email: "old@example.com", password: "legacy pass 7" });
    expect(res.status).toBe(200);
    expect((await user.reload()).password_hash).toMatch(/^\\$2[aby]\\$/);
  });

  it("rejects a disabled account with 403", async () => {
    await createUser({ email: "gone@example.com", password: "still valid 9", disabled: true });
    const res = await request(app)
      .post("/auth/login")
      .send({ email: "gone@example.com", password: "still valid 9" });
    expect(res.status).toBe(403);
  });

  it("normalizes the email before looking it up", async () => {
    const res = await request(app)
      .post("/auth/login")
      .send({ email: "  ADA@Example.com ", password: ADA.password });
    expect(res.status).toBe(200);
  });
});
"""

REFRESH_TEST_TS = """\
import request from "supertest";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { createUser, expireRefreshTokens, resetDb } from "../helpers/db";

async function loginCookie(): Promise<string> {
  const res = await request(app).post("/auth/login").send(ADA);
  return res.headers["set-cookie"][0].split(";")[0];
}

describe("POST /auth/refresh", () => {
  beforeEach(async () => {
    await resetDb();
    await createUser({ email: "ada@example.com", password: "correct horse 42" });
  });

  it("issues a new access token for a valid refresh cookie", async () => {
    const cookie = await loginCookie();
    const res = await request(app).post("/auth/refresh").set("Cookie", cookie);
    expect(res.status).toBe(200);
    expect(res.body.accessToken).toEqual(expect.any(String));
  });

  it("rotates the refresh token", async () => {
    const cookie = await loginCookie();
    const res = await request(app).post("/auth/refresh").set("Cookie", cookie);
    expect(res.headers["set-cookie"][0].split(";")[0]).not.toBe(cookie);
  });

  it("rejects a refresh token that was already rotated", async () => {
    const cookie = await loginCookie();
    await request(app).post("/auth/refresh").set("Cookie", cookie);
    const again = await request(app).post("/auth/refresh").set("Cookie", cookie);
    expect(again.status).toBe(401);
    expect(again.body.error).toBe("invalid_token");
  });

  it("rejects an expired refresh token", async () => {
    const cookie = await loginCookie();
    await expireRefreshTokens();
    const res = await request(app).post("/auth/refresh").set("Cookie", cookie);
    expect(res.status).toBe(401);
  });

  it("returns 401 without a token", async () => {
    const res = await request(app).post("/auth/refresh");
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("missing_token");
  });
});
"""

SEED_USERS_PY = '''\
"""Create a handful of users for local development.

    python scripts/seed_users.py            # insert into $DATABASE_URL
    python scripts/seed_users.py --dry-run  # print what would be inserted
"""

import argparse
import hashlib
import os
import secrets

import bcrypt
import psycopg

USERS = [
    ("ada@example.com", "Ada Lovelace", "customer", "correct horse 42"),
    ("grace@example.com", "Grace Hopper", "staff", "cobol forever 59"),
    ("root@example.com", "Shop Admin", "admin", "change me please 1"),
]
LEGACY_USER = ("old@example.com", "Legacy Customer", "customer", "legacy pass 7")


def bcrypt_hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=10)).decode()


def legacy_hash(password: str) -> tuple[str, str]:
    salt = secrets.token_hex(8)
    return hashlib.sha256((salt + password).encode()).hexdigest(), salt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    rows = [(email, name, role, bcrypt_hash(pw), None) for email, name, role, pw in USERS]
    email, name, role, pw = LEGACY_USER
    digest, salt = legacy_hash(pw)
    rows.append((email, name, role, digest, salt))

    if args.dry_run:
        for email, _name, role, digest, salt in rows:
            kind = "legacy" if salt else "bcrypt"
            print(f"{email:<22} {role:<9} {kind:<7} {digest[:20]}...")
        return

    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        conn.execute("DELETE FROM users WHERE email LIKE '%@example.com'")
        for row in rows:
            conn.execute(
                "INSERT INTO users (email, name, role, password_hash, password_salt) VALUES (%s, %s, %s, %s, %s)",
                row,
            )
    print(f"seeded {len(rows)} users")


if __name__ == "__main__":
    main()
'''

AUTH_DOC_MD = """\
# Authentication

shop-api uses short-lived JWT access tokens and long-lived, single-use refresh tokens.

## Endpoints

| method | path            | body                  | answer                                  |
|--------|-----------------|-----------------------|-----------------------------------------|
| POST   | `/auth/login`   | `{ email, password }` | `{ accessToken, tokenType, expiresIn, user }` + refresh cookie |
| POST   | `/auth/refresh` | refresh cookie        | `{ accessToken, tokenType, expiresIn }` + new refresh cookie   |
| POST   | `/auth/logout`  | refresh cookie        | 204, cookie cleared                      |

Errors always have the shape `{ "error": "<code>", "message": "<text>" }`. Codes:
`invalid_request` (400), `invalid_credentials` (401), `missing_token` (401), `invalid_token` (401),
`token_expired` (401), `account_disabled` (403), `too_many_attempts` (429).

## Tokens

- Access token: HS256 JWT, 15 minutes, claims `sub`, `role`, `email`, issuer `shop-api`.
  Send it as `Authorization: Bearer <token>`.
- Refresh token: 48 random bytes (base64url) in the `refresh_token` cookie (`HttpOnly`,
  `Path=/auth`), valid 30 days. Only its sha256 is stored (`refresh_tokens.token_hash`).
  Every refresh revokes the presented token and issues a new one.

## Passwords

New passwords are hashed with bcrypt. Accounts imported from the old PHP shop still have
`sha256(salt + password)` hashes; they are upgraded to bcrypt on the next successful login.
After 5 failed attempts from the same IP for the same email, logins are refused for 15 minutes.

## Configuration

`JWT_SECRET` (required), `AUTH_BCRYPT_COST` (default 12), `DATABASE_URL` (required).
"""

PACKAGE_JSON = """\
{
  "name": "shop-api",
  "version": "1.4.0",
  "private": true,
  "type": "module",
  "engines": { "node": ">=20" },
  "scripts": {
    "dev": "tsx watch src/server.ts",
    "build": "tsc -p tsconfig.build.json",
    "typecheck": "tsc --noEmit",
    "lint": "eslint src tests --max-warnings 0",
    "test": "vitest run",
    "test:watch": "vitest"
  },
  "dependencies": {
    "bcryptjs": "^2.4.3",
    "cookie-parser": "^1.4.6",
    "dotenv": "^16.4.5",
    "express": "^4.19.2",
    "jsonwebtoken": "^9.0.2",
    "pg": "^8.11.5",
    "pino": "^9.1.0"
  },
  "devDependencies": {
    "@types/bcryptjs": "^2.4.6",
    "@types/cookie-parser": "^1.4.7",
    "@types/express": "^4.17.21",
    "@types/jsonwebtoken": "^9.0.6",
    "@types/pg": "^8.11.6",
    "@types/supertest": "^6.0.2",
    "eslint": "^9.3.0",
    "supertest": "^7.0.0",
    "tsx": "^4.11.0",
    "typescript": "^5.4.5",
    "vitest": "^1.6.0"
  }
}
"""

CHANGELOG_MD = """\
# Changelog

## Unreleased

## 1.4.0 - 2026-02-18

- Orders: `GET /orders` supports `?status=` filtering.
- Cart: totals are rounded half-even to cents.
- Fixed: product search ignored diacritics in Postgres collations other than `und-x-icu`.

## 1.3.2 - 2026-01-27

- Fixed: the refresh cookie was not cleared on logout when the access token had expired.
"""

PROJECT_FILES: dict[str, str] = {
    "src/auth/login.ts": LOGIN_TS,
    "src/auth/refresh.ts": REFRESH_TS,
    "src/auth/logout.ts": LOGOUT_TS,
    "src/auth/middleware.ts": MIDDLEWARE_TS,
    "src/auth/password.ts": PASSWORD_TS,
    "src/config.ts": CONFIG_TS,
    "src/db/refreshTokens.ts": REFRESH_TOKENS_DB_TS,
    "tests/auth/login.test.ts": LOGIN_TEST_TS,
    "tests/auth/refresh.test.ts": REFRESH_TEST_TS,
    "scripts/seed_users.py": SEED_USERS_PY,
    "docs/auth.md": AUTH_DOC_MD,
    "package.json": PACKAGE_JSON,
    "CHANGELOG.md": CHANGELOG_MD,
}


# --------------------------------------------------------------------------- summaries
@dataclass(frozen=True)
class ScriptedSummary:
    """One hand-written summary and the conversation it is meant for.

    ``covers`` must all appear in the text to summarize and ``not_covers`` must not:
    that is how the generator makes sure a summary is true to what it replaces, even if
    the story is edited and the cut point moves.
    """

    kind: str
    text: str
    covers: tuple[str, ...] = ()
    not_covers: tuple[str, ...] = ()


class StorySummarizer:
    """A summarizer (pikit's protocol) that answers from a script, in order.

    It fails loudly when asked for a kind of summary it does not expect next, or when
    the conversation it receives is not the part of the story its summary describes.
    """

    name = "scripted-story"

    def __init__(self, script: Sequence[ScriptedSummary], token_ratio: float = 1.12) -> None:
        self.script = list(script)
        self.token_ratio = token_ratio
        self.calls: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Return the next scripted summary after checking it fits ``request``."""
        self.calls.append(request)
        if not self.script:
            raise AssertionError(f"story error: unexpected {request.kind} summary request:\n"
                                 f"{request.conversation_text[:1500]}")
        expected = self.script.pop(0)
        text = request.conversation_text
        problems = [f"kind {request.kind!r} != {expected.kind!r}"] if request.kind != expected.kind else []
        problems += [f"missing {c!r}" for c in expected.covers if c not in text]
        problems += [f"unexpected {c!r}" for c in expected.not_covers if c in text]
        if problems:
            raise AssertionError("story error: summary script does not fit: " + "; ".join(problems)
                                 + f"\n--- head ---\n{text[:1200]}\n--- tail ---\n{text[-1800:]}")
        summary = prose(expected.text)
        prompt = math.ceil(jsjson.utf16_len(text) / 4 * self.token_ratio) + 612
        if request.previous_summary:
            prompt += math.ceil(jsjson.utf16_len(request.previous_summary) / 4 * self.token_ratio)
        output = math.ceil(jsjson.utf16_len(summary) / 4 * self.token_ratio)
        return SummaryResult(summary, usage_record(prompt, output, 0, 0), f"{PROVIDER}/{MODEL}")


class Story(Recorder):
    """A :class:`Recorder` that compacts where Pi would, with pikit, for a small window.

    Pi checks ``contextTokens > contextWindow - reserveTokens`` after a tool batch (before
    the next model call) and after the final answer of a run (before the next prompt).
    :meth:`step` and :meth:`answer` do the same with pikit's context size of the branch.
    """

    def __init__(self, summarizer: StorySummarizer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.summarizer = summarizer
        self.compactions: list[dict[str, Any]] = []
        self.checks: list[tuple[str, int]] = []
        self.allow_compaction = True

    def step(self, *, text: str | None = None, thinking: str | None = None, calls: Sequence[Call],
             extra_output: int = 0) -> dict[str, Any]:
        """An assistant message with tool calls, the tool results, then Pi's threshold check."""
        entry = self.assistant(text=text, thinking=thinking, calls=calls, extra_output=extra_output)
        self.run_tools()
        self.check()
        return entry

    def answer(self, text: str, *, thinking: str | None = None, extra_output: int = 0) -> dict[str, Any]:
        """The final assistant message of a run, then Pi's threshold check."""
        entry = self.assistant(text=text, thinking=thinking, extra_output=extra_output)
        self.check()
        return entry

    def check(self) -> dict[str, Any] | None:
        """Compact the branch with pikit if Pi's trigger fires now."""
        tokens = self.session().context(self.leaf).tokens
        assert self.leaf is not None
        self.checks.append((self.leaf, tokens))
        if tokens <= CONTEXT_WINDOW - RESERVE_TOKENS:
            return None
        if not self.allow_compaction:
            raise AssertionError(f"story error: the trigger fired at {self.leaf} ({tokens} tokens) where the "
                                 "story does not expect a compaction")
        self.clock.wait(0.3, 1.0)
        result = build_compaction(self.session(), self.leaf, keep_recent_tokens=KEEP_RECENT_TOKENS,
                                  summarizer=self.summarizer)
        self.clock.wait(20, 45)  # the summary takes a while to write
        entry = self.adopt(result.entry)
        self.compactions.append(entry)
        return entry

    def leave_branch(self, target: str) -> dict[str, Any]:
        """Pi's ``/tree`` selection of ``target`` with a summary of the branch being left."""
        self.clock.wait(15, 40)
        old_leaf = self.leaf
        result = build_branch_summary(self.session(), old_leaf, target, summarizer=self.summarizer, budget=0)
        self.leaf = result.new_leaf
        self.clock.wait(10, 25)
        return self.adopt(result.entry)


# --------------------------------------------------------------------------- main story: context
SYSTEM_PROMPT = prose("""
You are a coding agent working inside the user's project. You read files, run commands, edit
code and write new files to get the user's task done. Work in small, verifiable steps, run the
tests after every change, never guess the contents of a file you have not read, and say plainly
when something failed.
""")

SYSTEM_SECTIONS = {
    "guidelines": """\
Tool use:
- read: look at a file before you change it; use offset/limit for long files.
- edit: surgical changes; oldText must match the file exactly, whitespace included.
- write: new files or complete rewrites only.
- bash: ls, grep, find, git, and the project's own scripts (tests, typecheck, lint).
Answer briefly. Show file paths, not whole files, unless asked.""",
    "project": """\
# AGENTS.md

shop-api is the REST backend of the shop: Express 4 + TypeScript 5 on Node 20, Postgres via `pg`.
- Tests: `npx vitest run` (supertest against the app, a throwaway database per run).
- Typecheck: `npx tsc --noEmit`. Lint: `npm run lint` (zero warnings).
- Error responses are always `{ "error": code, "message": text }`; the web shop depends on the codes.
- Configuration comes from `src/config.ts` only; do not read `process.env` elsewhere in new code.
- Python helper scripts live in `scripts/` (Python 3.12, run with the repo's venv).
- Every user-visible change gets a line in CHANGELOG.md under "Unreleased".""",
    "environment": """\
Current date: 2026-03-10 (Tuesday)
Current working directory: /home/dev/shop-api
Platform: linux x64, shell bash""",
}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required}}


TOOLS = [
    _tool("read", "Read a text file (or an image, returned as an attachment). Long files are cut at 2000 lines "
          "or 50KB; continue with offset.",
          {"path": {"type": "string", "description": "Path of the file, relative to the working directory or absolute"},
           "offset": {"type": "number", "description": "First line to read (1-based)"},
           "limit": {"type": "number", "description": "Maximum number of lines to read"}}, ["path"]),
    _tool("write", "Create a file or replace its whole content. Parent directories are created.",
          {"path": {"type": "string", "description": "Path of the file to write"},
           "content": {"type": "string", "description": "The complete new content"}}, ["path", "content"]),
    _tool("edit", "Replace one exact occurrence of oldText with newText in a file. Fails if oldText is missing "
          "or ambiguous.",
          {"path": {"type": "string", "description": "Path of the file to edit"},
           "oldText": {"type": "string", "description": "Text to find (must match exactly, once)"},
           "newText": {"type": "string", "description": "Replacement text"}}, ["path", "oldText", "newText"]),
    _tool("bash", "Run a bash command in the working directory. Output is cut to the last 2000 lines or 50KB.",
          {"command": {"type": "string", "description": "The command line"},
           "timeout": {"type": "number", "description": "Timeout in seconds (optional)"}}, ["command"]),
]


def _line_count(text: str) -> int:
    return text.count("\n")


def listing_output() -> str:
    """``ls`` of the auth code and ``wc -l`` of its files."""
    counted = ["src/auth/index.ts", "src/auth/login.ts", "src/auth/logout.ts", "src/auth/middleware.ts",
               "src/auth/password.ts", "src/auth/refresh.ts", "src/config.ts", "src/db/refreshTokens.ts"]
    sizes = {"src/auth/index.ts": 10, **{p: _line_count(PROJECT_FILES[p]) for p in counted if p in PROJECT_FILES}}
    total = sum(sizes.values())
    wc = "\n".join(f"{sizes[p]:>4} {p}" for p in counted) + f"\n{total:>4} total"
    return ("src/auth:\nindex.ts\nlogin.ts\nlogout.ts\nmiddleware.ts\npassword.ts\nrefresh.ts\n\n"
            "src/db:\norders.ts\npool.ts\nproducts.ts\nrefreshTokens.ts\nusers.ts\n\n"
            "tests/auth:\nlogin.test.ts\npassword.test.ts\nrefresh.test.ts\n\n"
            "tests/helpers:\ndb.ts\n" + wc)


def vitest_output(files: Sequence[tuple[str, int, int, int]], *, failures: str = "", start: str = "09:31:12",
                  duration: float = 1.84, extra_header: str = "") -> str:
    """A ``vitest run`` report. ``files`` holds (path, tests, failed, milliseconds)."""
    lines = [extra_header, " RUN  v1.6.0 /home/dev/shop-api", ""] if extra_header else \
        [" RUN  v1.6.0 /home/dev/shop-api", ""]
    for path, tests, failed, ms in files:
        if failed:
            lines.append(f" ❯ {path} ({tests} tests | {failed} failed) {ms}ms")
        else:
            lines.append(f" ✓ {path} ({tests} tests) {ms}ms")
    failed_files = sum(1 for f in files if f[2])
    failed_tests = sum(f[2] for f in files)
    total_tests = sum(f[1] for f in files)
    if failures:
        lines += ["", "⎯" * 23 + f" Failed Tests {failed_tests} " + "⎯" * 23, "", failures.rstrip("\n"),
                  "", "⎯" * 60, ""]
    else:
        lines.append("")
    file_line = (f"{failed_files} failed | {len(files) - failed_files} passed ({len(files)})" if failed_files
                 else f"{len(files)} passed ({len(files)})")
    test_line = (f"{failed_tests} failed | {total_tests - failed_tests} passed ({total_tests})" if failed_tests
                 else f"{total_tests} passed ({total_tests})")
    lines += [f" Test Files  {file_line}", f"      Tests  {test_line}", f"   Start at  {start}",
              f"   Duration  {duration:.2f}s (transform 212ms, setup 0ms, collect 1.02s, tests {duration * 0.4:.2f}s, "
              f"environment 0ms, prepare 388ms)", ""]
    return "\n".join(lines)


AUTH_TEST_FILES = [("tests/auth/password.test.ts", 3, 0, 412), ("tests/auth/login.test.ts", 9, 0, 683),
                   ("tests/auth/refresh.test.ts", 5, 0, 251)]


def noisy_grep_output(rng: random.Random) -> str:
    """What ``grep -rn`` over the whole checkout prints: mostly node_modules, dist and coverage."""
    modules = {
        "node_modules/jsonwebtoken/sign.js": ["module.exports = function (payload, secretOrPrivateKey, options, "
                                              "callback) {", "    return callback(new JsonWebTokenError("
                                              "'secretOrPrivateKey must have a value'));",
                                              "  if (typeof secretOrPrivateKey === 'string') {"],
        "node_modules/jsonwebtoken/verify.js": ["module.exports = function (jwtString, secretOrPublicKey, options, "
                                                "callback) {", "      return done(new JsonWebTokenError('secret or "
                                                "public key must be provided'));",
                                                "  const decodedToken = decode(jwtString, {complete: true});"],
        "node_modules/jsonwebtoken/README.md": ["var token = jwt.sign({ foo: 'bar' }, 'shhhhh');",
                                                "### jwt.verify(token, secretOrPublicKey, [options, callback])",
                                                "jwt.verify(token, 'wrong-secret', function(err, decoded) {",
                                                "var decoded = jwt.verify(token, 'shhhhh');"],
        "node_modules/@types/jsonwebtoken/index.d.ts": ["export function sign(payload: string | Buffer | object, "
                                                        "secretOrPrivateKey: Secret, options?: SignOptions): string;",
                                                        "export function verify(token: string, secretOrPublicKey: "
                                                        "Secret | GetPublicKeyOrSecret, options?: VerifyOptions):"
                                                        " Jwt;"],
        "node_modules/jws/lib/sign-stream.js": ["function jwsSign(opts) {", "  var secretOrKey = opts.secret || "
                                                "opts.privateKey || opts.key;"],
        "node_modules/jws/lib/verify-stream.js": ["function jwsVerify(jwsSig, algorithm, secretOrKey) {"],
        "node_modules/jwa/index.js": ["function createHmacSigner(bits) {", "  return function sign(thing, secret) {",
                                      "function createHmacVerifier(bits) {"],
        "dist/auth/login.js": ["    const accessToken = jsonwebtoken_1.default.sign({ sub: String(user.id), role: "
                               "user.role, email: user.email }, process.env.JWT_SECRET, { expiresIn: ACCESS_TTL, "
                               "issuer: \"shop-api\", audience: \"shop-web\" });"],
        "dist/auth/refresh.js": ["    const accessToken = jsonwebtoken_1.default.sign({ sub: String(user.id), role: "
                                 "user.role, email: user.email }, process.env.JWT_SECRET, {"],
        "dist/auth/middleware.js": ["        const payload = jsonwebtoken_1.default.verify(token, "
                                    "process.env.JWT_SECRET || \"dev-secret\", {"],
        "coverage/lcov-report/src/auth/login.ts.html": ["<span class=\"cline-any cline-yes\">14x</span>  const "
                                                        "accessToken = jwt.sign(",
                                                        "    process.env.JWT_SECRET as string,"],
        "coverage/lcov-report/src/auth/middleware.ts.html": ["    const payload = jwt.verify(token, "
                                                             "process.env.JWT_SECRET || &quot;dev-secret&quot;, {"],
    }
    vendored = ["node_modules/jsonwebtoken/test/", "node_modules/jws/test/"]
    tests = ["claim-aud.test.js", "claim-exp.test.js", "claim-iat.test.js", "claim-iss.test.js",
             "claim-jti.test.js", "claim-nbf.test.js", "claim-sub.tests.js", "encoding.tests.js",
             "expires_format.tests.js", "jwt.asymmetric_signing.tests.js", "jwt.hs.tests.js",
             "keyid.tests.js", "noTimestamp.tests.js", "option-complete.test.js", "schema.tests.js",
             "set_headers.tests.js", "verify.tests.js", "wrong_alg.tests.js", "async_sign.tests.js",
             "header-kid.test.js", "option-maxAge.test.js", "option-nonce.test.js"]
    snippets = ["    const token = jwt.sign({}, 'secret', {algorithm: 'HS256'});",
                "      jwt.verify(token, 'secret', {algorithms: ['HS256']}, (err, decoded) => {",
                "    const signed = jwt.sign(payload, secret, options);",
                "        expect(() => jwt.verify(token, undefined)).to.throw(JsonWebTokenError);",
                "  testUtils.verifyJWTHelper(token, 'secret', {audience: 'urn:foo'}, (err) => {",
                "    jwt.sign({foo: 123}, 'secret', { expiresIn: '1h' }, function(err, token) {",
                "      const decoded = jwt.verify(token, 'secret', {ignoreExpiration: true});",
                "  it('should throw when the secret is missing', function () {"]
    lines: list[str] = []
    for path, texts in modules.items():
        for text in texts:
            lines.append(f"{path}:{rng.randint(3, 240)}:{text}")
    for folder in vendored:
        for name in tests:
            for _ in range(rng.randint(1, 3)):
                lines.append(f"{folder}{name}:{rng.randint(5, 420)}:{rng.choice(snippets)}")
    lines.append("src/auth/login.ts:60:  const accessToken = jwt.sign(")
    lines.append("src/auth/login.ts:62:    process.env.JWT_SECRET as string,")
    lines.append("src/auth/refresh.ts:39:  const accessToken = jwt.sign({ sub: String(user.id), role: user.role, "
                 "email: user.email }, process.env.JWT_SECRET!, {")
    lines.append("src/auth/middleware.ts:26:    const payload = jwt.verify(token, process.env.JWT_SECRET || "
                 "\"dev-secret\", {")
    lines.append("src/config.ts:17:    jwtSecret: required(\"JWT_SECRET\"),")
    lines.append("tests/setup.ts:4:process.env.JWT_SECRET = \"test-secret-please-ignore\";")
    lines.append(".env.example:3:JWT_SECRET=change-me")
    return "\n".join(lines)


SOURCE_GREP = """\
src/auth/login.ts:60:  const accessToken = jwt.sign(
src/auth/login.ts:62:    process.env.JWT_SECRET as string,
src/auth/refresh.ts:39:  const accessToken = jwt.sign({ sub: String(user.id), role: user.role, email: user.email }, \
process.env.JWT_SECRET!, {
src/auth/middleware.ts:26:    const payload = jwt.verify(token, process.env.JWT_SECRET || "dev-secret", {
src/config.ts:17:    jwtSecret: required("JWT_SECRET"),
tests/setup.ts:4:process.env.JWT_SECRET = "test-secret-please-ignore";
scripts/rotate_jwt_secret.sh:9:echo "JWT_SECRET=$(openssl rand -base64 48)" >> .env.production"""


PLAN_MD = """\
# Auth refactor plan

Goal: split `src/auth` into small modules with one job each, without changing the HTTP
contract (paths, status codes, `{ error, message }` bodies, cookie name and path).
Every step ends with `npx tsc --noEmit && npx vitest run` green.

## Problems found

1. JWT signing is duplicated in `login.ts` and `refresh.ts`, and the two disagree:
   `login.ts` sets `audience: "shop-web"` and `expiresIn: 900`, `refresh.ts` has no audience and
   `expiresIn: "15m"`. `middleware.ts` checks the issuer only.
2. `JWT_SECRET` is read from `process.env` in three places; `middleware.ts` falls back to
   `"dev-secret"` when it is unset, so a misconfigured production server accepts tokens signed
   with a public string. `config.auth` already has everything and is used nowhere.
3. Three bcrypt costs: 10 (hard-coded in `login.ts` and `seed_users.py`), `BCRYPT_COST` (default 10)
   in `password.ts`, `AUTH_BCRYPT_COST` (default 12) in `config.ts`.
4. The legacy sha256 check and the upgrade to bcrypt live inline in the login handler;
   `password.ts` is not used by login at all.
5. Refresh cookie options differ: `sameSite: "strict"` after login, `"lax"` after a refresh.
6. Refresh-token rotation (revoke + insert) is raw SQL in the handler, not in
   `db/refreshTokens.ts`, and not in a transaction.
7. The login rate limiter is a module-level `Map` in `login.ts` (fine for one process, but hidden).

## Steps

1. `src/auth/tokens.ts`: `signAccessToken`, `verifyAccessToken`, `issueRefreshToken`,
   `rotateRefreshToken`, all reading `config.auth`. Login and refresh use it.
2. `src/auth/credentials.ts`: `verifyCredentials(email, password)` including the legacy
   upgrade; login uses it. `password.ts` takes its cost from `config.auth.bcryptCost`.
3. `src/auth/cookies.ts`: one `setRefreshCookie` / `clearRefreshCookie` (sameSite strict).
4. `middleware.ts` uses `verifyAccessToken`; the `dev-secret` fallback goes away.
5. `scripts/seed_users.py` takes the bcrypt cost from `AUTH_BCRYPT_COST`.
6. Unit tests for `tokens.ts`; docs and CHANGELOG.

## Out of scope

Moving the rate limiter to Redis; OAuth login (planned for Q3, so keep the seams clean).
"""


POOL_TS = """\
import pg from "pg";
import { config } from "../config";

export const db = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });

/** Anything that can run a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.PoolClient, "query">;

export async function withTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK");
    throw err;
  } finally {
    client.release();
  }
}
"""

USERS_DB_TS = """\
import { db } from "./pool";

export interface UserRow {
  id: number;
  email: string;
  name: string;
  role: "customer" | "staff" | "admin";
  password_hash: string;
  password_salt: string | null;
  disabled_at: Date | null;
  last_login_at: Date | null;
}

const COLUMNS = "id, email, name, role, password_hash, password_salt, disabled_at, last_login_at";

export async function findUserByEmail(email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE email = $1`, [email]);
  return rows[0];
}

export async function findUserById(id: number): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0];
}

export async function updatePasswordHash(id: number, hash: string): Promise<void> {
  await db.query("UPDATE users SET password_hash = $2, password_salt = NULL WHERE id = $1", [id, hash]);
}

export async function recordLogin(id: number, ip: string | undefined): Promise<void> {
  await db.query("UPDATE users SET last_login_at = now(), last_login_ip = $2 WHERE id = $1", [id, ip ?? null]);
}
"""

APP_TS = """\
import cookieParser from "cookie-parser";
import express, { type NextFunction, type Request, type Response } from "express";
import { adminRouter } from "./admin";
import { authRouter } from "./auth";
import { requireAuth, requireRole } from "./auth/middleware";
import { cartRouter } from "./cart";
import { logger } from "./logger";
import { ordersRouter } from "./orders";
import { productsRouter } from "./products";

export const app = express();

app.set("trust proxy", 1); // behind the load balancer: req.ip is the client address
app.use(express.json({ limit: "100kb" }));
app.use(cookieParser());

app.get("/health", (_req, res) => res.json({ ok: true }));
app.use("/auth", authRouter);
app.use("/products", productsRouter);
app.use("/cart", requireAuth, cartRouter);
app.use("/orders", requireAuth, ordersRouter);
app.use("/admin", requireAuth, requireRole("staff", "admin"), adminRouter);

app.use((err: Error, req: Request, res: Response, _next: NextFunction) => {
  logger.error({ err, path: req.path }, "unhandled error");
  res.status(500).json({ error: "internal", message: "internal server error" });
});
"""

TEST_HELPERS_TS = """\
import crypto from "node:crypto";
import bcrypt from "bcryptjs";
import { db } from "../../src/db/pool";
import { findUserById, type UserRow } from "../../src/db/users";

interface NewUser {
  email: string;
  password: string;
  role?: UserRow["role"];
  /** store a sha256(salt + password) hash like the accounts imported from the PHP shop */
  legacy?: boolean;
  disabled?: boolean;
}

export async function resetDb(): Promise<void> {
  await db.query("TRUNCATE refresh_tokens, users RESTART IDENTITY CASCADE");
}

export async function createUser(input: NewUser): Promise<UserRow & { reload(): Promise<UserRow> }> {
  let hash: string;
  let salt: string | null = null;
  if (input.legacy) {
    salt = crypto.randomBytes(8).toString("hex");
    hash = crypto.createHash("sha256").update(salt + input.password).digest("hex");
  } else {
    hash = await bcrypt.hash(input.password, 4); // fast rounds: tests only
  }
  const { rows } = await db.query<UserRow>(
    `INSERT INTO users (email, name, role, password_hash, password_salt, disabled_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [input.email, input.email.split("@")[0], input.role ?? "customer", hash, salt, input.disabled ? new Date() : null],
  );
  const row = rows[0];
  return { ...row, reload: async () => (await findUserById(row.id))! };
}

export async function expireRefreshTokens(): Promise<void> {
  await db.query("UPDATE refresh_tokens SET expires_at = now() - interval '1 minute'");
}
"""

TOKENS_TS = """\
import crypto from "node:crypto";
import jwt, { type JwtPayload } from "jsonwebtoken";
import { config } from "../config";
import { db } from "../db/pool";
import { findByHash } from "../db/refreshTokens";

export interface TokenSubject {
  id: number;
  role: "customer" | "staff" | "admin";
  email: string;
}

export interface ClientMeta {
  userAgent?: string | null;
  ip?: string;
}

const { jwtSecret, issuer, audience, accessTtlSeconds, refreshTtlDays } = config.auth;

export const ACCESS_TTL_SECONDS = accessTtlSeconds;
export const REFRESH_TTL_MS = refreshTtlDays * 24 * 60 * 60 * 1000;

export function signAccessToken(user: TokenSubject): string {
  return jwt.sign({ sub: String(user.id), role: user.role, email: user.email }, jwtSecret, {
    expiresIn: accessTtlSeconds,
    issuer,
    audience,
  });
}

/** The user behind an access token; throws jwt's errors (TokenExpiredError, JsonWebTokenError). */
export function verifyAccessToken(token: string): TokenSubject {
  const payload = jwt.verify(token, jwtSecret, { issuer, audience }) as JwtPayload;
  return { id: Number(payload.sub), role: payload.role, email: payload.email };
}

function hashToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

export async function issueRefreshToken(userId: number, meta: ClientMeta): Promise<string> {
  const token = crypto.randomBytes(48).toString("base64url");
  await db.query(
    "INSERT INTO refresh_tokens (user_id, token_hash, expires_at, user_agent, ip) VALUES ($1, $2, $3, $4, $5)",
    [userId, hashToken(token), new Date(Date.now() + REFRESH_TTL_MS), meta.userAgent ?? null, meta.ip ?? null],
  );
  return token;
}

/** Exchange a refresh token for a new one; null when it is unknown, revoked or expired. */
export async function rotateRefreshToken(
  presented: string,
  meta: ClientMeta,
): Promise<{ userId: number; token: string } | null> {
  const stored = await findByHash(hashToken(presented));
  if (!stored || stored.revoked_at || stored.expires_at < new Date()) {
    return null;
  }
  const token = await issueRefreshToken(stored.user_id, meta);
  return { userId: stored.user_id, token };
}
"""

REFRESH_TS_STEP1 = """\
import type { Request, Response } from "express";
import { findUserById } from "../db/users";
import { ACCESS_TTL_SECONDS, REFRESH_TTL_MS, rotateRefreshToken, signAccessToken } from "./tokens";

export async function refresh(req: Request, res: Response) {
  const presented: string | undefined = req.cookies?.refresh_token ?? req.body?.refreshToken;
  if (!presented) {
    return res.status(401).json({ error: "missing_token", message: "no refresh token" });
  }

  const rotated = await rotateRefreshToken(presented, { userAgent: req.get("user-agent"), ip: req.ip });
  const user = rotated ? await findUserById(rotated.userId) : undefined;
  if (!rotated || !user || user.disabled_at) {
    return res.status(401).json({ error: "invalid_token", message: "refresh token is invalid or expired" });
  }

  res.cookie("refresh_token", rotated.token, {
    httpOnly: true,
    secure: process.env.NODE_ENV === "production",
    sameSite: "lax",
    path: "/auth",
    maxAge: REFRESH_TTL_MS,
  });
  return res.json({ accessToken: signAccessToken(user), tokenType: "Bearer", expiresIn: ACCESS_TTL_SECONDS });
}
"""

LOGIN_IMPORTS_OLD = """\
import jwt from "jsonwebtoken";
import { db } from "../db/pool";
import { findUserByEmail, recordLogin, updatePasswordHash } from "../db/users";
import { logger } from "../logger";
"""
LOGIN_IMPORTS_STEP1 = """\
import { findUserByEmail, recordLogin, updatePasswordHash } from "../db/users";
import { logger } from "../logger";
import { issueRefreshToken, signAccessToken } from "./tokens";
"""
LOGIN_TOKENS_OLD = """\
  const accessToken = jwt.sign(
    { sub: String(user.id), role: user.role, email: user.email },
    process.env.JWT_SECRET as string,
    { expiresIn: ACCESS_TTL, issuer: "shop-api", audience: "shop-web" },
  );

  const refreshToken = crypto.randomBytes(48).toString("base64url");
  const refreshHash = crypto.createHash("sha256").update(refreshToken).digest("hex");
  const expiresAt = new Date(Date.now() + REFRESH_TTL_DAYS * 24 * 60 * 60 * 1000);
  await db.query(
    "INSERT INTO refresh_tokens (user_id, token_hash, expires_at, user_agent, ip) VALUES ($1, $2, $3, $4, $5)",
    [user.id, refreshHash, expiresAt, req.get("user-agent") ?? null, req.ip],
  );
"""
LOGIN_TOKENS_STEP1 = """\
  const accessToken = signAccessToken(user);
  const refreshToken = await issueRefreshToken(user.id, { userAgent: req.get("user-agent"), ip: req.ip });
"""

ROTATE_OLD = """\
  const token = await issueRefreshToken(stored.user_id, meta);
  return { userId: stored.user_id, token };
}
"""
ROTATE_FIXED = """\
  // Single use: revoke the presented token and issue its successor atomically. If another
  // request revoked it first (a replay, or two tabs refreshing at once), the update hits no row.
  return withTransaction(async (client) => {
    const revoked = await client.query(
      "UPDATE refresh_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
      [stored.id],
    );
    if (revoked.rowCount !== 1) {
      return null;
    }
    const token = await issueRefreshToken(stored.user_id, meta, client);
    return { userId: stored.user_id, token };
  });
}
"""
ISSUE_OLD = """\
export async function issueRefreshToken(userId: number, meta: ClientMeta): Promise<string> {
  const token = crypto.randomBytes(48).toString("base64url");
  await db.query("""
ISSUE_FIXED = """\
export async function issueRefreshToken(userId: number, meta: ClientMeta, client: Queryable = db): Promise<string> {
  const token = crypto.randomBytes(48).toString("base64url");
  await client.query("""
TOKENS_IMPORT_OLD = 'import { db } from "../db/pool";\n'
TOKENS_IMPORT_FIXED = 'import { db, type Queryable, withTransaction } from "../db/pool";\n'

# --- the strategy-pattern attempt (the abandoned branch)
AUTH_STRATEGY_TS = """\
import type { Request } from "express";
import type { TokenSubject } from "../tokens";

export type CredentialKind = "password" | "refresh_token" | "api_key";

export interface AuthResult {
  subject: TokenSubject;
  /** Set when the strategy issued a new refresh token (password login, rotation). */
  refreshToken?: string;
}

export interface AuthStrategy {
  readonly kind: CredentialKind;
  canHandle(req: Request): boolean;
  authenticate(req: Request): Promise<AuthResult>;
}

export class AuthenticationError extends Error {
  constructor(
    readonly code: string,
    readonly status = 401,
  ) {
    super(code);
  }
}
"""

REGISTRY_TS = """\
import type { Request } from "express";
import { ApiKeyStrategy } from "./ApiKeyStrategy";
import { type AuthResult, type AuthStrategy, AuthenticationError, type CredentialKind } from "./AuthStrategy";
import { PasswordStrategy } from "./PasswordStrategy";
import { RefreshTokenStrategy } from "./RefreshTokenStrategy";

export class StrategyRegistry {
  private readonly strategies = new Map<CredentialKind, AuthStrategy>();

  register(strategy: AuthStrategy): this {
    this.strategies.set(strategy.kind, strategy);
    return this;
  }

  async authenticate(kind: CredentialKind, req: Request): Promise<AuthResult> {
    const strategy = this.strategies.get(kind);
    if (!strategy || !strategy.canHandle(req)) {
      throw new AuthenticationError("authentication_failed");
    }
    return strategy.authenticate(req);
  }
}

export const registry = new StrategyRegistry()
  .register(new PasswordStrategy())
  .register(new RefreshTokenStrategy())
  .register(new ApiKeyStrategy());
"""

PASSWORD_STRATEGY_TS = """\
import crypto from "node:crypto";
import bcrypt from "bcryptjs";
import type { Request } from "express";
import { findUserByEmail, updatePasswordHash } from "../../db/users";
import { issueRefreshToken } from "../tokens";
import { type AuthResult, type AuthStrategy, AuthenticationError } from "./AuthStrategy";

interface LoginBody {
  email: string;
  password: string;
}

export class PasswordStrategy implements AuthStrategy {
  readonly kind = "password";

  canHandle(req: Request<{}, unknown, LoginBody>): boolean {
    return typeof req.body?.email === "string" && typeof req.body?.password === "string";
  }

  async authenticate(req: Request<{}, unknown, LoginBody>): Promise<AuthResult> {
    const email = req.body.email.trim().toLowerCase();
    const user = await findUserByEmail(email);
    if (!user || !(await this.matches(req.body.password, user.password_hash, user.password_salt))) {
      throw new AuthenticationError("authentication_failed");
    }
    if (user.disabled_at) {
      throw new AuthenticationError("account_disabled", 403);
    }
    if (!user.password_hash.startsWith("$2")) {
      await updatePasswordHash(user.id, await bcrypt.hash(req.body.password, 12));
    }
    const refreshToken = await issueRefreshToken(user.id, { userAgent: req.get("user-agent"), ip: req.ip });
    return { subject: { id: user.id, role: user.role, email: user.email }, refreshToken };
  }

  private async matches(password: string, hash: string, salt: string | null): Promise<boolean> {
    if (hash.startsWith("$2")) {
      return bcrypt.compare(password, hash);
    }
    return crypto.createHash("sha256").update((salt ?? "") + password).digest("hex") === hash;
  }
}
"""

REFRESH_STRATEGY_TS = """\
import type { Request } from "express";
import { findUserById } from "../../db/users";
import { rotateRefreshToken } from "../tokens";
import { type AuthResult, type AuthStrategy, AuthenticationError } from "./AuthStrategy";

export class RefreshTokenStrategy implements AuthStrategy {
  readonly kind = "refresh_token";

  canHandle(req: Request): boolean {
    return Boolean(req.cookies?.refresh_token ?? req.body?.refreshToken);
  }

  async authenticate(req: Request): Promise<AuthResult> {
    const presented = req.cookies?.refresh_token ?? req.body?.refreshToken;
    const rotated = await rotateRefreshToken(presented, { userAgent: req.get("user-agent"), ip: req.ip });
    const user = rotated ? await findUserById(rotated.userId) : undefined;
    if (!rotated || !user || user.disabled_at) {
      throw new AuthenticationError("invalid_token");
    }
    return { subject: { id: user.id, role: user.role }, refreshToken: rotated.token };
  }
}
"""

API_KEY_STRATEGY_TS = """\
import crypto from "node:crypto";
import type { Request } from "express";
import { findApiKeyByHash } from "../../db/apiKeys";
import { type AuthResult, type AuthStrategy, AuthenticationError } from "./AuthStrategy";

/** For the admin CLI: `Authorization: ApiKey <key>`; no refresh token. */
export class ApiKeyStrategy implements AuthStrategy {
  readonly kind = "api_key";

  canHandle(req: Request): boolean {
    return (req.get("authorization") ?? "").startsWith("ApiKey ");
  }

  async authenticate(req: Request): Promise<AuthResult> {
    const key = (req.get("authorization") ?? "").slice("ApiKey ".length);
    const row = await findApiKeyByHash(crypto.createHash("sha256").update(key).digest("hex"));
    if (!row || row.revoked_at) {
      throw new AuthenticationError("invalid_api_key");
    }
    return { subject: { id: row.user_id, role: row.role, email: row.label } };
  }
}
"""

LOGIN_TS_STRATEGY = """\
import type { Request, Response } from "express";
import { recordLogin } from "../db/users";
import { setRefreshCookie } from "./cookies";
import { AuthenticationError } from "./strategies/AuthStrategy";
import { registry } from "./strategies/registry";
import { ACCESS_TTL_SECONDS, signAccessToken } from "./tokens";

export async function login(req: Request, res: Response) {
  try {
    const { subject, refreshToken } = await registry.authenticate("password", req);
    await recordLogin(subject.id, req.ip);
    setRefreshCookie(res, refreshToken!);
    return res.json({
      accessToken: signAccessToken(subject),
      tokenType: "Bearer",
      expiresIn: ACCESS_TTL_SECONDS,
      user: subject,
    });
  } catch (err) {
    if (err instanceof AuthenticationError) {
      return res.status(err.status).json({ error: err.code, message: err.message });
    }
    throw err;
  }
}
"""

REFRESH_TS_STRATEGY = """\
import type { Request, Response } from "express";
import { setRefreshCookie } from "./cookies";
import { AuthenticationError } from "./strategies/AuthStrategy";
import { registry } from "./strategies/registry";
import { ACCESS_TTL_SECONDS, signAccessToken } from "./tokens";

export async function refresh(req: Request, res: Response) {
  try {
    const { subject, refreshToken } = await registry.authenticate("refresh_token", req);
    setRefreshCookie(res, refreshToken!);
    return res.json({ accessToken: signAccessToken(subject), tokenType: "Bearer", expiresIn: ACCESS_TTL_SECONDS });
  } catch (err) {
    if (err instanceof AuthenticationError) {
      return res.status(err.status).json({ error: err.code, message: err.message });
    }
    throw err;
  }
}
"""

COOKIES_TS = """\
import type { Response } from "express";
import { config } from "../config";
import { REFRESH_TTL_MS } from "./tokens";

const COOKIE = "refresh_token";
const OPTIONS = {
  httpOnly: true,
  secure: config.env === "production",
  sameSite: "strict",
  path: "/auth",
} as const;

export function setRefreshCookie(res: Response, token: string): void {
  res.cookie(COOKIE, token, { ...OPTIONS, maxAge: REFRESH_TTL_MS });
}

export function clearRefreshCookie(res: Response): void {
  res.clearCookie(COOKIE, OPTIONS);
}
"""

CREDENTIALS_TS = """\
import crypto from "node:crypto";
import { findUserByEmail, updatePasswordHash, type UserRow } from "../db/users";
import { logger } from "../logger";
import { hashPassword, verifyPassword } from "./password";

export type CredentialsCheck =
  | { ok: true; user: UserRow }
  | { ok: false; reason: "unknown_email" | "wrong_password" };

/** sha256(salt + password), the format of accounts imported from the old PHP shop. */
function legacyHash(password: string, salt: string): string {
  return crypto.createHash("sha256").update(salt + password).digest("hex");
}

function isBcrypt(hash: string): boolean {
  return hash.startsWith("$2");
}

/**
 * Check an email/password pair. A legacy hash that matches is upgraded to bcrypt on the way,
 * so legacy hashes disappear as their owners log in.
 */
export async function verifyCredentials(email: string, password: string): Promise<CredentialsCheck> {
  const user = await findUserByEmail(email);
  if (!user) {
    return { ok: false, reason: "unknown_email" };
  }
  if (isBcrypt(user.password_hash)) {
    return (await verifyPassword(password, user.password_hash))
      ? { ok: true, user }
      : { ok: false, reason: "wrong_password" };
  }
  const salt = user.password_salt ?? "";
  const expected = Buffer.from(user.password_hash, "hex");
  const actual = Buffer.from(legacyHash(password, salt), "hex");
  if (expected.length !== actual.length || !crypto.timingSafeEqual(expected, actual)) {
    return { ok: false, reason: "wrong_password" };
  }
  await updatePasswordHash(user.id, await hashPassword(password, { skipPolicy: true }));
  logger.info({ userId: user.id }, "upgraded legacy password hash");
  return { ok: true, user };
}
"""

LOGIN_PASSWORD_OLD = """\
  const user = await findUserByEmail(email);
  let ok = false;
  if (user) {
    if (user.password_hash.startsWith("$2")) {
      ok = await bcrypt.compare(password, user.password_hash);
    } else {
      ok = legacyHash(password, user.password_salt ?? "") === user.password_hash;
      if (ok) {
        // upgrade on the fly so the legacy hash disappears over time
        const upgraded = await bcrypt.hash(password, 10);
        await updatePasswordHash(user.id, upgraded);
        logger.info({ userId: user.id }, "upgraded legacy password hash");
      }
    }
  }

  if (!user || !ok) {
"""
LOGIN_PASSWORD_NEW = """\
  const check = await verifyCredentials(email, password);
  if (!check.ok) {
"""
LOGIN_DISABLED_OLD = """\
  attempts.delete(key);

  if (user.disabled_at) {"""
LOGIN_DISABLED_NEW = """\
  attempts.delete(key);
  const { user } = check;

  if (user.disabled_at) {"""
LOGIN_HEAD_OLD = """\
import type { Request, Response } from "express";
import crypto from "node:crypto";
import bcrypt from "bcryptjs";
import { findUserByEmail, recordLogin, updatePasswordHash } from "../db/users";
import { logger } from "../logger";
import { issueRefreshToken, signAccessToken } from "./tokens";
"""
LOGIN_HEAD_NEW = """\
import type { Request, Response } from "express";
import { recordLogin } from "../db/users";
import { logger } from "../logger";
import { verifyCredentials } from "./credentials";
import { issueRefreshToken, signAccessToken } from "./tokens";
"""
LOGIN_LEGACY_OLD = """\
function legacyHash(password: string, salt: string): string {
  // accounts imported from the old PHP shop: sha256(salt + password), hex
  return crypto.createHash("sha256").update(salt + password).digest("hex");
}

"""
PASSWORD_COST_OLD = """\
import bcrypt from "bcryptjs";

const COST = Number(process.env.BCRYPT_COST ?? 10);
"""
PASSWORD_COST_NEW = """\
import bcrypt from "bcryptjs";
import { config } from "../config";

const COST = config.auth.bcryptCost;
"""
PASSWORD_HASH_OLD = """\
export async function hashPassword(plain: string): Promise<string> {
  checkPolicy(plain);
  return bcrypt.hash(plain, COST);
}"""
PASSWORD_HASH_NEW = """\
/** bcrypt hash with the configured cost; `skipPolicy` only for re-hashing an existing password. */
export async function hashPassword(plain: string, options: { skipPolicy?: boolean } = {}): Promise<string> {
  if (!options.skipPolicy) {
    checkPolicy(plain);
  }
  return bcrypt.hash(plain, COST);
}"""

LOGIN_COOKIE_OLD = """\
  res.cookie("refresh_token", refreshToken, {
    httpOnly: true,
    secure: process.env.NODE_ENV === "production",
    sameSite: "strict",
    path: "/auth",
    maxAge: REFRESH_TTL_DAYS * 24 * 60 * 60 * 1000,
  });
"""
LOGIN_COOKIE_NEW = "  setRefreshCookie(res, refreshToken);\n"
LOGIN_CONST_OLD = """\
// TODO(2025-11): move these to config.ts
const ACCESS_TTL = 15 * 60; // seconds
const REFRESH_TTL_DAYS = 30;
const MAX_ATTEMPTS = 5;"""
LOGIN_CONST_NEW = """\
// Login throttling per ip+email (in memory: fine while the API runs as one process).
const MAX_ATTEMPTS = 5;"""
LOGIN_IMPORTS_STEP2 = 'import { issueRefreshToken, signAccessToken } from "./tokens";\n'
LOGIN_IMPORTS_STEP3 = ('import { setRefreshCookie } from "./cookies";\n'
                       'import { ACCESS_TTL_SECONDS, issueRefreshToken, signAccessToken } from "./tokens";\n')
LOGIN_EXPIRES_OLD = "    expiresIn: ACCESS_TTL,\n"
LOGIN_EXPIRES_NEW = "    expiresIn: ACCESS_TTL_SECONDS,\n"

MIDDLEWARE_VERIFY_OLD = """\
  try {
    const payload = jwt.verify(token, process.env.JWT_SECRET || "dev-secret", {
      issuer: "shop-api",
    }) as JwtPayload;
    req.user = { id: Number(payload.sub), role: payload.role, email: payload.email };
    return next();
  } catch (err) {"""
MIDDLEWARE_VERIFY_NEW = """\
  try {
    req.user = verifyAccessToken(token);
    return next();
  } catch (err) {"""
MIDDLEWARE_IMPORT_OLD = 'import jwt, { type JwtPayload } from "jsonwebtoken";\n'
MIDDLEWARE_IMPORT_NEW = 'import jwt from "jsonwebtoken";\nimport { verifyAccessToken } from "./tokens";\n'

REFRESH_COOKIE_OLD = """\
  res.cookie("refresh_token", rotated.token, {
    httpOnly: true,
    secure: process.env.NODE_ENV === "production",
    sameSite: "lax",
    path: "/auth",
    maxAge: REFRESH_TTL_MS,
  });
"""
REFRESH_COOKIE_NEW = "  setRefreshCookie(res, rotated.token);\n"
REFRESH_IMPORT_OLD = ('import { ACCESS_TTL_SECONDS, REFRESH_TTL_MS, rotateRefreshToken, signAccessToken } '
                      'from "./tokens";\n')
REFRESH_IMPORT_NEW = ('import { setRefreshCookie } from "./cookies";\n'
                      'import { ACCESS_TTL_SECONDS, rotateRefreshToken, signAccessToken } from "./tokens";\n')
LOGOUT_OLD = '  res.clearCookie("refresh_token", { path: "/auth" });\n'
LOGOUT_NEW = "  clearRefreshCookie(res);\n"
LOGOUT_IMPORT_OLD = 'import { revokeByHash } from "../db/refreshTokens";\n'
LOGOUT_IMPORT_NEW = ('import { revokeByHash } from "../db/refreshTokens";\n'
                     'import { clearRefreshCookie } from "./cookies";\n')

SEED_OLD = '''\
def bcrypt_hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=10)).decode()
'''
SEED_NEW = '''\
# Same cost as the API (src/config.ts reads AUTH_BCRYPT_COST, default 12).
BCRYPT_COST = int(os.environ.get("AUTH_BCRYPT_COST", "12"))


def bcrypt_hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=BCRYPT_COST)).decode()
'''

TOKENS_TEST_TS = """\
import jwt from "jsonwebtoken";
import { beforeEach, describe, expect, it } from "vitest";
import { config } from "../../src/config";
import {
  issueRefreshToken,
  rotateRefreshToken,
  signAccessToken,
  verifyAccessToken,
} from "../../src/auth/tokens";
import { createUser, expireRefreshTokens, resetDb } from "../helpers/db";

const subject = { id: 7, role: "staff" as const, email: "grace@example.com" };

describe("access tokens", () => {
  it("round-trips the subject", () => {
    expect(verifyAccessToken(signAccessToken(subject))).toEqual(subject);
  });

  it("carries issuer, audience and the configured lifetime", () => {
    const claims = jwt.decode(signAccessToken(subject)) as jwt.JwtPayload;
    expect(claims.iss).toBe(config.auth.issuer);
    expect(claims.aud).toBe(config.auth.audience);
    expect(claims.exp! - claims.iat!).toBe(config.auth.accessTtlSeconds);
  });

  it("rejects a token signed with another secret", () => {
    const forged = jwt.sign({ sub: "7" }, "dev-secret", { issuer: config.auth.issuer, audience: config.auth.audience });
    expect(() => verifyAccessToken(forged)).toThrow(jwt.JsonWebTokenError);
  });

  it("rejects a token for another audience", () => {
    const other = jwt.sign({ sub: "7" }, config.auth.jwtSecret, { issuer: config.auth.issuer, audience: "admin" });
    expect(() => verifyAccessToken(other)).toThrow(/audience/);
  });
});

describe("refresh tokens", () => {
  let userId: number;
  beforeEach(async () => {
    await resetDb();
    userId = (await createUser({ email: "ada@example.com", password: "correct horse 42" })).id;
  });

  it("rotates once and only once", async () => {
    const first = await issueRefreshToken(userId, { ip: "127.0.0.1" });
    const rotated = await rotateRefreshToken(first, { ip: "127.0.0.1" });
    expect(rotated?.userId).toBe(userId);
    expect(await rotateRefreshToken(first, { ip: "127.0.0.1" })).toBeNull();
  });

  it("lets exactly one of two concurrent rotations win", async () => {
    const token = await issueRefreshToken(userId, {});
    const results = await Promise.all([rotateRefreshToken(token, {}), rotateRefreshToken(token, {})]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("refuses an expired token", async () => {
    const token = await issueRefreshToken(userId, {});
    await expireRefreshTokens();
    expect(await rotateRefreshToken(token, {})).toBeNull();
  });
});
"""

CHANGELOG_OLD = "## Unreleased\n"
CHANGELOG_NEW = """\
## Unreleased

- Auth: `src/auth` split into `tokens.ts`, `credentials.ts` and `cookies.ts`; the HTTP API is unchanged.
- Auth (security): access tokens are always verified against the configured secret and audience;
  the `"dev-secret"` fallback is gone, and tokens without the `shop-web` audience are refused.
- Auth: refresh-token rotation is atomic; replaying a rotated token, or two concurrent refreshes
  with the same token, now fail cleanly with 401 `invalid_token`.
- Auth: the refresh cookie is `SameSite=Strict` after a refresh too (it was `Lax`).
- bcrypt cost comes from `AUTH_BCRYPT_COST` (default 12) everywhere, including `scripts/seed_users.py`.
"""
DOCS_CONFIG_OLD = "`JWT_SECRET` (required), `AUTH_BCRYPT_COST` (default 12), `DATABASE_URL` (required).\n"
DOCS_CONFIG_NEW = """\
`JWT_SECRET` (required, no fallback: the API refuses to start without it), `AUTH_BCRYPT_COST`
(default 12, also used by `scripts/seed_users.py`), `DATABASE_URL` (required).

## Code map

- `src/auth/tokens.ts`: signing and verifying access tokens, issuing and rotating refresh tokens.
- `src/auth/credentials.ts`: email/password check, including the legacy-hash upgrade.
- `src/auth/cookies.ts`: the refresh cookie (one set of options for login and refresh).
- `src/auth/login.ts`, `refresh.ts`, `logout.ts`: HTTP handlers only.
"""
DOCS_TOKEN_OLD = "- Access token: HS256 JWT, 15 minutes, claims `sub`, `role`, `email`, issuer `shop-api`.\n"
DOCS_TOKEN_NEW = ("- Access token: HS256 JWT, 15 minutes, claims `sub`, `role`, `email`, issuer `shop-api`,\n"
                  "  audience `shop-web` (both checked).\n")


def git_diff(before: Mapping[str, str], after: Mapping[str, str], paths: Sequence[str]) -> str:
    """``git diff`` of tracked files between two states of the fake file system."""
    out: list[str] = []
    for path in paths:
        old, new = before[path], after[path]
        if old == new:
            continue
        index = f"{zlib.crc32(old.encode()):08x}"[:7] + ".." + f"{zlib.crc32(new.encode()):08x}"[:7]
        out += [f"diff --git a/{path} b/{path}", f"index {index} 100644"]
        out += [line.rstrip("\n") for line in difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}", n=3)]
    return "\n".join(out)


def _line_of(text: str, needle: str) -> int:
    """1-based line number of the first line containing ``needle``."""
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return number
    raise AssertionError(f"story error: {needle!r} not found")


def rotated_failure() -> str:
    """vitest's report of the refresh-token replay test failing after step 1."""
    line = _line_of(REFRESH_TEST_TS, "expect(again.status).toBe(401);")
    source = REFRESH_TEST_TS.split("\n")
    excerpt = "\n".join(f"    {n:>3}| {source[n - 1]}" for n in range(line - 2, line + 3))
    excerpt = excerpt.replace(f"    {line:>3}| {source[line - 1]}\n",
                              f"    {line:>3}| {source[line - 1]}\n       |" + " " * 26 + "^\n")
    return ("\n FAIL  tests/auth/refresh.test.ts > POST /auth/refresh > rejects a refresh token that was already "
            "rotated\nAssertionError: expected 200 to be 401 // Object.is equality\n\n- Expected\n+ Received\n\n"
            f"- 401\n+ 200\n\n ❯ tests/auth/refresh.test.ts:{line}:26\n{excerpt}\n")


STRATEGY_TSC = """\
src/auth/login.ts(3,34): error TS2307: Cannot find module './cookies' or its corresponding type declarations.
src/auth/refresh.ts(2,34): error TS2307: Cannot find module './cookies' or its corresponding type declarations.
src/auth/strategies/ApiKeyStrategy.ts(3,34): error TS2307: Cannot find module '../../db/apiKeys' or its \
corresponding type declarations.
src/auth/strategies/PasswordStrategy.ts(14,12): error TS2416: Property 'kind' in type 'PasswordStrategy' is not \
assignable to the same property in base type 'AuthStrategy'.
  Type 'string' is not assignable to type 'CredentialKind'.
src/auth/strategies/PasswordStrategy.ts(16,3): error TS2416: Property 'canHandle' in type 'PasswordStrategy' is \
not assignable to the same property in base type 'AuthStrategy'.
  Type '(req: Request<{}, unknown, LoginBody>) => boolean' is not assignable to type '(req: \
Request<ParamsDictionary, any, any, ParsedQs, Record<string, any>>) => boolean'.
src/auth/strategies/PasswordStrategy.ts(20,3): error TS2416: Property 'authenticate' in type 'PasswordStrategy' \
is not assignable to the same property in base type 'AuthStrategy'.
src/auth/strategies/RefreshTokenStrategy.ts(7,12): error TS2416: Property 'kind' in type 'RefreshTokenStrategy' \
is not assignable to the same property in base type 'AuthStrategy'.
  Type 'string' is not assignable to type 'CredentialKind'.
src/auth/strategies/RefreshTokenStrategy.ts(20,22): error TS2741: Property 'email' is missing in type '{ id: \
number; role: "customer" | "staff" | "admin"; }' but required in type 'TokenSubject'.
src/auth/strategies/ApiKeyStrategy.ts(8,12): error TS2416: Property 'kind' in type 'ApiKeyStrategy' is not \
assignable to the same property in base type 'AuthStrategy'.
  Type 'string' is not assignable to type 'CredentialKind'.
src/auth/strategies/registry.ts(25,13): error TS2345: Argument of type 'PasswordStrategy' is not assignable to \
parameter of type 'AuthStrategy'.
src/auth/strategies/registry.ts(26,13): error TS2345: Argument of type 'RefreshTokenStrategy' is not assignable \
to parameter of type 'AuthStrategy'.

Found 11 errors in 6 files.

Errors  Files
     1  src/auth/login.ts:3
     1  src/auth/refresh.ts:2
     2  src/auth/strategies/ApiKeyStrategy.ts:3
     3  src/auth/strategies/PasswordStrategy.ts:14
     2  src/auth/strategies/RefreshTokenStrategy.ts:7
     2  src/auth/strategies/registry.ts:25"""

def strategy_failures() -> str:
    """vitest's report of the five auth tests the strategy-pattern rewrite broke."""
    cases = [
        ("login", "rejects a wrong password with 401", 'expect(res.body.error).toBe("invalid_credentials");',
         "expected 'authentication_failed' to be 'invalid_credentials' // Object.is equality"),
        ("login", "answers an unknown email exactly like a wrong password", "expect(res.body).toEqual({ error",
         "expected { error: 'authentication_failed', …(1) } to deeply equal { error: 'invalid_credentials', …(1) }"),
        ("login", "returns 400 when a field is missing", "expect(res.status).toBe(400);",
         "expected 401 to be 400 // Object.is equality"),
        ("login", "locks the account out after 5 failed attempts", "expect(res.status).toBe(429);",
         "expected 200 to be 429 // Object.is equality"),
        ("refresh", "returns 401 without a token", 'expect(res.body.error).toBe("missing_token");',
         "expected 'authentication_failed' to be 'missing_token' // Object.is equality"),
    ]
    blocks = []
    for name, title, needle, message in cases:
        source = LOGIN_TEST_TS if name == "login" else REFRESH_TEST_TS
        line = _line_of(source, needle)
        column = source.split("\n")[line - 1].index(".to", source.split("\n")[line - 1].index("expect(")) + 2
        blocks.append(f" FAIL  tests/auth/{name}.test.ts > POST /auth/{name} > {title}\nAssertionError: {message}\n"
                      f" ❯ tests/auth/{name}.test.ts:{line}:{column}")
    return "\n\n".join(blocks)

FULL_SUITE = [("tests/auth/password.test.ts", 3, 0, 398), ("tests/auth/login.test.ts", 9, 0, 702),
              ("tests/auth/refresh.test.ts", 5, 0, 263), ("tests/auth/tokens.test.ts", 7, 0, 311),
              ("tests/cart/total.test.ts", 6, 0, 41), ("tests/orders/list.test.ts", 8, 0, 377),
              ("tests/orders/checkout.test.ts", 7, 0, 512), ("tests/products/search.test.ts", 5, 0, 289),
              ("tests/health.test.ts", 2, 0, 18)]


def build_refactor_auth() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """The main story. Returns the header, the entries and the ids worth pointing at."""
    summarizer = StorySummarizer(REFACTOR_SUMMARIES)
    s = Story(summarizer, seed=7_311, start=datetime(2026, 3, 10, 8, 14, 6, 235_000, tzinfo=UTC),
              cwd="/home/dev/shop-api", files={**PROJECT_FILES, "src/db/pool.ts": POOL_TS,
                                               "src/db/users.ts": USERS_DB_TS, "src/app.ts": APP_TS,
                                               "tests/helpers/db.ts": TEST_HELPERS_TS})
    marks: dict[str, Any] = {}
    phase_a(s, marks)
    phase_b(s, marks)
    at_fork = dict(s.files)
    phase_c(s, marks)
    phase_d(s, marks, at_fork)
    marks["compactions"] = [c["id"] for c in s.compactions]
    if len(s.compactions) != 2 or summarizer.script:
        raise AssertionError(f"story error: {len(s.compactions)} compactions, {len(summarizer.script)} summaries "
                             "left unused")
    return s.header, s.entries, marks


def phase_a(s: Story, marks: dict[str, Any]) -> None:
    """Look before touching: read the auth code, run the tests, write the analysis and the plan."""
    s.system(SYSTEM_PROMPT, SYSTEM_SECTIONS, TOOLS)
    s.model_change()
    s.thinking_level("medium")
    s.allow_compaction = False
    marks["first_user"] = s.user("""
        I'd like to refactor the auth module of shop-api (src/auth). login.ts has turned into a grab
        bag and every change there breaks something else. Before we change anything: read the auth
        code and its tests, run the auth tests, and tell me what you see. Don't edit any files yet.
        """)["id"]
    s.step(thinking="""
        The user wants an analysis first and no edits. I'll get the layout of src/auth, the db
        helpers and the tests, with line counts, then read the handlers.
        """, text="Let me get an overview of the auth code and its tests first.",
           calls=[s.bash("ls src/auth src/db tests/auth tests/helpers && wc -l src/auth/*.ts src/config.ts "
                         "src/db/refreshTokens.ts", listing_output())])
    s.step(text="Now the three handlers and the middleware.",
           calls=[s.read("src/auth/login.ts"), s.read("src/auth/refresh.ts"), s.read("src/auth/logout.ts"),
                  s.read("src/auth/middleware.ts")])
    s.step(thinking="""
        login.ts does everything itself: input validation, an in-memory rate limiter, legacy sha256
        password check with an inline bcrypt upgrade (cost 10 hard-coded), JWT signing with
        process.env.JWT_SECRET, refresh token insert with raw SQL, cookie. refresh.ts duplicates the
        signing but without audience, and with expiresIn "15m" instead of the ACCESS_TTL constant;
        its cookie uses sameSite lax while login uses strict. middleware.ts falls back to
        "dev-secret" when JWT_SECRET is missing - that one is a real security problem. There is a
        password.ts and a config.ts; login doesn't import either. Let me read those and the refresh
        token db helper, and app.ts to see how the router and the middleware are mounted.
        """, calls=[s.read("src/auth/password.ts"), s.read("src/config.ts"), s.read("src/db/refreshTokens.ts"),
                    s.read("src/app.ts")])
    s.step(text="And the tests that pin the current behaviour, with their helpers:",
           calls=[s.read("tests/auth/login.test.ts"), s.read("tests/auth/refresh.test.ts"),
                  s.read("tests/helpers/db.ts")])
    s.step(text="Running the auth tests to get a baseline.",
           calls=[s.bash("npx vitest run tests/auth", vitest_output(AUTH_TEST_FILES, start="09:17:43",
                                                                     duration=2.31), seconds=3.4)])
    grep_output = noisy_grep_output(s.rng)
    s.step(thinking="""
        Baseline is green: 17 tests in 3 files. Before writing up, I want every place that touches the
        JWT secret or signs/verifies tokens, to be sure there is no fourth copy somewhere.
        """, calls=[s.bash('grep -rn "JWT_SECRET\\|jwt\\.sign\\|jwt\\.verify" .', grep_output, seconds=1.9)])
    marks["noisy_grep_result"] = s.leaf
    s.step(text="""
        That grep walked into node_modules, dist/ and coverage/ - not useful. Restricting it to our own
        sources:
        """, calls=[s.bash('grep -rn "JWT_SECRET\\|jwt\\.sign\\|jwt\\.verify" src tests scripts .env.example',
                           SOURCE_GREP)])
    marks["analysis"] = s.answer("""
        Here is what I see. The auth tests are green (17/17), so we have a safety net, but it only covers
        the HTTP behaviour, not the pieces.

        **Problems, most serious first**

        1. **Insecure fallback secret.** `middleware.ts` verifies with `process.env.JWT_SECRET ||
           "dev-secret"`. If the variable is ever missing in production, anyone can mint valid tokens.
        2. **Token signing is duplicated and inconsistent.** `login.ts` signs with `audience: "shop-web"`
           and `expiresIn: 900`; `refresh.ts` signs without an audience and with `"15m"`. The middleware
           checks only the issuer, which is why nobody noticed.
        3. **Configuration is bypassed.** `config.auth` (secret, issuer, audience, TTLs, bcrypt cost)
           exists but nothing imports it; `JWT_SECRET` is read from `process.env` in three files.
        4. **Three bcrypt costs**: 10 hard-coded in `login.ts`, `BCRYPT_COST` in `password.ts`, and
           `AUTH_BCRYPT_COST` (default 12) in `config.ts`.
        5. **Password logic lives in the handler.** The legacy `sha256(salt + password)` check and the
           upgrade to bcrypt are inline in `login()`; `password.ts` is not used by login at all.
        6. **Cookie options differ**: `sameSite: "strict"` after login, `"lax"` after refresh.
        7. **Refresh rotation is raw SQL in the handler** (revoke + insert, not in a transaction),
           while `db/refreshTokens.ts` has half of the helpers.
        8. The login rate limiter is a module-level `Map` - acceptable for one process, but invisible.

        **What is fine**: the error contract (`{ error, message }`) is consistent and well tested, and
        the refresh tokens are stored hashed and rotated on every use.

        I haven't changed anything. If you want, I'll write this up as a step-by-step plan next.
        """)["id"]
    s.session_name("Refactor auth module (shop-api)")
    lines = grep_output.count("\n") + 1
    marks["context_edit"] = s.context_edit(marks["noisy_grep_result"], {"content": (
        f"[output pruned by the user: {lines} lines of `grep -rn` over the whole checkout, almost all from "
        "node_modules/jsonwebtoken, node_modules/jws, dist/ and coverage/. The 7 matches in our own sources "
        "are in the next tool result.]")})["id"]

    s.user("""
        Good analysis, and yes, the dev-secret fallback has to go. Two more things before a plan:
        scripts/seed_users.py hashes passwords too, and docs/auth.md is what the frontend team reads.
        Check both, then write the plan to docs/auth-refactor-plan.md - small steps, each one green.
        """)
    s.step(text="Reading the seed script, the auth docs and package.json.",
           calls=[s.read("scripts/seed_users.py"), s.read("docs/auth.md"), s.read("package.json")])
    s.step(thinking="""
        seed_users.py hard-codes bcrypt rounds=10 and writes a legacy sha256 user for the upgrade
        test. docs/auth.md documents the error codes and says 15 minutes / 30 days, consistent with
        config.auth. So the plan: tokens.ts first (biggest duplication), then credentials.ts,
        cookies, the middleware (the security fix), the seed script, unit tests, docs. Keep the HTTP
        contract frozen.
        """, text="Writing the plan.", calls=[s.write("docs/auth-refactor-plan.md", PLAN_MD)])
    marks["plan"] = s.answer("""
        The plan is in `docs/auth-refactor-plan.md`: seven problems, six steps, each ending with
        typecheck + tests green. The HTTP contract (paths, status codes, error bodies, cookie name and
        path) stays frozen.

        One structural choice is still open:

        - **A. Strategy pattern**: an `AuthStrategy` interface with one implementation per credential
          type (password, refresh token, later OAuth) and a registry the handlers call.
        - **B. Plain modules**: `tokens.ts`, `credentials.ts`, `cookies.ts` with a few functions each;
          the handlers stay, but shrink to input/output glue.

        I'd start with B: it removes the duplication with the least new machinery, and it doesn't
        block an OAuth strategy later. A pays off only once there are several login methods.
        """)["id"]
    s.user("Which Node version are we actually on? package.json says >=20 but I'm not sure about CI.",
           think=(30, 70))
    s.step(calls=[s.bash("cat .nvmrc; node --version; grep -n \"node-version\" .github/workflows/ci.yml",
                         "20.11.1\nv20.11.1\n18:          node-version-file: .nvmrc")])
    s.answer("""
        Node 20.11.1 everywhere: `.nvmrc` pins it, CI reads `.nvmrc` (`node-version-file`), and your
        local `node` matches. So `crypto.randomUUID()`, `structuredClone` and `crypto.timingSafeEqual` on
        Buffers are all available.
        """)


def phase_b(s: Story, marks: dict[str, Any]) -> None:
    """Step 1 of the plan: tokens.ts. One test fails (rotation forgot to revoke), then all green."""
    s.user("""
        Let's go with B and start with step 1: tokens.ts, and switch login and refresh over to it.
        Commit when it's green.
        """)
    s.allow_compaction = True
    s.step(thinking="""
        tokens.ts: signAccessToken / verifyAccessToken reading config.auth (issuer and audience both),
        issueRefreshToken (insert), rotateRefreshToken (look up by hash, check revoked/expired, issue a
        new one). refresh.ts is small enough to rewrite; login.ts gets two edits: the imports and the
        signing/insert block. Cookies stay inline until step 3.
        """, text="Creating `src/auth/tokens.ts`.", calls=[s.write("src/auth/tokens.ts", TOKENS_TS)])
    s.step(text="Switching login over (imports, then the signing and refresh-token block) and rewriting refresh.ts:",
           calls=[s.edit("src/auth/login.ts", LOGIN_IMPORTS_OLD, LOGIN_IMPORTS_STEP1),
                  s.edit("src/auth/login.ts", LOGIN_TOKENS_OLD, LOGIN_TOKENS_STEP1),
                  s.write("src/auth/refresh.ts", REFRESH_TS_STEP1)])
    marks["failing_test"] = s.step(text="Typecheck and the auth tests:", calls=[s.bash(
        "npx tsc --noEmit && npx vitest run tests/auth",
        vitest_output([("tests/auth/password.test.ts", 3, 0, 405), ("tests/auth/login.test.ts", 9, 0, 671),
                       ("tests/auth/refresh.test.ts", 5, 1, 247)], failures=rotated_failure(), start="09:41:05",
                      duration=2.47),
        exit_code=1, seconds=6.2)])["id"]
    s.step(thinking="""
        The replay test fails: the second refresh with the same cookie gets 200. The old handler ran
        UPDATE ... SET revoked_at = now() before inserting the successor; my rotateRefreshToken only
        issues the new token and never revokes the presented one. It should revoke and insert in one
        transaction, and the revoke should be conditional (revoked_at IS NULL) so two concurrent
        refreshes can't both win. Let me check what db/pool.ts offers for transactions.
        """, text="The rotation never revokes the presented token - the old handler did. Checking the db helpers "
                  "for transactions:", calls=[s.read("src/db/pool.ts")])
    s.step(text="""
        `withTransaction` is there. Revoking conditionally inside it, and letting `issueRefreshToken` run on
        the transaction's client:
        """, calls=[s.edit("src/auth/tokens.ts", TOKENS_IMPORT_OLD, TOKENS_IMPORT_FIXED),
                    s.edit("src/auth/tokens.ts", ISSUE_OLD, ISSUE_FIXED),
                    s.edit("src/auth/tokens.ts", ROTATE_OLD, ROTATE_FIXED)])
    s.step(calls=[s.bash("npx tsc --noEmit && npx vitest run tests/auth",
                         vitest_output(AUTH_TEST_FILES, start="09:43:30", duration=2.38), seconds=6.0)])
    s.step(text="Green. The diff before I commit:", calls=[s.bash(
        "git diff", git_diff(PROJECT_FILES, s.files, ["src/auth/login.ts", "src/auth/refresh.ts"]))])
    s.step(text="Committing step 1:", calls=[s.bash(
        'git add src/auth/tokens.ts src/auth/login.ts src/auth/refresh.ts docs/auth-refactor-plan.md && '
        'git commit -q -m "auth: extract tokens.ts (signing, verification, refresh rotation)" && git log --oneline -3',
        "4be9c21 auth: extract tokens.ts (signing, verification, refresh rotation)\n"
        "a17d03f orders: status filter for GET /orders\n0c5e8b2 cart: round totals half-even")])
    marks["checkpoint"] = s.answer("""
        Step 1 is done and committed (`4be9c21`), tests green (17/17), typecheck clean.

        - `src/auth/tokens.ts` owns signing, verification (issuer **and** audience), issuing and rotating
          refresh tokens, all from `config.auth`.
        - Rotation now revokes the presented token and inserts its successor in one transaction; the
          revoke is conditional, so a replayed or concurrently used token gets 401. That was the failing
          test: my first version forgot the revoke.
        - `refresh.ts` lost its copy of the signing code and now also sets the audience claim.

        Next per the plan: step 2, `credentials.ts`.
        """)["id"]
    s.label(marks["checkpoint"], "checkpoint: tests green")


def phase_c(s: Story, marks: dict[str, Any]) -> None:
    """The abandoned attempt: a strategy-pattern rewrite that breaks the types and the error contract."""
    s.allow_compaction = False
    marks["strategy_request"] = s.user("""
        Before credentials.ts, let's rethink. OAuth (Google, Apple) is planned for Q3 and the admin CLI
        wants API keys. I'd rather do this properly now: an AuthStrategy interface, one strategy per
        credential type (password, refresh token, API key), a registry, and login/refresh become thin
        adapters over it.
        """)["id"]
    s.step(thinking="""
        The user wants option A after all. Interface with kind / canHandle / authenticate, an
        AuthenticationError carrying code and status, a registry keyed by kind. Password strategy takes
        over the credential check and issues the refresh token; refresh strategy wraps
        rotateRefreshToken; API key strategy for the CLI. Then login.ts and refresh.ts become adapters
        that map AuthenticationError to the JSON error.
        """, text="OK, strategy pattern. The interface and the registry first:",
           calls=[s.write("src/auth/strategies/AuthStrategy.ts", AUTH_STRATEGY_TS),
                  s.write("src/auth/strategies/registry.ts", REGISTRY_TS)])
    s.step(text="The three strategies:",
           calls=[s.write("src/auth/strategies/PasswordStrategy.ts", PASSWORD_STRATEGY_TS),
                  s.write("src/auth/strategies/RefreshTokenStrategy.ts", REFRESH_STRATEGY_TS),
                  s.write("src/auth/strategies/ApiKeyStrategy.ts", API_KEY_STRATEGY_TS)])
    s.step(text="And login.ts and refresh.ts as thin adapters over the registry:",
           calls=[s.write("src/auth/login.ts", LOGIN_TS_STRATEGY), s.write("src/auth/refresh.ts", REFRESH_TS_STRATEGY)])
    s.step(calls=[s.bash("npx tsc --noEmit", STRATEGY_TSC, exit_code=2, seconds=4.1)])
    s.step(thinking="""
        Eleven errors. The literal kinds widen to string: they need `readonly kind = "password" as const`.
        The Request generics don't line up with the interface (parameter bivariance doesn't save us
        with the class property syntax); simplest is to take plain Request and cast the body. The
        refresh strategy lost the email. Both adapters import ./cookies, which doesn't exist yet, and there
        is no db/apiKeys module - I'll create cookies.ts now and a stub for the API keys. That's a lot of
        fixing for the adapter layer...
        """, text="Fixing the literal types and the request generics, and stubbing the API-key lookup:",
           calls=[s.edit("src/auth/strategies/PasswordStrategy.ts", '  readonly kind = "password";',
                         '  readonly kind = "password" as const;'),
                  s.edit("src/auth/strategies/RefreshTokenStrategy.ts", '  readonly kind = "refresh_token";',
                         '  readonly kind = "refresh_token" as const;'),
                  s.edit("src/auth/strategies/RefreshTokenStrategy.ts",
                         "    return { subject: { id: user.id, role: user.role }, refreshToken: rotated.token };",
                         "    return {\n      subject: { id: user.id, role: user.role, email: user.email },\n"
                         "      refreshToken: rotated.token,\n    };"),
                  s.edit("src/auth/strategies/ApiKeyStrategy.ts", '  readonly kind = "api_key";',
                         '  readonly kind = "api_key" as const;'),
                  s.write("src/auth/cookies.ts", COOKIES_TS),
                  s.write("src/db/apiKeys.ts", "export async function findApiKeyByHash(_hash: string) {\n"
                          "  return undefined as undefined | { user_id: number; role: \"admin\"; label: string; "
                          "revoked_at: Date | null };\n}\n")])
    s.step(calls=[s.bash(
        "npx tsc --noEmit && npx vitest run tests/auth",
        vitest_output([("tests/auth/password.test.ts", 3, 0, 401), ("tests/auth/login.test.ts", 9, 4, 702),
                       ("tests/auth/refresh.test.ts", 5, 1, 266)], failures=strategy_failures(), start="10:02:51",
                      duration=2.64), exit_code=1, seconds=7.3)])
    marks["abandoned_leaf"] = s.answer("""
        It typechecks now, but 5 of 17 auth tests fail, and they fail for structural reasons:

        - The registry answers every credential it can't handle with one generic `authentication_failed`,
          so `invalid_credentials`, `missing_token` and the 400 for a missing field are gone. That breaks
          the error contract the web shop relies on.
        - The lockout after 5 failed attempts is lost: the rate limiter lived in the old handler and no
          strategy owns it.

        To fix this inside the pattern I would add an `AuthError` hierarchy with an `ErrorMapper` per
        endpoint, split `canHandle` into "not mine" and "malformed", and wrap the password strategy in a
        `RateLimitedStrategy` decorator. That is three or four more files before we are back to where
        step 1 left us.
        """, thinking="""
        Five failures, all from the adapter layer changing behaviour. Fixing them means more
        abstractions: error mapping per endpoint, a decorator for rate limiting, a richer canHandle. I
        should be honest that this is growing.
        """)["id"]
    s.allow_compaction = True


def phase_d(s: Story, marks: dict[str, Any], at_fork: Mapping[str, str]) -> None:
    """Back to the checkpoint with /tree, then plan B to the end: credentials, cookies, middleware, docs."""
    marks["branch_summary"] = s.leave_branch(marks["strategy_request"])["id"]
    s.label(marks["abandoned_leaf"], "abandoned: strategy pattern")
    s.user("""
        That went sideways: far too much ceremony for three credential types, and it broke the error
        contract. Back to plan B - credentials.ts with a plain verifyCredentials(), and the handler keeps
        the HTTP bits. Careful: the strategy files are still on disk, /tree doesn't touch the working tree.
        """)

    def restore(rec: Recorder) -> None:
        rec.files.clear()
        rec.files.update(at_fork)

    s.step(text="Right - the working tree still has the abandoned attempt. Checking and restoring:",
           calls=[s.bash("git status --short", " M src/auth/login.ts\n M src/auth/refresh.ts\n?? src/auth/cookies.ts\n"
                         "?? src/auth/strategies/\n?? src/db/apiKeys.ts")])
    s.step(calls=[s.bash(
        "git checkout -- src/auth/login.ts src/auth/refresh.ts && rm -r src/auth/strategies src/auth/cookies.ts "
        "src/db/apiKeys.ts && git status --short && git log --oneline -1",
        "4be9c21 auth: extract tokens.ts (signing, verification, refresh rotation)", effect=restore)])
    s.step(thinking="""
        Clean again at 4be9c21. For credentials.ts I need findUserByEmail / updatePasswordHash from
        db/users.ts and the current login.ts (after step 1). verifyCredentials returns a tagged result
        so the handler keeps the 401 body exactly as before (unknown email and wrong password stay
        indistinguishable). Use timingSafeEqual for the legacy comparison while I'm at it, and take the
        bcrypt cost from config via password.ts.
        """, text="Clean at `4be9c21`. Reading what credentials.ts will build on:",
           calls=[s.read("src/db/users.ts"), s.read("src/auth/login.ts")])
    s.step(text="`src/auth/credentials.ts`, and password.ts taking its cost from config:",
           calls=[s.write("src/auth/credentials.ts", CREDENTIALS_TS),
                  s.edit("src/auth/password.ts", PASSWORD_COST_OLD, PASSWORD_COST_NEW),
                  s.edit("src/auth/password.ts", PASSWORD_HASH_OLD, PASSWORD_HASH_NEW)])
    s.step(text="Now login.ts uses it:",
           calls=[s.edit("src/auth/login.ts", LOGIN_HEAD_OLD, LOGIN_HEAD_NEW),
                  s.edit("src/auth/login.ts", LOGIN_LEGACY_OLD, ""),
                  s.edit("src/auth/login.ts", LOGIN_PASSWORD_OLD, LOGIN_PASSWORD_NEW),
                  s.edit("src/auth/login.ts", LOGIN_DISABLED_OLD, LOGIN_DISABLED_NEW)])
    s.step(calls=[s.bash("npx tsc --noEmit && npx vitest run tests/auth",
                         vitest_output(AUTH_TEST_FILES, start="10:21:14", duration=2.52), seconds=6.4)])
    s.answer("""
        Step 2 done, 17/17 green. `credentials.ts` has `verifyCredentials(email, password)` returning
        `{ ok: true, user }` or `{ ok: false, reason }`; the legacy comparison uses `timingSafeEqual` now,
        and the upgrade re-hashes with the configured cost (`config.auth.bcryptCost`, 12). `login.ts` no
        longer imports bcrypt or crypto.
        """)
    s.bash_execution("git diff --stat", " src/auth/credentials.ts | 46 +++++++++++++++++++++++++++++++++++++\n"
                     " src/auth/login.ts       | 28 ++++----------------\n src/auth/password.ts    | 10 ++++++---\n"
                     " 3 files changed, 59 insertions(+), 25 deletions(-)\n")
    s.user("""
        Diff looks right. Steps 3 and 4 together: one place for the refresh cookie (strict everywhere),
        and the middleware verifies through tokens.ts - the dev-secret fallback must be gone.
        """)
    s.step(text="The cookie helper first, then login, refresh and logout use it:",
           calls=[s.write("src/auth/cookies.ts", COOKIES_TS),
                  s.edit("src/auth/login.ts", LOGIN_IMPORTS_STEP2, LOGIN_IMPORTS_STEP3),
                  s.edit("src/auth/login.ts", LOGIN_CONST_OLD, LOGIN_CONST_NEW),
                  s.edit("src/auth/login.ts", LOGIN_COOKIE_OLD, LOGIN_COOKIE_NEW),
                  s.edit("src/auth/login.ts", LOGIN_EXPIRES_OLD, LOGIN_EXPIRES_NEW),
                  s.edit("src/auth/refresh.ts", REFRESH_IMPORT_OLD, REFRESH_IMPORT_NEW),
                  s.edit("src/auth/refresh.ts", REFRESH_COOKIE_OLD, REFRESH_COOKIE_NEW),
                  s.edit("src/auth/logout.ts", LOGOUT_IMPORT_OLD, LOGOUT_IMPORT_NEW),
                  s.edit("src/auth/logout.ts", LOGOUT_OLD, LOGOUT_NEW)])
    s.step(thinking="""
        Middleware: replace the jwt.verify call with verifyAccessToken, keep the jwt import for the
        TokenExpiredError check. verifyAccessToken checks the audience too, which the old middleware
        didn't - tokens from before step 1's refresh change lack it, but access tokens live 15 minutes,
        so that's only a deploy-time blip. Worth mentioning.
        """, text="And the middleware:",
           calls=[s.edit("src/auth/middleware.ts", MIDDLEWARE_IMPORT_OLD, MIDDLEWARE_IMPORT_NEW),
                  s.edit("src/auth/middleware.ts", MIDDLEWARE_VERIFY_OLD, MIDDLEWARE_VERIFY_NEW)])
    s.step(text="Full suite this time, since the middleware guards every route:", calls=[s.bash(
        "npx tsc --noEmit && npx vitest run",
        vitest_output([f for f in FULL_SUITE if "tokens" not in f[0]], start="10:34:40", duration=4.12),
        seconds=9.8)])
    s.answer("""
        Steps 3 and 4 done; typecheck clean, full suite green (45 tests in 8 files).

        - `src/auth/cookies.ts`: `setRefreshCookie` / `clearRefreshCookie`, `SameSite=Strict` everywhere;
          login, refresh and logout use it.
        - `middleware.ts` verifies through `verifyAccessToken`: the `"dev-secret"` fallback is gone and
          the audience is checked now.

        One deploy note: access tokens issued by the old `refresh.ts` had no audience, so they will be
        refused after the deploy. They live 15 minutes and the web shop refreshes on 401, so users won't
        notice, but it's worth a line in the release notes.
        """)
    s.user("Good catch on the audience. Steps 5 and 6: the seed script's bcrypt cost, and unit tests for tokens.ts.")
    s.step(text="The seed script reads the same variable as the API:",
           calls=[s.read("scripts/seed_users.py", offset=18, limit=12),
                  s.edit("scripts/seed_users.py", SEED_OLD, SEED_NEW)])
    s.step(text="Unit tests for `tokens.ts`, including the replay and the concurrent-rotation cases:",
           calls=[s.write("tests/auth/tokens.test.ts", TOKENS_TEST_TS)])
    s.step(calls=[s.bash(
        "python scripts/seed_users.py --dry-run && npx vitest run tests/auth",
        "ada@example.com        customer  bcrypt  $2b$12$Qm0mO9hRZb3yN...\n"
        "grace@example.com      staff     bcrypt  $2b$12$8XoXw1w2dD1tH...\n"
        "root@example.com       admin     bcrypt  $2b$12$kcW1p2qJ8C6aG...\n"
        "old@example.com        customer  legacy  5d2c0a8f6e21b7c4a9d3...\n"
        + vitest_output([*AUTH_TEST_FILES, ("tests/auth/tokens.test.ts", 7, 0, 311)], start="10:49:02",
                        duration=2.97, extra_header=""), seconds=8.5)])
    s.answer("""
        Steps 5 and 6 done. The seed script hashes with `AUTH_BCRYPT_COST` (12 by default, matching the
        API; the dry run shows `$2b$12$`), and `tests/auth/tokens.test.ts` adds 7 unit tests: round trip,
        claims and lifetime, a token signed with `"dev-secret"` is refused, wrong audience refused,
        single-use rotation, one winner out of two concurrent rotations, expiry. Auth tests: 24/24.
        """)
    s.custom_message("changelog-guard", prose("""
        CHANGELOG check (extension `changelog-guard`): files under src/auth changed since the last
        release, but CHANGELOG.md has no entry under "Unreleased". AGENTS.md asks for one per
        user-visible change.
        """), details={"changed": ["src/auth/cookies.ts", "src/auth/credentials.ts", "src/auth/login.ts",
                                   "src/auth/logout.ts", "src/auth/middleware.ts", "src/auth/password.ts",
                                   "src/auth/refresh.ts", "src/auth/tokens.ts"], "since": "v1.4.0"})
    s.user("Yes, add the changelog entry and update docs/auth.md, then lint and the full suite, and give me a summary.")
    s.step(text="Re-reading both files before editing them:",
           calls=[s.read("CHANGELOG.md"), s.read("docs/auth.md")])
    s.step(calls=[s.edit("CHANGELOG.md", CHANGELOG_OLD, CHANGELOG_NEW),
                  s.edit("docs/auth.md", DOCS_TOKEN_OLD, DOCS_TOKEN_NEW),
                  s.edit("docs/auth.md", DOCS_CONFIG_OLD, DOCS_CONFIG_NEW)])
    s.step(calls=[s.bash(
        "npm run lint && npx tsc --noEmit && npx vitest run",
        "\n> shop-api@1.4.0 lint\n> eslint src tests --max-warnings 0\n\n"
        + vitest_output(FULL_SUITE, start="11:02:17", duration=4.36), seconds=16.0)])
    login_lines = _line_count(s.files["src/auth/login.ts"])
    s.answer(f"""
        The auth refactor is done. Lint, typecheck and the full suite are green (52 tests in 9 files).

        **What changed**
        - `src/auth/tokens.ts`: signing and verification (issuer + audience) and atomic, single-use
          refresh rotation, all from `config.auth`.
        - `src/auth/credentials.ts`: `verifyCredentials()` with the legacy-hash upgrade
          (`timingSafeEqual`, configured bcrypt cost).
        - `src/auth/cookies.ts`: one set of refresh-cookie options, `SameSite=Strict`.
        - `login.ts` went from {_line_count(LOGIN_TS)} to {login_lines} lines of HTTP glue; `refresh.ts` and
          `logout.ts` shrank too. `middleware.ts` has no `"dev-secret"` fallback any more.
        - `scripts/seed_users.py` uses `AUTH_BCRYPT_COST`; 7 new unit tests; CHANGELOG and
          `docs/auth.md` updated.

        **Unchanged on purpose**: paths, status codes, `{{ error, message }}` bodies, the cookie name and
        path, and the in-memory login throttle (moving it to Redis is out of scope).

        **Deploy note**: access tokens minted by the old refresh handler lack the audience and will get
        one 401 each after the deploy; the web shop refreshes transparently.
        """)
    marks["done"] = s.leaf
    s.label(marks["done"], "checkpoint: refactor done")
    s.user("Perfect. Commit it.", think=(15, 40))
    changed = ["src/auth/login.ts", "src/auth/logout.ts", "src/auth/middleware.ts", "src/auth/password.ts",
               "src/auth/refresh.ts"]
    stat = "\n".join(f" {p} | {n}" for p, n in (("src/auth/login.ts", 41), ("src/auth/logout.ts", 3),
                                                   ("src/auth/middleware.ts", 8), ("src/auth/password.ts", 10),
                                                   ("src/auth/refresh.ts", 13)))
    s.step(text="A last look at the tracked changes since `4be9c21` before committing:", calls=[s.bash(
        "git diff --stat HEAD -- src/auth && git diff HEAD -- src/auth",
        stat + "\n 5 files changed, 29 insertions(+), 46 deletions(-)\n" + git_diff(at_fork, s.files, changed))])
    s.step(calls=[s.bash(
        'git add -A src/auth scripts/seed_users.py tests/auth CHANGELOG.md docs && git commit -q -m '
        '"auth: credentials.ts, cookies.ts, middleware via tokens.ts; no dev-secret fallback" && '
        "git log --oneline -2 && git status --short",
        "9d31f7a auth: credentials.ts, cookies.ts, middleware via tokens.ts; no dev-secret fallback\n"
        "4be9c21 auth: extract tokens.ts (signing, verification, refresh rotation)")])
    marks["main_leaf"] = s.answer("Committed as `9d31f7a` on top of `4be9c21`; the working tree is clean.")["id"]


REFACTOR_SUMMARIES: list[ScriptedSummary] = [
    # Compaction 1 fires after the `git diff` of step 1; the cut splits the turn that wrote the plan.
    ScriptedSummary("history", """
        ## Goal
        Refactor the auth module of shop-api (`src/auth`, Express + TypeScript) into small, testable pieces
        without changing how the HTTP API behaves.

        ## Constraints & Preferences
        - Analysis first: no file edits until the user has seen the findings
        - The HTTP contract is frozen: paths, status codes, `{ error, message }` bodies, cookie name and path
        - The auth tests (`npx vitest run tests/auth`) must stay green
        - Secrets and settings should come from `config.auth` (`src/config.ts`), not `process.env`

        ## Progress
        ### Done
        - [x] Read `src/auth/{login,refresh,logout,middleware,password}.ts`, `src/config.ts`,
          `src/db/refreshTokens.ts`, `src/app.ts`, the auth tests and `tests/helpers/db.ts`
        - [x] Baseline: `npx vitest run tests/auth` passes, 17 tests in 3 files
        - [x] Found every use of the JWT secret in our sources (a whole-checkout grep was node_modules noise;
          the user pruned it from the context)
        - [x] Reported the problems to the user (listed under Critical Context); nothing edited yet

        ### In Progress
        - (none)

        ### Blocked
        - (none)

        ## Key Decisions
        - **Analysis only so far**: the user asked for findings before any change

        ## Next Steps
        1. Wait for the user's reaction to the findings, then turn them into a step-by-step plan

        ## Critical Context
        - Problems: (1) `middleware.ts` verifies with `process.env.JWT_SECRET || "dev-secret"`; (2) JWT signing
          is duplicated: `login.ts` uses `audience: "shop-web"`, `expiresIn: 900`, `refresh.ts` no audience and
          `"15m"`, the middleware checks the issuer only; (3) `config.auth` exists but is unused, `JWT_SECRET`
          is read from `process.env` in three files; (4) bcrypt cost 10 in `login.ts`, `BCRYPT_COST` in
          `password.ts`, `AUTH_BCRYPT_COST` (default 12) in `config.ts`; (5) the legacy
          `sha256(salt + password)` check and the bcrypt upgrade are inline in `login()`; (6) refresh cookie
          `sameSite` is strict after login, lax after refresh; (7) refresh rotation is raw SQL in the handler,
          not in a transaction; (8) the login rate limiter is a module-level `Map`
        - Error codes the web shop depends on: `invalid_request` 400, `invalid_credentials` 401,
          `missing_token` 401, `invalid_token` 401, `token_expired` 401, `account_disabled` 403,
          `too_many_attempts` 429
        - Refresh tokens: 48 random bytes (base64url) in the `refresh_token` cookie (`Path=/auth`), stored as
          sha256 in `refresh_tokens.token_hash`, single use
        - Test helpers: `resetDb()`, `createUser({ email, password, legacy?, disabled? })`,
          `expireRefreshTokens()`
        """, covers=("I'd like to refactor the auth module", "output pruned by the user",
                     "I haven't changed anything"),
        not_covers=("node_modules/jws/lib/sign-stream.js", "Good analysis, and yes")),
    ScriptedSummary("turn_prefix", """
        ## Original Request
        The user agreed that the `"dev-secret"` fallback has to go and asked to check `scripts/seed_users.py`
        and `docs/auth.md` before writing a plan to `docs/auth-refactor-plan.md`: small steps, each one green.

        ## Early Progress
        - `scripts/seed_users.py` hard-codes bcrypt `rounds=10` and seeds a legacy sha256 user
          (`old@example.com`) for the upgrade test
        - `docs/auth.md` documents the endpoints, the error codes, 15-minute access and 30-day refresh tokens
        - Wrote `docs/auth-refactor-plan.md`: (1) `tokens.ts`, (2) `credentials.ts`, (3) `cookies.ts`,
          (4) middleware through `verifyAccessToken` without the fallback, (5) seed script cost from
          `AUTH_BCRYPT_COST`, (6) unit tests, docs and CHANGELOG; Redis rate limiting and OAuth out of scope

        ## Context for Suffix
        - The plan is written and needs the user's go-ahead before step 1
        """, covers=("Good analysis, and yes", "bytes to docs/auth-refactor-plan.md"), not_covers=("The plan is in",)),
    # The branch summary, written when the user leaves the strategy-pattern attempt with /tree.
    ScriptedSummary("branch", """
        ## Goal
        Rebuild credential handling around a strategy pattern (an `AuthStrategy` interface, one strategy per
        credential type - password, refresh token, API key - and a registry, with `login.ts` and
        `refresh.ts` as thin adapters), with room for more login methods such as API keys for the admin CLI.

        ## Constraints & Preferences
        - The `{ error, message }` contract and the status codes must not change
        - Tests green after every step

        ## Progress
        ### Done
        - [x] Wrote `src/auth/strategies/{AuthStrategy,registry,PasswordStrategy,RefreshTokenStrategy,
          ApiKeyStrategy}.ts`
        - [x] Rewrote `src/auth/login.ts` and `src/auth/refresh.ts` as adapters over the registry; added
          `src/auth/cookies.ts` and a stub `src/db/apiKeys.ts`
        - [x] Fixed the 11 TypeScript errors (literal `kind` types, Request generics, missing `email` on the
          refresh subject, missing modules)

        ### In Progress
        - [ ] 5 of 17 auth tests fail

        ### Blocked
        - The registry's generic `authentication_failed` replaces `invalid_credentials`, `missing_token` and
          the 400 for a missing field; the login lockout was lost with the old handler

        ## Key Decisions
        - **Abandoned**: repairing it needed an error hierarchy with per-endpoint mapping, a richer
          `canHandle` and a rate-limiting decorator - too much machinery for three credential types

        ## Next Steps
        1. Restore the working tree to commit `4be9c21`: the strategy files, `cookies.ts`, `apiKeys.ts` and the
           rewritten `login.ts` / `refresh.ts` are still on disk
        2. Continue with the plain-modules plan, step 2: `credentials.ts`
        """, covers=("OK, strategy pattern", "5 of 17 auth tests fail"), not_covers=("That went sideways",)),
    # Compaction 2 fires after the final lint + full test run; the cut splits the turn of step 2.
    ScriptedSummary("history", """
        ## Goal
        Refactor the auth module of shop-api (`src/auth`, Express 4 + TypeScript on Node 20) into small,
        testable pieces without changing how the HTTP API behaves.

        ## Constraints & Preferences
        - The HTTP contract is frozen: paths, status codes, `{ error, message }` bodies, cookie name and path
        - Typecheck (`npx tsc --noEmit`) and tests (`npx vitest run`) green after every step; commit per step
        - Configuration only through `src/config.ts` (AGENTS.md)
        - Plain modules, not a strategy pattern (the user tried one and rejected it)

        ## Progress
        ### Done
        - [x] Analysis of `src/auth` and the plan in `docs/auth-refactor-plan.md` (6 steps)
        - [x] Step 1: `src/auth/tokens.ts` (`signAccessToken`, `verifyAccessToken` checking issuer and audience,
          `issueRefreshToken`, `rotateRefreshToken`); `login.ts` and `refresh.ts` use it. First run failed
          `rejects a refresh token that was already rotated` (200 instead of 401: rotation never revoked the
          presented token); fixed with a conditional revoke + insert inside `withTransaction`. 17/17 green,
          committed as `4be9c21`
        - [x] Tried a strategy-pattern rewrite on a side branch and abandoned it (it broke the error contract
          and the lockout); returned to `4be9c21`

        ### In Progress
        - [ ] Step 2: `credentials.ts`

        ### Blocked
        - (none)

        ## Key Decisions
        - **Plain modules** (`tokens.ts`, `credentials.ts`, `cookies.ts`) over a strategy pattern
        - **Atomic single-use rotation**: `UPDATE ... WHERE revoked_at IS NULL` decides the winner of
          concurrent refreshes

        ## Next Steps
        1. Restore the working tree (leftovers of the abandoned attempt), then step 2: `credentials.ts`
        2. Steps 3-6: `cookies.ts`, middleware via `verifyAccessToken` (drop `"dev-secret"`), seed script cost,
           unit tests, docs and CHANGELOG

        ## Critical Context
        - Remaining problems: `"dev-secret"` fallback in `middleware.ts`; refresh cookie `sameSite` lax after
          refresh; bcrypt cost not from config; legacy hash check inline in `login()`
        - Node 20.11.1 (`.nvmrc`, CI reads it)
        - Error codes: `invalid_request` 400, `invalid_credentials` 401, `missing_token` 401, `invalid_token`
          401, `token_expired` 401, `account_disabled` 403, `too_many_attempts` 429
        """, covers=("The plan is in", "Step 1 is done and committed", "returned from another branch"),
        not_covers=("That went sideways",)),
    ScriptedSummary("turn_prefix", """
        ## Original Request
        Back to plain modules after the abandoned strategy attempt: `credentials.ts` with a plain
        `verifyCredentials()`, the handler keeps the HTTP bits. The working tree still held the attempt's files.

        ## Early Progress
        - `git status` showed the leftovers: `login.ts` and `refresh.ts` modified, `src/auth/strategies/`,
          `src/auth/cookies.ts` and `src/db/apiKeys.ts` untracked
        - Restored them (`git checkout -- src/auth/login.ts src/auth/refresh.ts`, `rm -r` of the new files);
          the tree is clean at `4be9c21`
        - Read `src/db/users.ts` (`findUserByEmail`, `updatePasswordHash` also clears `password_salt`) and the
          current `login.ts`, where the legacy check and the bcrypt upgrade (cost 10) are still inline

        ## Context for Suffix
        - Next: write `src/auth/credentials.ts` so that `login.ts` keeps identical 401 bodies for an unknown
          email and a wrong password, and take the bcrypt cost from `config.auth.bcryptCost`
        """, covers=("That went sideways", "git checkout -- src/auth/login.ts",
                     'import { issueRefreshToken, signAccessToken } from "./tokens";'),
        not_covers=("`src/auth/credentials.ts`, and password.ts taking its cost",)),
]


# --------------------------------------------------------------------------- quick tour
CART_TOTAL_TS = """\
import type { CartLine } from "./types";

const VAT_RATE = 0.19;

/** Round half to even, to whole cents (so 0.125 -> 0.12 and 0.135 -> 0.14). */
export function roundCents(value: number): number {
  const cents = value * 100;
  const floor = Math.floor(cents);
  if (Math.abs(cents - floor - 0.5) < 1e-9) {
    return (floor % 2 === 0 ? floor : floor + 1) / 100;
  }
  return Math.round(cents) / 100;
}

export function cartTotal(lines: CartLine[]): { net: number; vat: number; gross: number } {
  const net = roundCents(lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0));
  const vat = roundCents(net * VAT_RATE);
  return { net, vat, gross: roundCents(net + vat) };
}
"""
DISCOUNT_OLD = "  const net = roundCents(lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0));\n"
DISCOUNT_FIXED = """\
  const subtotal = lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
  const net = roundCents(subtotal > 100 ? subtotal * 0.9 : subtotal);
"""
DISCOUNT_CONFIG = """\
  const subtotal = lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
  const { threshold, rate } = config.cart.discount;
  const net = roundCents(subtotal > threshold ? subtotal * (1 - rate) : subtotal);
"""


def build_quick_tour() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A short session: a question, then two alternative answers to a follow-up (one branch), one label."""
    r = Recorder(seed=1_201, start=datetime(2026, 3, 12, 14, 2, 51, 118_000, tzinfo=UTC), cwd="/home/dev/shop-api",
                 files={"src/cart/total.ts": CART_TOTAL_TS})
    marks: dict[str, Any] = {}
    r.model_change()
    r.user("What does src/cart/total.ts compute? Keep it short.")
    r.assistant(calls=[r.read("src/cart/total.ts")])
    r.run_tools()
    marks["explained"] = r.assistant(text="""
        `cartTotal(lines)` adds up `unitPrice × quantity` over the cart lines (the **net**), adds 19% VAT,
        and returns `{ net, vat, gross }`. Every amount is rounded to cents with `roundCents`, which rounds
        half to even (banker's rounding), so 0.125 becomes 0.12 and 0.135 becomes 0.14.
        """)["id"]
    marks["fork_user"] = r.user("Add a 10% discount on the net amount for orders over 100 EUR.")["id"]
    r.assistant(calls=[r.edit("src/cart/total.ts", DISCOUNT_OLD, DISCOUNT_FIXED)])
    r.run_tools()
    marks["first_leaf"] = r.assistant(
        text="Done: above 100 EUR net, the net amount is reduced by 10% before VAT.")["id"]
    # /tree: the user selects their discount request, which puts the leaf back on the explanation.
    r.files["src/cart/total.ts"] = CART_TOTAL_TS
    r.leaf = marks["explained"]
    r.user("""
        Add a discount on the net amount for large orders, but make threshold and rate configurable
        (config.cart.discount), defaulting to 100 EUR and 10%.
        """)
    r.assistant(calls=[r.edit("src/cart/total.ts", DISCOUNT_OLD, DISCOUNT_CONFIG)])
    r.run_tools()
    marks["second_leaf"] = r.assistant(text="""
        Done: `cartTotal` reads `config.cart.discount.threshold` and `.rate`; with the defaults, orders above
        100 EUR net get 10% off before VAT.
        """)["id"]
    marks["label"] = r.label(marks["explained"], "explained: cartTotal")["id"]
    return r.header, r.entries, marks


# --------------------------------------------------------------------------- rendering safety
def tiny_png() -> str:
    """A valid 2×2 RGB PNG (red, green, blue, white), base64-encoded."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"\x00\xff\x00\x00\x00\xff\x00" + b"\x00\x00\x00\xff\xff\xff\xff"
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")


def review_dump() -> str:
    """A tool result of 3000+ characters mixing markup, entities and scripts of many languages."""
    reviews = [
        ("5", "Great mug!!! <b>would buy again</b>"),
        ("1", "<script>alert(1)</script>"),
        ("2", "<img src=x onerror=alert(2)>"),
        ("4", "&lt;script&gt; is shown escaped here &amp; that's fine &quot;ok&quot; &#39;ok&#39; &#x3C;/p&#x3E;"),
        ("5", "很好用，质量不错！推荐给大家 👍"),
        ("3", "思ったより小さいです。でも色はきれい。"),
        ("4", "배송이 빨라요 😊"),
        ("5", "ممتاز جدا، أنصح به"),
        ("2", "לא הגיע בזמן"),
        ("5", "Ünïcödé ñ ç ß ø å — “quotes” ‘single’ … «guillemets»"),
        ("1", "\"><svg/onload=alert(3)>"),
        ("3", "javascript:alert(4)"),
        ("4", "<a href=\"javascript:alert(5)\">click me</a>"),
        ("5", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚o̙̔ͮ̇͐̇ text"),
        ("4", "zero\u200bwidth\u200djoiner and soft\u00adhyphen"),
        ("2", "file name: \u202egnp.exe (right-to-left override)"),
        ("5", "👩‍💻🧑🏽‍🚀🇯🇵🏳️‍🌈 family: 👨‍👩‍👧‍👦"),
        ("3", "</textarea></pre></code><style>body{display:none}</style>"),
        ("1", "{{constructor.constructor('alert(6)')()}}"),
        ("4", "${7*7} #{7*7} <%= 7*7 %>"),
    ]
    lines = ["id  | stars | text", "----|-------|-----"]
    for n in range(4):
        for i, (stars, text) in enumerate(reviews):
            lines.append(f"{n * len(reviews) + i + 1:>3} | {stars:>5} | {text}")
    lines.append(f"({4 * len(reviews)} rows)")
    return "\n".join(lines)


def ansi_test_output() -> str:
    """Terminal output with ANSI colour escapes, as a user-run command prints it."""
    esc = "\u001b"
    return (f"{esc}[1m RUN {esc}[22m v1.6.0 /home/dev/shop-api\n\n"
            f" {esc}[32m✓{esc}[39m tests/reviews/render.test.ts {esc}[2m(4 tests)\u001b[22m\n"
            f" {esc}[31m×{esc}[39m tests/reviews/sanitize.test.ts > strips <script> tags\n"
            f"   {esc}[31m→ expected '<script>alert(1)</script>' to be ''{esc}[39m\n\n"
            f" Test Files  {esc}[1m{esc}[31m1 failed{esc}[39m{esc}[22m | "
            f"{esc}[1m{esc}[32m1 passed{esc}[39m{esc}[22m (2)\n")


def build_xss_and_unicode() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """Messages made to break careless renderers: markup, entities, scripts, emoji, RTL, U+2028, images."""
    png = tiny_png()
    r = Recorder(seed=2_028, start=datetime(2026, 3, 14, 19, 40, 3, 907_000, tzinfo=UTC), cwd="/home/dev/shop-web",
                 files={"public/img/broken-review.png": "(binary)"})
    marks: dict[str, Any] = {}
    r.model_change()
    r.session_name("<script>alert('session name')</script> reviews & ünïcödé 🧪")
    marks["script_user"] = r.user(
        "A customer review renders as a popup on the product page. The raw review text is "
        "<script>alert(1)</script> and another one is <img src=x onerror=alert(2)>. Where do we render "
        "reviews without escaping? (Entities like &lt;b&gt; &amp; &quot; &#39; &nbsp; must stay literal.)",
        raw=True)["id"]
    r.assistant(thinking="Reviews are rendered in the product page component; look for dangerouslySetInnerHTML "
                "or v-html or innerHTML = <b>anything</b>. The payload <img src=x onerror=alert(2)> suggests "
                "attribute injection too.",
                text="Searching for places that inject review text as HTML (`innerHTML`, "
                "`dangerouslySetInnerHTML`):", raw=True,
                calls=[r.bash("grep -rn \"innerHTML\\|dangerouslySetInnerHTML\" src --include=*.tsx "
                              "| grep -i review",
                              "src/components/ReviewList.tsx:31:        <p dangerouslySetInnerHTML={{ __html: "
                              "review.text }} />\nsrc/components/ReviewList.tsx:44:  el.innerHTML = `<b>${"
                              "review.author}</b>`; // </script><script>alert('grep')</script>")])
    r.run_tools()
    r.assistant(calls=[r.bash("psql -c \"select id, stars, text from reviews order by id "
                                                     "limit 60\" --csv | column -t -s,", review_dump())])["id"]
    r.run_tools()
    marks["long_result"] = r.leaf
    r.assistant(text=(
        "Found it: `ReviewList.tsx` line 31 renders `review.text` with `dangerouslySetInnerHTML`, so "
        "`<script>alert(1)</script>` is inert (scripts inserted via innerHTML don't run) but "
        "`<img src=x onerror=alert(2)>` **does** run. Line 44 builds HTML from the author name.\n\n"
        "| line | code | risk |\n|---|---|---|\n"
        "| 31 | `<p dangerouslySetInnerHTML={{ __html: review.text }} />` | <b>XSS</b> via attributes |\n"
        "| 44 | ``el.innerHTML = `<b>${review.author}</b>` `` | XSS via author |\n\n"
        "Fix: render text as text (`<p>{review.text}</p>`), which also keeps `&lt;b&gt;` literal."),
        raw=True)
    marks["cjk_user"] = r.user(
        "好的，请修复。另外错误信息要翻译：「ログインに失敗しました」→ 中文和한국어。"
        "絵文字もテスト 🔐👩‍💻🇯🇵👍🏽 — and the right-to-left ones: مرحبا بالعالم / שלום עולם.", raw=True)["id"]
    r.assistant(text=(
        "修复完成 ✅\n\n- 中文：登录失败\n- 日本語：ログインに失敗しました\n- 한국어: 로그인에 실패했습니다\n"
        "- العربية: فشل تسجيل الدخول\n- עברית: ההתחברות נכשלה\n\n"
        "Mixed direction in one line: the file \u202eexe.txt\u202c is not what it seems, and "
        "שלום (hello) sits inside an English sentence with مرحبا.\n"
        "This line contains a raw LINE SEPARATOR here:\u2028and a raw PARAGRAPH SEPARATOR here:\u2029end."),
        raw=True)
    marks["u2028"] = r.leaf
    marks["image_user"] = r.user(
        "Here is a screenshot of the broken page (tiny, sorry):", raw=True,
        images=[{"type": "image", "data": png, "mimeType": "image/png"}])["id"]
    r.assistant(text="Let me look at the image file the reporter attached as well.",
                calls=[Call("read", {"path": "public/img/broken-review.png"},
                            lambda rec: ToolOutput("Read image file [image/png]", images=[
                                {"type": "image", "data": png, "mimeType": "image/png"}]))])
    r.run_tools()
    marks["image_result"] = r.leaf
    r.assistant(text="Both images are 2×2 pixels (red, green, blue, white): too small to show the bug, but "
                "the code path is clear.", raw=True)
    marks["ansi"] = r.bash_execution("npx vitest run tests/reviews --color", ansi_test_output(), exit_code=1)["id"]
    r.custom_message("security-notice", (
        "**Security notice** (extension `sec-lint`): <iframe src=\"https://evil.example/\"></iframe> "
        "patterns found in 2 files. <b>Do not</b> render this message as HTML. `</script>` `-->` `<!--`"),
        details={"html": "<script>alert('details')</script>", "rtl": "\u202eevil", "nul": "a\u0000b"})
    r.user("Write the failing case as a regression test, with the payloads verbatim.", raw=True)
    r.assistant(calls=[r.write("tests/reviews/xss.test.tsx", (
        "import { render } from \"@testing-library/react\";\nimport { ReviewList } from "
        "\"../../src/components/ReviewList\";\n\nconst payloads = [\"<script>alert(1)</script>\", "
        "\"<img src=x onerror=alert(2)>\", \"\\\"><svg/onload=alert(3)>\", \"&lt;b&gt;\"];\n\n"
        "it.each(payloads)(\"renders %s as text\", (text) => {\n  const { container } = render(<ReviewList "
        "reviews={[{ id: 1, author: \"<b>x</b>\", stars: 1, text }]} />);\n  expect(container.textContent)"
        ".toContain(text);\n  expect(container.querySelector(\"script, img, svg\")).toBeNull();\n});\n"))])
    r.run_tools()
    r.assistant(calls=[r.bash("npx vitest run tests/reviews/xss.test.tsx",
                              "Error: </pre><script>alert('error output')</script>\n    at render "
                              "(node_modules/@testing-library/react/dist/pure.js:257:5)\n\n"
                              "Test failed: expected null, received <img src=\"x\" onerror=\"alert(2)\">",
                              exit_code=1)])
    r.run_tools()
    marks["error_result"] = r.leaf
    marks["last_answer"] = r.assistant(text=(
        "The regression test fails as expected (`<img src=\"x\" onerror=\"alert(2)\">` is rendered as an "
        "element). A very long line for wrapping tests follows: https://shop.example/search?q="
        + "%3Cscript%3Ealert(7)%3C%2Fscript%3E" * 12 + "&lang=日本語"), raw=True)["id"]
    r.label(marks["script_user"], "<i>xss</i> “payload” & 'quotes' 🧨")
    return r.header, r.entries, marks


# --------------------------------------------------------------------------- wide tree
class TreeRecorder(Recorder):
    """A :class:`Recorder` for big trees: the context size is kept per entry as it is appended.

    ``tokens[id]`` is the estimated context at an entry (its parent's plus its own messages),
    which is what Pi would see there on an uncompacted branch, so usage stays consistent with
    the branch without projecting every path again.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokens: dict[str | None, int] = {None: 0}
        self.sent: dict[str | None, int] = {None: 0}  # prompt + output of the last model call on the path
        self.answered: dict[str | None, int] = {None: 0}  # context size at the last answer on the path

    def _add(self, entry: dict[str, Any]) -> dict[str, Any]:
        own = 0
        if entry["type"] == "message":
            own = estimate_tokens(entry["message"])
        elif entry["type"] in ("branch_summary", "custom_message"):
            own = math.ceil(jsjson.utf16_len(entry.get("summary") or entry.get("content") or "") / 4)
        parent = entry["parentId"]
        self.tokens[entry["id"]] = self.tokens[parent] + own
        message = entry.get("message") or {}
        usage = message.get("usage") if message.get("role") == "assistant" else None
        self.sent[entry["id"]] = usage["totalTokens"] if usage else self.sent[parent]
        self.answered[entry["id"]] = self.tokens[entry["id"]] if usage else self.answered[parent]
        return super()._add(entry)

    def _usage(self, output: int) -> dict[str, Any]:
        prompt = math.ceil(self.tokens[self.leaf] * self.token_ratio) + self.rng.randint(0, 40) + 900
        fresh = self.rng.choice((1, 1, 2, 3, 6, 10))
        new_part = math.ceil((self.tokens[self.leaf] - self.answered[self.leaf]) * self.token_ratio)
        cache_read = max(0, min(self.sent[self.leaf], prompt - fresh - new_part))
        return usage_record(fresh, output, cache_read, prompt - fresh - cache_read)


TREE_TASKS = [
    ("pagination for GET /products", "src/products/list.ts"),
    ("a flaky checkout test", "tests/orders/checkout.test.ts"),
    ("the slow product search", "src/products/search.ts"), ("VAT for Swiss customers", "src/cart/total.ts"),
    ("order export as CSV", "src/orders/export.ts"), ("the password reset mail", "src/auth/reset.ts"),
    ("stock reservations", "src/inventory/reserve.ts"), ("the admin audit log", "src/admin/audit.ts"),
    ("coupon codes", "src/cart/coupons.ts"), ("image resizing for thumbnails", "src/media/thumbs.ts"),
    ("rate limits on /auth", "src/auth/limits.ts"), ("a memory leak in the SSE endpoint", "src/events/sse.ts"),
    ("the Postgres connection pool size", "src/db/pool.ts"), ("shipping cost tables", "src/shipping/rates.ts"),
    ("wishlists", "src/wishlist/index.ts"), ("the currency formatter", "src/i18n/money.ts"),
]
TREE_ASKS = ["Let's work on {task}.", "Can you look at {task}? Start with {path}.", "Next: {task}, small steps please.",
             "Try a different approach for {task}.", "Go back to {task} and keep the public API unchanged.",
             "What is wrong with {task}? Read {path} first.", "Write tests for {task}.", "Simplify {path}."]
TREE_REPLIES = ["Done. {path} is updated and the tests pass.", "I changed {path}; the behaviour is the same, the "
                "code is shorter.", "The tests for {task} pass now.", "That needs a migration; I wrote it and "
                "ran it locally.", "Not fixable in {path} alone: the caller passes the wrong unit. Fixed both.",
                "Reverted my last change; the original version of {path} was right."]


def build_wide_tree(target_entries: int = 10_400) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A big tree for performance tests: many branches, some long single-child chains, labels."""
    r = TreeRecorder(seed=10_007, start=datetime(2026, 2, 2, 7, 30, 0, 0, tzinfo=UTC), cwd="/home/dev/shop-api")
    rng = r.rng
    users: list[str] = []
    marks: dict[str, Any] = {"labels": [], "branch_summaries": []}

    def turn() -> None:
        task, path = rng.choice(TREE_TASKS)
        users.append(r.user(rng.choice(TREE_ASKS).format(task=task, path=path), think=(4, 50), raw=True)["id"])
        if rng.random() < 0.6:
            kind = rng.random()
            if kind < 0.5:
                call = r.read(path)
                r.files[path] = f"// {path}\nexport function todo() {{\n  return {rng.randint(1, 99)};\n}}\n"
            elif kind < 0.8:
                call = r.bash(f"npx vitest run {path.replace('src/', 'tests/').replace('.ts', '.test.ts')}",
                              f" ✓ {path} ({rng.randint(2, 12)} tests) {rng.randint(20, 900)}ms\n\n"
                              f" Test Files  1 passed (1)\n      Tests  {rng.randint(2, 12)} passed", seconds=2.5)
            else:
                r.files[path] = f"export const value = {rng.randint(1, 9)};\n"
                call = r.edit(path, r.files[path], f"export const value = {rng.randint(10, 99)};\n")
            thinking = f"Look at {path} before changing anything." if rng.random() < 0.3 else None
            r.assistant(thinking=thinking, calls=[call])
            r.run_tools()
        r.assistant(text=rng.choice(TREE_REPLIES).format(task=task, path=path), raw=True)

    def chain(turns: int) -> None:
        for _ in range(turns):
            turn()

    r.model_change()
    r.thinking_level("low")
    chain(30)
    branches = 0
    while len(r.entries) < target_entries:
        if rng.random() < 0.25:
            target = rng.choice(r.path()[-60:])["id"]
            marks["labels"].append(r.label_fast(target, f"checkpoint {len(marks['labels']) + 1}"))
        old_leaf = r.leaf
        pick = rng.choice(users[-300:]) if rng.random() < 0.6 else rng.choice(users)
        r.leaf = r.by_id[pick]["parentId"]  # /tree on a user message: the leaf goes to its parent
        branches += 1
        if rng.random() < 0.2:
            marks["branch_summaries"].append(r.append("branch_summary", {
                "fromId": old_leaf, "summary": BRANCH_SUMMARY_PREAMBLE + (
                    "## Goal\nTry another approach to the current task.\n\n## Progress\n### Done\n- [x] Explored "
                    f"branch {branches}; kept nothing from it\n\n## Next Steps\n1. Continue here"),
                "details": {"readFiles": [], "modifiedFiles": []}}, ms=r.clock.wait(5, 20))["id"])
        if rng.random() < 0.05:
            r.model_change(PROVIDER, rng.choice(("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5")))
        roll = rng.random()
        chain(rng.randint(1, 6) if roll < 0.65 else rng.randint(8, 30) if roll < 0.94 else rng.randint(150, 420))
    marks["branches"] = branches
    marks["last_entry"] = r.leaf
    return r.header, r.entries, marks


# --------------------------------------------------------------------------- damaged copy
GARBAGE_LINE = b"<<<<<<< HEAD (a merge conflict marker pasted into the session file)"
INVALID_UTF8_LINE = b'{"type":"label","id":"\xff\xfe\xfd","targetId":' + b"\xc3\x28" + b"}"


def damage(quick_tour: bytes) -> tuple[bytes, list[int]]:
    """quick-tour's bytes with a garbage line, an invalid UTF-8 line and a truncated last line.

    Returns the bytes and the 1-based line numbers of the three damaged lines. Every entry of
    quick-tour survives: the damage is inserted, and the truncated line is an extra entry
    whose write was interrupted.
    """
    lines = quick_tour.rstrip(b"\n").split(b"\n")
    lines.insert(5, GARBAGE_LINE)        # after the header and four entries
    lines.insert(11, INVALID_UTF8_LINE)
    half_written = (b'{"type":"message","id":"5eed0bad","parentId":"' + jsjson.loads(lines[-1])["id"].encode()
                    + b'","timestamp":"2026-03-12T14:31:02.114Z","message":{"role":"user","content":[{"type":"te')
    lines.append(half_written)
    damaged = [6, 12, len(lines)]
    return b"\n".join(lines), damaged  # no final newline: the crash came mid-line


# --------------------------------------------------------------------------- main
def main(out_dir: str | Path = HERE) -> dict[str, Any]:
    """Write every sample session into ``out_dir``; returns the ids of interest per file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    marks: dict[str, Any] = {}
    header, entries, marks["refactor-auth.jsonl"] = build_refactor_auth()
    write_jsonl(out / "refactor-auth.jsonl", header, entries)
    header, entries, marks["quick-tour.jsonl"] = build_quick_tour()
    quick = write_jsonl(out / "quick-tour.jsonl", header, entries)
    header, entries, marks["xss-and-unicode.jsonl"] = build_xss_and_unicode()
    write_jsonl(out / "xss-and-unicode.jsonl", header, entries)
    header, entries, marks["wide-tree.jsonl"] = build_wide_tree()
    write_jsonl(out / "wide-tree.jsonl", header, entries)
    data, damaged_lines = damage(quick)
    (out / "damaged.jsonl").write_bytes(data)
    marks["damaged.jsonl"] = {"damaged_lines": damaged_lines}
    return marks


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    result = main(target)
    for name in SAMPLE_FILES:
        size = (target / name).stat().st_size
        print(f"{name:<24} {size:>9,} bytes  {result[name]}")
