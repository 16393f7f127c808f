"""Backoff after failures: more than 2^crash_count whole minutes, capped at 24 h, any count."""

from datetime import UTC, datetime, timedelta

import pytest

from brupop.domain.rollout.backoff import (
    MAX_DELAY_MINUTES,
    delay_minutes,
    is_retry_allowed,
    retry_allowed_at,
)
from brupop.domain.shadow import CRASH_COUNT_MAX, ShadowStatus
from brupop.domain.states import UpdateState

FAILED_AT = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)


def _status(crashes: int, failed_at: datetime | None = FAILED_AT) -> ShadowStatus:
    return ShadowStatus(
        current_version="1.0.0",
        target_version="1.1.0",
        current_state=UpdateState.IDLE,
        crash_count=crashes,
        state_transition_failure_timestamp=failed_at,
    )


@pytest.mark.parametrize("crashes", range(71))
def test_delay_doubles_per_crash_until_the_24_hour_cap(crashes: int) -> None:
    expected = 2**crashes if 2**crashes < 1440 else 1440
    assert delay_minutes(crashes) == expected


@pytest.mark.parametrize("crashes", range(71))
def test_retry_waits_more_than_the_delay_in_whole_minutes(crashes: int) -> None:
    status = _status(crashes)
    wait = timedelta(minutes=min(2**crashes, MAX_DELAY_MINUTES) + 1)
    assert retry_allowed_at(status) == FAILED_AT + wait
    assert not is_retry_allowed(status, FAILED_AT + wait - timedelta(seconds=1))
    assert is_retry_allowed(status, FAILED_AT + wait)


def test_first_failure_blocks_for_three_minutes_as_in_the_original() -> None:
    status = _status(1)
    assert not is_retry_allowed(status, FAILED_AT + timedelta(minutes=2, seconds=59))
    assert is_retry_allowed(status, FAILED_AT + timedelta(minutes=3))


def test_the_largest_crash_count_the_crd_allows_is_capped_without_overflow() -> None:
    assert delay_minutes(CRASH_COUNT_MAX) == MAX_DELAY_MINUTES
    assert delay_minutes(10**30) == MAX_DELAY_MINUTES


def test_a_node_that_never_failed_may_always_start() -> None:
    status = _status(5, failed_at=None)
    assert retry_allowed_at(status) is None
    assert is_retry_allowed(status, FAILED_AT)


def test_a_failure_stamped_in_the_future_keeps_the_node_waiting() -> None:
    status = _status(0, failed_at=FAILED_AT + timedelta(hours=1))
    assert not is_retry_allowed(status, FAILED_AT)


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        delay_minutes(-1)


def test_a_failure_stamped_at_the_end_of_the_calendar_backs_off_to_the_end_instead_of_raising() -> (
    None
):
    status = _status(3, failed_at=datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC))
    assert retry_allowed_at(status) == datetime.max.replace(tzinfo=UTC)
    assert not is_retry_allowed(status, FAILED_AT)
