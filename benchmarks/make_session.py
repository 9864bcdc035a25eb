#!/usr/bin/env python3
"""Generate a realistic Pi v3 session file of a requested size, deterministically.

    python benchmarks/make_session.py --mb 100                 # -> benchmarks/data/session-100mb-s1.jsonl
    python benchmarks/make_session.py --mb 100 --no-compaction # one linear branch, never compacted
    python benchmarks/make_session.py --entries 100000 -o benchmarks/data/e100k.jsonl
    python benchmarks/make_session.py --mb 5 --verify          # cross-check every decision with pikit

The same arguments (and ``--seed``) always produce the same bytes.

What is written, the way Pi 1.5 writes it (compact JSON, keys in Pi's order
``type,id,parentId,timestamp,...``, 8-hex ids, ISO timestamps, messages with Unix-ms
timestamps): a header, ``model_change`` and ``thinking_level_change``, a system message
(prompt sections and tool declarations), ``session_info``, then turns: a user prompt, model
calls (text/thinking/toolCall blocks for read/write/edit/bash, usage with
input/output/cacheRead/cacheWrite/totalTokens/cost, stopReason), the tool results (large
file reads and logs, failures with ``isError``), a final answer. Along the way: branches
(the leaf moves back to re-edit a prompt, sometimes with a ``branch_summary``), labels,
context edits that elide big tool output, a few aborted or errored calls, occasional
bashExecution/custom_message/usage entries, model and thinking changes, and a few large
inline base64 images in user messages.

Compactions are placed where Pi would place them: after a tool batch (before the next
model call) and after a run's final answer, when the context size by Pi's rule (last usable
usage + estimates after it; everything estimated when an edit or compaction made the usage
stale) exceeds ``contextWindow - reserveTokens``. The compaction itself comes from pikit:
``prepare_compaction(branch, keepRecentTokens)`` gives ``firstKeptEntryId`` and
``tokensBefore``. To stay fast on 100 MB, the generator keeps the context size
incrementally and hands pikit only the branch from the latest compaction's first kept
entry onwards (everything before it is invisible to the projection, so the answer is the
same; ``--verify`` checks this against the full branch and against a reload of the file).
Now and then the threshold check is "missed" and the model call fails with a context
overflow instead: Pi then omits the failed attempt with a ``context_edit`` and compacts.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pikit._context.projection import project_path  # noqa: E402
from pikit._context.tokens import estimate_tokens  # noqa: E402
from pikit._format.entry import Entry  # noqa: E402
from pikit.compaction._preparation import prepare_compaction  # noqa: E402

DATA_DIR = Path(__file__).resolve().parent / "data"

# --------------------------------------------------------------------------- vocabulary
_NOUNS = (  # noqa: SIM905 - a word list reads better as text
    "session entry branch leaf parent child compaction summary token budget window reserve "
    "projection context message prompt cache queue worker parser lexer module config fixture "
    "test suite handler router request response stream buffer chunk index offset cursor schema "
    "migration header footer widget panel tree node edge graph path file directory socket "
    "retry backoff timeout error warning label edit replacement usage cost provider model "
    "thinking signature tool result command output exit status build bundle import export "
    "registry package version lockfile commit diff patch hunk line column range selection"
).split()
_VERBS = (  # noqa: SIM905 - a word list reads better as text
    "refactor extract inline rename move split merge load parse serialize validate check "
    "compute estimate project compact summarize cache invalidate retry stream flush append "
    "read write update delete patch render format lint test build bundle deploy migrate fix"
).split()
_ADJS = (  # noqa: SIM905 - a word list reads better as text
    "stale fresh large small nested flat deep shallow lazy eager async sync strict loose "
    "empty partial complete broken flaky slow fast cheap expensive new old legacy shared"
).split()
_DIRS = ("src", "src/core", "src/cli", "src/tui", "src/session", "src/compaction", "src/tools",
         "test", "test/fixtures", "packages/agent/src", "packages/ai/src", "packages/tui/src", "scripts", "docs")
_EXTS = (".ts", ".ts", ".ts", ".tsx", ".py", ".json", ".md", ".rs")
_UNICODE = ("—", "…", "→", "é", "über", "naïve", "✓", "✗", "配置文件", "日本語のテスト", "🚀", "👍", "Ω", "½", "«ok»")
_LABELS = ("checkpoint", "before-refactor", "bug-repro", "good-state", "try-2", "review", "perf", "wip")
_BASH = (
    "npm test", "npm run build", "npm run check", "git status", "git diff --stat", "git log --oneline -20",
    "ls -la", "rg -n \"{w}\" src", "pytest -q", "cargo test", "tsc --noEmit", "node scripts/{w}.mjs",
    "cat package.json", "find . -name '*.ts' | head -50", "wc -l src/**/*.ts", "npx biome check .",
)
_MODELS = (
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages", (3.0, 15.0, 0.3, 3.75)),
    ("anthropic", "claude-opus-4-5", "anthropic-messages", (5.0, 25.0, 0.5, 6.25)),
)
_THINKING = ("off", "low", "medium", "high")
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


class Vocab:
    """Pools of text built once from the seed; outputs are sampled from them (fast)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        r = rng
        self.paths = sorted({f"{r.choice(_DIRS)}/{r.choice(_NOUNS)}"
                             f"{r.choice('-_') + r.choice(_NOUNS) if r.random() < 0.5 else ''}{r.choice(_EXTS)}"
                             for _ in range(260)})
        self.idents = [self._ident() for _ in range(600)]
        self.sentences = [self._sentence() for _ in range(2500)]
        self.code = [self._code_line() for _ in range(6000)]
        self.log = [self._log_line() for _ in range(3000)]

    def _ident(self) -> str:
        r = self.rng
        a, b = r.choice(_VERBS), r.choice(_NOUNS)
        return a + b[0].upper() + b[1:] if r.random() < 0.7 else f"{a}_{b}"

    def _sentence(self) -> str:
        r = self.rng
        n = r.choice(_NOUNS)
        forms = (
            f"I'll {r.choice(_VERBS)} the {r.choice(_ADJS)} {n} in `{r.choice(self.paths)}` first.",
            f"The {n} is {r.choice(_ADJS)} because `{r.choice(self.idents)}` never {r.choice(_VERBS)}s it.",
            f"Let me {r.choice(_VERBS)} `{r.choice(self.idents)}()` and check the {r.choice(_NOUNS)} again.",
            f"We should {r.choice(_VERBS)} the {n} before the {r.choice(_NOUNS)} is {r.choice(_ADJS)}.",
            f"Now {r.choice(_VERBS)} {r.choice(_NOUNS)}s so that each {n} keeps its {r.choice(_NOUNS)}.",
            f"That {r.choice(_VERBS)}s {r.randint(2, 900)} {n}s in {r.randint(1, 90)} ms, which is {r.choice(_ADJS)}.",
            f"Can you {r.choice(_VERBS)} the {n} handling in {r.choice(self.paths)}?",
        )
        s = r.choice(forms)
        if r.random() < 0.04:
            s = s[:-1] + " " + r.choice(_UNICODE) + s[-1]
        return s

    def _code_line(self) -> str:
        r = self.rng
        i = r.choice(self.idents)
        j = r.choice(self.idents)
        n = r.choice(_NOUNS)
        ind = "  " * r.choice((0, 1, 1, 2, 2, 2, 3, 3, 4))
        forms = (
            f'import {{ {i}, {j} }} from "./{n}/{r.choice(_NOUNS)}.js";',
            f"export function {i}({n}: {n.title()}, opts: Options = {{}}): {j.title()} {{",
            f"{ind}const {n} = {i}({r.choice(_NOUNS)}, {r.randint(0, 4096)});",
            f"{ind}if (!{n}) return {r.choice(['null', 'undefined', '[]', 'false', n])};",
            f"{ind}for (const {n} of this.{r.choice(_NOUNS)}s) {{",
            f"{ind}{n}.{i}({j}, {r.choice(['true', 'false', 'null', str(r.randint(0, 99))])});",
            f"{ind}}}",
            f"{ind}// {r.choice(self.sentences)}",
            f"{ind}throw new Error(`{r.choice(_ADJS)} {n}: ${{{j}}}`);",
            f"{ind}return {{ ...{n}, {r.choice(_NOUNS)}: {i}({j}) }};",
            f"def {i}(self, {n}, {r.choice(_NOUNS)}=None):",
            f"{ind}self.{n} = {i}({j}, {r.random():.3f})",
            "",
        )
        return r.choice(forms)

    def _log_line(self) -> str:
        r = self.rng
        forms = (
            f"  ✓ {r.choice(_VERBS)}s {r.choice(_NOUNS)} {r.choice(_NOUNS)} ({r.randint(0, 400)} ms)",
            f"  ✗ {r.choice(_VERBS)}s {r.choice(_ADJS)} {r.choice(_NOUNS)}",
            f"{r.choice(self.paths)}:{r.randint(1, 900)}:{r.randint(1, 80)}: {r.choice(self.sentences)}",
            f"    at {r.choice(self.idents)} ({r.choice(self.paths)}:{r.randint(1, 900)}:{r.randint(1, 80)})",
            f"[{r.choice(['info', 'warn', 'debug', 'error'])}] {r.choice(self.sentences)}",
            f"{r.randint(1, 99999):>6} {r.choice(self.paths)}",
        )
        return r.choice(forms)

    def lines(self, pool: list[str], n: int) -> str:
        return "\n".join(self.rng.choices(pool, k=n))

    def prose(self, a: int, b: int) -> str:
        return " ".join(self.rng.choices(self.sentences, k=self.rng.randint(a, b)))


