"""Timestamps as JavaScript's ``Date`` reads them.

Entries carry ISO strings; Pi turns them into Unix milliseconds with
``new Date(text).getTime()`` (message timestamps, the order of children). An
unparseable string gives ``NaN`` there and ``None`` here. Besides ISO 8601 (where V8
accepts day 31 in any month and rolls over, lowercase ``t``/``z``, and extended years),
the common forms of V8's fallback parser are read: ``2026/01/31 10:00``, ``2026-1-31``,
``Jan 31 2026 10:00:00 GMT`` and ``Sat, 31 Jan 2026 10:00:00 GMT``. A date-time without
an offset is local time, as in JavaScript.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from functools import lru_cache

__all__ = ["iso_now", "parse_ms"]

_ISO = re.compile(
    r"""(?P<year>[+-]\d{6}|\d{4})
        (?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?
        (?:[Tt ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<frac>\d+))?)?)?
        (?P<tz>[Zz]|[+-]\d{2}:?\d{2})?""",
    re.VERBOSE,
)
_NUMERIC = re.compile(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_WORDY = re.compile(
    r"(?:[A-Za-z]{3},?\s+)?(?:(?P<d1>\d{1,2})\s+(?P<m1>[A-Za-z]{3})|(?P<m2>[A-Za-z]{3})\s+(?P<d2>\d{1,2}))"
    r",?\s+(?P<year>\d{4})(?:\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?"
    r"(?:\s*(?P<tz>GMT|UTC|Z|[+-]\d{4}))?"
)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), 1)}
_MAX_MS = 8.64e15


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, day may overflow the month)."""
    y = year - (month <= 2)
    era = y // 400  # floor division: also right for negative years
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + day - 1


def _local_offset_ms(utc_ms: int) -> int:
    """The local zone's offset (ms) at a moment given as if it were UTC."""
    try:
        seconds = utc_ms / 1000
        offset = time.localtime(seconds).tm_gmtoff
        # The offset at the local wall-clock time, not at the UTC moment.
        return int(time.localtime(seconds - offset).tm_gmtoff) * 1000
    except (OverflowError, OSError, ValueError):
        return 0


def _compose(year: int, month: int, day: int, hour: int, minute: int, second: int, millis: int,
             offset_ms: int | None) -> int | None:
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute < 60 and second < 60):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    ms = ((_days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    ms -= _local_offset_ms(ms) if offset_ms is None else offset_ms
    return ms if abs(ms) <= _MAX_MS else None


def _offset(tz: str) -> int:
    if tz in ("Z", "z", "GMT", "UTC"):
        return 0
    digits = tz[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:])
    return (minutes if tz[0] == "+" else -minutes) * 60_000


def parse_ms(text: object) -> int | None:
    """Milliseconds since the epoch, or ``None`` where JavaScript would get ``NaN``."""
    return _parse_text_ms(text) if isinstance(text, str) else None


@lru_cache(maxsize=65536)
def _parse_text_ms(text: str) -> int | None:
    m = _ISO.fullmatch(text)
    if m is not None:
        year = m["year"]
        if year == "-000000":
            return None
        has_time = m["hour"] is not None
        offset = _offset(m["tz"]) if m["tz"] else (None if has_time else 0)
        return _compose(int(year), int(m["month"] or 1), int(m["day"] or 1), int(m["hour"] or 0),
                        int(m["minute"] or 0), int(m["second"] or 0), int((m["frac"] or "0")[:3].ljust(3, "0")),
                        offset)
    m = _NUMERIC.fullmatch(text)
    if m is not None:
        y, mo, d, hh, mi, ss = m.groups()
        return _compose(int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0), 0, None)
    w = _WORDY.fullmatch(text)
    if w is not None:
        month = _MONTHS.get((w["m1"] or w["m2"]).lower())
        if month is None:
            return None
        return _compose(int(w["year"]), month, int(w["d1"] or w["d2"]), int(w["hour"] or 0), int(w["minute"] or 0),
                        int(w["second"] or 0), 0, _offset(w["tz"]) if w["tz"] else None)
    return None


def iso_now() -> str:
    """The current time as JavaScript's ``new Date().toISOString()`` prints it."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
