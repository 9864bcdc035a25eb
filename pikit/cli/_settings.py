"""``pikit settings``: the effective compaction settings and where each value comes from."""

from __future__ import annotations

from argparse import Namespace

from .._formatting import fmt_int
from ..compaction._settings import load_settings
from ._common import print_json
from ._json import compaction as compaction_json


def run(args: Namespace) -> int:
    settings = load_settings(args.settings)
    effective = settings.for_model(args.model)
    overrides = settings.overrides()
    if args.json:
        print_json(compaction_json.settings(settings, effective, overrides))
        return 0
    print("settings files: " + (", ".join(settings.files) if settings.files else "none found (built-in defaults)"))
    print(f"compaction for {args.model or 'any model'}:")
    print(f"  enabled          {str(effective.enabled).lower()}")
    for key, value in (("reserveTokens", effective.reserve_tokens), ("keepRecentTokens", effective.keep_recent_tokens)):
        print(f"  {key:<16} {fmt_int(value):>7}   ({effective.sources[key]})")
    print(f"branchSummary.reserveTokens {fmt_int(settings.branch_summary_reserve_tokens)}")
    if overrides:
        print("model overrides:")
        for model, values in overrides.items():
            marker = "  ←" if model == args.model else ""
            shown = (f"{k}={fmt_int(v) if isinstance(v, int | float) and not isinstance(v, bool) else v}"
                     for k, v in values.items())
            print(f"  {model}: " + ", ".join(shown) + marker)
    return 0
