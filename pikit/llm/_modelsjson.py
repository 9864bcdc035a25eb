"""The model-fact files of Pi's agent folder, read as Pi reads them, and the user's ``models.json`` checked.

:func:`read_fact_file` is the one reading of ``models.json`` and ``models-store.json``: a regular
file only (a FIFO or a device is refused before anything is read, never waited on), at most
:data:`MAX_FACT_BYTES`, decoded as Node decodes it (invalid UTF-8 becomes U+FFFD, a leading BOM
is dropped) and parsed as ``JSON.parse`` parses it (``NaN`` and ``Infinity`` are not JSON, a
number too large for a double is ``Infinity``), nested at most :data:`MAX_FACT_DEPTH` levels.

``models.json`` may have ``//`` comments and trailing commas (Pi strips both, in time linear in
the file's length). A file that does not parse or does not match Pi's schema is ignored whole, as
Pi ignores it; the reason is one line. Only what pikit needs is checked in depth (the model fields,
prices and limits); the rest of Pi's schema is checked for its types, which is what makes Pi refuse
a file. A number of Pi's schema is finite, as TypeBox requires.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import jsjson
from .._format.reading import NotRegularFileError, open_regular

__all__ = ["MAX_FACT_BYTES", "MAX_FACT_DEPTH", "js_double", "load_models_json", "read_fact_file", "strip_json_comments"]

#: The largest model-fact file read (Pi's own files hold a few hundred KiB); a larger one is ignored.
MAX_FACT_BYTES = 16 * 1024 * 1024
#: The deepest nesting of a model-fact file read (Pi's own files nest six levels); a deeper one is ignored.
MAX_FACT_DEPTH = 1000

# A JSON string as Pi's regular expressions match it (``"(?:\\.|[^"\\])*"``): in JavaScript ``.``
# matches no line terminator, so a backslash before one ends the string unmatched.
_STRING_BODY = re.compile(r'(?:\\[^\n\r\u2028\u2029]|[^"\\])*')
_COMMENT_CANDIDATE = re.compile(r'["/]')
_COMMA_CANDIDATE = re.compile(r'[",]')
_TRAILING_COMMA = re.compile(r",([" + re.escape(jsjson.JS_WHITESPACE) + r"]*[}\]])")


def _replace_outside_strings(text: str, candidates: re.Pattern[str],
                             other: Callable[[str, int], tuple[int, str] | None]) -> str:
    """``text.replace(/"(?:\\.|[^"\\])*"|OTHER/g, …)`` as JavaScript runs it, strings kept, in linear time.

    At each position the string alternative is tried first, then ``other`` (which returns the end of
    its match and the replacement, or ``None``). A string that finds no closing quote fails at the same
    place from every quote it passed over (each was escaped, and the scan after it is the same), so the
    scan is not repeated from them: that repetition made a malformed file quadratic.
    """
    out: list[str] = []
    copied = at = 0
    failed_until = -1  # a string starting before this position finds no closing quote
    while (found := candidates.search(text, at)) is not None:
        at = found.start()
        if text[at] == '"':
            if at >= failed_until:
                end = _STRING_BODY.match(text, at + 1).end()  # type: ignore[union-attr]
                if end < len(text) and text[end] == '"':
                    at = end + 1
                    continue
                failed_until = end
            at += 1
            continue
        replaced = other(text, at)
        if replaced is None:
            at += 1
            continue
        out.append(text[copied:at])
        out.append(replaced[1])
        copied = at = replaced[0]
    out.append(text[copied:])
    return "".join(out)


def _line_comment(text: str, at: int) -> tuple[int, str] | None:
    if not text.startswith("//", at):
        return None
    end = text.find("\n", at)
    return (len(text) if end < 0 else end), ""


def _trailing_comma(text: str, at: int) -> tuple[int, str] | None:
    match = _TRAILING_COMMA.match(text, at)
    return None if match is None else (match.end(), match[1])


def strip_json_comments(text: str) -> str:
    """Pi's ``stripJsonComments``: drop ``//`` line comments and trailing commas outside strings.

    The same result as Pi's two regular expressions, in time linear in the length of ``text``.
    """
    return _replace_outside_strings(_replace_outside_strings(text, _COMMENT_CANDIDATE, _line_comment),
                                    _COMMA_CANDIDATE, _trailing_comma)


def _read_bounded(path: Path) -> bytes:
    """At most :data:`MAX_FACT_BYTES` + 1 bytes of the regular file at ``path``."""
    chunks: list[bytes] = []
    left = MAX_FACT_BYTES + 1
    with open_regular(os.fspath(path)) as handle:
        while left > 0 and (chunk := handle.read(min(left, 1024 * 1024))):
            chunks.append(chunk)
            left -= len(chunk)
    return b"".join(chunks)


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_FACT_DEPTH` (looked at without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > MAX_FACT_DEPTH:
                    return True
                stack.append((child, depth + 1))
    return False


def read_fact_file(path: Path, *, comments: bool = False) -> tuple[Any, str | None]:
    """The JSON value of the model-fact file at ``path`` and the reason it was ignored (or ``None``).

    A missing file is ``(None, None)``. ``comments``: strip ``//`` comments and trailing commas
    first, as Pi does for ``models.json``. An empty file is an empty object, as Pi reads
    ``models-store.json``. Anything else that cannot be read or parsed is ``(None, reason)``, the
    reason one line. The file is only read.
    """
    try:
        raw = _read_bounded(path)
    except FileNotFoundError:
        return None, None
    except NotRegularFileError as exc:
        return None, f"{path}: ignored, it is {exc.kind}, not a regular file"
    except OSError as exc:
        return None, f"{path}: ignored, it cannot be read ({exc.strerror or exc.__class__.__name__})"
    if len(raw) > MAX_FACT_BYTES:
        return None, f"{path}: ignored, it is larger than {MAX_FACT_BYTES // (1024 * 1024)} MiB"
    text = raw.decode("utf-8", errors="replace")
    if not text and not comments:
        return {}, None
    text = text.removeprefix("\ufeff")
    try:
        value = jsjson.loads(strip_json_comments(text) if comments else text)
    except jsjson.JSONParseError as exc:
        return None, f"{path}: ignored, it is not JSON ({str(exc).splitlines()[0]})"
    if _too_deep(value):
        return None, f"{path}: ignored, it nests deeper than {MAX_FACT_DEPTH:,} levels"
    return value, None


def load_models_json(path: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The providers of the ``models.json`` at ``path`` and the reason it was ignored (or ``None``).

    A missing file is an empty configuration, not a problem. The file is only read.
    """
    parsed, problem = read_fact_file(path, comments=True)
    if problem is not None or parsed is None:
        return {}, problem
    problem = _check_config(parsed)
    if problem is not None:
        return {}, f"{path}: ignored, it does not match Pi's schema ({problem})"
    return dict(parsed["providers"]), None


