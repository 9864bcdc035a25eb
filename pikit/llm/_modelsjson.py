"""The user's ``models.json``, read and checked as Pi reads it (``ModelConfig.load``).

The file may have ``//`` comments and trailing commas (Pi strips both). A file that does not
parse or does not match Pi's schema is ignored whole, as Pi ignores it; the reason is one line.
Only what pikit needs is checked in depth (the model fields, prices and limits); the rest of Pi's
schema is checked for its types, which is what makes Pi refuse a file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["load_models_json", "strip_json_comments"]

_STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])')


def strip_json_comments(text: str) -> str:
    """Pi's ``stripJsonComments``: drop ``//`` line comments and trailing commas outside strings."""
    text = _STRING_OR_COMMENT.sub(lambda m: m[0] if m[0].startswith('"') else "", text)
    return _STRING_OR_TRAILING_COMMA.sub(lambda m: m[1] if m[1] is not None else m[0], text)


def load_models_json(path: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The providers of the ``models.json`` at ``path`` and the reason it was ignored (or ``None``).

    A missing file is an empty configuration, not a problem. The file is only read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"{path}: ignored, it cannot be read ({exc.__class__.__name__})"
    try:
        parsed = json.loads(strip_json_comments(text.removeprefix("\ufeff")))
    except ValueError as exc:
        return {}, f"{path}: ignored, it is not JSON ({str(exc).splitlines()[0]})"
    problem = _check_config(parsed)
    if problem is not None:
        return {}, f"{path}: ignored, it does not match Pi's schema ({problem})"
    return dict(parsed["providers"]), None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


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
            return f"{where}.{key}: not a number"
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
            return f"{where}.tiers.{i}.inputTokensAbove: required, a number"
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