# --------------------------------------------------------------------------- helpers
def _iso(ms: int) -> str:
    t = time.gmtime(ms // 1000)
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
            f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{ms % 1000:03d}Z")


def _money(value: float) -> float | int:
    """A cost as Pi stores it; refuse values whose Python repr would differ from JavaScript's."""
    if value == 0 or float(value).is_integer():
        return int(value)
    if "e" in repr(value):
        raise AssertionError(f"cost {value!r} would print differently in JavaScript")
    return value


def _dumps(obj: Any) -> str:
    # JSON.stringify: compact, non-ASCII as is. Floats are only costs, made safe by _money.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class _Stop(Exception):
    pass


class Generator:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.v = Vocab(random.Random(args.seed * 7919 + 1))
        self.clock = 1772442845123 + args.seed * 86_400_000  # 2026-03-02T09:14:05.123Z + seed days
        self.ids: set[str] = set()
        self.count = 0
        self.bytes = 0
        self.out: Any = None
        self.leaf: str | None = None
        self.branch: list[Entry] = []  # root -> leaf, the active path
        self.base = 0  # branch index where the projection starts to matter (see module doc)
        self.model = _MODELS[0]
        self.thinking = "off"
        self.compaction_index = -1  # branch index of the latest compaction, -1 if none
        # Pi's context size, kept incrementally: last usable usage + estimates after it.
        self.usage_total: int | None = None
        self.trailing = 0
        self.stale = False
        self.ctx_est = 0  # sum of the estimates of every projected message (what a request sends)
        self.prev_prompt = 0  # prompt tokens of the previous request (the cached prefix)
        self.threshold = args.context_window - args.reserve_tokens
        self.stats: dict[str, int] = {}
        self.verify_checks = 0
        self.image_plan = self._plan_images()

    # ------------------------------------------------------------------ primitives
    def tick(self, lo: float, hi: float) -> int:
        self.clock += int(self.rng.uniform(lo, hi) * 1000) + 1
        return self.clock

    def new_id(self) -> str:
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.ids:
                self.ids.add(i)
                return i

    def tool_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choices(_B62, k=22))

    def done(self) -> bool:
        a = self.args
        if a.entries is not None and self.count >= a.entries:
            return True
        return a.mb is not None and self.bytes >= a.mb * 1_000_000

    def append(self, kind: str, fields: dict[str, Any], *, parent: Any = ..., on_branch: bool = True) -> dict[str, Any]:
        """Write one entry under the leaf (or ``parent``) and make it the leaf."""
        if self.args.entries is not None and self.count >= self.args.entries:
            raise _Stop  # an exact entry count: the session simply ends here
        parent_id = self.leaf if parent is ... else parent
        obj: dict[str, Any] = {"type": kind, "id": self.new_id(), "parentId": parent_id,
                               "timestamp": _iso(self.tick(0.001, 0.02))}
        obj.update(fields)
        line = _dumps(obj).encode("utf-8") + b"\n"
        self.out.write(line)
        self.bytes += len(line)
        self.count += 1
        key = kind if kind != "message" else "message/" + obj["message"]["role"]
        self.stats[key] = self.stats.get(key, 0) + 1
        self.leaf = obj["id"]
        if on_branch:
            self.branch.append(Entry(obj))
        return obj

    def message(self, msg: dict[str, Any]) -> dict[str, Any]:
        obj = self.append("message", {"message": msg})
        est = estimate_tokens(msg)
        self.ctx_est += est
        if msg["role"] == "assistant" and self._usable(msg):
            self.usage_total = msg["usage"]["totalTokens"]
            self.trailing = 0
            self.stale = False
        else:
            self.trailing += est
        return obj

    @staticmethod
    def _usable(msg: dict[str, Any]) -> bool:
        return msg.get("stopReason") not in ("aborted", "error") and msg["usage"]["totalTokens"] > 0

    # ------------------------------------------------------------------ Pi's context size
    def context_tokens(self) -> int:
        if self.usage_total is not None and not self.stale:
            tokens = self.usage_total + self.trailing
        else:
            tokens = project_path(self.branch[self.base:]).tokens
        if self.args.verify:
            self._verify_tokens(tokens)
        return tokens

    def _verify_tokens(self, tokens: int) -> None:
        full = project_path(list(self.branch))
        part = project_path(self.branch[self.base:])
        if not (full.tokens == part.tokens == tokens):
            raise AssertionError(f"context size at {self.leaf}: incremental {tokens}, "
                                 f"from base {part.tokens}, full branch {full.tokens}")
        self.verify_checks += 1

    def resync(self) -> None:
        """Recompute the incremental state from a projection (after a move, edit or compaction)."""
        proj = project_path(self.branch[self.base:])
        self.ctx_est = sum(proj.estimates)
        size = proj.size
        if size.usage_index is not None:
            self.usage_total = size.usage_tokens
            self.trailing = size.trailing_tokens
            self.stale = False
        else:
            self.usage_total = None
            self.trailing = size.tokens
            self.stale = True

    def maybe_compact(self, reason: str = "threshold") -> bool:
        if self.args.no_compaction:
            return False
        if reason == "threshold" and self.context_tokens() <= self.threshold:
            return False
        self.compact()
        return True

    def compact(self) -> None:
        keep = self.args.keep_recent_tokens
        prep = prepare_compaction(self.branch[self.base:], keep)
        if self.args.verify:
            full = prepare_compaction(list(self.branch), keep)
            got = (prep.first_kept_entry_id, prep.tokens_before) if prep else None
            want = (full.first_kept_entry_id, full.tokens_before) if full else None
            if got != want:
                raise AssertionError(f"compaction at {self.leaf}: from base {got}, full branch {want}")
        if prep is None:
            return
        start = self.tick(8, 40)
        read, modified = prep.read_files, prep.modified_files
        summary = self.summary_text(prep.previous_summary is not None, prep.is_split_turn) + prep.file_lists_text
        fields: dict[str, Any] = {
            "summary": summary,
            "firstKeptEntryId": prep.first_kept_entry_id,
            "tokensBefore": prep.tokens_before,
            "details": {"readFiles": read, "modifiedFiles": modified},
            "usage": self.usage(min(prep.tokens_before, 150_000), len(summary) // 4, cached=False),
        }
        system = prep.projection.system_message
        if system is not None:
            fields["systemMessage"] = {**system, "timestamp": start}
        obj = self.append("compaction", fields)
        self.compaction_index = len(self.branch) - 1
        first_kept = obj["firstKeptEntryId"]
        kept = next((i for i in range(self.base, self.compaction_index) if self.branch[i].id == first_kept),
                    self.compaction_index)
        self.base = kept
        self.resync()
        self.prev_prompt = 0

    def summary_text(self, update: bool, split: bool) -> str:
        v = self.v
        r = self.rng
        parts = [
            "## Goal\n" + v.prose(1, 2),
            "## Constraints & Preferences\n- " + "\n- ".join(r.choices(v.sentences, k=r.randint(1, 3))),
            "## Progress\n### Done\n- [x] " + "\n- [x] ".join(r.choices(v.sentences, k=r.randint(2, 6)))
            + "\n\n### In Progress\n- [ ] " + r.choice(v.sentences) + "\n\n### Blocked\n- (none)",
            "## Key Decisions\n- **" + r.choice(v.idents) + "**: " + r.choice(v.sentences),
            "## Next Steps\n1. " + "\n2. ".join(r.choices(v.sentences, k=2)),
            "## Critical Context\n- " + r.choice(v.sentences),
        ]
        text = "\n\n".join(parts)
        if update:
            text = text.replace("## Goal\n", "## Goal\n(updated) ", 1)
        if split:
            text += "\n\n---\n\n**Turn Context (split turn):**\n\n" + v.prose(1, 3)
        return text

    # ------------------------------------------------------------------ message builders
    def usage(self, prompt: int, output: int, cached: bool = True) -> dict[str, Any]:
        """A provider usage for a request of ``prompt`` tokens answering ``output`` tokens."""
        rates = self.model[3]
        output = max(12, output)
        prompt = max(60, prompt)
        if cached and self.prev_prompt and self.rng.random() < 0.92:
            cache_read = min(self.prev_prompt, prompt - 40)
            cache_read = cache_read if cache_read >= 400 else 0
            rest = prompt - cache_read
            cache_write = rest - self.rng.randint(40, min(400, max(40, rest)))
            cache_write = cache_write if cache_write >= 30 else 0
        else:
            cache_read = 0
            cache_write = 0 if not cached else max(0, prompt - self.rng.randint(40, 200))
            cache_write = cache_write if cache_write >= 30 else 0
        inp = prompt - cache_read - cache_write
        cost = {
            "input": _money(rates[0] / 1e6 * inp),
            "output": _money(rates[1] / 1e6 * output),
            "cacheRead": _money(rates[2] / 1e6 * cache_read),
            "cacheWrite": _money(rates[3] / 1e6 * cache_write),
        }
        cost["total"] = _money(cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"])
        return {"input": inp, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
                "totalTokens": inp + output + cache_read + cache_write, "cost": cost}

    @staticmethod
    def zero_usage() -> dict[str, Any]:
        return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def assistant(self, content: list[dict[str, Any]], stop: str, started: int,
                  error: str | None = None) -> dict[str, Any]:
        provider, model, api, _ = self.model
        msg: dict[str, Any] = {"role": "assistant", "content": content, "api": api, "provider": provider,
                               "model": model}
        if stop in ("error", "aborted"):
            msg["usage"] = self.zero_usage()
        else:
            prompt = int(self.ctx_est * self.rng.uniform(1.02, 1.08))
            out_est = estimate_tokens({"role": "assistant", "content": content})
            msg["usage"] = self.usage(prompt, int(out_est * self.rng.uniform(1.0, 1.3)))
            self.prev_prompt = prompt
        msg["stopReason"] = stop
        if error is not None:
            msg["errorMessage"] = error
        msg["timestamp"] = started
        return msg

    def thinking_block(self) -> dict[str, Any]:
        sig = base64.b64encode(self.rng.randbytes(self.rng.randint(180, 700))).decode()
        return {"type": "thinking", "thinking": self.v.prose(2, 18), "thinkingSignature": sig}

    def tool_call(self) -> dict[str, Any]:
        r = self.rng
        v = self.v
        roll = r.random()
        path = r.choice(v.paths)
        args: dict[str, Any]
        if roll < 0.42:
            name, args = "read", {"path": path}
            if r.random() < 0.15:
                args["offset"] = r.randint(1, 1500)
                args["limit"] = r.choice((100, 200, 400))
        elif roll < 0.72:
            cmd = r.choice(_BASH).replace("{w}", r.choice(_NOUNS))
            name, args = "bash", {"command": cmd}
            if r.random() < 0.3:
                args["timeout"] = r.choice((30, 60, 120, 300))
        elif roll < 0.92:
            edits = [{"oldText": v.lines(v.code, r.randint(1, 12)), "newText": v.lines(v.code, r.randint(1, 16))}
                     for _ in range(1 if r.random() < 0.8 else r.randint(2, 4))]
            name, args = "edit", {"path": path, "edits": edits}
        else:
            size = int(r.lognormvariate(math.log(80), 0.8)) + 5
            name, args = "write", {"path": path, "content": v.lines(v.code, size)}
        return {"type": "toolCall", "id": self.tool_id(), "name": name, "arguments": args}

    def tool_result(self, call: dict[str, Any]) -> dict[str, Any]:
        r = self.rng
        v = self.v
        name = call["name"]
        args = call["arguments"]
        details: Any = None
        is_error = False
        if name == "read":
            if r.random() < 0.06:
                text, is_error = f"ENOENT: no such file or directory, open '{args['path']}'", True
            else:
                huge = r.random() < 0.004
                n = r.randint(3000, 12000) if huge else min(2000, int(r.lognormvariate(math.log(50), 1.1)) + 3)
                text = v.lines(v.code, n)
                total = n + (r.randint(1, 3000) if n >= 2000 and not huge else 0)
                if total > n:
                    text += f"\n\n[Showing lines 1-{n} of {total}. Use offset={n + 1} to continue.]"
                    details = {"truncation": {"truncated": True, "truncatedBy": "lines", "totalLines": total,
                                              "totalBytes": len(text) * 2, "outputLines": n, "outputBytes": len(text),
                                              "lastLinePartial": False, "firstLineExceedsLimit": False}}
        elif name == "bash":
            huge = r.random() < 0.006
            n = r.randint(4000, 15000) if huge else int(r.lognormvariate(math.log(18), 1.4))
            text = v.lines(v.log, n) if n else "(no output)"
            if n > 2000 and not huge:
                full = f"/tmp/pi-bash-{r.getrandbits(32):08x}.log"
                text += f"\n\n[Showing lines {n - 1999}-{n} of {n}. Full output: {full}]"
            if r.random() < 0.12:
                is_error = True
                text += f"\n\nCommand exited with code {r.choice((1, 1, 1, 2, 127))}"
            details = {}
        elif name == "edit":
            if r.random() < 0.1:
                text = (f"Could not find the exact text in {args['path']}. The old text must match exactly "
                        "including all whitespace and newlines.")
                is_error = True
            else:
                text = f"Successfully replaced {len(args['edits'])} block(s) in {args['path']}."
                first = r.randint(1, 800)
                diff = "\n".join(f"{'-+ '[k % 3]}{first + k:>4} {line}"
                                 for k, line in enumerate(r.choices(v.code, k=r.randint(4, 30))))
                details = {"diff": diff, "firstChangedLine": first}
        else:
            text = f"Successfully wrote to {args['path']}"
        msg: dict[str, Any] = {"role": "toolResult", "toolCallId": call["id"], "toolName": name,
                               "content": [{"type": "text", "text": text}]}
        if details is not None:
            msg["details"] = details
        msg["isError"] = is_error
        msg["timestamp"] = self.tick(0.05, 6 if name != "bash" else 25)
        return msg

    def user_content(self) -> list[dict[str, Any]]:
        r = self.rng
        v = self.v
        text = v.prose(1, 4)
        if r.random() < 0.08:
            text += "\n\n```\n" + v.lines(v.log if r.random() < 0.5 else v.code, r.randint(20, 250)) + "\n```"
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if self.image_plan and self._progress() >= self.image_plan[0]:
            self.image_plan.pop(0)
            size = r.randint(self.args.image_kb // 2, self.args.image_kb * 3 // 2) * 1024
            raw = _PNG_HEAD + r.randbytes(size)
            content.append({"type": "image", "data": base64.b64encode(raw).decode(), "mimeType": "image/png"})
            self.stats["images"] = self.stats.get("images", 0) + 1
        return content

    def _plan_images(self) -> list[float]:
        n = self.args.images
        if n is None:
            scale = self.args.mb if self.args.mb is not None else (self.args.entries or 0) / 400
            n = max(1, round(scale / 25))
        return [(i + 0.5) / n for i in range(n)]

    def _progress(self) -> float:
        a = self.args
        if a.mb is not None:
            return self.bytes / (a.mb * 1_000_000)
        return self.count / a.entries

    # ------------------------------------------------------------------ session shape
    def header(self) -> None:
        ms = self.clock
        hexd = f"{ms:012x}" + f"{self.rng.getrandbits(80):020x}"
        sid = f"{hexd[:8]}-{hexd[8:12]}-7{hexd[13:16]}-{'89ab'[self.rng.getrandbits(2)]}{hexd[17:20]}-{hexd[20:32]}"
        header = {"type": "session", "version": 3, "id": sid, "timestamp": _iso(ms),
                  "cwd": "/home/dev/work/acme-agent"}
        line = _dumps(header).encode("utf-8") + b"\n"
        self.out.write(line)
        self.bytes += len(line)

    def system_message(self) -> dict[str, Any]:
        v = self.v
        tools = []
        for name, desc in (("read", "Read the contents of a file."),
                           ("bash", "Execute a bash command in the current working directory."),
                           ("edit", "Edit a file by replacing exact text."), ("write", "Write content to a file.")):
            path_param = {"type": "string", "description": "Path to the file"}
            tools.append({"name": name, "description": desc + " " + v.prose(1, 3),
                          "parameters": {"type": "object", "properties": {"path": path_param}, "required": ["path"]}})
        sections = {
            "preamble": "You are an expert coding assistant operating inside pi, a coding agent harness. "
                        + v.prose(6, 12),
            "tools": "<tools>\n" + "\n".join(f"- {t['name']}: {t['description']}" for t in tools) + "\n</tools>",
            "guidelines": "<guidelines>\n- " + "\n- ".join(self.rng.choices(v.sentences, k=10)) + "\n</guidelines>",
            "context": "<context>\n" + v.lines(v.code, 40) + "\n</context>",
            "cwd": "<cwd>\n/home/dev/work/acme-agent\n</cwd>",
        }
        return {"role": "system", "content": "", "sections": sections, "toolsAdded": tools,
                "timestamp": self.tick(0.01, 0.05)}

    def run(self, out: Any) -> None:
        self.out = out
        self.header()
        provider, model, _, _ = self.model
        self.append("model_change", {"provider": provider, "modelId": model})
        self.append("thinking_level_change", {"thinkingLevel": "off"})
        self.message(self.system_message())
        first_turn = True
        try:
            while not self.done():
                self.turn(first_turn)
                first_turn = False
        except _Stop:
            pass

    def turn(self, first: bool) -> None:
        r = self.rng
        a = self.args
        self.tick(15, 400)  # the user reads and types
        if not first:
            self.extras()
            if self.done():
                return
        if not first and not a.no_compaction and r.random() < a.branch_rate:
            self.branch_back()
        started = self.tick(0.001, 0.01)
        self.message({"role": "user", "content": self.user_content(), "timestamp": started})
        if first:
            self.append("session_info", {"name": self.v.prose(1, 1)[:60].rstrip(".")})
        steps = min(40, int(r.expovariate(1 / 6)) + 1)
        for step in range(steps):
            if self.done():
                return
            if self.call_model(final=step == steps - 1):
                return

    def call_model(self, final: bool) -> bool:
        """One request; returns True when the run ends early."""
        r = self.rng
        started = self.tick(0.3, 2)
        roll = r.random()
        if roll < 0.004:
            overloaded = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
            self.message(self.assistant([], "error", started, error=overloaded))
            return True
        if roll < 0.008:
            self.message(self.assistant([{"type": "text", "text": self.v.prose(1, 2)}], "aborted", started,
                                        error="Request was aborted"))
            return True
        content: list[dict[str, Any]] = []
        if self.thinking != "off" and r.random() < 0.7:
            content.append(self.thinking_block())
        if final:
            text = self.v.prose(3, 14)
            if r.random() < 0.3:
                text += "\n\n" + "\n".join(f"- {s}" for s in r.choices(self.v.sentences, k=r.randint(2, 6)))
            if r.random() < 0.2:
                text += "\n\n```ts\n" + self.v.lines(self.v.code, r.randint(5, 40)) + "\n```"
            content.append({"type": "text", "text": text})
            self.tick(3, 40)
            self.message(self.assistant(content, "stop", started))
            self.maybe_compact()
            return False
        if r.random() < 0.5:
            content.append({"type": "text", "text": self.v.prose(1, 3)})
        calls = [self.tool_call() for _ in range(1 if r.random() < 0.7 else r.randint(2, 4))]
        content.extend(calls)
        self.tick(2, 30)
        self.message(self.assistant(content, "toolUse", started))
        for call in calls:
            self.message(self.tool_result(call))
            if self.done():
                return True
        # Pi checks before the next model call; sometimes the estimate undercounts and the
        # provider refuses the request instead: omit the failed attempt, compact, retry.
        if not self.args.no_compaction and self.context_tokens() > self.threshold:
            if r.random() < 0.1:
                window = self.args.context_window
                failed = self.message(self.assistant(
                    [], "error", self.tick(0.3, 2),
                    error=f"prompt is too long: {window + r.randint(1, 9000)} tokens > {window} maximum"))
                self.append("context_edit", {"targetId": failed["id"], "replacement": None})
                self.stats["overflow"] = self.stats.get("overflow", 0) + 1
                self.compact()
            else:
                self.compact()
        return False

    def extras(self) -> None:
        """Between runs: labels, context edits, settings changes, ! commands, extension messages."""
        r = self.rng
        a = self.args
        if r.random() < 0.03:
            targets = [e for e in self.branch[max(self.base, len(self.branch) - 60):]
                       if e.type == "message" and e.role in ("user", "assistant")]
            if targets:
                fields: dict[str, Any] = {"targetId": r.choice(targets).id}
                if r.random() < 0.85:
                    fields["label"] = f"{r.choice(_LABELS)}-{r.randint(1, 99)}"
                self.append("label", fields)
        if r.random() < a.edit_rate:
            candidates = [e for e in self.branch[max(self.base, len(self.branch) - 500):]
                          if e.type == "message" and e.role == "toolResult"
                          and len(e.data["message"]["content"][0]["text"]) > 6000]
            if candidates:
                target = r.choice(candidates)
                message = target.data["message"]
                n = len(message["content"][0]["text"])
                content = [{"type": "text", "text": f"[{message['toolName']} output elided: {n:,} chars]"}]
                self.append("context_edit", {"targetId": target.id, "replacement": {"content": content}})
                # The recorded usage is stale now (Pi's rule): the next check projects the branch.
                self.ctx_est += estimate_tokens({**message, "content": content}) - estimate_tokens(message)
                self.stale = True
        if r.random() < 0.01:
            self.thinking = r.choice(_THINKING)
            self.append("thinking_level_change", {"thinkingLevel": self.thinking})
        if r.random() < 0.004:
            self.model = _MODELS[1] if self.model is _MODELS[0] else _MODELS[0]
            self.append("model_change", {"provider": self.model[0], "modelId": self.model[1]})
        if r.random() < 0.01:
            cmd = r.choice(_BASH).replace("{w}", r.choice(_NOUNS))
            out = self.v.lines(self.v.log, int(r.lognormvariate(math.log(15), 1.2)))
            self.message({"role": "bashExecution", "command": cmd, "output": out, "exitCode": 0, "cancelled": False,
                          "truncated": False, "timestamp": self.tick(0.5, 5)})
        if r.random() < 0.005:
            todos = "Open todos:\n- " + "\n- ".join(r.choices(self.v.sentences, k=3))
            fields = {"customType": "todo-reminder", "content": todos, "display": True}
            self.append("custom_message", fields)
            est = estimate_tokens({"role": "custom", "content": fields["content"]})
            self.ctx_est += est
            self.trailing += est
        if r.random() < 0.004:
            provider, model, _, _ = self.model
            self.append("usage", {"kind": "cache_warm", "provider": provider, "model": model,
                                  "usage": self.usage(int(self.ctx_est), 1)})

    def branch_back(self) -> None:
        """/tree: select a recent user message, re-edit it on a new branch (maybe summarized)."""
        r = self.rng
        lo = max(self.base, self.compaction_index + 1, len(self.branch) - 400)
        users = [i for i in range(lo, len(self.branch) - 1)
                 if self.branch[i].type == "message" and self.branch[i].role == "user"]
        if not users:
            return
        i = r.choice(users[-8:])
        target = self.branch[i]
        old_leaf = self.leaf
        self.branch = self.branch[:i]
        self.leaf = target.parent_id
        self.stats["branches"] = self.stats.get("branches", 0) + 1
        if r.random() < 0.5:
            read = sorted(set(r.choices(self.v.paths, k=r.randint(0, 4))))
            modified = sorted(set(r.choices(self.v.paths, k=r.randint(0, 3))) - set(read))
            body = self.summary_text(False, False).split("\n\n## Critical Context")[0]
            summary = "The user explored a different approach that was abandoned.\n\n" + body
            self.append("branch_summary", {"fromId": old_leaf, "summary": summary,
                                           "details": {"readFiles": read, "modifiedFiles": modified}})
        self.resync()


def _default_output(args: argparse.Namespace) -> Path:
    size = f"{args.mb:g}mb" if args.mb is not None else f"{args.entries}e"
    flat = "-nocompact" if args.no_compaction else ""
    return DATA_DIR / f"session-{size}{flat}-s{args.seed}.jsonl"


def check_file(path: Path, args: argparse.Namespace) -> None:
    """Reload the file with pikit and re-derive every compaction from scratch."""
    import pikit

    t0 = time.perf_counter()
    session = pikit.load(path)
    assert session.report.ok, session.report.summary()
    n = 0
    for entry in session.entries:
        if entry.type != "compaction":
            continue
        parent = entry.parent_id
        branch = session.branch(parent)
        prep = prepare_compaction(branch, args.keep_recent_tokens)
        assert prep is not None, entry.id
        tokens = session.context(parent).tokens
        data = entry.data
        if (prep.first_kept_entry_id, prep.tokens_before) != (data["firstKeptEntryId"], data["tokensBefore"]) \
                or tokens != data["tokensBefore"]:
            raise AssertionError(f"compaction {entry.id}: file has {data['firstKeptEntryId']}/{data['tokensBefore']}, "
                                 f"pikit derives {prep.first_kept_entry_id}/{prep.tokens_before} (context {tokens})")
        n += 1
    print(f"check: {n} compactions re-derived from the reloaded file, all match "
          f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, help="stop once the file reaches this size (MB = 10^6 bytes)")
    p.add_argument("--entries", type=int, help="stop after exactly this many entries (header not counted)")
    p.add_argument("-o", "--output", type=Path,
                   help="output file (default: benchmarks/data/session-<size>[-nocompact]-s<seed>.jsonl)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-compaction", action="store_true", help="one linear branch: no compactions and no branches")
    p.add_argument("--context-window", type=int, default=200_000)
    p.add_argument("--reserve-tokens", type=int, default=16_384)
    p.add_argument("--keep-recent-tokens", type=int, default=20_000)
    p.add_argument("--images", type=int, help="large inline images (default: one per 25 MB, at least one)")
    p.add_argument("--image-kb", type=int, default=900, help="typical raw image size in KiB (base64 adds a third)")
    p.add_argument("--branch-rate", type=float, default=0.02, help="chance that a prompt re-edits an earlier one")
    p.add_argument("--edit-rate", type=float, default=0.02, help="chance per prompt of a context edit eliding output")
    p.add_argument("--verify", action="store_true",
                   help="cross-check the incremental context size and every compaction against whole-branch "
                        "projections, then reload the file and re-derive each compaction (slow; for small sizes)")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.mb is None and args.entries is None:
        p.error("give --mb and/or --entries")
    out_path = args.output or _default_output(args)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    gen = Generator(args)
    tmp = out_path.with_name(out_path.name + ".part")
    with open(tmp, "wb", buffering=1 << 20) as out:
        gen.run(out)
    os.replace(tmp, out_path)
    if not args.quiet:
        stats = ", ".join(f"{k} {v}" for k, v in sorted(gen.stats.items()))
        elapsed = time.perf_counter() - t0
        verified = ""
        if args.verify:
            verified = f"\n  verify: {gen.verify_checks} context sizes matched whole-branch projections"
        print(f"{out_path}: {gen.bytes / 1e6:.1f} MB, {gen.count} entries in {elapsed:.1f} s\n  {stats}{verified}",
              file=sys.stderr)
    if args.verify:
        check_file(out_path, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
