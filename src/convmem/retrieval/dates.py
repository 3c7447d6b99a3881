"""Dates a query names ("in June", "on 13 October, 2023", "May 23", "2023-05-08", "in 2022"),
for the search's date prior: a turn written in a period the question names is likelier to be the
one it asks about. Pure functions over text; English month names (full, abbreviated, "Sept")
and ISO dates, which read the same in any language.

"May" alone is a modal verb ("May I ask…"), so it is taken as the month only beside a day or a
year or after a preposition ("in May", "since may", "early May"); an abbreviation ("Jan",
"Mar") only beside a day or a year. The search reads the query without the conversation's
speaker names, so a speaker called June or April names no month. A period without a year
matches that month or day in any year: an imported conversation's dates lie years back, and a
question rarely says which year it means when the conversation holds one such month.

Relative expressions ("last week", "before the trip") are not read: they need the time the
question is asked from and an event to anchor to, which a conversation's search does not know.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

_FULL = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTHS.update(_FULL, sept=9)


def _alternatives(words: set[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


# Beside a day or a year any name or abbreviation is a month. Alone, only a full name is ("Jan"
# and "Mar" are a name and a verb), and never "may", usually the verb.
_MONTH = rf"(?:{_alternatives(set(_MONTHS))})"
_NAMES = _alternatives(set(_FULL) - {"may"})
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:\s+(\d{4}))?"
_PREPOSITION = r"(?:in|of|since|during|until|early|late|mid)"
_DAY = r"(\d{1,2})"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b(\d{4})-(\d{1,2})(?:-(\d{1,2}))?\b")),
    # 13 October 2023, 13th of October, 1 February, 2023
    ("day_month", re.compile(rf"\b{_DAY}{_ORDINAL}\s+(?:of\s+)?({_MONTH})\b\.?,?{_YEAR}", re.I)),
    # October 13, 2023; Sept. 3rd
    ("month_day", re.compile(rf"\b({_MONTH})\b\.?\s+{_DAY}{_ORDINAL}\b,?{_YEAR}", re.I)),
    # May 2023, October, 2023
    ("month_year", re.compile(rf"\b({_MONTH})\b\.?,?\s+(\d{{4}})\b", re.I)),
    ("month", re.compile(rf"\b({_NAMES})\b|\b{_PREPOSITION}\s+(may)\b", re.I)),
    ("year", re.compile(r"\b(?:in|of|since|during|until)\s+((?:1[89]|2\d)\d\d)\b", re.I)),
)  # fmt: skip
# A turn may tell of a day up to a week after it ("last weekend we went…"): the prior holds a
# period's turns and those of the week after.
REPORTED_WITHIN = timedelta(days=7)


@dataclass(frozen=True)
class Period:
    """A year, a month (of a year or of any year) or a day; None parts match anything."""

    year: int | None = None
    month: int | None = None
    day: int | None = None

    def holds(self, at: date) -> bool:
        return (
            (self.year is None or at.year == self.year)
            and (self.month is None or at.month == self.month)
            and (self.day is None or at.day == self.day)
        )

    def holds_or_after(self, at: date, within: timedelta = REPORTED_WITHIN) -> bool:
        """``at`` (a day or a time) in the period, or at most ``within`` after a day of it."""
        days = max(0, within.days)
        return any(self.holds(at - timedelta(days=back)) for back in range(days + 1))


def _month(word: str) -> int:
    return _MONTHS[word.lower()]


def _period(kind: str, groups: tuple[str | None, ...]) -> Period | None:
    """The period one match names, or None when its numbers are no date (month 13, day 32)."""

    def number(value: str | None) -> int | None:
        return None if value is None else int(value)

    if kind == "iso":
        year, month, day = number(groups[0]), number(groups[1]), number(groups[2])
    elif kind == "day_month":
        day, month, year = number(groups[0]), _month(groups[1] or ""), number(groups[2])
    elif kind == "month_day":
        month, day, year = _month(groups[0] or ""), number(groups[1]), number(groups[2])
    elif kind == "month_year":
        year, month, day = number(groups[1]), _month(groups[0] or ""), None
    elif kind == "month":
        year, month, day = None, _month(groups[0] or groups[1] or ""), None
    else:
        year, month, day = number(groups[0]), None, None
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= 31:
        return None
    return Period(year, month, day)


def named_periods(text: str) -> tuple[Period, ...]:
    """The periods ``text`` names, most specific reading first: where two readings overlap
    ("October 13, 2023" also holds "October" and "October, 2023"), the fuller one is kept."""
    taken: list[tuple[int, int]] = []
    found: dict[Period, None] = {}
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            period = _period(kind, match.groups())
            if period is not None:
                taken.append((start, end))
                found[period] = None
    return tuple(found)
