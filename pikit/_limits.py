"""The bounds pikit holds to, and the one check of a number of seconds a caller gives.

Every wait pikit offers (a timeout, an idle time, a polling interval, a wait for a lock) is a
finite number of seconds of at most :data:`ONE_DAY`: NaN would never end a wait (every
comparison with it is false), and infinity would not either.
"""

from __future__ import annotations

__all__ = ["MIN_POLL", "ONE_DAY", "check_seconds"]

#: The longest wait pikit accepts, in seconds.
ONE_DAY = 86_400.0
#: The shortest polling interval, in seconds (a shorter one would be a busy loop).
MIN_POLL = 0.01


def check_seconds(name: str, value: object, low: float = 0.0, high: float = ONE_DAY) -> float:
    """``value`` if it is a number of seconds from ``low`` to ``high``; else :class:`~pikit.PikitError`
    naming the parameter ``name`` (NaN and the infinities are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        from .errors import PikitError

        raise PikitError(f"{name} must be a number of seconds from {low:g} to {high:,.0f}, got {value!r}")
    return float(value)
