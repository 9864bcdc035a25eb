"""Timestamps as JavaScript's ``Date`` reads them.

Entries carry ISO strings; Pi turns them into Unix milliseconds with
``new Date(text).getTime()`` (for message timestamps and for ordering children).
An unparseable string gives ``NaN`` there; here it gives ``None``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache

__all__ = ["iso_now", "parse_ms"]

_ISO = re.compile(
    r"""^(?P<year>[+-]\d{6}|\d{4})
        (?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?
        (?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})
           (?::(?P<second>\d{2})(?:[.,](?P<frac>\d+))?)?
           (?P<tz>Z|[+-]\d{2}:?\d{2})?)?$""",
    re.VERBOSE,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@lru_cache(maxsize=65536)
def parse_ms(text: object) -> int | None:
    """Milliseconds since the epoch, or ``None`` where JavaScript would get ``NaN``."""
    if not isinstance(text, str):
        return None
    m = _ISO.match(text.strip())
    if m is None:
        return None
    year = int(m["year"])
    month = int(m["month"] or 1)
    day = int(m["day"] or 1)
    hour = int(m["hour"] or 0)
    minute = int(m["minute"] or 0)
    second = int(m["second"] or 0)
    millis = int((m["frac"] or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 24 and minute < 60 and second < 60):
        return None
    if hour == 24 and (minute or second or millis):
        return None
    try:
        base = datetime(year, month, day, tzinfo=UTC) if 1 <= year <= 9999 else None
    except ValueError:
        return None
    if base is None:
        return None
    moment = base + timedelta(hours=hour, minutes=minute, seconds=second, milliseconds=millis)
    tz = m["tz"]
    if tz is None and m["hour"] is not None:
        # A date-time without an offset is local time in JavaScript.
        local = moment.replace(tzinfo=None)
        return round(local.timestamp() * 1000)
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    delta = moment - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def iso_now() -> str:
    """The current time as JavaScript's ``new Date().toISOString()`` prints it."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
