"""Model facts (context window, output limit, prices), resolved from the sources Pi resolves them from.

1. Pi's built-in provider catalogs: a snapshot of ``@earendil-works/pi-ai``'s
   ``providers/data/*.json`` ships with pikit (``_catalog.json.gz``, written by
   ``data/model_catalog/generate.py``; source ``"catalog pi 1.6.0"``).
2. The refreshed catalogs Pi saves in ``models-store.json`` (source ``"models-store.json"``):
   a provider's stored models replace or add to its built-in ones when the entry's
   ``lastModified`` is newer than the built-in data's generation time; OpenRouter's stored list
   (narrowed to the user's key) replaces its built-in models whatever its time.
3. The user's ``models.json`` (source ``"models.json"``): ``providers.X.models[]`` add or replace
   models (a field left out takes Pi's default: a 128,000-token window, 16,384 output tokens,
   prices 0), then ``providers.X.modelOverrides`` change fields of a model (prices one by one).
   A provider whose entry Pi cannot compose keeps its models as they were; a file Pi would
   refuse is ignored whole. Either way the reason is in :attr:`ModelCatalog.problems`.

The files are read from the agent folder, ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent`` (Pi's
``getAgentDir``), or the folder given; they are only read, never locked or written. A model
that no source knows is *unknown*: :func:`lookup_model` returns ``None`` and nothing guesses
its window.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import PikitError, Wording
from ._modelsjson import js_double, load_models_json, read_fact_file
from ._pricing import CostTier, Pricing

__all__ = [
    "ModelCatalog",
    "ModelInfo",
    "agent_dir",
    "catalog_source",
    "lookup_model",
    "model_catalog",
]

MODELS_JSON = "models.json"
MODELS_STORE = "models-store.json"
_KNOWN_TYPES = ("chat", "image", "classifier")
# Providers whose stored catalog replaces the built-in one (Pi's withPersonalizedCatalog), and
# providers that take no stored catalog at all.
_PERSONALIZED = ("openrouter",)
_NO_STORE = ("radius",)


@dataclass(frozen=True)
class ModelInfo:
    """What pikit knows about one model, and where each part came from.

    Attributes:
        provider: Pi's provider id (``"openai"``, ``"anthropic"``, …).
        model_id: the provider's model id.
        name: the display name.
        context_window: the tokens the model accepts (``None`` when its source gives none).
        max_output_tokens: the most tokens it may produce in one answer (``None``: not given).
        pricing: its prices, or ``None`` when its source gives none.
        source: the last source that defined or changed the model (``"catalog pi 1.6.0"``,
            ``"models-store.json"`` or ``"models.json"``).
        window_source: the source its ``context_window`` came from.
        type: ``"chat"``, or ``"image"`` / ``"classifier"`` for Pi's other model types.
    """

    provider: str
    model_id: str
    name: str
    context_window: int | None
    max_output_tokens: int | None
    pricing: Pricing | None
    source: str
    window_source: str
    type: str = "chat"

    @property
    def key(self) -> str:
        """``"provider/modelId"``."""
        return f"{self.provider}/{self.model_id}"

    def to_json(self) -> dict[str, Any]:
        """``{"provider", "id", "contextWindow", "maxTokens", "cost", "source"}`` (``pikit models --json``)."""
        return {"provider": self.provider, "id": self.model_id, "contextWindow": self.context_window,
                "maxTokens": self.max_output_tokens,
                "cost": None if self.pricing is None else self.pricing.to_json(), "source": self.source}


def _snapshot_bytes() -> bytes:
    return resources.files("pikit.llm").joinpath("_catalog.json.gz").read_bytes()


@cache
def _snapshot() -> dict[str, Any]:
    snapshot: dict[str, Any] = json.loads(gzip.decompress(_snapshot_bytes()))
    return snapshot


def facts_fingerprint(folder: str | os.PathLike[str] | None = None) -> str:
    """One line that changes when the model facts may: the snapshot's checksum and the modification times and
    sizes of ``models.json`` and ``models-store.json`` in the agent folder (nothing is parsed)."""
    where = agent_dir(folder)
    return f"{zlib.crc32(_snapshot_bytes()):08x} {_stamp(where / MODELS_JSON)} {_stamp(where / MODELS_STORE)}"


def catalog_source() -> str:
    """The source name of the bundled catalogs: ``"catalog pi VERSION"``."""
    return f"catalog pi {_snapshot()['pi']}"


def _generated_at_ms() -> float | None:
    from datetime import datetime

    stamp = _snapshot()["generatedAt"]
    return None if stamp is None else datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000


def agent_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """Pi's agent folder: ``path``, else ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent`` (``~`` expanded)."""
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(env).expanduser() if env else Path.home() / ".pi" / "agent"


