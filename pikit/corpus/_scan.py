"""One lean pass over a session file's lines: the per-file state the corpus tables derive from.

The pass never builds a :class:`pikit.Session`: each line is decoded with msgspec into the
few fields the index needs (the rest is validated and skipped; message content is kept as
raw JSON until its length or text is wanted). What it keeps per entry is small (id, parent,
type, role, timestamp) and the usage of assistant messages and summarization calls, so a
:class:`FileState` can be stored in the index and continued when the file grows: appended
lines are fed to :func:`feed` and the tables are derived again from the state alone (its
messages are stored as the file's rows of the index and put back before that).

Lines that are not JSON objects cost themselves only: each becomes a problem with its line
number. A file whose first object is not a session header is not a session (one problem,
nothing else counted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from sys import intern
from typing import Annotated, Any

import msgspec

from .. import jsjson
from .._context.tokens import IMAGE_CHARS, estimate_chars
from .._format.lines import BOM, BOM_HEADER
from ..jsjson import stringify_len, utf16_len, without_lone_surrogates
from ._searchtext import block_text, content_text

__all__ = ["FileState", "Message", "feed", "feed_usage", "new_state"]

# The timestamps @ccusage/pi accepts (and so the ones a usage report can place on a day).
USAGE_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?(?:Z|[+-]\d{2}:\d{2})")
TEXT_LIMIT = 4000
# Characters of a tool result's text the search text keeps (its head: what a tool said first, an error, a path):
# tool output is most of a session's bytes, and all of it would make the index several times larger.
TOOL_TEXT_LIMIT = 500
_TEXT_KINDS = {"user": "user", "assistant": "assistant", "toolResult": "tool"}
Line = bytes | memoryview  # one line of a file (a view of the bytes read, or a copy)


class _Block(msgspec.Struct, gc=False):
    type: Any = None
    text: Any = msgspec.UNSET
    thinking: Any = msgspec.UNSET
    name: Any = msgspec.UNSET
    arguments: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _Cost(msgspec.Struct, gc=False):
    total: int | float = 0


# A token count as @ccusage/pi sums it: a whole number well inside int64 (a computed total is checked again).
_Tokens = Annotated[int, msgspec.Meta(gt=-(2**62), lt=2**62)]


class _Usage(msgspec.Struct, gc=False):
    """A usage of the shape Pi writes, checked by the decoder.

    A line whose usage has another shape (a fraction, a string, a huge number) fails this
    decoder and is read as a plain dict instead (:func:`_usage` decides for those).
    """

    input: _Tokens
    output: _Tokens
    cacheRead: _Tokens = 0
    cacheWrite: _Tokens = 0
    totalTokens: _Tokens | msgspec.UnsetType = msgspec.UNSET
    cost: _Cost | msgspec.UnsetType = msgspec.UNSET


class _Msg(msgspec.Struct, gc=False):
    role: Any = None
    content: str | list[_Block] | msgspec.UnsetType | None = msgspec.UNSET
    provider: Any = msgspec.UNSET
    model: Any = msgspec.UNSET
    usage: _Usage | msgspec.UnsetType = msgspec.UNSET


class _Line(msgspec.Struct, gc=False):
    type: Any = msgspec.UNSET
    id: Any = None
    parentId: Any = None
    timestamp: Any = None
    message: _Msg | None = None
    name: Any = None
    summary: Any = None
    firstKeptEntryId: Any = None
    firstKeptEntryIndex: Any = None
    tokensBefore: Any = None
    usage: Any = None
    version: Any = None
    cwd: Any = None
    parentSession: Any = None
    title: Any = None


_line_decoder = msgspec.json.Decoder(_Line)


class _UsageMsg(msgspec.Struct, gc=False):
    """What a usage scan reads of a message: its content is skipped unread (see :func:`feed_usage`)."""

    role: Any = None
    provider: Any = msgspec.UNSET
    model: Any = msgspec.UNSET
    usage: _Usage | msgspec.UnsetType = msgspec.UNSET


class _UsageLine(_Line, gc=False):
    message: _UsageMsg | None = None  # type: ignore[assignment]


_usage_decoder = msgspec.json.Decoder(_UsageLine)
_FAST_ROLES = frozenset(("user", "assistant", "toolResult", "custom"))


class Message(msgspec.Struct, array_like=True, gc=False):
    """What the index keeps of one message entry."""

    entry: int  # position in FileState.ids
    role: str | None
    provider: str | None
    model: str | None
    estimate: int
    usage: list[Any] | None  # input, output, cacheRead, cacheWrite, totalTokens, cost (None: no usable usage)
    countable: bool  # what @ccusage/pi would count (its filters)


class Compaction(msgspec.Struct, array_like=True, gc=False):
    entry: int
    tokens_before: Any
    first_kept: Any
    summary_chars: int
    usage: list[Any] | None


class FileState(msgspec.Struct):
    """Everything the corpus tables of one file derive from (stored in the index, continued on growth)."""

    path: str
    lines: int = 0
    offset: int = 0
    header: dict[str, Any] | None = None
    v1: bool = False
    not_session: str | None = None
    name: str | None = None
    title: str | None = None  # omp's title (its first line, else the header's): the name a session_info did not give
    first_user: str | None = None
    ids: list[Any] = msgspec.field(default_factory=list)
    parents: list[Any] = msgspec.field(default_factory=list)
    types: list[Any] = msgspec.field(default_factory=list)
    times: list[Any] = msgspec.field(default_factory=list)
    messages: list[Message] = msgspec.field(default_factory=list)
    compactions: list[Compaction] = msgspec.field(default_factory=list)
    summaries: list[list[Any]] = msgspec.field(default_factory=list)  # [entry, kind, usage]
    problems: list[list[Any]] = msgspec.field(default_factory=list)  # [line, kind, message]
    # what a search looks through, new since the last take: [entry, kind, text] (kinds: SEARCH_KINDS)
    texts: list[list[Any]] = msgspec.field(default_factory=list)
    # read for usage alone (feed_usage): only assistant messages, without estimates, and no texts
    usage_only: bool = False


def new_state(path: str, *, usage_only: bool = False) -> FileState:
    """The state of a file nothing has been read of (``usage_only``: to be read by :func:`feed_usage`)."""
    return FileState(path=path, usage_only=usage_only)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_ABSENT: Any = object()


def _usage(usage: Any) -> list[Any] | None:
    """input, output, cacheRead, cacheWrite, totalTokens, cost as @ccusage/pi reads them; None if it would not."""
    if usage.__class__ is _Usage:  # (its token counts are whole numbers in range: the decoder checked)
        total = usage.totalTokens
        if total is msgspec.UNSET:
            total = usage.input + usage.output + usage.cacheRead + usage.cacheWrite
            if not -(2**62) < total < 2**62:
                return None
        recorded = usage.cost
        return [usage.input, usage.output, usage.cacheRead, usage.cacheWrite, total,
                _js_float(recorded.total) if recorded.__class__ is _Cost else 0.0]
    if not isinstance(usage, dict):
        return None
    parts = tuple(usage.get(k, 0 if k.startswith("cache") else _ABSENT) for k in ("input", "output", "cacheRead",
                                                                                   "cacheWrite"))
    total = usage.get("totalTokens", msgspec.UNSET)
    cost_object = usage.get("cost", _ABSENT)
    cost: Any = 0 if cost_object is _ABSENT else cost_object.get("total", 0) if isinstance(cost_object, dict) else None
    if not all(map(_number, parts)) or not (total is msgspec.UNSET or _number(total)) or not _number(cost):
        return None
    if total is msgspec.UNSET:
        total = sum(parts)
    if max(*parts, total) >= 2**62 or min(*parts, total) <= -(2**62):
        return None
    # token counts are whole numbers (a fraction, never seen from a provider, is dropped)
    return [int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), int(total), _js_float(cost)]


def _js_float(value: int | float) -> float:
    """A number as JavaScript holds it: an integer too large for a double is Infinity (not an error)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _add_texts(state: FileState, entry: int, kind: str, content: Any, plain: bool) -> None:
    """The search texts of a message (``plain``: content parsed as plain JSON, its lone surrogates replaced)."""
    thinking = "\n".join(t for b in content if (t := block_text(b, "thinking"))) \
        if kind == "assistant" and isinstance(content, list) else ""
    for which, text in ((kind, content_text(content)), ("thinking", thinking)):
        if text:
            text = without_lone_surrogates(text) if plain else text
            state.texts.append([entry, which, text[:TOOL_TEXT_LIMIT if which == "tool" else TEXT_LIMIT]])
            if which == "user" and state.first_user is None:
                state.first_user = text[:TEXT_LIMIT]


