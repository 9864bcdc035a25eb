"""``pikit models``: the models Pi knows, with their windows, output limits, prices and sources."""

from __future__ import annotations

import math
from argparse import Namespace

from .._formatting import fmt_int, plural
from ..errors import PikitError
from ..llm._models import ModelCatalog, ModelInfo, catalog_source, model_catalog
from ..llm._pricing import CostTier, Pricing
from ._common import print_json
from ._json import models as models_json
from ._terminal import inert


def run(args: Namespace) -> int:
    catalog = model_catalog(args.agent_dir)  # (its problems are warnings the command line prints at the end)
    query = args.query
    exact = catalog.get(*query.split("/", 1)) if query and "/" in query else None
    if exact is not None:
        if args.json:
            print_json(models_json.model(exact))
        else:
            _table(catalog, [exact])
        return 0
    found = [info for info in catalog if info.type == "chat" and (not query or query.lower() in info.key.lower())]
    if not found:
        sources = f"{catalog_source()}, {catalog.agent_dir / 'models.json'}, {catalog.agent_dir / 'models-store.json'}"
        raise PikitError(f"unknown model {inert(query)}: no model of {sources} matches it" if query
                         else f"no models: {sources} hold none")
    if args.json:
        print_json(models_json.models(catalog, found))
    else:
        _table(catalog, found)
    return 0


def _number(value: int | None) -> str:
    return "unknown" if value is None else fmt_int(value)


def _above(threshold: float) -> str:
    """When a tier applies; a threshold of Infinity (a number too large in ``models-store.json``) never, as in Pi."""
    if math.isinf(threshold):
        return "never (above Infinity input tokens)" if threshold > 0 else "always (above -Infinity input tokens)"
    return f"above {fmt_int(round(threshold))} input tokens"


def _rates(rates: Pricing | CostTier) -> str:
    return f"{rates.input:g} / {rates.output:g} / {rates.cache_read:g} / {rates.cache_write:g}"


def _table(catalog: ModelCatalog, found: list[ModelInfo]) -> None:
    width = min(60, max(len(info.key) for info in found))
    print(f"{'model':<{width}} {'window':>10} {'max out':>9}  {'$/M in / out / cache read / write':<34}  source")
    for info in found:
        prices = "cost unknown" if info.pricing is None else _rates(info.pricing)
        print(f"{inert(info.key):<{width}} {_number(info.context_window):>10} {_number(info.max_output_tokens):>9}  "
              f"{prices:<34}  {_source(info)}")
        for tier in info.pricing.tiers if info.pricing is not None else ():
            print(f"{'':<{width}} {'':>10} {'':>9}  {_rates(tier):<34}  {_above(tier.input_tokens_above)}")
    print(f"{plural(len(found), 'model')}; prices in US dollars per million tokens; from {catalog_source()} and "
          f"{catalog.agent_dir}")


def _source(info: ModelInfo) -> str:
    if info.window_source == info.source:
        return info.source
    return f"{info.source} (window: {info.window_source})"
