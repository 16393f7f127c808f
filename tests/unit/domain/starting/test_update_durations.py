"""The expected update duration: nearest-rank 90th percentile of the last 20 updates."""

import pytest

from brupop.domain.starting.update_durations import (
    DEFAULT_EXPECTED_SECONDS,
    HISTORY_SIZE,
    MAX_DURATION_SECONDS,
    UpdateDurations,
    expected_update_seconds,
)


def test_without_history_the_expectation_is_fifteen_minutes() -> None:
    assert expected_update_seconds([]) == DEFAULT_EXPECTED_SECONDS == 900
    assert UpdateDurations().expected_seconds == 900


@pytest.mark.parametrize(
    ("durations", "expected"),
    [
        ([400], 400),
        ([100, 200], 200),
        (list(range(1, 11)), 9),  # rank ceil(0.9 * 10) = 9
        (list(range(1, 21)), 18),  # rank 18 of 20
        ([50, 10, 40, 30, 20], 50),  # rank ceil(4.5) = 5, order of arrival does not matter
        (list(range(1, 20)), 18),  # rank ceil(17.1) = 18 of 19
    ],
)
def test_the_expectation_is_the_nearest_rank_90th_percentile(
    durations: list[int], expected: int
) -> None:
    assert expected_update_seconds(durations) == expected


def test_the_history_keeps_the_last_twenty_newest_last() -> None:
    history = UpdateDurations.of(range(1, 31))
    assert len(history.seconds) == HISTORY_SIZE
    assert history.seconds == tuple(range(11, 31))
    assert history.expected_seconds == 28


def test_a_stored_history_is_bounded_and_clamped() -> None:
    history = UpdateDurations.of([-5, *range(100, 125), 10**9])
    assert len(history.seconds) == HISTORY_SIZE
    assert history.seconds[-1] == MAX_DURATION_SECONDS
    assert all(0 <= s <= MAX_DURATION_SECONDS for s in history.seconds)
    assert UpdateDurations.of([-5]).seconds == (0,)