def _type(model: Mapping[str, Any]) -> str:
    """Pi's model type (``"chat"`` when absent); a type that is not a string is no type pikit knows."""
    kind = model.get("type")
    return "chat" if kind is None else kind if isinstance(kind, str) else "(not a string)"


def _merge(baseline: list[dict[str, Any]], dynamic: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pi's mergeModels: one model per (type, id), a later one replacing an earlier one in place."""
    merged: dict[tuple[str, Any], dict[str, Any]] = {}
    for model in [*baseline, *dynamic]:
        merged[(_type(model), model.get("id"))] = model
    return list(merged.values())


def _stored(provider: str, entry: Any, source: str, unnamed: list[str]) -> list[dict[str, Any]]:
    """The stored models of ``provider``; one whose id is not a string (Pi lists it, but no model id names
    it) is left out, its provider added to ``unnamed``."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("models"), list):
        return []
    kept = [model for model in entry["models"] if isinstance(model, Mapping) and "id" in model
            and model.get("provider") == provider and _type(model) in _KNOWN_TYPES]
    if any(not isinstance(model["id"], str) for model in kept):
        unnamed.append(provider)
    return [{**model, "source": source, "windowSource": source} for model in kept if isinstance(model["id"], str)]


def _with_store(provider: str, builtin: list[dict[str, Any]], entry: Any, unnamed: list[str]) -> list[dict[str, Any]]:
    if provider in _NO_STORE or entry is None:
        return builtin
    stored = _stored(provider, entry, MODELS_STORE, unnamed)
    if provider in _PERSONALIZED:
        return stored or builtin
    generated_at = _generated_at_ms()
    last_modified = entry.get("lastModified") if isinstance(entry, Mapping) else None
    newer = generated_at is None or (isinstance(last_modified, int | float) and not isinstance(last_modified, bool)
                                     and last_modified > generated_at)
    return _merge(builtin, stored) if newer else builtin


def _custom_model(provider: str, definition: Mapping[str, Any], config: Mapping[str, Any],
                  has_defaults: bool) -> dict[str, Any]:
    """Pi's modelFromJson (the fields pikit keeps); raises ValueError where Pi cannot compose."""
    if definition.get("api") is None and config.get("api") is None and not has_defaults:
        raise ValueError(f'Provider {provider}, model {definition["id"]}: no "api" specified. '
                         "Set at provider or model level.")
    if definition.get("baseUrl") is None and config.get("baseUrl") is None and not has_defaults:
        raise ValueError(f'Provider {provider}: "baseUrl" is required when defining custom models.')
    return {"id": definition["id"], "name": definition.get("name", definition["id"]),
            "contextWindow": definition.get("contextWindow", 128000),
            "maxTokens": definition.get("maxTokens", 16384),
            "cost": definition.get("cost", {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}),
            "source": MODELS_JSON, "windowSource": MODELS_JSON}


_CONFIG_FIELDS = ("models", "baseUrl", "headers", "compat", "apiKey", "oauth")


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness for JSON values: an empty object or array is true, an empty list's length is not."""
    return value not in (None, False, 0, "") if not isinstance(value, list | Mapping) else True


def _with_models_json(provider: str, base: list[dict[str, Any]], config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pi's applyModelsJson, then its modelOverrides (composeModelProvider)."""
    if _truthy(config.get("oauth")) and not _truthy(config.get("baseUrl")):
        raise ValueError(f'Provider {provider}: "baseUrl" is required when "oauth" is set.')
    specified = [_truthy(config.get(key)) for key in _CONFIG_FIELDS]
    specified[0] = bool(config.get("models"))  # (Pi tests models?.length)
    if not any(specified) and not config.get("modelOverrides") and config.get("authHeader") is None:
        raise ValueError(f'Provider {provider}: must specify "baseUrl", "headers", "compat", "modelOverrides", '
                         'or "models".')
    models = list(base)
    for definition in config.get("models", []):
        chat = [model for model in models if _type(model) == "chat"]
        model = _custom_model(provider, definition, config, bool(chat))
        index = next((i for i, existing in enumerate(models)
                      if _type(existing) == "chat" and existing.get("id") == definition["id"]), None)
        if index is None:
            models.append(model)
        else:
            models[index] = model
    overrides = config.get("modelOverrides", {})
    return [_override(model, overrides[model.get("id")]) if _type(model) == "chat" and model.get("id") in overrides
            else model for model in models]


def _override(model: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Pi's applyModelOverride (the fields pikit keeps)."""
    out = {**model, "name": override.get("name", model.get("name")), "source": MODELS_JSON}
    if "cost" in override:
        base: Mapping[str, Any] = model["cost"] if isinstance(model.get("cost"), Mapping) else {}
        cost = {key: override["cost"].get(key, base.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite")}
        tiers = override["cost"].get("tiers", base.get("tiers"))
        out["cost"] = cost if tiers is None else {**cost, "tiers": tiers}
    if "contextWindow" in override:
        out["contextWindow"], out["windowSource"] = override["contextWindow"], MODELS_JSON
    if "maxTokens" in override:
        out["maxTokens"] = override["maxTokens"]
    return out


def _count(value: Any) -> int | None:
    double = js_double(value)
    return None if double is None or not math.isfinite(double) else int(double)


def _rate(value: Any) -> float:
    double = js_double(value)
    return 0.0 if double is None else double


def _pricing(cost: Any) -> Pricing | None:
    if not isinstance(cost, Mapping):
        return None
    tiers = tuple(CostTier(_rate(t.get("inputTokensAbove")), _rate(t.get("input")), _rate(t.get("output")),
                           _rate(t.get("cacheRead")), _rate(t.get("cacheWrite")))
                  for t in cost.get("tiers") or () if isinstance(t, Mapping))
    return Pricing(_rate(cost.get("input")), _rate(cost.get("output")), _rate(cost.get("cacheRead")),
                   _rate(cost.get("cacheWrite")), tiers)


def _info(provider: str, model: Mapping[str, Any]) -> ModelInfo:
    name = model.get("name")
    return ModelInfo(provider, str(model["id"]), name if isinstance(name, str) else str(model["id"]),
                     _count(model.get("contextWindow")), _count(model.get("maxTokens")), _pricing(model.get("cost")),
                     model["source"], model["windowSource"], _type(model))


class ModelCatalog:
    """Every model Pi would know with one agent folder, resolved as Pi resolves it.

    Build one with :func:`model_catalog`. :attr:`problems` holds one line per thing Pi would
    ignore (a ``models.json`` it refuses, a provider entry it cannot compose, an unreadable
    ``models-store.json``).
    """

    def __init__(self, folder: Path) -> None:
        self.agent_dir = folder
        #: What the facts were built from: the two files' modification times and sizes (``None``: absent).
        self.stamp = (_stamp(folder / MODELS_JSON), _stamp(folder / MODELS_STORE))
        problems: list[str] = []
        store = self._read_store(folder / MODELS_STORE, problems)
        unnamed: list[str] = []
        config, problem = load_models_json(folder / MODELS_JSON)
        if problem is not None:
            problems.append(problem)
        builtin = {provider: [{**model, "source": catalog_source(), "windowSource": catalog_source()}
                              for model in models]
                   for provider, models in _snapshot()["providers"].items()}
        providers: dict[str, list[dict[str, Any]]] = {}
        for provider in [*builtin, *(p for p in config if p not in builtin)]:
            base = _with_store(provider, builtin.get(provider, []), store.get(provider), unnamed)
            if provider in config:
                try:
                    base = _with_models_json(provider, base, config[provider])
                except ValueError as exc:
                    problems.append(f"{folder / MODELS_JSON}: provider {provider} ignored ({exc})")
            if base:
                providers[provider] = base
        # (each model's facts are read when first asked for: a command asks for a few of some thousands)
        self._raw = providers
        self._infos: dict[tuple[str, int], ModelInfo] = {}
        self._chat = {(provider, str(model["id"])): (provider, n) for provider, models in providers.items()
                      for n, model in reversed(list(enumerate(models))) if _type(model) == "chat"}
        if unnamed:
            problems.append(f"{folder / MODELS_STORE}: stored models of {', '.join(unnamed)} left out: "
                            "their id is not a string")
        self.problems: tuple[str, ...] = tuple(problems)
        #: Which catalog of this process it is (1, 2, …), once :func:`model_catalog` has built it.
        self.built = 0

    @staticmethod
    def _read_store(path: Path, problems: list[str]) -> Mapping[str, Any]:
        data, problem = read_fact_file(path)
        if problem is not None:
            problems.append(problem)
            return {}
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            problems.append(f"{path}: ignored, it is not a JSON object")
            return {}
        return data

    def _info(self, provider: str, n: int) -> ModelInfo:
        """The facts of the ``n``-th model of ``provider``."""
        info = self._infos.get((provider, n))
        if info is None:
            info = self._infos[(provider, n)] = _info(provider, self._raw[provider][n])
        return info

    def __iter__(self) -> Iterator[ModelInfo]:
        """Every model, provider by provider, in Pi's order."""
        for provider, models in self._raw.items():
            for n in range(len(models)):
                yield self._info(provider, n)

    def get(self, provider: str, model_id: str) -> ModelInfo | None:
        """The chat model ``model_id`` of ``provider`` (Pi's ``getModel``), or ``None``."""
        at = self._chat.get((provider, model_id))
        return None if at is None else self._info(*at)

    def lookup(self, spec: str) -> ModelInfo | None:
        """The chat model ``spec`` names, or ``None`` when no source knows it.

        ``spec`` is ``"provider/modelId"`` (the provider may be followed by a model id that has
        slashes itself, as OpenRouter's do) or a bare model id, which must name one model of one
        provider only.
        """
        provider, sep, model_id = spec.partition("/")
        if sep:
            found = self.get(provider, model_id)
            if found is not None:
                return found
        matches = [at for (_, model_id), at in self._chat.items() if model_id == spec]
        return self._info(*matches[0]) if len(matches) == 1 else None


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


_CACHE: dict[Path, ModelCatalog] = {}
_BUILT: list[int] = [0]  # catalogs built in this process so far


def catalogs_built() -> int:
    """How many catalogs this process has built so far (a mark for :func:`problems_since`)."""
    return _BUILT[0]


def problems_since(mark: int) -> list[str]:
    """The problems of the catalogs built after ``mark`` (:func:`catalogs_built`), each once: what the command
    line says, one line each, about the model-fact files a command ignored."""
    return list(dict.fromkeys(problem for catalog in _CACHE.values() if catalog.built > mark
                              for problem in catalog.problems))


def model_catalog(folder: str | os.PathLike[str] | None = None) -> ModelCatalog:
    """The models Pi knows with the agent folder ``folder`` (default: :func:`agent_dir`).

    Built again when ``models.json`` or ``models-store.json`` has changed since the last call.
    A ``folder`` given that is not a folder raises :class:`~pikit.errors.PikitError`.
    """
    where = agent_dir(folder)
    if folder is not None and not where.is_dir():
        what = "no such folder" if not where.exists() else "not a folder"
        raise PikitError(Wording("{agent_dir} {path}: {what}", {"agent_dir": "agent_dir"}, path=str(where), what=what))
    cached = _CACHE.get(where)
    if cached is None or cached.stamp != (_stamp(where / MODELS_JSON), _stamp(where / MODELS_STORE)):
        cached = _CACHE[where] = ModelCatalog(where)
        _BUILT[0] += 1
        cached.built = _BUILT[0]
    return cached


def lookup_model(spec: str, *, agent_dir: str | os.PathLike[str] | None = None) -> ModelInfo | None:
    """The chat model ``spec`` (``"provider/modelId"`` or a bare id) names, or ``None`` when unknown.

    See :meth:`ModelCatalog.lookup`; ``agent_dir`` is Pi's agent folder (default
    ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``).
    """
    return model_catalog(agent_dir).lookup(spec)
