"""The vocabulary of time: one `--since` grammar for every command, and how instants are written.

`--since` takes a calendar day (`2026-05-01`, local midnight), a month (`2026-05`, its first
day), an ISO 8601 date-time (`2026-05-01T09:30`, local unless it names an offset), or a span back
from now (`24h`, `7d`, `2w`). Each command turns the one parsed start into what it compares with:
an epoch (the usage log), a UTC ISO string (transcripts.db), a first calendar day (`brain week`).

In JSON a calendar day is `date` (or `..._date`) as `YYYY-MM-DD`; an instant is `at` (or
`..._at`) as ISO 8601 with its offset (see `at`). Import-light: `brain find` never
loads this, and nothing here imports more than the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from brain.errors import UsageError

SINCE_FORMS = "YYYY-MM-DD, YYYY-MM, an ISO date-time, or a span back from now: 24h, 7d, 2w"
_HOURS = {"h": 1, "d": 24, "w": 24 * 7}


@dataclass(frozen=True)
class Since:
    """A parsed `--since`: the instant it starts at, and the span it named (None for a date)."""

    start: datetime  # timezone-aware
    span: timedelta | None

    @property
    def epoch(self) -> float:
        return self.start.timestamp()

    @property
    def utc(self) -> str:
        """`YYYY-MM-DDTHH:MM:SS` in UTC: compares as text with the times transcripts.db holds."""
        return self.start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")

    def first_day(self, today: date) -> date:
        """The first calendar day it covers, counting `7d` as today and the six days before."""
        if self.span is None:
            return self.start.astimezone().date()
        days = max(1, -(-self.span // timedelta(days=1)))  # 24h is one day, 25h two
        return today - timedelta(days=days - 1)


def parse_since(text: str, *, option: str = "--since", now: datetime | None = None) -> Since:
    """`text` in the one `--since` grammar; a bad value is a usage error naming the option."""
    key = text.strip()
    now = now or datetime.now(UTC)
    span = re.fullmatch(r"(\d+)\s*([hdw])", key, re.IGNORECASE)
    if span:
        hours = int(span[1]) * _HOURS[span[2].lower()]
        if hours < 1:
            raise UsageError(f"{option} {text!r} is an empty span", f"{option} takes {SINCE_FORMS}")
        delta = timedelta(hours=hours)
        return Since(now - delta, delta)
    if re.fullmatch(r"\d{4}-\d{2}", key):
        key += "-01"
    try:
        start = datetime.fromisoformat(key.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a date or a span", f"{option} takes {SINCE_FORMS}"
        ) from None
    if start.tzinfo is None:
        start = start.astimezone()  # a day or a time without an offset is local
    return Since(start, None)


def since_at(text: str) -> str | None:
    """The instant a `--since` starts at, as JSON writes it (None when there is no --since)."""
    return at(parse_since(text).start) if text else None


def at(stamp: datetime) -> str:
    """An instant as JSON writes it when brain made it: ISO 8601, local time with its offset, to
    the second (`2026-12-02T09:30:00+01:00`); times read from transcripts or the index stay in UTC
    with `Z`, as stored."""
    return stamp.astimezone().isoformat(timespec="seconds")


def at_epoch(seconds: float) -> str:
    return at(datetime.fromtimestamp(seconds, UTC))