def _fast_chars(role: str, content: Any) -> int:
    """Pi's estimate characters for user/custom/toolResult/assistant messages from typed content."""
    if isinstance(content, str):
        return utf16_len(content) if role != "assistant" else 0
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        kind = block.type
        if kind == "text":
            chars += utf16_len(block.text) if isinstance(block.text, str) else 0
        elif role == "assistant":
            if kind == "thinking" and isinstance(block.thinking, str):
                chars += utf16_len(block.thinking)
            elif kind == "toolCall":
                chars += utf16_len(block.name) if isinstance(block.name, str) else 0
                if block.arguments is not msgspec.UNSET:
                    chars += stringify_len(msgspec.json.decode(block.arguments))
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def _estimate_and_content(line: Line, role: Any, content: Any) -> tuple[int, Any, bool]:
    """Pi's estimate of a message, its content, and whether that content was parsed as plain JSON."""
    if role in _FAST_ROLES and not isinstance(content, _Generic):
        return -(-_fast_chars(role, content) // 4), content, False
    message = _loads(line).get("message")
    if not isinstance(message, dict):
        return 0, None, True
    return -(-estimate_chars(message) // 4), message.get("content"), True


class _Generic:
    """Content of a line that took the slow path: estimated from the plain parsed message."""


def _loads(line: Line) -> Any:
    try:
        return msgspec.json.decode(line)
    except msgspec.DecodeError:  # what msgspec refuses but JavaScript accepts (lone surrogates)
        return jsjson.loads(bytes(line))


def _decode(line: Line) -> _Line | dict[str, Any] | None:
    """The typed view of a line; a plain dict when a field has an unusual shape; None if not an object."""
    try:
        return _line_decoder.decode(line)
    except msgspec.DecodeError:  # a field of another shape (ValidationError), or not JSON to msgspec
        pass
    try:
        value = _loads(line)
    except jsjson.JSONParseError:
        return None
    return value if isinstance(value, dict) else None


def _storable(value: Any) -> Any:
    """A string with its lone surrogates as U+FFFD (see :func:`~pikit.jsjson.without_lone_surrogates`).

    Only lines the fast decoder refused can hold them; estimates are taken from the line itself,
    not from these fields.
    """
    return without_lone_surrogates(value) if value.__class__ is str else value


def _from_dict(value: dict[str, Any]) -> _Line:
    """A typed view of an object whose fields did not fit the fast decoder (unusual shapes)."""
    message = value.get("message")
    msg = None
    if isinstance(message, dict):
        msg = _Msg(role=_storable(message.get("role")), content=_Generic(),  # type: ignore[arg-type]
                   provider=_storable(message.get("provider", msgspec.UNSET)),
                   model=_storable(message.get("model", msgspec.UNSET)), usage=message.get("usage", msgspec.UNSET))
    fields = {f: _storable(value.get(f)) for f in _Line.__struct_fields__ if f not in ("message", "type")}
    kind = _storable(value.get("type", msgspec.UNSET))
    return _Line(type=kind, message=msg, **fields)


def _header(state: FileState, head: _Line, number: int) -> None:
    if number == 1 and head.type == "title":  # omp's first line: a slot holding the session's title, then the header
        state.title = _title(head.title)
        return
    if head.type != "session" or not isinstance(head.id, str):
        state.not_session = f"line {number}: the first object is not a session header (no string id)"
        return
    state.header = {"id": head.id, "cwd": head.cwd, "timestamp": head.timestamp, "version": head.version,
                    "parentSession": head.parentSession}
    state.v1 = not _number(head.version) or head.version < 2
    state.title = state.title or _title(head.title)


def _title(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _message(state: FileState, line: Line, head: _Line, index: int) -> None:
    msg = head.message
    if msg is None:
        return
    role = msg.role if isinstance(msg.role, str) else None
    if state.usage_only:
        if role != "assistant":
            return
        estimate, content, plain = 0, None, False
    else:
        estimate, content, plain = _estimate_and_content(line, role, msg.content)
    usage = None
    countable = False
    provider = msg.provider if isinstance(msg.provider, str) else None
    model = msg.model if isinstance(msg.model, str) else None
    if role == "assistant":
        usage = _usage(msg.usage)
        countable = (usage is not None and (head.type is msgspec.UNSET or head.type == "message")
                     and isinstance(head.timestamp, str) and USAGE_TIMESTAMP.fullmatch(head.timestamp) is not None
                     and (msg.model is msgspec.UNSET or isinstance(msg.model, str)))
    state.messages.append(Message(index, role, provider, model, estimate, usage, countable))
    kind = _TEXT_KINDS.get(role) if role is not None and content is not None else None
    if kind is not None:
        _add_texts(state, index, kind, content, plain)


def _entry(state: FileState, line: Line, head: _Line, number: int) -> None:
    index = len(state.ids)
    kind = head.type if isinstance(head.type, str) else None
    if state.v1:  # the migrated tree's ids (ids in the file are not Pi's: its migration replaces them)
        state.ids.append(_legacy_id(state, line, index))
        state.parents.append(state.ids[index - 1] if index else None)  # the previous entry
    else:
        state.ids.append(head.id)
        state.parents.append(head.parentId)
    state.types.append(kind)
    state.times.append(head.timestamp)
    if kind == "message" or head.type is msgspec.UNSET:
        _message(state, line, head, index)
    elif kind == "session_info":
        state.name = head.name.strip() if isinstance(head.name, str) and head.name.strip() else None
    elif kind == "compaction":
        first = head.firstKeptEntryId
        if state.v1:  # a position in the file (header = 0), as the migration turns it into an id
            kept = head.firstKeptEntryIndex
            at = int(kept) - 1 - _extra_headers(state) if _number(kept) and kept == int(kept) else -1
            first = state.ids[at] if 0 <= at < index else None
        summary = head.summary if isinstance(head.summary, str) else ""
        state.compactions.append(Compaction(index, head.tokensBefore, first, utf16_len(summary), _usage(head.usage)))
        state.summaries.append([index, "compaction", _usage(head.usage)])
    elif kind == "branch_summary":
        state.summaries.append([index, "branch_summary", _usage(head.usage)])
    if kind in ("compaction", "branch_summary") and isinstance(head.summary, str) and head.summary \
            and not state.usage_only:
        state.texts.append([index, "summary", without_lone_surrogates(head.summary)[:TEXT_LIMIT]])


def _extra_headers(state: FileState) -> int:
    return sum(1 for problem in state.problems if problem[1] == "extra-header")


def _legacy_id(state: FileState, line: Line, index: int) -> str:
    """The id pikit's migration gives a version-1 entry (``pikit._format.migration.derived_id``): from its
    position among the file's objects (header = 0; a second header takes a place) and its content."""
    from .._format.migration import derived_id

    global _taken
    if _taken is None or _taken[0] is not state or len(_taken[1]) != index:  # (kept between entries of a file)
        _taken = (state, set(state.ids))
    entry_id = derived_id(1 + index + _extra_headers(state), _loads(line), _taken[1])
    _taken[1].add(entry_id)
    return entry_id


_taken: tuple[FileState, set[Any]] | None = None  # the ids of the version-1 file being read


def _tool_result(state: FileState, head: _Line, msg: _Msg) -> bool:
    """The common case, inline: a v3 tool result with block content (False: take the general path)."""
    content = msg.content
    if content.__class__ is not list:
        return False
    chars = 0
    texts = []
    for block in content:
        kind = block.type
        if kind == "text":
            text = block.text
            if text.__class__ is str:
                chars += len(text) if text.isascii() else utf16_len(text)
                texts.append(text)
        elif kind == "image":
            chars += IMAGE_CHARS
    index = len(state.ids)
    if texts and (text := "\n".join(texts)):
        state.texts.append([index, "tool", text[:TOOL_TEXT_LIMIT]])
    state.ids.append(head.id)
    state.parents.append(head.parentId)
    state.types.append("message")
    state.times.append(head.timestamp)
    provider = msg.provider if msg.provider.__class__ is str else None
    model = msg.model if msg.model.__class__ is str else None
    state.messages.append(Message(index, "toolResult", provider, model, -(-chars // 4), None, False))
    return True


_DIGIT_KEY = re.compile(rb'"[0-9]+":')  # an integer-like key


def _arguments_len(raw: Any) -> int:
    """UTF-16 length of ``JSON.stringify(arguments)``.

    Pi wrote the line with ``JSON.stringify``, so the raw JSON is that text already; it is
    trusted when re-encoding it gives the same bytes (compact, nothing escaped differently)
    and no key is integer-like (JavaScript lists those first). Otherwise it is re-encoded
    the JavaScript way.
    """
    data = bytes(raw)
    value = msgspec.json.decode(data)
    if msgspec.json.encode(value) == data and _DIGIT_KEY.search(data) is None:
        return len(data) if data.isascii() else utf16_len(data.decode("utf-8", "surrogatepass"))
    return stringify_len(value)


def _assistant_content(content: list[_Block]) -> tuple[int, list[str], list[str]]:
    """Pi's estimate characters of an assistant message's blocks, its text blocks and its thinking blocks."""
    chars = 0
    texts = []
    thoughts = []
    for block in content:
        kind = block.type
        if kind == "text":
            text = block.text
            if text.__class__ is str:
                chars += len(text) if text.isascii() else utf16_len(text)
                texts.append(text)
        elif kind == "thinking":
            text = block.thinking
            if text.__class__ is str:
                chars += len(text) if text.isascii() else utf16_len(text)
                thoughts.append(text)
        elif kind == "toolCall":
            name = block.name
            if name.__class__ is str:
                chars += len(name) if name.isascii() else utf16_len(name)
            if block.arguments is not msgspec.UNSET:
                chars += _arguments_len(block.arguments)
    return chars, texts, thoughts


def _assistant(state: FileState, head: _Line, msg: _Msg) -> bool:
    """The other common case, inline: a v3 assistant message with block content and a usage."""
    content, usage, timestamp = msg.content, msg.usage, head.timestamp
    if content.__class__ is not list or usage.__class__ is not _Usage or timestamp.__class__ is not str:
        return False
    chars, texts, thoughts = _assistant_content(content)
    counted = _usage(usage)
    model = msg.model
    countable = counted is not None and (model is msgspec.UNSET or model.__class__ is str) \
        and USAGE_TIMESTAMP.fullmatch(timestamp) is not None
    index = len(state.ids)
    state.ids.append(head.id)
    state.parents.append(head.parentId)
    state.types.append("message")
    state.times.append(timestamp)
    provider = intern(msg.provider) if msg.provider.__class__ is str else None  # (one string per name: less memory)
    state.messages.append(Message(index, "assistant", provider, intern(model) if model.__class__ is str else None,
                                  -(-chars // 4), counted, countable))
    for kind, parts in (("assistant", texts), ("thinking", thoughts)):
        if parts and (text := "\n".join(parts)):
            state.texts.append([index, kind, text[:TEXT_LIMIT]])
    return True


def _heads(state: FileState, lines: Sequence[Line], first_line: int,
           decode: Callable[[Line], Any]) -> Iterator[tuple[int, Line, Any]]:
    """Each line's number, bytes and typed view, while the file is a session (a line that is no JSON object is
    a problem and left out)."""
    number = first_line - 1
    for raw in lines:
        number += 1
        if state.not_session is not None:
            return
        try:
            head = decode(raw)
        except msgspec.DecodeError:
            head = _refused(state, raw, number)
            if head is None:
                continue
        yield number, raw, head


def _refused(state: FileState, raw: Line, number: int) -> _Line | None:
    """The view of a line the typed decoder refused (see :func:`_decode`); None when it is no JSON object (a
    damaged line, noted as a problem; a first line behind a byte order mark makes the file no session)."""
    head = _decode(raw)
    if head is None:
        if number == 1 and bytes(raw[:3]) == BOM:  # as Pi, and as pikit.load says it
            state.not_session = BOM_HEADER
        elif bytes(raw).strip():
            state.problems.append([number, "damaged-line", "not a JSON object"])
        return None
    return _from_dict(head) if isinstance(head, dict) else head


def _other(state: FileState, raw: Line, head: _Line, number: int) -> None:
    """A line that is not a message entry of the common shape: the header, a second header, any other entry."""
    if state.header is None:
        _header(state, head, number)
    elif head.type == "session":
        state.problems.append([number, "extra-header", "a second session header (ignored)"])
    else:
        _entry(state, raw, head, number)


def feed(state: FileState, lines: Sequence[Line], first_line: int) -> FileState:
    """Read complete lines (``first_line`` is the number of ``lines[0]``) into ``state``; return it."""
    for number, raw, head in _heads(state, lines, first_line, _line_decoder.decode):
        msg = head.message
        if msg is not None and head.type == "message" and head.id.__class__ is str and state.header is not None \
                and not state.v1:
            role = msg.role  # the common cases first, inline
            if (role == "toolResult" and _tool_result(state, head, msg)) or \
                    (role == "assistant" and _assistant(state, head, msg)):
                continue
            _entry(state, raw, head, number)
        else:
            _other(state, raw, head, number)
    state.lines = first_line - 1 + len(lines)
    return state


def feed_usage(state: FileState, lines: Sequence[Line], first_line: int) -> FileState:
    """:func:`feed` for what a usage report needs, and no more (``state.usage_only``).

    Every entry is kept (id, parent, type, timestamp: the tree, the copies, the entry counts),
    compactions and summaries as :func:`feed` keeps them, but of messages only the assistant
    ones, with their usage and no estimate, and no search text: message content is skipped
    by the decoder unread. The rest of a file's rows is built when a query needs them, by
    reading the file again with :func:`feed`. A version-1 file (its ids derive from each
    entry's content) is read in full from its header on.
    """
    for number, raw, head in _heads(state, lines, first_line, _usage_decoder.decode):
        msg = head.message
        if msg is not None and head.type == "message" and head.id.__class__ is str and state.header is not None:
            index = len(state.ids)
            state.ids.append(head.id)
            state.parents.append(head.parentId)
            state.types.append("message")
            timestamp = head.timestamp
            state.times.append(timestamp)
            if msg.role != "assistant":
                continue
            usage = msg.usage
            if usage.__class__ is not _Usage or timestamp.__class__ is not str:
                _message(state, raw, head, index)
                continue
            counted, model, provider = _usage(usage), msg.model, msg.provider  # (inline: the common case)
            countable = counted is not None and (model is msgspec.UNSET or model.__class__ is str) \
                and USAGE_TIMESTAMP.fullmatch(timestamp) is not None
            state.messages.append(Message(index, "assistant", intern(provider) if provider.__class__ is str else None,
                                          intern(model) if model.__class__ is str else None, 0, counted, countable))
        else:
            _other(state, raw, head, number)
            if state.v1:  # (its ids derive from each entry's content: read in full from here)
                state.usage_only = False
                feed(state, lines[number - first_line + 1:], number + 1)
                break
    state.lines = first_line - 1 + len(lines)
    return state