def js_double(value: Any) -> float | None:
    """The JSON number ``value`` as JavaScript holds it, a double (an integer too large for one is
    ``±Infinity``); ``None`` when ``value`` is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _is_number(value: Any) -> bool:
    """A number of Pi's schema: TypeBox's ``Type.Number`` takes finite numbers only."""
    double = js_double(value)
    return double is not None and math.isfinite(double)


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= 1


def _check_rates(cost: Any, where: str, *, partial: bool) -> str | None:
    if not isinstance(cost, Mapping):
        return f"{where}: not an object"
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        if key not in cost:
            if not partial:
                return f"{where}.{key}: required"
        elif not _is_number(cost[key]):
            return f"{where}.{key}: not a finite number"
    return None


def _check_cost(cost: Any, where: str, *, partial: bool) -> str | None:
    problem = _check_rates(cost, where, partial=partial)
    if problem is not None or "tiers" not in cost:
        return problem
    if not isinstance(cost["tiers"], list):
        return f"{where}.tiers: not an array"
    for i, tier in enumerate(cost["tiers"]):
        problem = _check_rates(tier, f"{where}.tiers.{i}", partial=False)
        if problem is not None:
            return problem
        if not _is_number(tier.get("inputTokensAbove")):
            return f"{where}.tiers.{i}.inputTokensAbove: required, a finite number"
    return None


_TEXT_FIELDS = ("name", "api", "baseUrl")
_OBJECT_FIELDS = ("thinkingLevelMap", "inputLimits", "promptCache", "samplingParams",
                  "samplingParamsByThinkingLevel", "headers", "compat")


def _check_model(model: Any, where: str, *, override: bool) -> str | None:
    if not isinstance(model, Mapping):
        return f"{where}: not an object"
    if not override and not _is_text(model.get("id")):
        return f"{where}.id: required, a non-empty string"
    for key in _TEXT_FIELDS if not override else ("name",):
        if key in model and not _is_text(model[key]):
            return f"{where}.{key}: not a non-empty string"
    for key in ("contextWindow", "maxTokens"):
        if key in model and not (_is_number(model[key]) and model[key] > 0):
            return f"{where}.{key}: not a number above 0"
    if "reasoning" in model and not isinstance(model["reasoning"], bool):
        return f"{where}.reasoning: not a boolean"
    if "input" in model and not (isinstance(model["input"], list)
                                 and all(item in ("text", "image") for item in model["input"])):
        return f"{where}.input: not a list of \"text\" and \"image\""
    for key in _OBJECT_FIELDS:
        if key in model and not isinstance(model[key], Mapping):
            return f"{where}.{key}: not an object"
    if "cost" in model:
        return _check_cost(model["cost"], f"{where}.cost", partial=override)
    return None


def _check_provider(provider: Any, where: str) -> str | None:
    if not isinstance(provider, Mapping):
        return f"{where}: not an object"
    for key in ("name", "baseUrl", "apiKey", "api"):
        if key in provider and not _is_text(provider[key]):
            return f"{where}.{key}: not a non-empty string"
    if "oauth" in provider and provider["oauth"] != "radius":
        return f"{where}.oauth: not \"radius\""
    if "authHeader" in provider and not isinstance(provider["authHeader"], bool):
        return f"{where}.authHeader: not a boolean"
    for key in ("headers", "compat"):
        if key in provider and not isinstance(provider[key], Mapping):
            return f"{where}.{key}: not an object"
    models = provider.get("models", [])
    if not isinstance(models, list):
        return f"{where}.models: not an array"
    for i, model in enumerate(models):
        problem = _check_model(model, f"{where}.models.{i}", override=False)
        if problem is not None:
            return problem
    overrides = provider.get("modelOverrides", {})
    if not isinstance(overrides, Mapping):
        return f"{where}.modelOverrides: not an object"
    for model_id, override in overrides.items():
        problem = _check_model(override, f"{where}.modelOverrides.{model_id}", override=True)
        if problem is not None:
            return problem
    return None


def _check_config(config: Any) -> str | None:
    if not isinstance(config, Mapping):
        return "root: not an object"
    if "$schema" in config and not isinstance(config["$schema"], str):
        return "$schema: not a string"
    providers = config.get("providers")
    if not isinstance(providers, Mapping):
        return "providers: required, an object"
    for provider_id, provider in providers.items():
        problem = _check_provider(provider, f"providers.{provider_id}")
        if problem is not None:
            return problem
    return None
