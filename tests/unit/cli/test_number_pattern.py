"""The chart's pattern for a range of whole numbers matches exactly the numbers of the range."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.cli.chart_values.number_pattern import whole_number_pattern


@pytest.mark.parametrize(
    ("low", "high"), [(0, 0), (0, 9), (1, 65535), (0, 3600), (6, 604800), (1, 1_000_000)]
)
def test_the_pattern_matches_the_settings_ranges_and_nothing_around_them(
    low: int, high: int
) -> None:
    pattern = re.compile(whole_number_pattern(low, high))
    for number in [*range(max(0, low - 20), low + 2000), *range(max(0, high - 2000), high + 20)]:
        assert bool(pattern.match(str(number))) == (low <= number <= high), number


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**8))
def test_a_number_matches_exactly_when_it_is_in_the_range(a: int, b: int, number: int) -> None:
    low, high = min(a, b), max(a, b)
    assert bool(re.match(whole_number_pattern(low, high), str(number))) == (low <= number <= high)


def test_leading_zeros_and_the_empty_text_when_asked() -> None:
    assert re.match(whole_number_pattern(1, 10), "007")
    assert re.match(whole_number_pattern(1, 10, empty=True), "")
    assert not re.match(whole_number_pattern(1, 10), "")
    assert not re.match(whole_number_pattern(1, 10), "1.5")
