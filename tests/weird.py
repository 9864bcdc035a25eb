"""Sessions that are valid JSON but odd in every way Pi's format allows a file to be odd.

:func:`weird_sessions` writes one file per class of oddity (and one with all of them), for
the tests that run every command and API over them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HEADER: dict[str, Any] = {"type": "session", "version": 3, "id": "weird", "timestamp": "2026-01-01T00:00:00.000Z",
                          "cwd": "/w"}
T = "2026-01-01T00:00:{:02d}.000Z"


def _msg(entry_id: Any, parent: Any, role: Any, content: Any, second: int, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": T.format(second % 60),
            "message": {"role": role, "content": content, "timestamp": second, **extra}}


def _assistant(entry_id: Any, parent: Any, text: str, second: int) -> dict[str, Any]:
    return _msg(entry_id, parent, "assistant", [{"type": "text", "text": text},
                                                {"type": "toolCall", "id": "c", "name": "read",
                                                 "arguments": {"path": text}}], second,
                provider="p", model="m", usage={"input": 10, "output": 5, "totalTokens": 15}, stopReason="stop")


def _chain(ids: list[Any], text: str = "text") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parent: Any = None
    for i, entry_id in enumerate(ids):
        out.append(_msg(entry_id, parent, "user", f"{text} {i}", i) if i % 2 == 0 else
                   _assistant(entry_id, parent, f"{text} {i}", i))
        parent = entry_id
    return out


def _lines(entries: list[dict[str, Any]], header: dict[str, Any] = HEADER) -> list[bytes]:
    return [json.dumps(e, ensure_ascii=False).encode("utf-8", "surrogatepass") for e in [header, *entries]]


def weird_sessions(folder: Path) -> dict[str, Path]:
    """Write the odd sessions into ``folder``; name → path."""
    cases: dict[str, bytes] = {}
    # Ids of every JSON type, empty strings, and entries pointing at them.
    odd_ids: list[Any] = ["a", ["x"], {"k": 1}, 7, 7.5, "", True, None, "b"]
    entries = _chain(odd_ids)
    entries.append({"type": "label", "id": "l", "parentId": "b", "timestamp": T.format(9), "targetId": ["x"],
                    "label": {"not": "text"}})
    entries.append({"type": "compaction", "id": "c", "parentId": "l", "timestamp": T.format(10), "summary": 5,
                    "firstKeptEntryId": {"k": 1}, "tokensBefore": "many"})
    entries.append(_msg(0, "c", "user", "after", 11))
    cases["odd-ids"] = b"\n".join(_lines(entries)) + b"\n"
    # Unknown and odd roles, content of the wrong shape.
    entries = _chain(["u1", "a1"])
    for i, (role, content) in enumerate([("wizard", "hi"), (None, "x"), (["user"], "x"), ("user", 42),
                                         ("assistant", "plain string"), ("toolResult", {"no": "list"}),
                                         ("bashExecution", None), ("custom", [1, 2, None]), ("user", [None, 5]),
                                         ("system", {"sections": 3})]):
        entries.append(_msg(f"r{i}", entries[-1]["id"], role, content, 10 + i))
    cases["odd-roles"] = b"\n".join(_lines(entries)) + b"\n"
    # What the compaction lab reads, odd: a failed tool result whose tool name is an array, an edit of a message
    # whose role is an array, a compaction whose summary is a number (the previous summary at the leaf), one
    # whose parent is an object, and an id wider than 64 bits.
    entries = _chain(["u1", "a1"], "text " * 20)
    entries += [_msg("t1", "a1", "toolResult", [{"type": "text", "text": "boom"}], 3, toolName=["bash"],
                     isError=True),
                _msg("r1", "t1", ["user"], "odd role", 4),
                {"type": "context_edit", "id": "e1", "parentId": "r1", "timestamp": T.format(5), "targetId": "r1",
                 "replacement": {"content": "edited"}},
                {"type": "compaction", "id": "c1", "parentId": "e1", "timestamp": T.format(6), "summary": "earlier",
                 "firstKeptEntryId": "e1", "tokensBefore": 10},
                _msg(2 ** 70, "c1", "user", "wide " * 20, 7), _assistant("a2", 2 ** 70, "more " * 20, 8),
                _msg("u3", "a2", "user", "again " * 20, 9), _assistant("a3", "u3", "done " * 20, 10),
                {"type": "compaction", "id": "c2", "parentId": "a3", "timestamp": T.format(11), "summary": 1.5,
                 "firstKeptEntryId": "u3", "tokensBefore": 90},
                {"type": "compaction", "id": "c0", "parentId": {"id": "e1"}, "timestamp": T.format(12),
                 "summary": "orphan", "firstKeptEntryId": "e1", "tokensBefore": 5},
                _msg("u4", "c2", "user", "last " * 20, 13), _assistant("a4", "u4", "end " * 20, 14)]
    cases["odd-lab"] = b"\n".join(_lines(entries)) + b"\n"
    # Lone surrogates (escaped in JSON, as JavaScript writes them) and NUL bytes in text, ids and labels.
    entries = _chain(["s1", "s\ud800", "s3\x00", "s4"], "lone \udfff and \x00 nul")
    entries.append({"type": "label", "id": "l\ud83d", "parentId": "s4", "timestamp": T.format(9), "targetId": "s1",
                    "label": "x\ud800\x00y"})
    entries.append({"type": "session_info", "id": "n", "parentId": "l\ud83d", "timestamp": T.format(10),
                    "name": "name \udc00\x00"})
    cases["surrogates-and-nul"] = b"\n".join(json.dumps(e).encode() for e in [HEADER, *entries]) + b"\n"
    # A BOM before the header (Pi refuses the file), and a BOM on a later line (that line is damaged).
    body = _lines(_chain(["b1", "b2", "b3"]))
    cases["bom-first"] = b"\xef\xbb\xbf" + b"\n".join(body) + b"\n"
    cases["bom-later"] = b"\n".join([body[0], body[1], b"\xef\xbb\xbf" + body[2], body[3]]) + b"\n"
    # Mixed line endings: LF, CRLF, a lone CR inside a line, blank CRLF lines, no final newline.
    body = _lines(_chain(["m1", "m2", "m3", "m4", "m5"]))
    cases["mixed-endings"] = (body[0] + b"\r\n" + body[1] + b"\n" + body[2] + b"\r\n\r\n" + body[3] + b"\r"
                              + b"\n\n" + body[4] + b"\r\n" + body[5])
    # All of it at once (a BOM only on a later line, so that the file is still a session).
    cases["everything"] = b"\r\n".join([cases["odd-ids"].rstrip(b"\n"),
                                        *cases["odd-roles"].rstrip(b"\n").split(b"\n")[1:],
                                        *cases["surrogates-and-nul"].rstrip(b"\n").split(b"\n")[1:],
                                        *cases["bom-later"].rstrip(b"\n").split(b"\n")[1:]])
    out = {}
    for name, data in cases.items():
        path = folder / f"{name}.jsonl"
        path.write_bytes(data)
        out[name] = path
    return out
