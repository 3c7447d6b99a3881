"""The dates a query names (``convmem.retrieval.dates``) and the turns the date prior favours."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from convmem.domain.search import dated_turns
from convmem.retrieval.dates import Period, named_periods


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("When did Melanie go camping in June?", [Period(None, 6, None)]),
        ("What did she show on October 13, 2023?", [Period(2023, 10, 13)]),
        ("What did Gina find on 1 February, 2023?", [Period(2023, 2, 1)]),
        ("the 4th of July", [Period(None, 7, 4)]),
        ("Sept. 3rd and dec 24th", [Period(None, 9, 3), Period(None, 12, 24)]),
        ("what happened on 2023-05-08?", [Period(2023, 5, 8)]),
        ("in May 2023", [Period(2023, 5, None)]),
        ("What did I plan in 2022?", [Period(2022, None, None)]),
        ("early may", [Period(None, 5, None)]),
        ("JANUARY and january", [Period(None, 1, None)]),  # one period, named twice
        ("Jan 5, 2024 and Mar. 2023", [Period(2024, 1, 5), Period(2023, 3, None)]),
    ],
)
def test_named_periods_reads_days_months_and_years(text: str, expected: list[Period]) -> None:
    assert list(named_periods(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "May I ask what you did?",  # the verb, not the month
        "You may want to rest.",
        "What did Jan say? Did they mar the wall?",  # abbreviations alone: a name, a verb
        "Order 2023-13-45 arrived",  # not a date: month 13
        "We met 45 June",  # no day 45: the month alone is read
        "",
        "Was hast du im Sommer gemacht?",  # another language without a month name: nothing
    ],
)
def test_named_periods_leaves_what_is_no_date(text: str) -> None:
    periods = named_periods(text)
    assert all(p.day is None or p.day <= 31 for p in periods)
    assert all(p.month is None or 1 <= p.month <= 12 for p in periods)
    if "June" not in text:
        assert periods == ()


def test_a_period_holds_its_days_and_the_week_after() -> None:
    june = Period(None, 6, None)
    assert june.holds(date(2021, 6, 30)) and june.holds(date(2023, 6, 1))  # any year's June
    assert june.holds_or_after(date(2023, 7, 7))  # told a week on
    assert not june.holds_or_after(date(2023, 7, 8))
    assert not june.holds_or_after(date(2023, 5, 31))  # before it: not a report of it
    day = Period(2023, 10, 13)
    assert day.holds_or_after(date(2023, 10, 13)) and day.holds_or_after(date(2023, 10, 20))
    assert not day.holds_or_after(date(2023, 10, 21)) and not day.holds(date(2022, 10, 13))


def test_dated_turns_compares_in_utc() -> None:
    from datetime import timedelta, timezone

    # 23:30 on 30 June at UTC-2 is 1 July in UTC: still in June's week
    late = datetime(2023, 6, 30, 23, 30, tzinfo=timezone(timedelta(hours=-2)))
    written = {
        "a": datetime(2023, 6, 15, tzinfo=UTC),
        "b": late,
        "c": datetime(2023, 7, 9, tzinfo=UTC),
        "d": datetime(2023, 5, 31, 23, 0, tzinfo=UTC),
    }
    assert dated_turns(written, [Period(None, 6, None)]) == {"a", "b"}
    assert dated_turns(written, [Period(2023, 7, 1)]) == {"b"}
    assert dated_turns(written, []) == set()


def test_a_speaker_named_like_a_month_names_no_period() -> None:
    from convmem.domain.search import plan_query

    assert plan_query("What did June paint?", ["June", "Caroline"]).periods == ()
    assert plan_query("What did June paint in April?", ["June"]).periods == (Period(None, 4),)
    assert plan_query("What did Caroline paint in June?", ["Caroline"]).periods == (
        Period(None, 6),
    )
